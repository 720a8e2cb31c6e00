"""Transformations -> StreamGraph (Flink's StreamGraphGenerator), iteratively.

Flink translates each registered transformation, inputs first, memoised. We do the same
post-order walk with an explicit stack so 100,000-operator programs need no recursion.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

from flowc._util import paused_gc
from flowc.errors import InternalError, PlanError
from flowc.operators import TimestampsAndWatermarksOp, WindowOp
from flowc.planner.sink_topology import SinkCommitterOp, committers_enabled, has_committer
from flowc.planner.stream_graph import NodeKind, StreamEdge, StreamGraph, StreamNode
from flowc.planner.watermark_timing import timed
from flowc.transformations import (
    UNBOUNDED_IN_BATCH,
    ChainingStrategy,
    KeySelector,
    OneInputTransformation,
    OutputTag,
    Partitioner,
    PartitionerKind,
    PartitionTransformation,
    Program,
    RuntimeExecutionMode,
    SideOutputTransformation,
    SinkTransformation,
    SourceTransformation,
    Transformation,
    TwoInputTransformation,
    UnionTransformation,
    resolve_mode,
    unbounded_sources,
)

DEFAULT_SLOT_SHARING_GROUP = "default"
_FORWARD = Partitioner(PartitionerKind.FORWARD)
_REBALANCE = Partitioner(PartitionerKind.REBALANCE)


@dataclass
class _Virtual:
    original: int
    partitioner: Partitioner | None = None
    tag: OutputTag | None = None
    # Flink's StreamExchangeMode of a partition ("BATCH" only for a sink's failover region).
    exchange_mode: str | None = None


@dataclass
class _Builder:
    """Mutable scratch state of one generation run; never escapes ``generate_stream_graph``."""

    program: Program
    nodes: dict[int, StreamNode] = field(default_factory=dict)
    edges: list[StreamEdge] = field(default_factory=list)
    out_edges: dict[int, list[StreamEdge]] = field(default_factory=dict)
    in_edges: dict[int, list[StreamEdge]] = field(default_factory=dict)
    pair_counts: dict[tuple[int, int], int] = field(default_factory=dict)
    virtual: dict[int, _Virtual] = field(default_factory=dict)
    next_id: int = 0
    sources: list[int] = field(default_factory=list)
    sinks: list[int] = field(default_factory=list)

    # -------------------------------------------------------------- nodes

    def add_node(self, node: StreamNode) -> None:
        if node.id in self.nodes:
            raise PlanError(f"Duplicate vertexID {node.id}", node.span,
                            java_class="RuntimeException")
        self.nodes[node.id] = node
        self.out_edges[node.id] = []
        self.in_edges[node.id] = []
        if node.kind is NodeKind.SOURCE:
            self.sources.append(node.id)
        elif node.kind is NodeKind.SINK:
            self.sinks.append(node.id)

    def draw_id(self) -> int:
        # Flink draws these from the transformation counter during translation.
        nid = self.next_id
        self.next_id += 1
        return nid

    def add_virtual(self, v: _Virtual) -> int:
        vid = self.draw_id()
        self.virtual[vid] = v
        return vid

    def slot_group_of(self, node_or_virtual: int) -> str:
        while node_or_virtual in self.virtual:
            node_or_virtual = self.virtual[node_or_virtual].original
        return self.nodes[node_or_virtual].slot_sharing_group

    def determine_slot_group(self, specified: str | None, input_ids: list[int]) -> str:
        if specified is not None:
            return specified
        group: str | None = None
        for iid in input_ids:
            candidate = self.slot_group_of(iid)
            if group is None:
                group = candidate
            elif group != candidate:
                return DEFAULT_SLOT_SHARING_GROUP
        return group if group is not None else DEFAULT_SLOT_SHARING_GROUP

    # -------------------------------------------------------------- edges

    def add_edge(self, upstream: int, downstream: int, type_number: int) -> None:
        partitioner: Partitioner | None = None
        tag: OutputTag | None = None
        exchange_mode: str | None = None
        # Resolve virtual nodes; the partitioner / tag nearest the consumer wins.
        while upstream in self.virtual:
            v = self.virtual[upstream]
            if v.partitioner is not None and partitioner is None:
                partitioner = v.partitioner
                exchange_mode = v.exchange_mode
            if v.tag is not None and tag is None:
                tag = v.tag
            upstream = v.original
        up = self.nodes[upstream]
        down = self.nodes[downstream]
        if partitioner is None:
            partitioner = _FORWARD if up.parallelism == down.parallelism else _REBALANCE
        if partitioner.kind is PartitionerKind.FORWARD and up.parallelism != down.parallelism:
            raise PlanError(
                "Forward partitioning does not allow change of parallelism. Upstream operation: "
                f"{up} parallelism: {up.parallelism}, downstream operation: {down} parallelism: "
                f"{down.parallelism} You must use another partitioning strategy, such as "
                "broadcast, rebalance, shuffle or global.",
                down.span, java_class="UnsupportedOperationException")
        pair = (upstream, downstream)
        n = self.pair_counts.get(pair, 0)
        self.pair_counts[pair] = n + 1
        edge = StreamEdge(upstream, downstream, type_number, partitioner, tag,
                          exchange_mode or "UNDEFINED", n)
        self.edges.append(edge)
        self.out_edges[upstream].append(edge)
        self.in_edges[downstream].append(edge)


def _max_parallelism(t: Transformation, program: Program) -> int:
    if t.max_parallelism > 0:
        return t.max_parallelism
    if program.config.max_parallelism > 0:
        return program.config.max_parallelism
    return -1


def _chaining(t: Transformation, keyed: bool, program: Program) -> ChainingStrategy:
    # Flink BATCH (BatchExecutionUtils.adjustChainingStrategy): keyed operators start chains.
    if (program.config.mode is RuntimeExecutionMode.BATCH and keyed
            and t.chaining in (ChainingStrategy.ALWAYS, ChainingStrategy.HEAD_WITH_SOURCES)):
        return ChainingStrategy.HEAD
    return t.chaining


def _node(b: _Builder, t: Transformation, kind: NodeKind, name: str, operator: object,
          keys: tuple[KeySelector | None, ...], input_ids: list[int],
          two_input: bool = False, node_id: int | None = None) -> StreamNode:
    keyed = any(k is not None for k in keys)
    # Flink's translators: the transformation's own parallelism, else the environment's *at
    # translation time* (so an operator made before env.set_parallelism() still gets it).
    parallelism = t.parallelism if t.parallelism != -1 else b.program.config.parallelism
    return StreamNode(
        id=t.id if node_id is None else node_id, name=name, kind=kind, parallelism=parallelism,
        max_parallelism=_max_parallelism(t, b.program),
        slot_sharing_group=b.determine_slot_group(t.slot_sharing_group, input_ids),
        chaining=_chaining(t, keyed, b.program), operator=operator, keys=keys, uid=t.uid,
        uid_hash=t.uid_hash, span=t.span, output_type=t.output_type,
        description=t.description, two_input=two_input,
        sink_writer=kind is NodeKind.SINK and isinstance(t, SinkTransformation) and not t.legacy)


def _translate(b: _Builder, t: Transformation, inputs: list[list[int]]) -> list[int]:
    """Translate one transformation whose inputs are translated; returns its result ids."""
    if isinstance(t, SourceTransformation):
        node = _node(b, t, NodeKind.SOURCE, "Source: " + t.name, t.source, (), [])
        b.add_node(dataclasses.replace(
            node, watermark_strategy=timed(t.watermark_strategy, b.program.config)))
        return [t.id]
    if isinstance(t, OneInputTransformation):
        ids = inputs[0]
        op = t.operator
        if isinstance(op, TimestampsAndWatermarksOp):
            op = dataclasses.replace(op, strategy=timed(op.strategy, b.program.config))
        b.add_node(_node(b, t, NodeKind.OPERATOR, t.name, op, (t.key,), ids))
        for iid in ids:
            b.add_edge(iid, t.id, 0)
        return [t.id]
    if isinstance(t, TwoInputTransformation):
        all_ids = inputs[0] + inputs[1]
        b.add_node(_node(b, t, NodeKind.OPERATOR, t.name, t.operator, (t.key1, t.key2),
                         all_ids, two_input=True))
        for iid in inputs[0]:
            b.add_edge(iid, t.id, 1)
        for iid in inputs[1]:
            b.add_edge(iid, t.id, 2)
        return [t.id]
    if isinstance(t, SinkTransformation):
        ids = inputs[0]
        if t.legacy:
            node_id, name = t.id, "Sink: " + t.name
        else:
            # Flink 2.x expands a v2 sink into a writer transformation created (so drawing a
            # new id) while translating the sink.
            node_id, name = b.draw_id(), t.name + ": Writer"
        committer = (not t.legacy and has_committer(t.sink)
                     and committers_enabled(b.program.config))
        if committer:
            b.draw_id()  # the failover-region partition transformation
            committer_id = b.draw_id()
        b.add_node(_node(b, t, NodeKind.SINK, name, t.sink, (None,), ids, node_id=node_id))
        for iid in ids:
            b.add_edge(iid, node_id, 0)
        if committer:
            _add_committer(b, t, node_id, committer_id)
        return [node_id]
    if isinstance(t, UnionTransformation):
        return [iid for ids in inputs for iid in ids]
    if isinstance(t, PartitionTransformation):
        return [b.add_virtual(_Virtual(iid, partitioner=t.partitioner)) for iid in inputs[0]]
    if isinstance(t, SideOutputTransformation):
        return [b.add_virtual(_Virtual(iid, tag=t.tag)) for iid in inputs[0]]
    raise InternalError(f"unknown transformation kind {type(t).__name__}")


def _add_committer(b: _Builder, t: SinkTransformation, writer_id: int, node_id: int) -> None:
    """``<name>: Committer`` behind the writer (flowc.planner.sink_topology): FORWARD, with
    exchange mode BATCH in BATCH mode (Flink resets it to UNDEFINED in STREAMING), through a
    virtual partition node whose id is drawn now, as Flink's translator draws it."""
    batch = b.program.config.mode is RuntimeExecutionMode.BATCH
    virtual = b.add_virtual(_Virtual(writer_id, partitioner=_FORWARD,
                                     exchange_mode="BATCH" if batch else None))
    node = _node(b, t, NodeKind.OPERATOR, t.name + ": Committer", SinkCommitterOp(t.sink),
                 (None,), [virtual], node_id=node_id)
    uid = None if t.uid is None else f"Sink Committer: {t.uid}"
    b.add_node(dataclasses.replace(node, uid=uid, uid_hash=None))
    b.add_edge(virtual, node_id, 0)


def _check_side_outputs(b: _Builder) -> None:
    """A side output requested from a window whose only side output is its late data must use
    the late-data tag (flowc: Flink silently gives an empty stream; we report the likely typo
    at plan time with the line). A window with a process window function may emit any tag
    through its context, so it is not checked."""
    for e in b.edges:
        if e.output_tag is None:
            continue
        src = b.nodes[e.source_id]
        op = src.operator
        if (isinstance(op, WindowOp) and op.late_tag is not None and op.window_fn is None
                and op.late_tag != e.output_tag):
            dst = b.nodes[e.target_id]
            raise PlanError(
                f"side output '{e.output_tag.tag_id}' is not produced by {src}: its late data "
                f"goes to '{op.late_tag.tag_id}'", dst.span, java_class="IllegalArgumentException")


def generate_stream_graph(program: Program) -> StreamGraph:
    with paused_gc():
        return _generate(program)


def _generate(program: Program) -> StreamGraph:
    if not program.roots:
        raise PlanError("No operators defined in streaming topology. Cannot execute.",
                        java_class="IllegalStateException")
    unbounded = unbounded_sources(program.transformations, program.roots)
    if unbounded and program.config.mode is RuntimeExecutionMode.BATCH:
        raise PlanError(UNBOUNDED_IN_BATCH, unbounded[0].span,
                        java_class="IllegalStateException")
    program = dataclasses.replace(program, config=resolve_mode(program.config,
                                                               bool(unbounded)))
    b = _Builder(program, next_id=max(program.next_id, max(program.transformations, default=0) + 1))
    ts = program.transformations
    done: dict[int, list[int]] = {}
    for root in program.roots:
        # Explicit-stack post-order: a frame is (transformation id, next input index).
        stack: list[list[int]] = [[root, 0]]
        while stack:
            frame = stack[-1]
            tid, i = frame
            if tid in done:
                stack.pop()
                continue
            t = ts[tid]
            inputs = t.inputs
            if i < len(inputs):
                frame[1] = i + 1
                if inputs[i] not in done:
                    stack.append([inputs[i], 0])
                continue
            stack.pop()
            done[tid] = _translate(b, t, [done[x] for x in inputs])
    _check_side_outputs(b)
    return StreamGraph(
        config=program.config,
        nodes=b.nodes,
        edges=tuple(b.edges),
        out_edges={k: tuple(v) for k, v in b.out_edges.items()},
        in_edges={k: tuple(v) for k, v in b.in_edges.items()},
        source_ids=tuple(sorted(b.sources)),
        sink_ids=tuple(sorted(b.sinks)),
    )
