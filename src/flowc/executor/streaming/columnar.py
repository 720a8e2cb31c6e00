"""Streaming micro-batches run columnar: a job the columnar executor can run
(``arrow/plan.py`` says yes for its STREAMING form) runs each vertex subtask's share of a
micro-batch with the columnar chain code (``arrow/chain.ChainProgram``, ``arrow/route.py``'s
routing, the native file readers), Arrow IPC chunks with their watermark marks on the
edges, instead of ``task.py``'s row-by-row operators.

State between micro-batches is the row path's snapshot, in its format: every member's
``op_<operator id>`` entry is what ``task.operator_state`` writes for the row operator -
the columnar members' state converted to and from it (the STREAMING window aggregate's
groups as the WindowOperator's accumulators and timers; a watermark generator's maximum,
last watermark and record count; a map's watermark and its function's fields; a runtime
operator inside the chain is the row operator itself; the other kinds' converters are
registered in ``converters.py``: a rolling aggregate's keys as the row ReduceOperator's
values, a session window's sessions, an interval join's buffers, a window join's windows)
- plus the input channels' watermarks (``channels``). A join head gets both inputs'
channels (``run_input``) and keeps its state across the batch in ``joins``. So a checkpoint written by one path resumes on the other, and
savepoints read and write the same files. A member without a converter keeps the job on
the row path (``plan_columnar`` says why).

Watermarks are the row path's: the channels' merge continues each channel's watermark
from the previous batch (``merge.merge_streaming``'s ``start``), the source's generator
places its watermarks among the records (``chain.Watermarks``: the per-record running
maximum rule) and emits periodically at the end of the batch if its watermark rose. In a
job with idleness timeouts the edges also carry watermark statuses and the channels merge
through the row path's valve (``columnar_idle.py``, ``merge.merge_streaming_valve``).
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from flowc.api.functions import Function
from flowc.chaining.job_graph import JobGraph
from flowc.errors import ExecutionError, FlowcError
from flowc.executor.arrow import convert, merge
from flowc.executor.arrow.chain import ChainProgram, Member, TaskFailure
from flowc.executor.arrow.convert import Chunk
from flowc.executor.runtime.channels import WatermarkValve
from flowc.executor.runtime.clock import FixedClock, using_clock
from flowc.executor.runtime.core import LONG_MIN, Operator, TaskInfo
from flowc.executor.runtime.factory import create_operator
from flowc.executor.streaming.columnar_idle import (
    counted,
    forwards,
    goes_idle,
    idle_generators,
    pieces,
    status_payload,
    status_routes,
)
from flowc.executor.streaming.commit import sink_chunk
from flowc.executor.streaming.converters import CONVERTERS, MAP_LIKE
from flowc.executor.streaming.plan import EdgeOut, StreamingPlan, VertexPlan
from flowc.executor.streaming.task import (
    DEAD,
    STATS,
    BatchContext,
    _generator,
    _write_snapshot,
    operator_state,
    read_snapshot,
    restore_operator,
    snapshot_path,
)
from flowc.operators import (
    CollectSink,
    DiscardingSink,
    FileSink,
    FileSource,
    PrintSink,
    TextLineFileSource,
)

ROWS = 65536  # records per chunk read from a file
# Member kinds whose state has a converter to the row snapshot (or none to convert).
_KINDS = frozenset({"source", "timestamps", "map", "filter", "flat_map", "window", "row_op",
                    "sink", *MAP_LIKE, *CONVERTERS})
_MAPS = ("map", "filter", "flat_map", *MAP_LIKE)
_SINKS = (PrintSink, FileSink, DiscardingSink, CollectSink)


@dataclass(frozen=True)
class Slot:
    """Where a member's chunks leave the vertex: an edge (``EdgeOut``: its slot number is
    the row plan's, so the runner wires both paths alike) or a sink."""

    index: int
    member: int
    edge: EdgeOut | None = None
    sink: Any = None


@dataclass(frozen=True)
class ColumnarVertex:
    members: list[Member]  # head first, outputs resolved to slots
    slots: dict[int, Slot]
    # the job has idleness timeouts: watermark statuses on the edges, the valve's merge
    statuses: bool = False


def plan_columnar(job_graph: JobGraph, plan: StreamingPlan) -> dict[str, ColumnarVertex] | str:
    """Per vertex, its columnar chain; or why the job's micro-batches run row by row."""
    from flowc.executor.arrow.plan import OPTION, STREAM_RECORDS, executor_choice, plan_members

    if executor_choice(job_graph) == "row":
        return f"{OPTION} = row"
    for s in plan.sources:
        if s.bounded or not isinstance(s.spec, (FileSource, *STREAM_RECORDS)) or \
                isinstance(s.spec, TextLineFileSource):
            return (f"'{plan.names[s.node]}' is not a monitored csv / json / parquet "
                    "directory, a socket or datagen (other sources run row by row)")
    members = plan_members(job_graph, idleness=True)
    if isinstance(members, str):
        return members
    statuses = any(idle_generators(v) for v in plan.vertices)
    out: dict[str, ColumnarVertex] = {}
    for v in plan.vertices:
        edges = {id(e.edge): e for m in v.members for e in m.edges}
        slots: dict[int, Slot] = {e.slot: Slot(e.slot, m.nid, edge=e)
                                  for m in v.members for e in m.edges}
        resolved: list[Member] = []
        for m in members[v.id]:
            why = _unsupported(m)
            if why is not None:
                return why
            if statuses and m.kind in ("interval_join", "window_join"):
                # their merges (interval_state.py, window_join_state.py) have no valve yet
                return f"'{m.name}' is a join in a job with idleness timeouts"

            def resolve(refs: list[tuple[str, int]],
                        edges: dict[int, EdgeOut] = edges) -> list[tuple[str, int]]:
                return [(kind, ref) if kind == "node" else ("slot", edges[ref].slot)
                        for kind, ref in refs]
            outputs = resolve(m.outputs)
            if m.kind == "sink":
                index = len(slots)
                slots[index] = Slot(index, m.nid, sink=m.spec)
                outputs.append(("slot", index))
            resolved.append(replace(m, outputs=outputs, side=resolve(m.side),
                                    tagged=[(tag, t, resolve(refs)) for tag, t, refs in m.tagged]))
        out[v.id] = ColumnarVertex(resolved, slots, statuses)
    return out


def _unsupported(m: Member) -> str | None:
    if m.kind not in _KINDS:
        return (f"'{m.name}' ({m.kind}) has no converter to the row path's snapshots yet "
                "(it runs row by row)")
    if m.kind == "sink" and not isinstance(m.spec, _SINKS):
        return f"'{m.name}' is a sink kind the streaming executor lacks"
    if m.kind in CONVERTERS:
        return CONVERTERS[m.kind].why_not(m)
    return None


# -- one subtask's share of a micro-batch ---------------------------------------------------


def run_columnar_subtask(plan: VertexPlan, vertex: ColumnarVertex, idx: int,
                         ctx: BatchContext, source: tuple[Any, Any] | None,
                         items: Iterable[Any] | None) -> Iterator[tuple[int, Any]]:
    """``task.run_subtask``'s contract (the same snapshot files, sink / dead-letter / stats
    items and failures) with the chain run columnar; ``items`` are the received edge
    payloads ``(channel, sequence, ipc, mark positions, mark values)``."""
    from flowc.executor.spark.tasks import FlowcTaskError

    try:
        state = read_snapshot(ctx, plan.id, idx)
        with using_clock(FixedClock(ctx.batch_timestamp_ms)):
            run = ColumnarRun(plan, vertex, idx)
            try:
                run.restore(state)
                bad = run.run_source(*source) if source is not None else None
                if items is not None:
                    run.run_input(items)
                run.end_batch(ctx.batch_timestamp_ms)
                snap = run.snapshot()
            finally:
                run.close()
        state_bytes = _write_snapshot(snapshot_path(ctx.state_dir, ctx.batch, plan.id, idx),
                                     snap)
    except Exception as e:  # noqa: BLE001 - every failure is reported with its operator
        nid, error = (e.nid, e.error) if isinstance(e, TaskFailure) else \
            (getattr(e, "flowc_node", plan.head.nid), e)
        payload = {"node": nid, "type": type(error).__name__, "message": str(error),
                   "flowc": isinstance(error, FlowcError)}
        raise FlowcTaskError("FLOWC-ERROR" + json.dumps(payload) + "FLOWC-END") from None
    yield from run.items
    if bad is not None:
        for line in bad.lines:
            yield DEAD, (plan.head.nid, line)
    yield STATS, (plan.id, idx, {**run.stats(), "state_bytes": state_bytes})


class ColumnarRun:
    def __init__(self, plan: VertexPlan, vertex: ColumnarVertex, subtask: int) -> None:
        from flowc.executor.arrow.route import Router

        self.plan = plan
        self.vertex = vertex
        self.idx = subtask
        self.items: list[tuple[int, Any]] = []
        self.records_in = 0
        self.seq = 0
        self.valve = WatermarkValve(len(plan.channels[subtask]))
        self.starting = False  # in the batch's start (its processing-time timers)
        tags = {m.nid: m.key for m in vertex.members if m.kind == "tag"}
        self.routers = {
            s.index: Router(
                # a window join's tagging map: routed by the side's own key, as the union
                # key routes the tagged record
                replace(s.edge.edge.partitioner, key=tags[s.member]) if s.member in tags
                else s.edge.edge.partitioner, producer=subtask,
                            targets=s.edge.targets[subtask], t=s.edge.consumer_parallelism,
                            max_par=s.edge.consumer_max_parallelism, seed=s.edge.edge.edge_id)
            for s in vertex.slots.values() if s.edge is not None}
        self.kinds = {m.nid: m.kind for m in vertex.members}
        self.program = ChainProgram(vertex.members, subtask, plan.parallelism,
                                    plan.max_parallelism, plan.name, self._emit, True)
        # A join head's state across micro-batches (``interval_state.py``).
        self.joins: dict[int, Any] = {}
        head = vertex.members[0]
        if head.kind in ("interval_join", "window_join"):
            from flowc.executor.streaming.interval_state import StreamIntervalJoin
            from flowc.executor.streaming.window_join_state import StreamWindowJoin

            cls = StreamIntervalJoin if head.kind == "interval_join" else StreamWindowJoin
            self.joins[head.nid] = cls(self.program.joins[head.nid],  # type: ignore[arg-type]
                                       tuple(convert.arrow_schema(s) for s in head.spec.schemas))
        # The input watermark each member has seen (the row operator's ``watermark``).
        self.wms = {m.nid: LONG_MIN for m in vertex.members}
        steps = self.program.steps
        for nid in list(steps):
            steps[nid] = self._tracked(nid, steps[nid])
        # generators with an idleness timeout (``columnar_idle.py``)
        self.idle_gens = idle_generators(plan)
        # The row operators whose snapshot entries stand for the columnar members' state.
        self.rows: dict[int, Operator] = {}
        self.inner: set[int] = set()  # members whose row operator is the member's own
        info = (plan.parallelism, plan.max_parallelism)
        for m in plan.members:
            spec = m.spec if m.kind == "operator" else m.wm
            if spec is None:
                continue
            kind = self.kinds[m.nid]
            if kind == "row_op":
                self.rows[m.nid] = self.program.windows[m.nid].op  # type: ignore[attr-defined]
                continue
            if kind in CONVERTERS:  # a member that runs the row operator itself
                inner = CONVERTERS[kind].inner(self._state(m.nid))
                if inner is not None:
                    self.rows[m.nid] = inner
                    self.inner.add(m.nid)
                    continue
            op = create_operator(spec, TaskInfo(m.name, subtask, info[0], info[1], False),
                                 m.keys)
            if kind in ("window", "timestamps") or kind in CONVERTERS:
                op.open()  # their state fields are made in open()
            self.rows[m.nid] = op
        for nid in self.idle_gens:
            op = self.rows[nid]
            op.idleness = [0, None, False]  # type: ignore[attr-defined]
            steps[nid] = counted(op, steps[nid],
                                 lambda nid=nid: self._status(nid, False, own=True))

    # -- members ----------------------------------------------------------------------

    def _tracked(self, nid: int, step: Callable[[Chunk], Chunk | None]
                 ) -> Callable[[Chunk], Chunk | None]:
        wms = self.wms
        polls = self.kinds[nid] == "row_op"
        program = self.program

        def run(c: Chunk) -> Chunk | None:
            nonlocal polls
            if c.marks is not None and len(c.marks[1]):
                wms[nid] = max(wms[nid], int(np.max(c.marks[1])))
            if polls:  # the processing-time timers due at the batch's time, before input
                polls = False
                op = program.windows[nid]
                if self.starting:  # after the records its predecessors' timers produced,
                    return op.add(c, poll=True)  # type: ignore[attr-defined] # as row by row
                op.op.poll_processing_time()  # type: ignore[attr-defined]
            return step(c)
        return run

    def _functions(self, nid: int) -> list[Any]:
        fn = getattr(self.program.members[nid].spec, "fn", None)
        return [fn] if isinstance(fn, Function) else []

    def restore(self, state: dict[str, Any] | None) -> None:
        if state is not None:
            for m in self.plan.members:
                saved = state.get(f"op_{m.operator_id}")
                if saved is None or m.nid not in self.rows:
                    continue
                try:
                    self._restore(m.nid, saved)
                except Exception as e:
                    raise TaskFailure(m.nid, e) from None
            channels = state.get("channels")
            if isinstance(channels, dict):
                self.valve.restore(channels)
        if any(k == "row_op" for k in self.kinds.values()):
            # every runtime operator gets its processing-time timers' chance (``_tracked``),
            # head to tail, each after its predecessors' timer outputs (``task.py``'s
            # ``fire_processing_timers``)
            self.starting = True
            head = self.vertex.members[0]
            if head.nid in self.joins:
                self.program.push_from(head.nid, convert.empty(self.program.schemas[head.nid]))
            else:
                self.program.push(head.nid,
                                  convert.empty(convert.arrow_schema(head.in_schema)))
            self.starting = False

    def _restore(self, nid: int, saved: dict[str, Any]) -> None:
        kind = self.kinds[nid]
        op = self.rows[nid]
        if kind == "row_op" or nid in self.inner:
            restore_operator(op, saved)
            return
        if kind in _MAPS:
            self.wms[nid] = saved.get("watermark", LONG_MIN)
            for fn, fields in zip(self._functions(nid), saved.get("functions", ()),
                                  strict=False):
                fn.__dict__.update(fields)
            return
        restore_operator(op, saved)
        if kind == "timestamps":
            gen = self.program.generators[nid]
            gen.max_ts, gen.emitted = op.max_ts, op.emitted  # type: ignore[attr-defined]
            gen.seen = op.count  # type: ignore[attr-defined]  # its place in ``every``
        elif kind == "window":
            from flowc.executor.streaming.window_state import window_from_row

            window_from_row(op, self.program.windows[nid],  # type: ignore[arg-type]
                            self.program.members[nid].in_schema)
            self.wms[nid] = op.watermark
        elif kind in CONVERTERS:
            CONVERTERS[kind].from_row(op, self._state(nid), self.program.members[nid])
            self.wms[nid] = op.watermark

    def snapshot(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for m in self.plan.members:
            if m.nid in self.rows:
                out[f"op_{m.operator_id}"] = self._snapshot(m.nid)
        out["channels"] = self.valve.state()
        return out

    def _snapshot(self, nid: int) -> dict[str, Any]:
        kind = self.kinds[nid]
        op = self.rows[nid]
        if kind == "timestamps":
            gen = self.program.generators[nid]
            op.max_ts, op.emitted = gen.max_ts, gen.emitted  # type: ignore[attr-defined]
            op.count = gen.seen % gen.every if gen.every else 0  # type: ignore[attr-defined]
            return operator_state(op)
        if kind == "window":
            from flowc.executor.streaming.window_state import window_to_row

            window_to_row(self.program.windows[nid], op,  # type: ignore[arg-type]
                          self.program.members[nid].in_schema)
        if kind in CONVERTERS and nid not in self.inner:
            CONVERTERS[kind].to_row(self._state(nid), op, self.program.members[nid])
        if kind != "row_op" and nid not in self.inner:
            op.watermark = self.wms[nid]
            op.timers.current_watermark = self.wms[nid]
        state = operator_state(op)
        if kind in _MAPS:
            fields = [{k: v for k, v in fn.__dict__.items() if _plain(v)}
                      for fn in self._functions(nid)]
            if any(fields):
                state["functions"] = fields
        return state

    def _state(self, nid: int) -> Any:
        """A member's columnar state: its chain object, or a join head's across batches."""
        return self.joins.get(nid) or self.program.windows.get(nid)

    def close(self) -> None:
        self.program.close()
        for nid, op in self.rows.items():
            if self.kinds[nid] == "window" or (self.kinds[nid] in CONVERTERS
                                               and nid not in self.inner):
                op.close()

    # -- input ------------------------------------------------------------------------

    def run_source(self, spec: FileSource, share: list[str] | None) -> Any:
        """Read this subtask's files of the batch (whole files, the row path's readers'
        results) through the chain; then the generator's periodic watermark."""
        if share is None:
            return None
        if not isinstance(spec, FileSource):  # datagen, socket: their records as columns
            return self._run_records(spec, share)
        from flowc.executor.arrow import csvsource
        from flowc.executor.runtime import files

        head = self.vertex.members[0]
        schema = convert.arrow_schema(head.out_schema)
        read = csvsource.split_reader(spec)
        bad = files.BadRows(spec)
        uri = spec.path.startswith("file:")
        for path in share:
            try:
                fh = open(path, "rb")  # noqa: SIM115 - closed by the with below
            except OSError as e:
                raise TaskFailure(head.nid, ExecutionError(
                    f"cannot read {path}: {e.strerror or e}")) from None
            with fh:
                chunks = read(spec, files.Split(path, 0, -1), fh, bad,
                              "file:" + os.path.abspath(path) if uri else None, schema, ROWS)
                while True:
                    try:
                        chunk = next(chunks, None)
                    except Exception as e:
                        raise TaskFailure(head.nid, e) from None
                    if chunk is None:
                        break
                    self.records_in += chunk.num_rows
                    self.program.push(head.nid, chunk)
        self._periodic()
        return bad

    def _run_records(self, spec: Any, share: Any) -> Any:
        """A datagen / socket subtask's share (``streaming.sources.source_records``: the
        row path's records and parse errors), pushed as chunks of ``ROWS`` records."""
        from flowc.executor.streaming.sources import bad_rows, source_records

        head = self.vertex.members[0]
        schema = convert.arrow_schema(head.out_schema)
        bad = bad_rows(spec)
        records = source_records(spec, share, bad)
        while True:
            try:
                got = [r for _, r in zip(range(ROWS), records)]
                chunk = convert.from_rows([v for v, _ in got], [t for _, t in got], schema)
            except Exception as e:
                raise TaskFailure(head.nid, e) from None
            if not got:
                break
            self.records_in += chunk.num_rows
            self.program.push(head.nid, chunk)
        self._periodic()
        return bad

    def _periodic(self) -> None:
        head = self.vertex.members[0]
        gen = self.program.generators.get(head.nid) if head.kind == "timestamps" else None
        wm = None if gen is None else gen.periodic()
        if wm is not None:  # the generator's periodic emission at the end of the micro-batch
            self.program.push_from(head.nid, merge.empty_marked(
                self.program.schemas[head.nid], wm))

    def run_input(self, items: Iterable[Any]) -> None:
        """The received chunks merged by channel (the row path's rule), each channel's
        watermark continuing from the previous micro-batch."""
        expected = self.plan.channels[self.idx]
        by_channel: dict[int, list[Any]] = {c: [] for c in expected}
        for cid, seq, data, positions, values, *kinds in items:
            by_channel[cid].append((seq, data, positions, values, *kinds))
        head = self.vertex.members[0]
        channels = [[x[1:] for x in sorted(by_channel[c], key=lambda x: x[0])]
                    for c in expected]
        valve = self.valve
        if self.vertex.statuses:
            self._run_statuses(channels)
            return
        start = (list(valve.wms), valve.last)
        if head.nid in self.joins:  # both inputs' channels, each on its join side
            try:
                merged = self.joins[head.nid].run(
                    [(head.spec.sides[c >> 16], p) for c, p in zip(expected, channels)],
                    start)
            except Exception as e:
                raise TaskFailure(head.nid, e) from None
            self.wms[head.nid] = self.joins[head.nid].wm
        else:
            merged = merge.merge_streaming(channels, convert.arrow_schema(head.in_schema),
                                           start)
        for c, payloads in enumerate(channels):  # the channels' watermarks after the batch
            top = max((v for _, _, values in payloads for v in values), default=LONG_MIN)
            list(valve.watermark(c, top))
        if head.nid in self.joins:
            self.records_in += self.joins[head.nid].received
            if merged.num_rows or len(merged.marks[0]):  # type: ignore[index]
                self.program.push_from(head.nid, merged)
            return
        self.records_in += merged.num_rows
        if merged.num_rows or (merged.marks is not None and len(merged.marks[0])):
            self.program.push(head.nid, merged)

    def _run_statuses(self, channels: list[list[Any]]) -> None:
        """``run_input`` with watermark statuses: the valve's merge, the merged records
        pushed in pieces with the valve's status outputs sent on between them."""
        head = self.vertex.members[0]
        payloads = [[(d, p, v, k[0] if k else [merge.WM] * len(p)) for d, p, v, *k in ch]
                    for ch in channels]
        merged, outs = merge.merge_streaming_valve(
            payloads, convert.arrow_schema(head.in_schema), self.valve)
        self.records_in += merged.num_rows
        for piece in pieces(merged, outs):
            if isinstance(piece, bool):
                self._status(head.nid, piece, own=False)
            else:
                self.program.push(head.nid, piece)

    def _status(self, nid: int, idle: bool, own: bool) -> None:
        """Member ``nid`` sends a status (``own``: its generator's; else one it received)."""
        member = next(m for m in self.plan.members if m.nid == nid)
        if not own and not forwards(member):
            return
        for slot, targets, cid in status_routes(self.plan, nid, self.idx):
            for t in targets:
                self.items.append((slot, (t, status_payload(cid, self.seq, idle))))
                self.seq += 1

    def end_batch(self, batch_timestamp_ms: int) -> None:
        """Idleness at the end of the micro-batch (``task.SubtaskRun.end_batch``)."""
        for nid in self.idle_gens:
            m = next(m for m in self.plan.members if m.nid == nid)
            gen = _generator(m)
            assert gen is not None and gen.strategy.idleness is not None
            if goes_idle(self.rows[nid], gen.strategy.idleness, self.wms[nid],
                        batch_timestamp_ms):
                self._status(nid, True, own=True)

    def _emit(self, slot: int, chunk: Chunk) -> None:
        s = self.vertex.slots[slot]
        if s.sink is not None:
            if chunk.num_rows and not isinstance(s.sink, DiscardingSink):
                # records only at the driver (commit.py): files written from Arrow
                self.items.append(sink_chunk(s.member, self.idx, chunk))
            return
        from flowc.executor.arrow.runner import only_marks

        edge = s.edge
        assert edge is not None
        got = dict(self.routers[slot].split(chunk))
        cid = (edge.order << 16) | self.idx
        for t in edge.targets[self.idx]:  # watermarks go to every connected consumer
            part = got.get(t) or only_marks(chunk)
            if not part.num_rows and not len(part.marks[0]):  # type: ignore[index]
                continue
            positions, values = merge.marks_of(part)
            self.items.append((slot, (t, (cid, self.seq, convert.to_ipc(part), positions,
                                          values))))
            self.seq += 1

    def stats(self) -> dict[str, Any]:
        head = self.vertex.members[0]
        gen = self.program.generators.get(head.nid) \
            if self.plan.source is not None and head.kind == "timestamps" else None
        late = self.program.late_dropped
        return {"in": self.records_in, "late": late,
                "watermark": None if gen is None else gen.emitted}


def _plain(v: Any) -> bool:
    from flowc.executor.streaming.task import STATE_TYPES

    return isinstance(v, STATE_TYPES)

