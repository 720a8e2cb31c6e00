"""What the streaming executor runs: per JobVertex, its members, output slots and input
channels (computed once on the driver; picklable, shipped to every micro-batch's tasks).

Supported today (``plan_streaming`` names the first thing that is not): any number of
unbounded sources (monitored csv / json lines / parquet / text-line files on local paths,
sockets, datagen without a row limit, Kafka: ``streaming.sources``), at least one, beside
bounded sources (files on local paths, collections, sequences, datagen with a row limit:
read in the first micro-batch, then finished); the runtime's one- and two-input operators
(map / filter / flat_map / process, keyed process, rolling aggregates, windows, unions,
connect + co-map / co-flat-map / co-process, keyed co-process, interval joins, broadcast
state, ...); print, blackhole, Kafka, csv / json / parquet file sinks, collect sinks (read
per micro-batch by a callback: the REPL); every partitioner.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from flowc.chaining.job_graph import JobGraph
from flowc.errors import FlowcError, UnsupportedError
from flowc.executor.runtime import files
from flowc.executor.runtime.core import TaskInfo
from flowc.executor.runtime.factory import create_operator
from flowc.executor.runtime.sources import source_watermarks
from flowc.executor.sinks import check_sink, declared_columns
from flowc.executor.streaming.sources import UNBOUNDED_KINDS
from flowc.executor.wiring import Wiring
from flowc.operators import (
    CollectionSource,
    CollectSink,
    DatagenSource,
    DiscardingSink,
    FileSink,
    FileSource,
    KafkaSink,
    PrintSink,
    SequenceSource,
    TextLineFileSource,
)
from flowc.planner.stream_graph import NodeKind, StreamGraph


@dataclass
class EdgeOut:
    """A non-chained out-edge of a member: ``slot`` in the vertex's items; ``targets[k]``
    the consumer subtasks producer subtask ``k`` feeds."""

    slot: int
    edge: Any  # StreamEdge
    tag: Any  # output tag (None: the main output)
    consumer_parallelism: int
    consumer_max_parallelism: int
    targets: list[list[int]]
    order: int  # the edge's position among the consumer head's inputs


@dataclass
class Member:
    """One chain member: ``kind`` source / operator / sink; ``chained`` (target node id,
    tag) pairs and ``edges`` it feeds."""

    nid: int
    name: str
    kind: str
    spec: Any
    keys: tuple[Any, ...] = ()
    wm: Any = None  # a source's own TimestampsAndWatermarksOp
    chained: list[tuple[int, Any]] = field(default_factory=list)
    edges: list[EdgeOut] = field(default_factory=list)
    operator_id: str = ""


@dataclass
class VertexPlan:
    id: str
    name: str
    parallelism: int
    max_parallelism: int
    members: list[Member]  # head first
    open_order: list[int]  # Flink's operator order (tail first), for open()
    # per consumer subtask: channel ids in channel order and each one's input number
    channels: list[list[int]] = field(default_factory=list)
    inputs: list[tuple[str, int]] = field(default_factory=list)  # (producer vertex, slot)
    # the head's input number (1, or 2 for a two-input operator's second input) per input
    # edge; a channel id carries its edge's position in the upper bits (``channel_input``)
    edge_inputs: list[int] = field(default_factory=list)
    source: int | None = None  # a source vertex: its index in StreamingPlan.sources

    def channel_input(self, channel: int) -> int:
        return self.edge_inputs[channel >> 16]

    @property
    def head(self) -> Member:
        return self.members[0]


@dataclass(frozen=True)
class SourcePlan:
    """One source of the job: unbounded (one of ``streaming.sources.UNBOUNDED_KINDS``, in
    the query's union) or bounded (read in the first micro-batch, then finished)."""

    index: int  # the source's number in the query's union (the ``src`` column)
    spec: Any
    node: int
    vertex: str
    bounded: bool


@dataclass
class StreamingPlan:
    vertices: list[VertexPlan]  # topological
    sources: list[SourcePlan]  # in node order
    sinks: dict[int, Any]  # sink node id -> spec
    sink_columns: dict[int, Any]  # file sink node -> declared columns
    names: dict[int, str]  # node id -> name


# Bounded sources a streaming job may read besides its unbounded ones (in the first
# micro-batch, with the bounded executors' readers and splits).
BOUNDED_KINDS = (FileSource, TextLineFileSource, CollectionSource, SequenceSource,
                 DatagenSource)


def plan_streaming(job_graph: JobGraph, max_parallelism: Mapping[str, int] | None = None
                   ) -> StreamingPlan:
    """The job's plan, or an UnsupportedError naming (and pointing at) the first operator
    the streaming executor cannot run yet. ``max_parallelism``: per vertex id, the max
    parallelism a restore adopted from a savepoint (the vertex's was derived), used for its
    key groups and for the routing into it."""
    sg = job_graph.stream_graph
    wiring = Wiring(job_graph)
    adopted = max_parallelism or {}
    _check(sg)
    vertices: list[VertexPlan] = []
    slots: dict[int, tuple[str, int]] = {}  # id(stream edge) -> (producer vertex, slot)
    sinks: dict[int, Any] = {}
    columns: dict[int, Any] = {}
    found: list[tuple[Any, int, str]] = []
    for v in job_graph.vertices_sorted():
        p, m = wiring.vertex(v.id)
        m = adopted.get(v.id, m)
        chained = {id(e) for e in v.chained_edges}
        op_ids = {o.node_id: o.id for o in v.operators}
        members: list[Member] = []
        n_slots = 0
        for nid in reversed(v.chain):  # head first
            node = sg.nodes[nid]
            kind = {NodeKind.SOURCE: "source", NodeKind.SINK: "sink"}.get(node.kind, "operator")
            member = Member(nid, node.name, kind, node.operator, tuple(node.keys),
                            operator_id=op_ids.get(nid, str(nid)))
            if kind == "source":
                member.wm = source_watermarks(node)
                found.append((node.operator, nid, v.id))
            elif kind == "sink":
                sinks[nid] = node.operator
                if isinstance(node.operator, FileSink):
                    columns[nid] = declared_columns(node.operator, node.output_type)
            for e in sg.outputs(nid):
                if id(e) in chained:
                    member.chained.append((e.target_id, e.output_tag))
                    continue
                target = job_graph.vertex_of_node(e.target_id)
                tp, tm = wiring.vertex(target.id)
                tm = adopted.get(target.id, tm)
                order = list(sg.inputs(e.target_id)).index(e)
                member.edges.append(EdgeOut(
                    n_slots, e, e.output_tag, tp, tm,
                    [list(wiring.consumers_of(e, k)) for k in range(p)], order))
                slots[id(e)] = (v.id, n_slots)
                n_slots += 1
            members.append(member)
        plan = VertexPlan(v.id, v.name, p, m, members, list(v.chain))
        head_inputs = list(sg.inputs(v.head))
        edges = sorted(v.inputs, key=lambda je: head_inputs.index(je.stream_edge))
        plan.inputs = [slots[id(je.stream_edge)] for je in edges]
        plan.edge_inputs = [je.stream_edge.type_number or 1 for je in edges]
        for idx in range(p):
            plan.channels.append([(order << 16) | k for order, je in enumerate(edges)
                                  for k in wiring.producers_of(je.stream_edge, idx)])
        vertices.append(plan)
    found.sort(key=lambda t: t[1])
    sources = [SourcePlan(k, spec, nid, vid, bool(getattr(spec, "bounded", True)))
               for k, (spec, nid, vid) in enumerate(found)]
    for s in sources:
        next(v for v in vertices if v.id == s.vertex).source = s.index
    return StreamingPlan(vertices, sources, sinks, columns,
                         {nid: n.name for nid, n in sg.nodes.items()})


def _check(sg: StreamGraph) -> None:
    sources = [n for n in sg.nodes.values() if n.kind is NodeKind.SOURCE]
    if sources and all(getattr(n.operator, "bounded", True) for n in sources):
        n = min(sources, key=lambda n: n.id)
        raise UnsupportedError("the streaming executor runs jobs with an unbounded source; "
                               "this job's sources are all bounded", n.span,
                               hint="run it with the batch or reference executor")
    for n in sorted(sg.nodes.values(), key=lambda n: n.id):
        why = _unsupported(sg, n)
        if why is not None:
            raise UnsupportedError(f"the streaming executor cannot run '{n.name}' yet: {why}",
                                   n.span, hint="docs/executor.md, \"Streaming\", lists what "
                                                "runs on unbounded sources today")
        try:
            if isinstance(n.operator, FileSource):
                files.check_spec(n.operator)
            elif isinstance(n.operator, FileSink):
                check_sink(n.operator)
            elif n.kind is NodeKind.OPERATOR:
                create_operator(n.operator, TaskInfo(n.name, 0, 1, 128, False), n.keys)
        except FlowcError as e:
            raise type(e)(e.message, n.span) from None


def _unsupported(sg: StreamGraph, n: Any) -> str | None:
    if n.kind is NodeKind.SOURCE:
        spec = n.operator
        bounded = getattr(spec, "bounded", True)
        if bounded and not isinstance(spec, BOUNDED_KINDS) or \
                not bounded and not isinstance(spec, UNBOUNDED_KINDS):
            return ("its sources must be monitored files, sockets, datagen, Kafka, or "
                    "bounded files, collections and sequences")
        if not isinstance(spec, (FileSource, TextLineFileSource)):
            return None
        if isinstance(spec, TextLineFileSource) and not bounded and len(spec.paths) != 1:
            return "a monitored text-line source watches one directory"
        paths = [spec.path] if isinstance(spec, FileSource) else spec.paths
        if any(files.local_path(p) is None for p in paths):
            return "it reads local paths only"
        return None
    if n.kind is NodeKind.SINK and not isinstance(n.operator, (PrintSink, FileSink,
                                                               DiscardingSink, KafkaSink,
                                                               CollectSink)):
        return "streaming sinks are print, blackhole, Kafka and csv / json / parquet files"
    if isinstance(n.operator, FileSink) and declared_columns(n.operator, n.output_type) is None:
        return "a streamed file sink needs a declared schema"
    return None
