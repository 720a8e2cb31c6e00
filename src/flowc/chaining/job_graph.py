"""The JobGraph IR: chained vertices, intermediate datasets and job edges."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from flowc.chaining.rules import ChainBreak
from flowc.planner.stream_graph import NodeKind, StreamEdge, StreamGraph
from flowc.transformations import Config, OutputTag, Partitioner

PIPELINED_BOUNDED = "PIPELINED_BOUNDED"
BLOCKING = "BLOCKING"
POINTWISE = "POINTWISE"
ALL_TO_ALL = "ALL_TO_ALL"


@dataclass(frozen=True)
class OperatorInfo:
    node_id: int
    id: str  # generated operator id (hex)
    name: str
    uid: str | None
    uid_hash: str | None  # user-defined operator id (set_uid_hash)


@dataclass(frozen=True, eq=False)
class JobEdge:
    dataset: int
    source: str  # producing JobVertex id
    target: str  # consuming JobVertex id
    distribution_pattern: str
    result_type: str
    ship_strategy: str
    stream_edge: StreamEdge
    breaks: tuple[tuple[ChainBreak, str], ...]

    @property
    def partitioner(self) -> Partitioner:
        return self.stream_edge.partitioner

    @property
    def type_number(self) -> int:
        return self.stream_edge.type_number


@dataclass(frozen=True, eq=False)
class IntermediateDataSet:
    id: int
    producer: str  # JobVertex id
    producer_node: int  # the chained StreamNode whose output this is
    result_type: str
    output_tag: OutputTag | None
    partitioner: Partitioner
    consumers: tuple[JobEdge, ...]


@dataclass(frozen=True, eq=False)
class JobVertex:
    id: str
    name: str
    parallelism: int
    max_parallelism: int
    slot_sharing_group: str
    slot_sharing_group_index: int
    head: int
    # Chained StreamNode ids in Flink's operator order: depth-first post-order, head last.
    chain: tuple[int, ...]
    operators: tuple[OperatorInfo, ...]
    chained_edges: tuple[StreamEdge, ...]
    inputs: tuple[JobEdge, ...]
    produced: tuple[int, ...]
    region: int

    @property
    def is_input_vertex(self) -> bool:
        return not self.inputs


@dataclass(frozen=True, eq=False)
class JobGraph:
    config: Config
    stream_graph: StreamGraph
    # In creation order (Flink's JobGraph.taskVertices insertion order).
    vertices: Mapping[str, JobVertex]
    datasets: tuple[IntermediateDataSet, ...]
    node_vertex: Mapping[int, str]

    def vertex(self, vertex_id: str) -> JobVertex:
        return self.vertices[vertex_id]

    def vertex_of_node(self, node_id: int) -> JobVertex:
        return self.vertices[self.node_vertex[node_id]]

    def _consumer_edges(self, v: JobVertex) -> Iterator[JobEdge]:
        for ds in v.produced:
            yield from self.datasets[ds].consumers

    def vertices_sorted(self) -> list[JobVertex]:
        """Flink's ``getVerticesSortedTopologicallyFromSources``, without recursion."""
        ordered = [v for v in self.vertices.values() if v.is_input_vertex]
        remaining = {v.id: v for v in self.vertices.values() if not v.is_input_vertex}
        pos = 0
        while remaining:
            if pos >= len(ordered):
                raise ValueError("The job graph is cyclic.")
            current = ordered[pos]
            pos += 1
            stack = [self._consumer_edges(current)]
            while stack:
                edge = next(stack[-1], None)
                if edge is None:
                    stack.pop()
                    continue
                v = remaining.get(edge.target)
                if v is None:
                    continue
                if any(e is not edge and e.source in remaining for e in v.inputs):
                    continue
                ordered.append(v)
                del remaining[v.id]
                stack.append(self._consumer_edges(v))
        return ordered

    def slots_required(self) -> int:
        best: dict[int, int] = {}
        for v in self.vertices.values():
            p = max(v.parallelism, 1)
            best[v.slot_sharing_group_index] = max(best.get(v.slot_sharing_group_index, 0), p)
        return sum(best.values())

    def dump(self) -> str:
        """The golden text format of shared/testdata/flink-2.3 (``.expected`` files)."""
        lines = []
        for v in self.vertices_sorted():
            lines.append(f"vertex {v.name} | p={v.parallelism} | maxp={v.max_parallelism} | "
                         f"ssg={v.slot_sharing_group} | id={v.id}")
            lines.append(f"operators {v.name} | " + " ".join(o.id for o in v.operators))
            for e in v.inputs:
                lines.append(f"edge {self.vertices[e.source].name} => {v.name} | "
                             f"{e.distribution_pattern} | {e.result_type} | {e.ship_strategy}")
        return "\n".join(lines) + "\n"

    def to_dict(self) -> dict[str, Any]:
        """Stable JSON rendering (docs/plan-format.md)."""
        nodes = self.stream_graph.nodes
        modes = self.stream_graph.changelog_modes()
        return {
            "mode": self.config.mode.value,
            "slots_required": self.slots_required(),
            "vertices": [
                {
                    "id": v.id,
                    "name": v.name,
                    "parallelism": v.parallelism,
                    "max_parallelism": v.max_parallelism,
                    "slot_sharing_group": v.slot_sharing_group,
                    "slot_sharing_group_index": v.slot_sharing_group_index,
                    "pipelined_region": v.region,
                    "operators": [
                        {"id": o.id, "name": o.name, "uid": o.uid, "uid_hash": o.uid_hash,
                         "node": o.node_id,
                         "line": (nodes[o.node_id].span.line
                                  if nodes[o.node_id].span else None),
                         "changelog_mode": (None if nodes[o.node_id].kind is NodeKind.SINK
                                            else modes[o.node_id])}
                        for o in v.operators
                    ],
                    "inputs": [
                        {
                            "dataset": e.dataset,
                            "producer": e.source,
                            "distribution_pattern": e.distribution_pattern,
                            "result_type": e.result_type,
                            "ship_strategy": e.ship_strategy,
                            "type_number": e.type_number,
                            "output_tag": (e.stream_edge.output_tag.tag_id
                                           if e.stream_edge.output_tag else None),
                            "not_chained_because": [reason for _, reason in e.breaks],
                        }
                        for e in v.inputs
                    ],
                }
                for v in self.vertices_sorted()
            ],
        }
