"""StreamGraph -> JobGraph (Flink's StreamingJobGraphGenerator), iteratively.

The chain walk reproduces Flink's recursive ``createChain`` with an explicit stack, so the
order of vertex creation, operator ids (post-order, head last) and transitive out-edges is
Flink's, and 100,000-operator graphs need no recursion.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from flowc._util import paused_gc
from flowc.chaining.hashing import operator_hashes
from flowc.chaining.job_graph import (
    ALL_TO_ALL,
    BLOCKING,
    PIPELINED_BOUNDED,
    POINTWISE,
    IntermediateDataSet,
    JobEdge,
    JobGraph,
    JobVertex,
    OperatorInfo,
)
from flowc.chaining.rules import chain_breaks, is_chainable
from flowc.planner.stream_graph import StreamEdge, StreamGraph
from flowc.transformations import Partitioner, PartitionerKind, RuntimeExecutionMode


@dataclass
class _Frame:
    node: int
    head: int
    parent: _Frame | None
    phase: int = 0
    i: int = 0
    chainable: list[StreamEdge] = field(default_factory=list)
    non_chainable: list[StreamEdge] = field(default_factory=list)
    transitive: list[StreamEdge] = field(default_factory=list)


@dataclass
class _Chains:
    heads: list[int] = field(default_factory=list)  # vertex creation order
    members: dict[int, list[int]] = field(default_factory=dict)  # head -> post-order nodes
    chained_outputs: dict[int, list[StreamEdge]] = field(default_factory=dict)
    transitive: dict[int, list[StreamEdge]] = field(default_factory=dict)
    node_head: dict[int, int] = field(default_factory=dict)


def _walk_chains(graph: StreamGraph) -> _Chains:
    c = _Chains()
    built: set[int] = set()
    for source in graph.source_ids:
        stack = [_Frame(source, source, None)]
        while stack:
            f = stack[-1]
            if f.phase == 0:
                if f.head in built:
                    stack.pop()
                    continue
                for e in graph.outputs(f.node):
                    (f.chainable if is_chainable(e, graph) else f.non_chainable).append(e)
                f.phase = 1
            if f.phase == 1:
                if f.i < len(f.chainable):
                    e = f.chainable[f.i]
                    f.i += 1
                    stack.append(_Frame(e.target_id, f.head, f))
                    continue
                f.phase, f.i = 2, 0
            if f.phase == 2:
                if f.i < len(f.non_chainable):
                    e = f.non_chainable[f.i]
                    f.i += 1
                    f.transitive.append(e)
                    stack.append(_Frame(e.target_id, e.target_id, None))
                    continue
                f.phase = 3
            stack.pop()
            c.members.setdefault(f.head, []).append(f.node)
            c.node_head[f.node] = f.head
            c.chained_outputs[f.node] = f.chainable
            if f.node == f.head:
                c.transitive[f.head] = f.transitive
                built.add(f.head)
                c.heads.append(f.head)
            elif f.parent is not None:
                f.parent.transitive.extend(f.transitive)
    return c


def chained_name(graph: StreamGraph, head: int, chained_outputs: dict[int, list[StreamEdge]]) -> str:
    """``X``, ``X -> Y`` or ``X -> (Y, Z)``, built for the head only (linear time)."""
    parts: list[str] = []
    # Work items: a node id to expand, or a literal string to emit.
    stack: list[int | str] = [head]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            parts.append(item)
            continue
        parts.append(graph.nodes[item].name)
        outs = chained_outputs.get(item, [])
        if len(outs) == 1:
            parts.append(" -> ")
            stack.append(outs[0].target_id)
        elif len(outs) > 1:
            parts.append(" -> (")
            todo: list[int | str] = [")"]
            for k in range(len(outs) - 1, -1, -1):
                todo.append(outs[k].target_id)
                if k > 0:
                    todo.append(", ")
            stack.extend(todo)
    return "".join(parts)


def _regions(vertex_ids: list[str], edges: list[tuple[str, str, str]]) -> dict[str, int]:
    """Logical pipelined regions: vertices joined by non-blocking edges."""
    parent = {v: v for v in vertex_ids}

    def find(x: str) -> str:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for src, dst, result_type in edges:
        if result_type != BLOCKING:
            a, b = find(src), find(dst)
            if a != b:
                parent[b] = a
    index: dict[str, int] = {}
    out: dict[str, int] = {}
    for v in vertex_ids:
        out[v] = index.setdefault(find(v), len(index))
    return out


def _same_partitioner(a: Partitioner, b: Partitioner) -> bool:
    """Flink's ``StreamPartitioner.equals`` as it decides BLOCKING dataset reuse (verified with
    Flink 2.3): same class; HASH also the same key selector, CUSTOM also the same partitioner
    function (Java ``equals``: the same object, for user functions)."""
    if a.kind is not b.kind:
        return False
    if a.kind is PartitionerKind.HASH:
        return a.key is not None and b.key is not None and a.key.fn == b.key.fn
    if a.kind is PartitionerKind.CUSTOM:
        return (a.key is not None and b.key is not None and a.key.fn == b.key.fn
                and a.custom == b.custom)
    return True


def create_job_graph(graph: StreamGraph) -> JobGraph:
    with paused_gc():
        return _create(graph)


def _create(graph: StreamGraph) -> JobGraph:
    hashes = operator_hashes(graph)
    chains = _walk_chains(graph)
    batch = graph.config.mode is RuntimeExecutionMode.BATCH
    result_type = BLOCKING if batch else PIPELINED_BOUNDED
    vid = {h: hashes[h].hex() for h in chains.heads}

    # Intermediate datasets and job edges, per vertex in creation order, per transitive edge.
    datasets: list[dict] = []
    by_operator: dict[int, list[int]] = {}
    inputs: dict[int, list[JobEdge]] = {h: [] for h in chains.heads}
    produced: dict[int, list[int]] = {h: [] for h in chains.heads}
    for head in chains.heads:
        for e in chains.transitive[head]:
            target = graph.nodes[e.target_id]
            ds_index = None
            if result_type == BLOCKING:
                for cand in by_operator.get(e.source_id, []):
                    d = datasets[cand]
                    if (d["consumer_parallelism"] == target.parallelism
                            and d["consumer_max_parallelism"] == target.max_parallelism
                            and d["tag"] == e.output_tag
                            and _same_partitioner(d["partitioner"], e.partitioner)):
                        ds_index = cand
                        break
            if ds_index is None:
                ds_index = len(datasets)
                datasets.append({
                    "producer": head, "node": e.source_id, "tag": e.output_tag,
                    "partitioner": e.partitioner, "consumers": [],
                    "consumer_parallelism": target.parallelism,
                    "consumer_max_parallelism": target.max_parallelism,
                })
                by_operator.setdefault(e.source_id, []).append(ds_index)
                produced[head].append(ds_index)
            job_edge = JobEdge(
                dataset=ds_index, source=vid[head], target=vid[e.target_id],
                distribution_pattern=POINTWISE if e.partitioner.kind.is_pointwise else ALL_TO_ALL,
                result_type=result_type, ship_strategy=str(e.partitioner), stream_edge=e,
                breaks=tuple(chain_breaks(e, graph)))
            datasets[ds_index]["consumers"].append(job_edge)
            inputs[e.target_id].append(job_edge)

    regions = _regions([vid[h] for h in chains.heads],
                       [(e.source, e.target, e.result_type) for h in chains.heads
                        for e in inputs[h]])
    # STREAMING: one SlotSharingGroup per name. BATCH: "default" vertices share per region.
    group_index: dict[tuple[str, int], int] = {}
    vertices: dict[str, JobVertex] = {}
    node_vertex: dict[int, str] = {}
    for head in chains.heads:
        node = graph.nodes[head]
        v_id = vid[head]
        group = node.slot_sharing_group
        key = (group, regions[v_id] if batch and group == "default" else -1)
        members = chains.members[head]
        chained_edges = tuple(e for m in members for e in chains.chained_outputs[m])
        vertices[v_id] = JobVertex(
            id=v_id, name=chained_name(graph, head, chains.chained_outputs),
            parallelism=node.parallelism, max_parallelism=node.max_parallelism,
            slot_sharing_group=group,
            slot_sharing_group_index=group_index.setdefault(key, len(group_index)),
            head=head, chain=tuple(members),
            operators=tuple(
                OperatorInfo(m, hashes[m].hex(), graph.nodes[m].name, graph.nodes[m].uid,
                             graph.nodes[m].uid_hash) for m in members),
            chained_edges=chained_edges, inputs=tuple(inputs[head]),
            produced=tuple(produced[head]), region=regions[v_id])
        for m in members:
            node_vertex[m] = v_id
    frozen = tuple(
        IntermediateDataSet(
            id=i, producer=vid[d["producer"]], producer_node=d["node"], result_type=result_type,
            output_tag=d["tag"], partitioner=d["partitioner"], consumers=tuple(d["consumers"]))
        for i, d in enumerate(datasets))
    return JobGraph(config=graph.config, stream_graph=graph, vertices=vertices,
                    datasets=frozen, node_vertex=node_vertex)
