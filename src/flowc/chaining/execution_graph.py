"""JobGraph -> ExecutionGraph: subtasks, intermediate results and their partitions, wiring
and pipelined regions.

Everything per subtask or per partition is computed on demand from a handful of integers, so
building the graph is linear in the number of job vertices and edges, and an ALL_TO_ALL edge
between wide vertices costs O(1) memory rather than O(p^2).
"""

from __future__ import annotations

import functools
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from flowc._util import paused_gc
from flowc.chaining.job_graph import (
    ALL_TO_ALL,
    BLOCKING,
    IntermediateDataSet,
    JobEdge,
    JobGraph,
    JobVertex,
)
from flowc.errors import PlanError
from flowc.keygroups import default_max_parallelism


@dataclass(frozen=True)
class ConsumedInput:
    """How the subtasks of one consumer read one job edge's result (wiring is computed, not
    stored, so ALL_TO_ALL between wide vertices costs O(1) memory)."""

    edge: JobEdge
    producer_parallelism: int
    consumer_parallelism: int

    @property
    def pattern(self) -> str:
        return self.edge.distribution_pattern

    def partitions(self, subtask: int) -> range:
        """Producer partitions (= producer subtasks) consumer ``subtask`` reads."""
        s, t = self.producer_parallelism, self.consumer_parallelism
        if self.pattern == ALL_TO_ALL:
            return range(s)
        if s == t:
            return range(subtask, subtask + 1)
        if s > t:
            return range(subtask * s // t, (subtask + 1) * s // t)
        k = subtask * s // t
        return range(k, k + 1)

    def subpartition(self, subtask: int) -> int:
        """Which subpartition of each partition ``subtask`` reads."""
        s, t = self.producer_parallelism, self.consumer_parallelism
        if self.pattern == ALL_TO_ALL:
            return subtask
        if s >= t:
            return 0
        k = subtask * s // t
        return subtask - (k * t + s - 1) // s

    def consumers_of(self, partition: int) -> range:
        """Consumer subtasks fed by producer partition ``partition``."""
        s, t = self.producer_parallelism, self.consumer_parallelism
        if self.pattern == ALL_TO_ALL:
            return range(t)
        if s == t:
            return range(partition, partition + 1)
        if s > t:
            # The consumer i with i*S//T <= partition < (i+1)*S//T.
            i = ((partition + 1) * t + s - 1) // s - 1
            return range(i, i + 1)
        return range((partition * t + s - 1) // s, ((partition + 1) * t + s - 1) // s)


@dataclass(frozen=True)
class IntermediateResultPartition:
    """One partition of an IntermediateResult: the output of producer subtask ``index``
    (Flink's IntermediateResultPartitionID = (result, partition number)).

    ``consumers`` holds, per consuming job edge of the result (in the order of
    ``IntermediateResult.consumers``), the consumer subtasks that read this partition;
    consumer subtask ``c`` of that range reads subpartition ``c - range.start`` (POINTWISE),
    or ``c`` (ALL_TO_ALL). ``subpartitions`` is how many the producer writes: the size of the
    first consumer group, as in Flink (all consumers of a reused BLOCKING result have the same
    parallelism and partitioner, so the same groups)."""

    result: int
    index: int
    consumers: tuple[range, ...]

    @property
    def subpartitions(self) -> int:
        return len(self.consumers[0]) if self.consumers else 0


@dataclass(frozen=True, eq=False)
class IntermediateResult:
    """Flink's IntermediateResult: the runtime form of one IntermediateDataSet, with one
    partition per producer subtask. Partitions are made on demand (``partition(k)``)."""

    dataset: IntermediateDataSet
    # Resolved parallelism of the producing vertex = the number of partitions.
    producer_parallelism: int
    # How each consuming job edge reads the result, in the dataset's consumer order.
    consumers: tuple[ConsumedInput, ...]

    @property
    def id(self) -> int:
        return self.dataset.id

    @property
    def producer(self) -> str:
        return self.dataset.producer

    @property
    def result_type(self) -> str:
        return self.dataset.result_type

    @property
    def number_of_partitions(self) -> int:
        return self.producer_parallelism

    def partition(self, index: int) -> IntermediateResultPartition:
        if not 0 <= index < self.producer_parallelism:
            raise IndexError(f"result {self.id} has {self.producer_parallelism} partitions, "
                             f"not {index + 1}")
        return IntermediateResultPartition(
            self.id, index, tuple(c.consumers_of(index) for c in self.consumers))

    def partitions(self) -> Iterator[IntermediateResultPartition]:
        return (self.partition(k) for k in range(self.producer_parallelism))

    def to_dict(self) -> dict[str, Any]:
        return {
            "dataset": self.id,
            "producer": self.producer,
            "result_type": self.result_type,
            "consumers": [{"consumer": c.edge.target, "distribution_pattern": c.pattern,
                           "ship_strategy": c.edge.ship_strategy} for c in self.consumers],
            "partitions": [
                {"index": p.index, "subpartitions": p.subpartitions,
                 "consumers": [[r.start, r.stop] for r in p.consumers]}
                for p in self.partitions()
            ],
        }


@dataclass(frozen=True, eq=False)
class ExecutionJobVertex:
    job_vertex: JobVertex
    parallelism: int
    max_parallelism: int
    inputs: tuple[ConsumedInput, ...]

    @property
    def id(self) -> str:
        return self.job_vertex.id

    @property
    def name(self) -> str:
        return self.job_vertex.name


@dataclass(frozen=True, eq=False)
class ExecutionGraph:
    job_graph: JobGraph
    # Topological order (Flink's getVerticesSortedTopologicallyFromSources).
    vertices: tuple[ExecutionJobVertex, ...]
    # Pipelined regions: each a sorted tuple of (vertex id, subtask).
    regions: tuple[tuple[tuple[str, int], ...], ...]
    # One per IntermediateDataSet of the JobGraph, indexed by dataset id.
    results: tuple[IntermediateResult, ...] = ()

    @functools.cached_property
    def _by_id(self) -> dict[str, ExecutionJobVertex]:
        return {v.id: v for v in self.vertices}

    def vertex(self, vertex_id: str) -> ExecutionJobVertex:
        return self._by_id[vertex_id]

    def result(self, dataset: int) -> IntermediateResult:
        return self.results[dataset]

    def produced_results(self, vertex_id: str) -> tuple[IntermediateResult, ...]:
        """The results a vertex produces (Flink's ExecutionJobVertex.getProducedDataSets)."""
        return tuple(self.results[d] for d in self.vertex(vertex_id).job_vertex.produced)

    def slots_required(self) -> int:
        best: dict[int, int] = {}
        for v in self.vertices:
            g = v.job_vertex.slot_sharing_group_index
            best[g] = max(best.get(g, 0), v.parallelism)
        return sum(best.values())

    def to_dict(self) -> dict[str, Any]:
        region_of = {m: i for i, r in enumerate(self.regions) for m in r}
        return {
            "slots_required": self.slots_required(),
            "pipelined_regions": len(self.regions),
            "vertices": [
                {
                    "id": v.id,
                    "name": v.name,
                    "parallelism": v.parallelism,
                    "max_parallelism": v.max_parallelism,
                    "subtasks": [
                        {
                            "index": i,
                            "region": region_of[(v.id, i)],
                            "inputs": [
                                {
                                    "dataset": c.edge.dataset,
                                    "producer": c.edge.source,
                                    "distribution_pattern": c.pattern,
                                    "partitions": [c.partitions(i).start, c.partitions(i).stop],
                                    "subpartition": c.subpartition(i),
                                }
                                for c in v.inputs
                            ],
                        }
                        for i in range(v.parallelism)
                    ],
                }
                for v in self.vertices
            ],
            "results": [r.to_dict() for r in self.results],
        }


class _UnionFind:
    def __init__(self, n: int) -> None:
        self.parent = list(range(n))

    def find(self, x: int) -> int:
        p = self.parent
        while p[x] != x:
            p[x] = p[p[x]]
            x = p[x]
        return x

    def union(self, a: int, b: int) -> None:
        ra, rb = self.find(a), self.find(b)
        if ra != rb:
            self.parent[max(ra, rb)] = min(ra, rb)


def _merge_cycles(n: int, succ: list[set[int]]) -> list[int]:
    """Strongly connected components of the region graph (iterative Tarjan); regions that
    depend on each other through blocking edges in a cycle must run together."""
    index = [0] * n
    low = [0] * n
    on_stack = [False] * n
    visited = [False] * n
    comp = [-1] * n
    stack: list[int] = []
    counter = 1
    ncomp = 0
    for root in range(n):
        if visited[root]:
            continue
        work = [(root, iter(succ[root]))]
        visited[root] = True
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack[root] = True
        while work:
            v, it = work[-1]
            w = next(it, None)
            if w is not None:
                if not visited[w]:
                    visited[w] = True
                    index[w] = low[w] = counter
                    counter += 1
                    stack.append(w)
                    on_stack[w] = True
                    work.append((w, iter(succ[w])))
                elif on_stack[w]:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                while True:
                    x = stack.pop()
                    on_stack[x] = False
                    comp[x] = ncomp
                    if x == v:
                        break
                ncomp += 1
    return comp


def build_execution_graph(job_graph: JobGraph, default_parallelism: int = 1) -> ExecutionGraph:
    with paused_gc():
        return _build(job_graph, default_parallelism)


def _build(job_graph: JobGraph, default_parallelism: int) -> ExecutionGraph:
    ordered = job_graph.vertices_sorted()
    resolved: dict[str, tuple[int, int]] = {}
    for jv in ordered:
        p = jv.parallelism if jv.parallelism > 0 else default_parallelism
        m = jv.max_parallelism if jv.max_parallelism > 0 else default_max_parallelism(p)
        if p > m:
            span = job_graph.stream_graph.nodes[jv.head].span
            raise PlanError(
                f"Vertex {jv.name}'s parallelism ({p}) is higher than the max parallelism ({m}). "
                "Please lower the parallelism or increase the max parallelism.",
                span, java_class="JobException")
        resolved[jv.id] = (p, m)
    vertices = tuple(
        ExecutionJobVertex(
            jv, *resolved[jv.id],
            inputs=tuple(ConsumedInput(e, resolved[e.source][0], resolved[jv.id][0])
                         for e in jv.inputs))
        for jv in ordered)
    consumed = {id(c.edge): c for v in vertices for c in v.inputs}
    results = tuple(
        IntermediateResult(ds, resolved[ds.producer][0],
                           tuple(consumed[id(e)] for e in ds.consumers))
        for ds in job_graph.datasets)

    # Pipelined regions over execution vertices.
    offset: dict[str, int] = {}
    total = 0
    for v in vertices:
        offset[v.id] = total
        total += v.parallelism
    uf = _UnionFind(total)
    blocking: list[tuple[ConsumedInput, int, int]] = []
    for v in vertices:
        for c in v.inputs:
            po, co = offset[c.edge.source], offset[v.id]
            if c.edge.result_type == BLOCKING:
                blocking.append((c, po, co))
                continue
            if c.pattern == ALL_TO_ALL:
                for j in range(c.producer_parallelism):
                    uf.union(po + j, co)
                for i in range(c.consumer_parallelism):
                    uf.union(po, co + i)
            else:
                for i in range(c.consumer_parallelism):
                    for j in c.partitions(i):
                        uf.union(po + j, co + i)
    roots = sorted({uf.find(x) for x in range(total)})
    region_index = {r: i for i, r in enumerate(roots)}
    succ: list[set[int]] = [set() for _ in roots]
    for c, po, co in blocking:
        for i in range(c.consumer_parallelism):
            dst = region_index[uf.find(co + i)]
            for j in c.partitions(i):
                src = region_index[uf.find(po + j)]
                if src != dst:
                    succ[src].add(dst)
    comp = _merge_cycles(len(roots), succ) if blocking else list(range(len(roots)))
    members: dict[int, list[tuple[str, int]]] = {}
    for v in vertices:
        base = offset[v.id]
        for i in range(v.parallelism):
            members.setdefault(comp[region_index[uf.find(base + i)]], []).append((v.id, i))
    regions = tuple(tuple(m) for _, m in sorted(members.items(), key=lambda kv: kv[1][0][1]
                                                 + offset[kv[1][0][0]]))
    return ExecutionGraph(job_graph=job_graph, vertices=vertices, regions=regions,
                          results=results)
