"""Why an operator's id changed between two plans: the ingredients of Flink's
StreamGraphHasherV2 that differ.

An operator without a uid is hashed from (1) how many operators Flink hashed before it
(breadth-first from the sources), (2) how many of its outputs are chainable, and (3) its
inputs' hashes. An operator with a uid is hashed from the uid alone. So a lost id is
explained by operators added or removed upstream (or earlier in the traversal), a changed
chaining (parallelism, partitioning, chain hints, slot groups) at the operator or upstream,
or a changed uid. The two plans' operators are paired by id, then uid, then name and kind in
order (a heuristic: the plans carry no identity beyond these).
"""

from __future__ import annotations

from bisect import bisect_left
from collections import deque
from collections.abc import Sequence

from flowc.chaining.hashing import operator_hashes
from flowc.chaining.job_graph import JobGraph
from flowc.chaining.rules import chain_breaks, is_chainable
from flowc.planner.stream_graph import StreamGraph, StreamNode

_SHOWN = 5  # operators named in one reason; the rest are counted


def _ids(jg: JobGraph) -> dict[int, str]:
    return {o.node_id: o.id for v in jg.vertices.values() for o in v.operators}


def _key(node: StreamNode) -> tuple[str, str, str]:
    return (node.kind.value, node.name, type(node.operator).__name__)


def pair_operators(old: JobGraph, new: JobGraph) -> dict[int, int]:
    """Old StreamNode id -> the new StreamNode taken to be the same operator: the same id
    (and kind), else the same uid, else the same name and kind - preferring, among several, the one
    whose inputs are the pairs of the old one's (old operators are taken inputs first)."""
    old_ids, new_ids = _ids(old), _ids(new)
    by_id = {i: n for n, i in new_ids.items()}
    og, ng = old.stream_graph, new.stream_graph
    # Flink's hash ignores names: an inserted Filter may take the id a Map had. Pair by id
    # only operators of the same kind, so "what was added" names the inserted one.
    pairs: dict[int, int] = {o: by_id[i] for o, i in old_ids.items() if i in by_id
                             and _key(og.nodes[o]) == _key(ng.nodes[by_id[i]])}
    taken = set(pairs.values())
    by_uid = {node.uid: n for n, node in ng.nodes.items() if node.uid and n not in taken}
    for o, node in og.nodes.items():
        if o not in pairs and node.uid in by_uid:
            pairs[o] = by_uid.pop(node.uid)
    taken = set(pairs.values())
    # Candidates by kind, and by kind and inputs; a candidate taken through one index is
    # skipped in the other (linear however many operators share a name).
    by_key: dict[tuple[str, str, str], deque[int]] = {}
    by_inputs: dict[tuple[tuple[str, str, str], tuple[int, ...]], deque[int]] = {}
    for n in sorted(ng.nodes):
        if n not in taken:
            k = _key(ng.nodes[n])
            by_key.setdefault(k, deque()).append(n)
            ins = tuple(sorted(e.source_id for e in ng.inputs(n)))
            by_inputs.setdefault((k, ins), deque()).append(n)
    for o in operator_hashes(og):  # inputs before consumers
        if o in pairs:
            continue
        k = _key(og.nodes[o])
        ins = tuple(sorted(pairs.get(e.source_id, -1) for e in og.inputs(o)))
        for queue in (by_inputs.get((k, ins)), by_key.get(k)):
            while queue and queue[0] in taken:
                queue.popleft()
            if queue:
                pairs[o] = queue.popleft()
                taken.add(pairs[o])
                break
    return pairs


def _upstream(graph: StreamGraph, start: int) -> list[int]:
    """Ancestors whose ids feed ``start``'s hash: up to and including operators with a uid
    (a uid'd operator's hash does not depend on what is above it)."""
    seen: set[int] = {start}
    order: list[int] = []
    queue = deque([start])
    while queue:
        nid = queue.popleft()
        if nid != start and graph.nodes[nid].uid is not None:
            continue
        for e in graph.inputs(nid):
            if e.source_id not in seen:
                seen.add(e.source_id)
                order.append(e.source_id)
                queue.append(e.source_id)
    return order


def _chainable(graph: StreamGraph, nid: int) -> int:
    return sum(1 for e in graph.outputs(nid) if is_chainable(e, graph))


def _describe(node: StreamNode, label: str) -> str:
    where = f"{label} line {node.span.line}" if node.span is not None else label
    return f"{node.name} ({where})"


class IdChanges:
    """Explains, for operators of ``old`` whose id is gone from ``new``, what changed."""

    def __init__(self, old: JobGraph, new: JobGraph, old_label: str, new_label: str) -> None:
        self.old, self.new = old.stream_graph, new.stream_graph
        self.old_label, self.new_label = old_label, new_label
        self.pairs = pair_operators(old, new)
        self.back = {n: o for o, n in self.pairs.items()}
        self.old_pos = {n: i for i, n in enumerate(operator_hashes(self.old))}
        self.new_pos = {n: i for i, n in enumerate(operator_hashes(self.new))}
        self.new_ids = _ids(new)
        # Unpaired operators in hash order (with their positions), for bisecting.
        self.added = [x for x in self.new_pos if x not in self.back]
        self.added_at = [self.new_pos[x] for x in self.added]
        self.removed = [x for x in self.old_pos if x not in self.pairs]
        self.removed_at = [self.old_pos[x] for x in self.removed]
        # Chaining changes of every paired operator, computed once (O(edges)).
        self.chaining = {o: found for o, n in self.pairs.items()
                         if (found := self._chaining(o, n))}

    def counterpart(self, old_node: int) -> int | None:
        return self.pairs.get(old_node)

    def reasons(self, old_node: int) -> list[str]:
        n = self.pairs.get(old_node)
        o_node = self.old.nodes[old_node]
        if n is None:
            return [f"the new job has no {o_node.name} operator in its place: it was removed"]
        n_node = self.new.nodes[n]
        if o_node.uid != n_node.uid:
            if n_node.uid is None:
                return [f"its uid {o_node.uid!r} was removed, so its id is now derived from "
                        "the topology"]
            if o_node.uid is None:
                return [f"it got the uid {n_node.uid!r}, so its id is now the uid's hash "
                        "(set_uid_hash with the old id keeps the state)"]
            return [f"its uid changed from {o_node.uid!r} to {n_node.uid!r}"]
        if o_node.uid is not None:  # same uid, different id: cannot happen (hash of the uid)
            return ["its uid is the same but its id differs"]
        causes: list[str] = []
        old_up, new_up = _upstream(self.old, old_node), _upstream(self.new, n)
        causes += [f"{_describe(self.new.nodes[x], self.new_label)} was added upstream"
                   for x in new_up if x not in self.back]
        causes += [f"{_describe(self.old.nodes[x], self.old_label)} was removed upstream"
                   for x in old_up if x not in self.pairs]
        for x in old_up:
            xn = self.pairs.get(x)
            if xn is not None and self.old.nodes[x].uid != self.new.nodes[xn].uid:
                causes.append(f"the uid of {_describe(self.new.nodes[xn], self.new_label)} "
                              f"upstream changed ({self.old.nodes[x].uid!r} -> "
                              f"{self.new.nodes[xn].uid!r})")
        old_set, new_set = set(old_up), set(new_up)
        for x in [old_node, *old_up]:
            if self.old.nodes[x].uid is not None:
                continue
            # Outputs to operators already told as added / removed upstream: not twice.
            causes += [text for side, target, text in self.chaining.get(x, ())
                       if target not in (new_set if side == "new" else old_set)]
        causes += self._inputs(old_node, n)
        causes += self._position(old_node, n, old_set, new_set)
        return causes or ["its hash inputs changed (Flink hashes the number of operators "
                          "hashed before it, its chainable outputs and its inputs' ids)"]

    def _chaining(self, o: int, n: int) -> list[tuple[str, int, str]]:
        """Changes of ``o``'s chainable outputs (its hash counts them), each with the side
        ("old" / "new") and the added or removed operator it concerns (-1: none)."""
        old_g, new_g = self.old, self.new
        was = {self.pairs[e.target_id] for e in old_g.outputs(o)
               if e.target_id in self.pairs and is_chainable(e, old_g)}
        now = {e.target_id for e in new_g.outputs(n)
               if e.target_id in self.back and is_chainable(e, new_g)}
        at = _describe(new_g.nodes[n], self.new_label)
        out: list[tuple[str, int, str]] = []
        for e in new_g.outputs(n):
            t = e.target_id
            if t in self.back and (t in was) != (t in now):
                target = _describe(new_g.nodes[t], self.new_label)
                if t in now:
                    out.append(("new", -1, f"chaining changed: {at} now chains to {target}"))
                else:
                    why = "; ".join(r for _, r in chain_breaks(e, new_g))
                    out.append(("new", -1, f"chaining changed: {at} no longer chains to "
                                          f"{target} ({why})"))
            elif t not in self.back and is_chainable(e, new_g):
                out.append(("new", t, f"{_describe(new_g.nodes[t], self.new_label)} was "
                                      f"added and chains to {at}"))
        for e in old_g.outputs(o):
            t = e.target_id
            if t not in self.pairs and is_chainable(e, old_g):
                out.append(("old", t, f"{_describe(old_g.nodes[t], self.old_label)}, "
                                      f"chained to {at}, was removed"))
        return out

    def _inputs(self, o: int, n: int) -> list[str]:
        was = sorted(self.pairs.get(e.source_id, -1) for e in self.old.inputs(o))
        now = sorted(e.source_id for e in self.new.inputs(n))
        if was == now or any(x not in self.back for x in now) or -1 in was:
            return []  # unchanged, or already told as an added / removed operator
        return ["its inputs were rewired"]

    def _position(self, o: int, n: int, old_up: set[int], new_up: set[int]) -> list[str]:
        po, pn = self.old_pos.get(o), self.new_pos.get(n)
        if po is None or pn is None or po == pn:
            return []
        added = [x for x in self.added[:bisect_left(self.added_at, pn)] if x not in new_up]
        removed = [x for x in self.removed[:bisect_left(self.removed_at, po)]
                   if x not in old_up]
        if not added and not removed:
            return [] if (new_up - set(self.back)) or (old_up - set(self.pairs)) else [
                f"it is hashed {_ordinal(pn + 1)} instead of {_ordinal(po + 1)} in Flink's "
                "breadth-first traversal"]
        parts = _names(self.new, added, self.new_label, "added") + \
            _names(self.old, removed, self.old_label, "removed")
        return [f"operators hashed before it changed ({'; '.join(parts)}): Flink's hash "
                f"counts them, it is now hashed {_ordinal(pn + 1)}, was {_ordinal(po + 1)}"]


def _names(graph: StreamGraph, nodes: Sequence[int], label: str, what: str) -> list[str]:
    shown = [f"{_describe(graph.nodes[x], label)} {what}" for x in nodes[:_SHOWN]]
    more = len(nodes) - _SHOWN
    return shown + ([f"{more} more {what}"] if more > 0 else [])


def _ordinal(n: int) -> str:
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"
