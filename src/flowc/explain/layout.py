"""A layered (Sugiyama-style) drawing of a DAG, left to right, for the HTML plan view.

Nodes come in topological order (edges go from a lower to a higher index), as
``JobGraph.vertices_sorted()`` gives them. Every step is iterative and linear or
``n log n`` per sweep, so a 1,000-vertex JobGraph lays out in well under a second:

1. layering: a node's layer is the longest path from a source (one pass in topological
   order); boxes sit on even ranks, and every edge gets a chain of dummy nodes through the
   ranks it crosses, the last of which (on the odd rank just before its target) carries the
   edge's label, so labels take room in the layout like boxes and never overlap each other;
   the edges of one source share their other dummies (see ``_direct_edges``);
2. ordering: barycenter sweeps, down then up, a fixed number of times;
3. coordinates: each rank's items are placed as near the mean of their neighbours as the
   order and the gaps allow (least squares, by pool-adjacent-violators);
4. routing: an edge leaves its source's right side and enters its target's left side at
   ports spread over the box height, in the order of the items they lead to.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

DUMMY_BUDGET = 20_000  # routing dummies; past it the longest edges are drawn straight across
SWEEPS = 4  # ordering sweeps (each one down and one up); more rarely changes the picture
PLACEMENT_PASSES = 3


@dataclass(frozen=True)
class Box:
    x: float
    y: float
    w: float
    h: float


@dataclass(frozen=True)
class Route:
    """The polyline of one edge, to the target's left side through the box reserved for its
    label, ``label``: from the source's right side, or from its source's trunk
    (``trunks[trunk]``) where it leaves it."""

    points: tuple[tuple[float, float], ...]
    label: Box
    trunk: int | None


@dataclass(frozen=True)
class Trunk:
    """The line a source's edges share while they pass other ranks, from its right side."""

    source: int
    points: tuple[tuple[float, float], ...]


@dataclass(frozen=True)
class Layout:
    boxes: tuple[Box, ...]
    routes: tuple[Route, ...]
    trunks: tuple[Trunk, ...]
    width: float
    height: float


@dataclass(frozen=True)
class Spacing:
    rank_gap: float = 28.0  # horizontal room between a rank and the next
    node_gap: float = 18.0  # vertical room between items of one rank
    dummy_height: float = 6.0
    margin: float = 16.0


def layered_layout(sizes: Sequence[tuple[float, float]], edges: Sequence[tuple[int, int]],
                   label_sizes: Sequence[tuple[float, float]],
                   spacing: Spacing = Spacing()) -> Layout:
    """Lay out nodes of the given (width, height) joined by ``edges`` (source, target), each
    with a label of the given size. Raises ValueError if an edge goes against the order."""
    n = len(sizes)
    layer = [0] * n
    for s, t in edges:
        if not 0 <= s < t < n:
            raise ValueError(f"edge {s} -> {t} is not in topological order")
    for s, t in sorted(edges, key=lambda e: e[1]):
        layer[t] = max(layer[t], layer[s] + 1)

    # Items: the n nodes, then the dummies of each edge in order; rank = 2 * layer for nodes.
    rank = [2 * x for x in layer]
    width = [w for w, _ in sizes]
    height = [h for _, h in sizes]
    direct = _direct_edges(edges, rank)
    chains: list[list[int]] = []  # per edge: source, routing dummies..., label dummy, target
    trunk: dict[tuple[int, int], int] = {}  # (source, rank) -> its edges' shared dummy
    for k, ((s, t), (lw, lh)) in enumerate(zip(edges, label_sizes)):
        chain = [s]
        for r in range(rank[t] - 1 if k in direct else rank[s] + 1, rank[t] - 1):
            d = trunk.get((s, r))
            if d is None:
                d = trunk[(s, r)] = len(rank)
                rank.append(r)
                width.append(0.0)
                height.append(spacing.dummy_height)
            chain.append(d)
        chain.append(len(rank))
        rank.append(rank[t] - 1)
        width.append(lw)
        height.append(lh)
        chain.append(t)
        chains.append(chain)
    m = len(rank)
    links = sorted({(a, b) for chain in chains for a, b in zip(chain, chain[1:])})
    preds: list[list[int]] = [[] for _ in range(m)]
    succs: list[list[int]] = [[] for _ in range(m)]
    for a, b in links:
        succs[a].append(b)
        preds[b].append(a)

    ranks: list[list[int]] = [[] for _ in range(max(rank, default=0) + 1)]
    for i in range(m):
        ranks[rank[i]].append(i)
    _order(ranks, preds, succs)
    ys = _place(ranks, preds, succs, height, spacing)

    xs = [0.0] * m
    rank_x: list[float] = []
    x = spacing.margin
    for items in ranks:
        rank_x.append(x)
        x += max((width[i] for i in items), default=0.0) + spacing.rank_gap
    total_w = x - spacing.rank_gap + spacing.margin
    for r, items in enumerate(ranks):
        col_w = max((width[i] for i in items), default=0.0)
        for i in items:
            # Boxes are left-aligned in their column; labels are centred in theirs.
            xs[i] = rank_x[r] + (0.0 if r % 2 == 0 else (col_w - width[i]) / 2)
    total_h = max((ys[i] + height[i] for i in range(m)), default=0.0) + spacing.margin

    boxes = tuple(Box(xs[i], ys[i], width[i], height[i]) for i in range(n))
    col_w_of = [max((width[i] for i in items), default=0.0) for items in ranks]
    out_port = _ports(n, [c[1] for c in chains], [c[0] for c in chains], ys, height, boxes)
    in_port = _ports(n, [c[-2] for c in chains], [c[-1] for c in chains], ys, height, boxes)
    def through(pts: list[tuple[float, float]], items: list[int]) -> list[tuple[float, float]]:
        for d in items:
            cy = ys[d] + height[d] / 2
            if len(pts) > 1 and pts[-1][1] == cy == pts[-2][1]:
                pts.pop()  # a straight run through dummies is one segment
            pts.append((rank_x[rank[d]], cy))
            pts.append((rank_x[rank[d]] + col_w_of[rank[d]], cy))
        return pts

    # A source's shared dummies are drawn once, as its trunk: the route of its edge with the
    # most of them; each edge is drawn from where it leaves the trunk.
    longest: dict[int, int] = {}
    for k, chain in enumerate(chains):
        best = longest.get(chain[0])
        if len(chain) > 3 and (best is None or len(chain) > len(chains[best])):
            longest[chain[0]] = k
    trunk_of: dict[int, int] = {}
    trunks = []
    for s_, k in sorted(longest.items()):
        trunk_of[s_] = len(trunks)
        start = (boxes[s_].x + boxes[s_].w, out_port[k])
        trunks.append(Trunk(s_, tuple(through([start], chains[k][1:-2]))))
    routes = []
    for k, chain in enumerate(chains):
        s_, t = chain[0], chain[-1]
        if len(chain) > 3:
            d = chain[-3]  # the last trunk dummy: the edge leaves the trunk at its right end
            start = (rank_x[rank[d]] + col_w_of[rank[d]], ys[d] + height[d] / 2)
        else:
            start = (boxes[s_].x + boxes[s_].w, out_port[k])
        pts = through([start], chain[-2:-1])
        pts.append((boxes[t].x, in_port[k]))
        d = chain[-2]
        routes.append(Route(tuple(pts), Box(xs[d], ys[d], width[d], height[d]),
                            trunk_of[s_] if len(chain) > 3 else None))
    return Layout(boxes, tuple(routes), tuple(trunks), total_w, total_h)


def _direct_edges(edges: Sequence[tuple[int, int]], rank: list[int]) -> set[int]:
    """Edges drawn without routing dummies (only their label's). A source's edges share one
    dummy per rank (they run as one line, then fork to their labels), so its dummies are as
    many as its longest edge needs; past DUMMY_BUDGET in all, the longest edges go straight
    across, longest first (such an edge may cross boxes). Many distinct sources each feeding
    the last stage of a long pipeline would otherwise need dummies quadratic in its length."""
    by_source: dict[int, list[tuple[int, int]]] = {}
    for k, (s, t) in enumerate(edges):
        by_source.setdefault(s, []).append((max(rank[t] - rank[s] - 2, 0), k))
    for spans in by_source.values():
        spans.sort(reverse=True)
    total = sum(spans[0][0] for spans in by_source.values())
    out: set[int] = set()
    longest = sorted(((spans[0][0], s) for s, spans in by_source.items()), reverse=True)
    while total > DUMMY_BUDGET and longest:
        _, s = longest.pop(0)  # the source whose trunk is longest drops its longest edge
        spans = by_source[s]
        span, k = spans.pop(0)
        out.add(k)
        total -= span - (spans[0][0] if spans else 0)
        if spans:
            longest.append((spans[0][0], s))
            longest.sort(reverse=True)
    return out


def _order(ranks: list[list[int]], preds: list[list[int]], succs: list[list[int]]) -> None:
    """Barycenter heuristic, in place: sort each rank by the mean position of the items'
    neighbours in the rank before (down) or after (up); items without any keep their place."""
    pos = [0] * len(preds)
    for items in ranks:
        for p, i in enumerate(items):
            pos[i] = p
    for _ in range(SWEEPS):
        for neighbours, seq in ((preds, range(1, len(ranks))),
                                (succs, range(len(ranks) - 2, -1, -1))):
            for r in seq:
                items = ranks[r]
                keys = {}
                for i in items:
                    nb = neighbours[i]
                    keys[i] = sum(pos[j] for j in nb) / len(nb) if nb else float(pos[i])
                items.sort(key=lambda i: (keys[i], pos[i]))
                for p, i in enumerate(items):
                    pos[i] = p


def _place(ranks: list[list[int]], preds: list[list[int]], succs: list[list[int]],
           height: list[float], spacing: Spacing) -> list[float]:
    """Top coordinates: first stacked, then pulled towards the neighbours' centres."""
    ys = [0.0] * len(height)
    for items in ranks:
        y = spacing.margin
        for i in items:
            ys[i] = y
            y += height[i] + spacing.node_gap
    for _ in range(PLACEMENT_PASSES):
        for neighbours, seq in ((preds, range(1, len(ranks))),
                                (succs, range(len(ranks) - 2, -1, -1))):
            for r in seq:
                items = ranks[r]
                desired = []
                for i in items:
                    nb = neighbours[i]
                    centre = (sum(ys[j] + height[j] / 2 for j in nb) / len(nb) if nb
                              else ys[i] + height[i] / 2)
                    desired.append(centre - height[i] / 2)
                for i, y in zip(items, _pav([height[i] for i in items], desired,
                                            spacing.node_gap)):
                    ys[i] = y
    low = min(ys, default=spacing.margin)
    return [y - low + spacing.margin for y in ys]


def _pav(heights: list[float], desired: list[float], gap: float) -> list[float]:
    """Tops nearest (least squares) to ``desired`` keeping the order and the gaps: with
    offsets o_i (the room the items above take), z_i = top_i - o_i must not decrease, which
    is isotonic regression of desired_i - o_i (pool adjacent violators)."""
    offsets = []
    o = 0.0
    for h in heights:
        offsets.append(o)
        o += h + gap
    blocks: list[list[float]] = []  # [mean, count]
    for d, off in zip(desired, offsets):
        blocks.append([d - off, 1.0])
        while len(blocks) > 1 and blocks[-2][0] > blocks[-1][0]:
            m2, c2 = blocks.pop()
            m1, c1 = blocks[-1]
            blocks[-1] = [(m1 * c1 + m2 * c2) / (c1 + c2), c1 + c2]
    out = []
    k = 0
    for mean, count in blocks:
        for _ in range(int(count)):
            out.append(mean + offsets[k])
            k += 1
    return out


def _ports(n: int, others: list[int], ends: list[int], ys: list[float],
           height: list[float], boxes: tuple[Box, ...]) -> list[float]:
    """For each edge k, the y where it meets node ``ends[k]``: a node's ports are spread
    evenly over its height, one per item at the edges' other ends (edges sharing a trunk
    share a port), ordered by that item's height."""
    by_node: list[dict[int, list[int]]] = [{} for _ in range(n)]
    for k, e in enumerate(ends):
        by_node[e].setdefault(others[k], []).append(k)
    port = [0.0] * len(ends)
    for node, groups in enumerate(by_node):
        b = boxes[node]
        ordered = sorted(groups, key=lambda o: (ys[o] + height[o] / 2, o))
        for j, o in enumerate(ordered):
            for k in groups[o]:
                port[k] = b.y + b.h * (j + 1) / (len(ordered) + 1)
    return port
