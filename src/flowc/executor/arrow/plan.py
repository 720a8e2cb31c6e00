"""Which jobs the columnar executor runs, and each vertex's chain description.

A job runs columnar when every stream in it has a declared schema and every member is one
the columnar chain executes (``chain.py``); the first reason it does not is reported (``flowc
run -v`` prints it) and the job runs on the row executor. The option ``flowc.executor``
(``columnar`` / ``row`` / ``auto``, default ``auto``) forces one.
"""

from __future__ import annotations

from typing import Any

from flowc.chaining.job_graph import JobGraph
from flowc.common.typeinfo import TypeInformation
from flowc.executor.arrow import rank, rolling, rowop, sessions, typed
from flowc.executor.arrow.chain import Member, member_kind
from flowc.executor.arrow.convert import Changelog
from flowc.executor.arrow.joins import plan_join, tag_side
from flowc.executor.arrow.regular_join import plan_regular_join
from flowc.executor.arrow.windows import supported
from flowc.executor.runtime.sources import source_watermarks
from flowc.operators import (
    CollectionSource,
    CollectSink,
    DatagenSource,
    DiscardingSink,
    FileSink,
    FileSource,
    FlatMapOp,
    MapOp,
    PrintSink,
    RateDatagenSource,
    ReduceOp,
    RowFormatFileSink,
    SequenceSource,
    SocketSource,
    TextLineFileSource,
    WindowOp,
)
from flowc.planner.stream_graph import UPDATING, NodeKind
from flowc.transformations import RuntimeExecutionMode
from flowc.types import Schema

OPTION = "flowc.executor"
# Sources the runner reads with ``runtime.sources.source_values``, then converts to batches.
IN_MEMORY = (CollectionSource, SequenceSource, DatagenSource, TextLineFileSource)
# STREAMING sources whose micro-batch shares are records (``streaming/columnar.py`` puts
# them into columns): datagen without a row limit and sockets.
STREAM_RECORDS = (RateDatagenSource, SocketSource)
CHOICES = ("auto", "columnar", "row")


def executor_choice(job_graph: JobGraph) -> str:
    options = dict(job_graph.stream_graph.config.options)
    return options.get(OPTION, "auto").strip().lower()


def plan_members(job_graph: JobGraph, idleness: bool = False
                 ) -> dict[str, list[Member]] | str:
    """Per vertex, its members head first; or why the job cannot run columnar.
    ``idleness``: the caller handles watermark generators' idleness timeouts (the
    streaming micro-batches, ``streaming/columnar.py``)."""
    sg = job_graph.stream_graph
    batch = sg.config.mode is RuntimeExecutionMode.BATCH
    modes = sg.changelog_modes()
    # Nodes whose columns are not their output type's: a rolling aggregate's start and
    # reduce (``rolling.py``); updating streams' schemas carry the row kind.
    columns: dict[int, Any] = {}
    # Pickled Python records (no declared Types) can ride in a binary column
    # (``typed.py``), but gain nothing from it: ``auto`` leaves such jobs row-wise.
    pickled = executor_choice(job_graph) == "columnar"
    out: dict[str, list[Member]] = {}
    for v in job_graph.vertices_sorted():
        chained = {id(e) for e in v.chained_edges}
        members: list[Member] = []
        for nid in reversed(v.chain):  # head first
            node = sg.nodes[nid]
            spec = node.operator
            schema = _changelog(node.output_type, modes[nid] == UPDATING)
            ins = sg.inputs(nid)
            updating_in = any(modes[e.source_id] == UPDATING for e in ins)
            planned = _rolling(sg, nid, spec, schema, columns, modes)
            if isinstance(planned, str):
                return planned
            rolling_kind, spec, schema = planned
            join = plan_join(sg, nid, batch) if node.kind is NodeKind.OPERATOR else None
            if join is None and node.kind is NodeKind.OPERATOR:
                join = plan_regular_join(sg, nid, batch)
            if isinstance(join, str):
                return join
            join_side = tag_side(spec)
            if join_side is not None:  # a window join's tagging map: the side's own records
                schema = sg.nodes[sg.inputs(nid)[0].source_id].output_type
            if not _declared(schema, pickled):
                if isinstance(schema, Schema):
                    return f"'{node.name}' has no declared schema of storable types"
                declared = "none" if schema is None else repr(schema)
                return f"'{node.name}' declares no Types with columns ({declared}; see typed.py)"
            if (node.two_input and not (join and nid == v.head)) or (
                    len(sg.inputs(nid)) > 1 and nid != v.head):
                return f"'{node.name}' has two inputs"
            if node.kind is NodeKind.SOURCE:
                # In-memory sources: for Python API streams (.flow ones stay as they were).
                if not isinstance(spec, FileSource) and not (
                        isinstance(spec, IN_MEMORY) and not isinstance(schema, Schema)) \
                        and not (isinstance(spec, STREAM_RECORDS) and not batch):
                    return f"'{node.name}' is a source kind the columnar executor lacks"
                # A source applying its own watermark strategy assigns timestamps itself.
                wm = source_watermarks(node)
                if wm is not None and not batch and not idleness \
                        and wm.strategy.idleness is not None:
                    return f"'{node.name}' has an idleness timeout"
                kind, spec = ("timestamps", wm) if wm is not None else ("source", spec)
                in_schema = schema
            elif node.kind is NodeKind.SINK:
                if not isinstance(spec, (PrintSink, CollectSink, FileSink, DiscardingSink,
                                         RowFormatFileSink)):
                    return f"'{node.name}' is a sink kind the columnar executor lacks"
                kind = "sink"
                in_schema = schema
            else:
                kind = rolling_kind or member_kind(spec) or ""
                in_schema = _input_type(sg, ins[0], columns, modes) if ins else None
                if join is not None:
                    kind, spec, in_schema = join.kind, join, join.schemas[0]
                elif join_side is not None:
                    kind, in_schema = "tag", schema
                if isinstance(spec, WindowOp) and supported(spec, node.keys[0] if node.keys
                                                             else None, batch):
                    kind = "window"
                elif isinstance(spec, WindowOp) and sessions.supported(
                        spec, node.keys[0] if node.keys else None,
                        in_schema if isinstance(in_schema, Schema) else None,
                        streaming=not batch):
                    kind = "session"
                ranked = rank.plan_rank(spec, node.keys[0] if node.keys else None,
                                        in_schema) if batch and not kind else None
                if ranked is not None:  # a BATCH Top-N, vectorised (``rank.py``)
                    kind, spec = "rank", ranked
                if not kind and isinstance(spec, rowop.KINDS) and not node.two_input \
                        and _declared(in_schema, pickled):
                    kind = "row_op"  # the runtime operator inside the chain (``rowop.py``)
                if not kind:
                    return f"'{node.name}' ({type(spec).__name__}) runs on the row executor"
                if updating_in and kind not in ("map", "filter", "flat_map", "row_op", "pass",
                                                "rolling_start", "rolling"):
                    return f"'{node.name}' consumes an updating stream"
                if kind == "timestamps" and not batch and not idleness \
                        and spec.strategy.idleness is not None:
                    return f"'{node.name}' has an idleness timeout"
                if not _declared(in_schema, pickled):
                    return f"the input of '{node.name}' has no declared schema"
            outputs: list[tuple[str, int]] = []
            side: list[tuple[str, int]] = []
            tagged: dict[Any, list[tuple[str, int]]] = {}
            for e in sg.outputs(nid):
                late = kind in ("window", "session", "row_op") and e.output_tag is not None \
                    and e.output_tag == getattr(spec, "late_tag", None)
                ref = ("node", e.target_id) if id(e) in chained else ("edge", id(e))
                if e.output_tag is not None and not late:
                    # A runtime operator's other side outputs (``yield tag, value``).
                    if kind != "row_op" or not _declared(e.output_tag.type_info, pickled):
                        return f"'{node.name}' has a side output"
                    tagged.setdefault(e.output_tag, []).append(ref)
                    continue
                (side if late else outputs).append(ref)
            key = node.keys[0] if node.keys else None
            if join_side is not None:  # routed by the side's own key (the union key's half)
                union = sg.outputs(nid)[0].partitioner.key.fn
                key = union.first if join_side == 0 else union.second
            members.append(Member(nid, kind, spec, in_schema, schema, outputs, key, side,
                                  node.name,
                                  [(t, t.type_info, refs) for t, refs in tagged.items()]))
        out[v.id] = members
    return out


def _input_type(sg: Any, edge: Any, columns: dict[int, Any], modes: dict[int, str]) -> Any:
    """The type of the records on ``edge``: a side output's (other than a window's late
    data, which the window member passes on as its input's) is its tag's."""
    source = sg.nodes[edge.source_id]
    tag = edge.output_tag
    if tag is not None and tag != getattr(source.operator, "late_tag", None):
        return tag.type_info
    if edge.source_id in columns:
        return columns[edge.source_id]
    return _changelog(source.output_type, modes[edge.source_id] == UPDATING)


def _changelog(schema: Any, updating: bool) -> Any:
    """An updating stream's schema carries the row kind (``convert.Changelog``)."""
    return Changelog(schema.fields) if updating and isinstance(schema, Schema) else schema


def _rolling(sg: Any, nid: int, spec: Any, schema: Any, columns: dict[int, Any],
             modes: dict[int, str]) -> tuple[str | None, Any, Any] | str:
    """A rolling aggregate's members (``rolling.py``): (kind, spec, output columns), or
    why it runs on the row executor; (None, spec, schema) for other nodes."""
    fn = getattr(spec, "fn", None)
    node = sg.nodes[nid]
    ins = sg.inputs(nid)
    if isinstance(spec, MapOp) and isinstance(fn, rolling.RollingStart):
        in_schema = _input_type(sg, ins[0], columns, modes)
        plan = rolling.start_plan(fn, in_schema)
        if isinstance(plan, str):
            return f"'{node.name}' (a rolling aggregate) runs on the row executor: {plan}"
        columns[nid] = _changelog(rolling.start_schema(plan, in_schema),
                                  modes[nid] == UPDATING)
        return "rolling_start", plan, columns[nid]
    if isinstance(spec, ReduceOp) and rolling.is_merge(fn) and len(ins) == 1:
        start = sg.nodes[ins[0].source_id]
        changes = [e.target_id for e in sg.outputs(nid)
                   if rolling.is_changes(getattr(sg.nodes[e.target_id].operator, "fn", None))]
        if ins[0].source_id not in columns or len(changes) != 1:
            return f"'{node.name}' (a rolling aggregate) runs on the row executor"
        out = sg.nodes[changes[0]]
        plan = rolling.start_plan(start.operator.fn, Schema(()))
        assert not isinstance(plan, str)
        plan = rolling.RollingPlan(plan.fn, plan.agg, spec, out.operator.fn)
        columns[nid] = _changelog(out.output_type, modes[changes[0]] == UPDATING)
        return "rolling", plan, columns[nid]
    if isinstance(spec, FlatMapOp) and rolling.is_changes(fn) and ins[0].source_id in columns:
        return "pass", spec, schema
    return None, spec, schema


def _declared(schema: Any, pickled: bool) -> bool:
    """Whether a stream has columns: a .flow / SQL schema of storable types, or declared
    Python ``Types`` (``typed.py``); with ``pickled``, any Python API stream."""
    if isinstance(schema, Schema):
        return all(f.type.storable for f in schema)
    if isinstance(schema, TypeInformation) and typed.exact(schema):
        return True
    return pickled and (schema is None or isinstance(schema, TypeInformation))


def describe(members: dict[str, list[Member]]) -> Any:
    return {vid: [m.kind for m in ms] for vid, ms in members.items()}
