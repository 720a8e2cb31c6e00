"""One vertex subtask's share of one micro-batch, inside a Spark task.

The subtask builds its chain from the runtime's operators (``runtime.factory``), restores
their state from the snapshot of the last completed micro-batch (``op_<operator id>``
entries, as in a Flink savepoint, plus its input channels' watermarks), runs this batch's
input through them, and writes its new snapshot under the batch id. A micro-batch replayed
after a crash reads the same files and the same snapshot, so it produces the same outputs
and the same snapshot: writing them again is harmless (the sinks skip a committed batch).

Items the task yields (the vertex RDD): ``(slot, (target subtask, (channel, value, ts)))``
for a non-chained edge (``value`` is ``Watermark`` for a watermark, ``WatermarkStatus``
for an idle / active status with ``ts`` True / False), ``(SINK, (node,
subtask, record))``, ``(DEAD, (node, json line))`` for a source's bad rows and ``(STATS,
(vertex, subtask, {...}))``.
"""

from __future__ import annotations

import json
import os
import pickle
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from flowc.errors import FlowcError
from flowc.executor.routing import BROADCAST, make_selector
from flowc.executor.runtime import files
from flowc.executor.runtime.channels import WatermarkStatus, WatermarkValve, merge_with_valve
from flowc.executor.runtime.clock import FixedClock, using_clock
from flowc.executor.runtime.core import (
    LONG_MAX,
    LONG_MIN,
    Operator,
    TaskInfo,
    TimerService,
    Watermark,
)
from flowc.executor.runtime.factory import create_operator
from flowc.executor.runtime.state import KeyedStateBackend
from flowc.executor.streaming.plan import Member, VertexPlan
from flowc.operators import DiscardingSink, TimestampsAndWatermarksOp

SINK, DEAD, STATS = -1, -2, -3
Emit = Callable[[Any, Any], None]
Status = Callable[[bool], None]


@dataclass(frozen=True)
class BatchContext:
    """What every task of one micro-batch shares: the batch id, the last completed batch
    (its snapshots are the state; None: none), the snapshots' directory and the batch's
    timestamp from Spark's offsets log (``batchTimestampMs``: the same when a batch is
    replayed after a crash)."""

    batch: int
    prev: int | None
    state_dir: str
    batch_timestamp_ms: int


# Operator attributes that are wiring, configuration or per-run metrics, never state.
_NOT_STATE = frozenset({"spec", "info", "keys", "out", "side", "out_wm", "_functions",
                        "backend", "late_records_dropped", "extra_records"})
STATE_TYPES = (dict, list, set, int, float, str, tuple, TimerService, type(None))


def snapshot_path(state_dir: str, batch: int, vertex: str, subtask: int) -> str:
    return os.path.join(state_dir, str(batch), f"{vertex}-{subtask}.pkl")


def read_snapshot(ctx: BatchContext, vertex: str, subtask: int) -> dict[str, Any] | None:
    """The subtask's snapshot of the last completed batch (None before the first)."""
    if ctx.prev is None:
        return None
    with open(snapshot_path(ctx.state_dir, ctx.prev, vertex, subtask), "rb") as fh:
        return pickle.load(fh)  # type: ignore[no-any-return]  # noqa: S301 - this job's own


def operator_state(op: Operator) -> dict[str, Any]:
    """The operator's state: its keyed state tables, timers, watermark, its own data
    attributes (window contents, generator maxima) and its functions' data fields; not its
    functions themselves or its wiring."""
    state = {k: v for k, v in vars(op).items()
             if k not in _NOT_STATE and isinstance(v, STATE_TYPES)}
    if op.backend is not None:
        state["backend"] = op.backend.tables
    for k, v in vars(op).items():  # other keyed state (a trigger's, by (key, window))
        if isinstance(v, KeyedStateBackend) and k != "backend":
            state[k] = v.tables
    # A user function's plain fields live as long as its task in Flink: across micro-batches.
    fields = [{k: v for k, v in getattr(fn, "__dict__", {}).items()
               if isinstance(v, STATE_TYPES)} for fn in op._functions]
    if any(fields):
        state["functions"] = fields
    return state


def restore_operator(op: Operator, state: dict[str, Any]) -> None:
    """Put ``state`` back into an opened operator. Keyed state tables are refilled in place:
    the user functions' state handles (made in ``open``) hold the table objects."""
    for k, v in state.items():
        if isinstance(getattr(op, k, None), KeyedStateBackend):
            backend: KeyedStateBackend = getattr(op, k)
            for name, table in v.items():
                backend.tables.setdefault(name, {}).update(table)
        elif k == "functions":
            for fn, fields in zip(op._functions, v, strict=False):
                fn.__dict__.update(fields)
        else:
            setattr(op, k, v)


def _generator(m: Member) -> TimestampsAndWatermarksOp | None:
    """The member's watermark generator: a source's own strategy or an
    ``assign_timestamps_and_watermarks`` step."""
    spec = m.wm if m.kind == "source" else m.spec
    return spec if isinstance(spec, TimestampsAndWatermarksOp) else None


class TaskError(Exception):
    """A member failed: its node id and the error, for the driver (``run_subtask``)."""


def _at(e: BaseException, nid: int) -> BaseException:
    if not hasattr(e, "flowc_node"):
        e.flowc_node = nid  # type: ignore[attr-defined]
    return e


class SubtaskRun:
    def __init__(self, plan: VertexPlan, subtask: int) -> None:
        self.plan = plan
        self.idx = subtask
        self.items: list[tuple[int, Any]] = []
        self.ops: dict[int, Operator] = {}  # member (or source generator) -> operator
        self.members = {m.nid: m for m in plan.members}
        self.valve = WatermarkValve(len(plan.channels[subtask]))
        self.records_in = 0
        # watermark generators with an idleness timeout (their ``idleness`` attribute, kept
        # in their operator's snapshot: [records this batch, timestamp of the last batch
        # with a record (or of the first batch), idle])
        self.idle_gens: list[int] = []
        info = (plan.parallelism, plan.max_parallelism)
        for m in plan.members:
            spec = m.spec if m.kind == "operator" else m.wm
            if spec is not None:
                self.ops[m.nid] = create_operator(
                    spec, TaskInfo(m.name, subtask, info[0], info[1], False), m.keys)
        self.entries: dict[int, tuple[Emit, Callable[[int], None]]] = {}
        self.statuses: dict[int, Status] = {}
        self.head2: Emit | None = None  # a two-input head's second input
        for m in reversed(plan.members):  # targets are wired before their producers
            self._wire(m)
            self.statuses[m.nid] = self._status(m)

    # -- wiring ----------------------------------------------------------------------

    def _wire(self, m: Member) -> None:
        op = self.ops.get(m.nid)
        if m.kind == "sink" and isinstance(m.spec, DiscardingSink):
            self.entries[m.nid] = (lambda v, ts: None, lambda wm: None)
            return
        if m.kind == "sink":
            items, nid, idx = self.items, m.nid, self.idx
            self.entries[m.nid] = (lambda v, ts: items.append((SINK, (nid, idx, v))),
                                   lambda wm: None)
            return
        out, out_wm = self._outputs(m, None), self._watermarks(m)
        if op is None:  # a source without its own watermark strategy
            self.entries[m.nid] = (out, out_wm)
            return
        op.out, op.out_wm = out, out_wm
        op.side = lambda tag, v, ts, m=m: self._outputs(m, tag)(v, ts)
        nid = m.nid
        if op.two_input:
            self.head2 = self._guarded(op.process2, nid)
        process = self._guarded(op.process1 if op.two_input else op.process, nid)
        gen = _generator(m)
        if gen is not None and gen.strategy.idleness is not None:
            process = self._counted(m, process)

        def watermark(wm: int) -> None:
            try:
                op.on_watermark(wm)
            except Exception as e:
                raise _at(e, nid) from None
        self.entries[m.nid] = (process, watermark)

    @staticmethod
    def _guarded(f: Emit, nid: int) -> Emit:
        def process(v: Any, ts: Any) -> None:
            try:
                f(v, ts)
            except Exception as e:
                raise _at(e, nid) from None
        return process

    def _counted(self, m: Member, process: Emit) -> Emit:
        """A generator with an idleness timeout: count its records; a record on an idle
        output makes it active again first (Flink's WatermarksWithIdleness)."""
        op = self.ops[m.nid]
        op.idleness = [0, None, False]  # type: ignore[attr-defined]
        self.idle_gens.append(m.nid)
        out = self._status_out(m)

        def counted(v: Any, ts: Any) -> None:
            entry = op.idleness  # type: ignore[attr-defined]
            entry[0] += 1
            if entry[2]:
                entry[2] = False
                out(False)
            process(v, ts)
        return counted

    def _status(self, m: Member) -> Status:
        """What a member does with an upstream watermark status: forwarded along the chain
        and edges, except by sinks and by a watermark generator (Flink's
        TimestampsAndWatermarksOperator ignores upstream statuses: it has its own)."""
        if m.kind == "sink" or _generator(m) is not None:
            return lambda idle: None
        return self._status_out(m)

    def _status_out(self, m: Member) -> Status:
        chained = [self.statuses[t] for t, _ in m.chained]
        routes = [(e.slot, e.targets[self.idx], (e.order << 16) | self.idx) for e in m.edges
                  if e.tag is None]
        items = self.items

        def emit(idle: bool) -> None:
            for f in chained:
                f(idle)
            for slot, targets, chan in routes:
                for t in targets:
                    items.append((slot, (t, (chan, WatermarkStatus, idle))))
        return emit

    def _outputs(self, m: Member, tag: Any) -> Emit:
        chained = [self.entries[t][0] for t, tg in m.chained if tg == tag]
        routes = []
        for e in m.edges:
            if e.tag != tag:
                continue
            sel = make_selector(e.edge.partitioner, producer=self.idx,
                                targets=e.targets[self.idx], t=e.consumer_parallelism,
                                max_par=e.consumer_max_parallelism, seed=e.edge.edge_id)
            routes.append((e.slot, sel, e.targets[self.idx], (e.order << 16) | self.idx))
        items = self.items

        def emit(v: Any, ts: Any) -> None:
            for f in chained:
                f(v, ts)
            for slot, sel, targets, chan in routes:
                c = sel(v)
                if c == BROADCAST:
                    for t in targets:
                        items.append((slot, (t, (chan, v, ts))))
                else:
                    items.append((slot, (c, (chan, v, ts))))
        return emit

    def _watermarks(self, m: Member) -> Callable[[int], None]:
        chained = [self.entries[t][1] for t, _ in m.chained]
        routes = [(e.slot, e.targets[self.idx], (e.order << 16) | self.idx) for e in m.edges
                  if e.tag is None]
        items = self.items

        def emit(wm: int) -> None:
            for f in chained:
                f(wm)
            for slot, targets, chan in routes:
                for t in targets:
                    items.append((slot, (t, (chan, Watermark, wm))))
        return emit

    # -- lifecycle -------------------------------------------------------------------

    def open(self, state: dict[str, Any] | None) -> None:
        for nid in self.plan.open_order:  # tail first, Flink's operator order
            op = self.ops.get(nid)
            if op is None:
                continue
            try:
                op.open()
                if state is not None:
                    saved = state.get(f"op_{self.members[nid].operator_id}")
                    if saved is not None:
                        restore_operator(op, saved)
            except Exception as e:
                raise _at(e, nid) from None
        channels = None if state is None else state.get("channels")
        if isinstance(channels, dict):
            self.valve.restore(channels)
        elif isinstance(channels, list) and len(channels) == len(self.valve.wms):
            # a snapshot of before watermark statuses: the channels' watermarks only
            self.valve.wms, self.valve.last = list(channels), min(channels, default=LONG_MIN)

    def fire_processing_timers(self) -> None:
        """Fire the processing-time timers due at the batch's timestamp, before its input
        (Flink fires them asynchronously as the wall clock passes them; here at the start
        of the first micro-batch at or after their time), head to tail."""
        for nid in reversed(self.plan.open_order):
            op = self.ops.get(nid)
            if op is not None and op.timers.processing_count():
                try:
                    op.poll_processing_time()
                except Exception as e:
                    raise _at(e, nid) from None

    def snapshot(self) -> dict[str, Any]:
        out: dict[str, Any] = {f"op_{self.members[nid].operator_id}": operator_state(op)
                               for nid, op in self.ops.items()}
        out["channels"] = self.valve.state()  # the input channels' watermarks and statuses
        return out

    def end_batch(self, batch_timestamp_ms: int) -> None:
        """Idleness at the end of the micro-batch (the generators' periodic check, on the
        batch's timestamp): a generator that got no record for longer than its timeout
        marks its output IDLE, so downstream channels stop holding the min watermark."""
        for nid in self.idle_gens:
            m = self.members[nid]
            timeout = _generator(m).strategy.idleness  # type: ignore[union-attr]
            op = self.ops[nid]
            entry = op.idleness  # type: ignore[attr-defined]
            count, last, idle = entry
            entry[0] = 0
            if op.watermark == LONG_MAX:  # its input ended (a bounded source): not idle
                continue
            if count or last is None:
                entry[1] = batch_timestamp_ms
            elif not idle and batch_timestamp_ms - last > timeout:
                entry[2] = True
                self._status_out(m)(True)

    def close(self) -> None:
        for nid in reversed(self.plan.open_order):  # head -> tail
            op = self.ops.get(nid)
            if op is not None:
                try:
                    op.close()
                except Exception as e:
                    raise _at(e, nid) from None

    # -- input -----------------------------------------------------------------------

    def run_source(self, spec: Any, share: Any) -> files.BadRows | None:
        """Read this subtask's share of the batch (whole files: one split each; socket
        lines; datagen row numbers; Kafka records: ``streaming.sources``) and, at the end
        of the batch, let the source's generator emit its watermark. A bounded source's
        share is its whole input (None once it was read): after it, its end-of-input
        watermark (Long.MAX_VALUE), as Flink's bounded source sends when it finishes."""
        if share is None:
            return None
        from flowc.executor.streaming.sources import bad_rows, source_records

        head = self.plan.head
        process, _ = self.entries[head.nid]
        bad = bad_rows(spec)
        try:
            for rec, ts in source_records(spec, share, bad):
                self.records_in += 1
                process(rec, ts)
        except Exception as e:
            raise _at(e, head.nid) from None
        gen = self.ops.get(head.nid)
        try:
            if spec.bounded:
                self.entries[head.nid][1](LONG_MAX) if gen is None else \
                    gen.on_watermark(LONG_MAX)
            elif gen is not None:
                gen.emit_periodic()  # type: ignore[attr-defined]
        except Exception as e:
            raise _at(e, head.nid) from None
        return bad

    def run_input(self, items: Iterable[tuple[int, tuple[int, Any, Any]]]) -> None:
        """The shuffled partition, merged by channel (runtime.channels' rule, with Flink's
        watermark valve for idle channels), the channels' watermarks and statuses
        continuing from the previous micro-batch; a two-input head gets each channel's
        records on its edge's input."""
        expected = self.plan.channels[self.idx]
        buckets: dict[int, list[tuple[Any, Any]]] = {c: [] for c in expected}
        for _, (cid, v, ts) in items:
            buckets[cid].append((v, ts))
        head = self.plan.head.nid
        process, watermark = self.entries[head]
        process2 = self.head2 or process
        status = self.statuses[head]
        inputs = [self.plan.channel_input(c) for c in expected]
        for i, v, ts in merge_with_valve([buckets[c] for c in expected], inputs, self.valve):
            if v is Watermark:
                watermark(ts)
            elif v is WatermarkStatus:
                status(ts)
            else:
                self.records_in += 1
                (process if i == 1 else process2)(v, ts)

    def stats(self) -> dict[str, Any]:
        gen = self.ops.get(self.plan.head.nid) if self.plan.head.kind == "source" else None
        return {"in": self.records_in,
                "late": sum(op.late_records_dropped for op in self.ops.values()),
                "watermark": getattr(gen, "emitted", None)}


def run_subtask(plan: VertexPlan, idx: int, ctx: BatchContext,
                source: tuple[Any, Any] | None,
                items: Iterable[Any] | None) -> Iterator[tuple[int, Any]]:
    """Run subtask ``idx`` of ``plan`` for micro-batch ``ctx.batch`` (state from batch
    ``ctx.prev``) at processing time ``ctx.batch_timestamp_ms`` and write its snapshot;
    failures leave as ``FlowcTaskError``s naming the operator (``spark.tasks``' protocol,
    so the driver reports them the same way)."""
    from flowc.executor.spark.tasks import FlowcTaskError

    try:
        state = read_snapshot(ctx, plan.id, idx)
        with using_clock(FixedClock(ctx.batch_timestamp_ms)):
            run = SubtaskRun(plan, idx)
            run.open(state)
            run.fire_processing_timers()
            bad = run.run_source(*source) if source is not None else None
            if items is not None:
                run.run_input(items)
            run.end_batch(ctx.batch_timestamp_ms)
            snap = run.snapshot()
            run.close()
        state_bytes = _write_snapshot(snapshot_path(ctx.state_dir, ctx.batch, plan.id, idx),
                                      snap)
    except Exception as e:  # noqa: BLE001 - every failure is reported with its operator
        payload = {"node": getattr(e, "flowc_node", plan.head.nid), "type": type(e).__name__,
                   "message": str(e), "flowc": isinstance(e, FlowcError)}
        raise FlowcTaskError("FLOWC-ERROR" + json.dumps(payload) + "FLOWC-END") from None
    yield from run.items
    if bad is not None:
        for line in bad.lines:
            yield DEAD, (plan.head.nid, line)
    yield STATS, (plan.id, idx, {**run.stats(), "state_bytes": state_bytes})


def _write_snapshot(path: str, snap: dict[str, Any]) -> int:
    """Write the snapshot; returns its size in bytes."""
    from pyspark import cloudpickle

    os.makedirs(os.path.dirname(path), exist_ok=True)
    tmp = f"{path}.{os.getpid()}.tmp"
    data = cloudpickle.dumps(snap)
    with open(tmp, "wb") as fh:
        fh.write(data)
    os.replace(tmp, path)  # a reader sees the whole snapshot or none
    return len(data)
