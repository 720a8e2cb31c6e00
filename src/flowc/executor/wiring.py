"""Parallelism and channel wiring of a job, taken from its ExecutionGraph.

Both executors ask this one object which subtasks exist and which producer subtasks feed
which consumer subtasks, so the POINTWISE ranges of flink-semantics §5 are computed in one
place (``flowc.chaining.execution_graph.ConsumedInput``), never re-derived here. A chained
StreamEdge has no JobEdge: it is FORWARD between equal parallelisms, i.e. subtask ``i``
feeds subtask ``i`` only.
"""

from __future__ import annotations

from flowc.chaining import build_execution_graph
from flowc.chaining.execution_graph import ConsumedInput, ExecutionGraph
from flowc.chaining.job_graph import JobGraph
from flowc.planner.stream_graph import StreamEdge


class Wiring:
    def __init__(self, job_graph: JobGraph) -> None:
        # Validates (parallelism <= max parallelism) and resolves -1 defaults.
        self.execution_graph: ExecutionGraph = build_execution_graph(job_graph)
        self._vertex = {v.id: (v.parallelism, v.max_parallelism)
                        for v in self.execution_graph.vertices}
        # Every operator of a chain runs with its vertex's parallelism and max parallelism
        # (Flink's keyed backends use the task's max parallelism).
        self._node = {nid: self._vertex[vid] for nid, vid in job_graph.node_vertex.items()}
        self._inputs = {id(c.edge.stream_edge): c for v in self.execution_graph.vertices
                        for c in v.inputs}

    def vertex(self, vertex_id: str) -> tuple[int, int]:
        """Resolved (parallelism, max parallelism) of a JobVertex."""
        return self._vertex[vertex_id]

    def node(self, node_id: int) -> tuple[int, int]:
        """Resolved (parallelism, max parallelism) of the vertex running a StreamNode."""
        return self._node[node_id]

    def consumed(self, edge: StreamEdge) -> ConsumedInput | None:
        """The ExecutionGraph wiring of a non-chained edge; None for a chained one."""
        return self._inputs.get(id(edge))

    def consumers_of(self, edge: StreamEdge, producer: int) -> range:
        """Consumer subtasks connected to producer subtask ``producer``."""
        c = self._inputs.get(id(edge))
        return range(producer, producer + 1) if c is None else c.consumers_of(producer)

    def producers_of(self, edge: StreamEdge, consumer: int) -> range:
        """Producer subtasks whose output consumer subtask ``consumer`` reads."""
        c = self._inputs.get(id(edge))
        return range(consumer, consumer + 1) if c is None else c.partitions(consumer)
