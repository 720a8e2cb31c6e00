"""One JobVertex's OperatorChain over Arrow batches.

The driver describes the chain (``plan_chain``: picklable members in head-first order);
each Spark task compiles it (``ChainProgram``) and pushes chunks of records through it.
Declarative members (a map / filter / timestamp assigner with a vector form) run as
pyarrow kernels; any other map, filter or flat_map runs row by row on the chunk's records
and the result returns to columns (the member's declared output schema), so one Python
member never turns the whole chain row-wise. BATCH window aggregates are grouped with
pyarrow (``windows.py``). Outputs leave through slots: an edge to another vertex (routed
as Flink routes, see ``route.py``) or a sink.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from flowc.api.functions import FilterFunction, FlatMapFunction, Function, MapFunction
from flowc.executor.arrow import convert
from flowc.executor.arrow.convert import Chunk
from flowc.executor.arrow.kernels import Kernel, as_array, compile_expr
from flowc.executor.runtime.core import method_of, unwrap
from flowc.executor.runtime.state import RuntimeContext
from flowc.operators import FilterOp, FlatMapOp, MapOp, TimestampsAndWatermarksOp
from flowc.types import Schema

Emit = Callable[[int, Chunk], None]  # (slot index, chunk)


class Stateful(Protocol):
    """A member holding state until end of input: windows, sessions,
    runtime operators. ``late``: the side output (late records) of the last call."""

    late: Chunk | None

    @property
    def dropped(self) -> int: ...

    def add(self, c: Chunk) -> Chunk | None: ...

    def fire(self) -> Chunk | None: ...
LONG_MIN = -(1 << 63)
LONG_MAX = (1 << 63) - 1


@dataclass
class Member:
    """One chain member as the task needs it: ``kind`` is map, filter, flat_map,
    timestamps, window, tag, window_join, interval_join, regular_join (``spec``: a
    ``joins.JoinPlan``), rank (a ``rank.RankPlan``)
    or sink; ``outputs`` are ('node', id) / ('slot', index) pairs."""

    nid: int
    kind: str
    spec: Any
    in_schema: Schema
    out_schema: Schema
    outputs: list[tuple[str, int]] = field(default_factory=list)
    key: Any = None  # window: the KeySelector; tag: the side's own
    side: list[tuple[str, int]] = field(default_factory=list)  # window: late data outputs
    name: str = ""  # the node's name (a runtime operator's task name)
    # row_op: its other side outputs, as (OutputTag, the tag's type, outputs)
    tagged: list[tuple[Any, Any, list[tuple[str, int]]]] = field(default_factory=list)


class TaskFailure(Exception):
    """A member failed: carries its node id to the driver (see ``tasks.task_error``)."""

    def __init__(self, nid: int, error: BaseException) -> None:
        super().__init__(str(error))
        self.nid = nid
        self.error = error


class ChainProgram:
    """The compiled chain of one subtask."""

    def __init__(self, members: list[Member], subtask: int, parallelism: int,
                 max_parallelism: int, name: str, emit: Emit, streaming: bool = False,
                 state_memory: int | None = None) -> None:
        from flowc.executor.arrow.spill import DEFAULT

        self.streaming = streaming
        self.state_memory = DEFAULT if state_memory is None else state_memory
        # STREAMING window state spills only with a limit given: the unbounded executor
        # snapshots it from memory (``streaming/window_state.py``).
        self.spill_limit = state_memory
        self.members = {m.nid: m for m in members}
        self.order = [m.nid for m in members]
        self.emit = emit
        self.steps: dict[int, Callable[[Chunk], Chunk | None]] = {}
        self.windows: dict[int, Stateful] = {}
        self.joins: dict[int, Any] = {}  # join heads (``joins.py``), fed the whole input
        # STREAMING watermark generators by member (the streaming executor restores and
        # snapshots them across micro-batches: ``streaming/columnar.py``)
        self.generators: dict[int, Watermarks] = {}
        self.functions: list[Function] = []
        self.schemas = {m.nid: convert.arrow_schema(m.out_schema) for m in members}
        self.slot_owner = {
            target: m.nid for m in members
            for kind, target in (*m.outputs, *m.side, *(r for *_, refs in m.tagged for r in refs))
            if kind == "slot"}
        ctx = RuntimeContext(name, subtask, parallelism, max_parallelism, None)
        self.task = (subtask, parallelism, max_parallelism)
        for m in members:
            try:
                self.steps[m.nid] = self._compile(m)
            except Exception as e:
                raise TaskFailure(m.nid, e) from None
        # Open tail -> head (Flink's operator order), as the row executors do.
        for m in reversed(members):
            if m.kind == "row_op" or (m.kind == "rolling" and m.spec.agg is None):
                # the runtime operator opens its own functions
                op = self.windows[m.nid]
                try:
                    op.open()  # type: ignore[attr-defined]
                except Exception as e:
                    self.close()
                    raise TaskFailure(m.nid, e) from None
                self.functions.append(op)  # type: ignore[arg-type]
                continue
            fn = getattr(m.spec, "fn", None)
            if isinstance(fn, Function):
                try:
                    fn.open(ctx)
                except Exception as e:
                    self.close()
                    raise TaskFailure(m.nid, e) from None
                self.functions.append(fn)

    # -- compiling -------------------------------------------------------------------

    def _compile(self, m: Member) -> Callable[[Chunk], Chunk | None]:
        out_schema = self.schemas[m.nid]
        if m.kind == "map":
            kernels = _kernels(m.spec.fn, m.in_schema)
            if kernels is not None:
                # A Calc over an updating stream keeps each record's kind (``_kind``).
                kinded = out_schema.names[-1:] == [convert.KIND] and \
                    len(kernels) < len(out_schema)
                return lambda c: c.with_batch(pa.RecordBatch.from_arrays(
                    [as_array(k(c.batch), c.num_rows) for k in kernels]
                    + ([c.batch.column(convert.KIND)] if kinded else []), schema=out_schema))
            fn = unwrap(method_of(m.spec.fn, MapFunction, "map"))
            return lambda c: c.with_batch(
                convert.from_rows([fn(r) for r in c.rows()], c.ts, out_schema).batch)
        if m.kind == "filter":
            kernel = _kernel(m.spec.fn, m.in_schema)
            if kernel is not None:
                return lambda c: c.filter(pc.fill_null(as_array(kernel(c.batch), c.num_rows),
                                                       False))
            fn = unwrap(method_of(m.spec.fn, FilterFunction, "filter"))
            return lambda c: c.filter(pa.array([bool(fn(r)) for r in c.rows()], pa.bool_()))
        if m.kind == "flat_map":
            fn = unwrap(method_of(m.spec.fn, FlatMapFunction, "flat_map"))

            def flat_map(c: Chunk) -> Chunk:
                rows: list[Any] = []
                ts: list[Any] = []
                counts: list[int] = []
                for r, t in zip(c.rows(), c.timestamps()):
                    before = len(rows)
                    for out in fn(r) or ():
                        rows.append(out)
                        ts.append(t)
                    counts.append(len(rows) - before)
                out = convert.from_rows(rows, ts, out_schema)
                if c.marks is None and c.wm_at is None:
                    return out
                # Each input record's place is taken by its outputs.
                ends = np.concatenate([[0], np.cumsum(counts, dtype=np.int64)])
                marks = None if c.marks is None else (ends[c.marks[0]], c.marks[1])
                wm_at = None if c.wm_at is None else c.wm_at.take(
                    pa.array(np.repeat(np.arange(len(counts)), counts)))
                return Chunk(out.batch, out.ts, marks, wm_at)
            return flat_map
        if m.kind == "timestamps":
            return self._timestamps(m)
        if m.kind == "window":
            from flowc.executor.arrow.spill import SpillingWindow, streaming_window

            window: Stateful
            if self.streaming:
                window = streaming_window(m.spec, m.key, m.in_schema, out_schema,
                                          self.spill_limit)
            else:
                window = SpillingWindow(m.spec, m.key, m.in_schema, out_schema,
                                        limit=self.state_memory)
            self.windows[m.nid] = window
            return window.add
        if m.kind == "row_op":
            from flowc.executor.arrow.rowop import RowOperator
            from flowc.executor.runtime.core import TaskInfo

            info = TaskInfo(m.name, *self.task, not self.streaming)
            side = convert.arrow_schema(m.in_schema) if m.side else None
            op = self.windows[m.nid] = RowOperator(
                m.spec, m.key, info, out_schema, side, getattr(m.spec, "late_tag", None),
                {tag: convert.arrow_schema(t) for tag, t, _ in m.tagged})
            return op.add
        if m.kind == "rank":
            from flowc.executor.arrow.rank import BatchRank

            ranked = self.windows[m.nid] = BatchRank(
                m.spec, convert.arrow_schema(m.in_schema), out_schema)
            return ranked.add
        if m.kind == "rolling_start":
            from flowc.executor.arrow.rolling import compile_start

            return compile_start(m.spec, out_schema)  # type: ignore[no-any-return]
        if m.kind == "rolling":
            from flowc.executor.arrow.rolling import RollingAggregate

            if m.spec.agg is None:  # over an updating input: the row code
                from flowc.executor.arrow.rowop import RollingRows
                from flowc.executor.runtime.core import TaskInfo

                rows = self.windows[m.nid] = RollingRows(
                    m.spec, m.key, TaskInfo(m.name, *self.task, not self.streaming),
                    out_schema)
                return rows.add
            rolling = self.windows[m.nid] = RollingAggregate(
                m.spec, convert.arrow_schema(m.in_schema), out_schema, self.streaming)
            return rolling.add
        if m.kind == "session":
            from flowc.executor.arrow.sessions import session_window

            session = self.windows[m.nid] = session_window(
                m.spec, m.key, m.in_schema, out_schema, self.streaming,
                None if self.streaming else self.state_memory)
            return session.add  # type: ignore[no-any-return]
        if m.kind in ("window_join", "interval_join"):
            from flowc.executor.arrow.joins import compile_join

            join = self.joins[m.nid] = compile_join(m.spec, out_schema, self.streaming)
            # Fed part by part, spilled past the state memory; the unbounded executor
            # (no spill limit) hands a STREAMING join its micro-batch's input at once.
            if not self.streaming or self.spill_limit is not None:
                from flowc.executor.arrow.joinspill import SpillingJoin

                spilling = self.windows[m.nid] = SpillingJoin(  # type: ignore[assignment]
                    join, (convert.arrow_schema(m.spec.schemas[0]),
                           convert.arrow_schema(m.spec.schemas[1])), self.state_memory)
                return spilling.add  # type: ignore[return-value]
            return join.run  # type: ignore[no-any-return]
        if m.kind == "regular_join":  # BATCH only: fed part by part, spilled as above
            from flowc.executor.arrow.joinspill import SpillingJoin
            from flowc.executor.arrow.regular_join import RegularJoinTask

            join = self.joins[m.nid] = RegularJoinTask(m.spec, out_schema)
            spilling = self.windows[m.nid] = SpillingJoin(  # type: ignore[assignment]
                join, (convert.arrow_schema(m.spec.schemas[0]),
                       convert.arrow_schema(m.spec.schemas[1])), self.state_memory)
            return spilling.add  # type: ignore[return-value]
        if m.kind in ("sink", "source", "pass", "tag"):  # tag: the side is the channel's edge
            return lambda c: c
        raise AssertionError(m.kind)

    def _timestamps(self, m: Member) -> Callable[[Chunk], Chunk | None]:
        """Assign timestamps; STREAMING: and place the generator's watermarks among the
        records (``Watermarks``)."""
        assign = self._assign(m)
        if not self.streaming:
            return assign
        gen = self.generators[m.nid] = Watermarks(m.spec.strategy)

        def generate(c: Chunk) -> Chunk:
            # A generator swallows its input's watermarks except the final Long.MAX_VALUE
            # (after a shuffle, or after a member that forwards them).
            end = None
            if c.marks is not None and len(c.marks[1]):
                keep = np.asarray(c.marks[1]) == LONG_MAX
                if keep.any():
                    end = int(np.asarray(c.marks[0])[keep][0])
            out = gen.place(assign(Chunk(c.batch, c.ts)))
            if end is None:
                return out
            pos, val = out.marks  # type: ignore[misc]
            return Chunk(out.batch, out.ts, (np.append(pos, end).astype(np.int64),
                                             np.append(val, LONG_MAX).astype(np.int64)))
        return generate

    def _assign(self, m: Member) -> Callable[[Chunk], Chunk]:
        assigner = m.spec.strategy.timestamp_assigner
        if assigner is None:
            return lambda c: c
        kernel = _kernel(assigner, m.in_schema)
        if kernel is not None:
            def assign(c: Chunk) -> Chunk:
                ts = as_array(kernel(c.batch), c.num_rows)
                if ts.null_count:
                    from flowc.executor.runtime.core import require_timestamp

                    require_timestamp(None, "a record")
                return c.with_batch(c.batch, pc.cast(ts, pa.int64()))
            return assign
        fn = unwrap(assigner)
        low = -(1 << 63)
        return lambda c: c.with_batch(c.batch, pa.array(
            [int(fn(r, low if t is None else t)) for r, t in zip(c.rows(), c.timestamps())],
            pa.int64()))

    # -- running ---------------------------------------------------------------------

    def push(self, nid: int, chunk: Chunk) -> None:
        """Run ``chunk`` through member ``nid`` and everything after it (depth first, in
        output order: a record's results reach the first output - a chained member and
        all after it, or an edge / sink slot - before the second)."""
        stack: list[tuple[str, int, Chunk]] = [("node", nid, chunk)]
        while stack:
            kind, at, c = stack.pop()
            if kind == "slot":
                self._emit(at, c)
                continue
            m = self.members[at]
            try:
                out = self.steps[at](c)
            except TaskFailure:
                raise
            except Exception as e:
                raise TaskFailure(at, e) from None
            late = None
            if m.side:  # a STREAMING window's late records (after the main output)
                late, self.windows[at].late = self.windows[at].late, None
            # Pushed last-first: the main output runs first, then late data, then tags.
            for c, refs in reversed(self._tagged(m)):
                self._forward(m, c, stack, refs)
            if late is not None:
                self._forward(m, late, stack, m.side)
            if out is not None:
                self._forward(m, out, stack)

    def push_from(self, nid: int, chunk: Chunk) -> None:
        """Run ``chunk`` as member ``nid``'s output through everything after it (a
        generator's periodic watermark at the end of a streaming micro-batch)."""
        stack: list[tuple[str, int, Chunk]] = []
        self._forward(self.members[nid], chunk, stack)
        while stack:
            kind, at, c = stack.pop()
            if kind == "slot":
                self._emit(at, c)
            else:
                self.push(at, c)

    def _tagged(self, m: Member) -> list[tuple[Chunk, list[tuple[str, int]]]]:
        """A runtime operator's side output chunks of its last call, with their outputs."""
        if not m.tagged:
            return []
        got = self.windows[m.nid].tagged_out  # type: ignore[attr-defined]
        self.windows[m.nid].tagged_out = {}  # type: ignore[attr-defined]
        return [(got[tag], refs) for tag, _, refs in m.tagged if tag in got]

    def _emit(self, slot: int, c: Chunk) -> None:
        try:
            self.emit(slot, c)
        except TaskFailure:
            raise
        except Exception as e:
            raise TaskFailure(self.slot_owner[slot], e) from None

    def _forward(self, m: Member, out: Chunk, stack: list[tuple[str, int, Chunk]],
                 outputs: list[tuple[str, int]] | None = None) -> None:
        stack.extend((kind, target, out) for kind, target in
                     reversed(m.outputs if outputs is None else outputs))

    def finish(self) -> None:
        """End of input: windows fire head-first (each may feed the ones after it)."""
        from flowc.executor.arrow.spill import Spilling

        for nid in self.order:
            w = self.windows.get(nid)
            if w is None:
                continue
            fired = w.fired() if isinstance(w, Spilling) else iter([w.fire()])
            m = self.members[nid]
            while True:  # range by range when the window spilled (bounded memory)
                try:
                    result = next(fired, None)
                except Exception as e:
                    raise TaskFailure(nid, e) from None
                late, w.late = w.late, None
                tagged = self._tagged(m)
                if result is None and late is None and not tagged:
                    break
                stack: list[tuple[str, int, Chunk]] = []
                for c, refs in reversed(tagged):
                    self._forward(m, c, stack, refs)
                if late is not None and m.side:
                    self._forward(m, late, stack, m.side)
                if result is not None and (result.num_rows or result.marks is not None):
                    self._forward(m, result, stack)  # (a spilled window's final watermark)
                while stack:
                    kind, at, c = stack.pop()
                    if kind == "slot":
                        self._emit(at, c)
                    else:
                        self.push(at, c)
                if result is None:
                    break

    @property
    def late_dropped(self) -> int:
        return sum(w.dropped for w in (*self.windows.values(), *self.joins.values()))

    def close(self) -> None:
        """Close head -> tail (the reverse of opening); the first error is raised."""
        first: BaseException | None = None
        from flowc.executor.arrow.spill import Spilling

        for w in self.windows.values():  # spilled state goes with the subtask
            if isinstance(w, Spilling):
                w.close()
        while self.functions:
            try:
                self.functions.pop().close()
            except Exception as e:  # noqa: BLE001
                first = first or e
        if first is not None:
            raise first


class Watermarks:
    """A source subtask's watermark generator over its records, vectorised, with exactly
    ``TimestampsAndWatermarksOperator``'s rule: every ``every`` records (1: after each; 0:
    never before the end of input), emit ``max timestamp - delay`` if a record was seen and it
    rose above the last one and ``floor``; an exact (SQL) generator also right after a record
    that raised it by more than ``eager`` ms."""

    def __init__(self, strategy: Any) -> None:
        every = getattr(strategy, "emit_every", None)
        self.every = 1 if every is None else every
        self.eager = strategy.eager_ms
        self.on = strategy.out_of_orderness is not None and (
            self.every > 0 or self.eager is not None)
        self.delay = strategy.lag
        self.floor = strategy.floor
        self.max_ts = LONG_MIN
        self.emitted = LONG_MIN
        self.seen = 0  # records so far

    def periodic(self) -> int | None:
        """A periodic emission outside the record count (the end of a streaming
        micro-batch): the watermark to emit, if it rose."""
        if not self.on or self.max_ts == LONG_MIN:
            return None
        wm = self.max_ts - self.delay
        if wm <= max(self.emitted, self.floor):
            return None
        self.emitted = wm
        return wm

    def place(self, c: Chunk) -> Chunk:
        n = c.num_rows
        none = (np.zeros(0, np.int64), np.zeros(0, np.int64))
        if not self.on or n == 0:
            self.seen += n
            return Chunk(c.batch, c.ts, none)
        ts = c.ts.to_numpy(zero_copy_only=False).astype(np.int64)
        running = np.maximum.accumulate(np.maximum(ts, self.max_ts))
        self.max_ts = int(running[-1])
        # Checks after the records whose running count is a multiple of ``every``.
        at = (np.arange((-self.seen - 1) % self.every, n, self.every, dtype=np.int64)
              if self.every > 0 else np.zeros(0, np.int64))
        self.seen += n
        if self.eager is not None:
            return Chunk(c.batch, c.ts, self._eager(running, at))
        if len(at) == 0:
            return Chunk(c.batch, c.ts, none)
        cand = running[at] - self.delay
        valid = running[at] != LONG_MIN
        prev = np.maximum.accumulate(np.concatenate([[max(self.emitted, self.floor)], np.where(
            valid, cand, LONG_MIN)]))[:-1]
        emit = valid & (cand > prev)
        if emit.any():
            self.emitted = int(cand[emit][-1])
        return Chunk(c.batch, c.ts, (at[emit] + 1, cand[emit]))

    def _eager(self, running: np.ndarray, at: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The emissions of an exact generator: each is the first record after the last one
        where the periodic check finds a higher watermark or the watermark rose by more than
        ``eager`` (both found by binary search: the running watermark never falls)."""
        wm = np.where(running == LONG_MIN, LONG_MIN, running - self.delay)
        wm_at = wm[at]
        places: list[int] = []
        values: list[int] = []
        pos, n = 0, len(wm)
        while pos < n:
            base = max(self.emitted, self.floor)
            i = int(np.searchsorted(wm, base + self.eager, side="right"))
            i = max(i, pos)  # the watermark rose past base + eager at record i
            j = int(np.searchsorted(wm_at, base, side="right"))
            k = int(np.searchsorted(at, pos, side="left"))
            j = at[max(j, k)] if max(j, k) < len(at) else n  # the next periodic rise
            nxt = min(i, j)
            if nxt >= n:
                break
            self.emitted = int(wm[nxt])
            places.append(nxt + 1)
            values.append(self.emitted)
            pos = nxt + 1
        return np.asarray(places, np.int64), np.asarray(values, np.int64)


def _kernels(fn: Any, schema: Schema) -> list[Kernel] | None:
    vector = getattr(fn, "vector", None)
    if not isinstance(vector, tuple):
        return None
    kernels = [_checked(compile_expr(v), schema) for v in vector]
    return None if any(k is None for k in kernels) else kernels  # type: ignore[misc]


def _kernel(fn: Any, schema: Schema) -> Kernel | None:
    vector = getattr(fn, "vector", None)
    if vector is None or isinstance(vector, tuple):
        return None
    return _checked(compile_expr(vector), schema)


def _checked(kernel: Kernel | None, schema: Schema) -> Kernel | None:
    """The kernel if it runs on an empty batch of the input schema (types line up)."""
    if kernel is None:
        return None
    try:
        kernel(convert.empty(convert.arrow_schema(schema)).batch)
    except (pa.ArrowException, TypeError, ValueError):
        return None
    return kernel


def member_kind(spec: Any) -> str | None:
    if isinstance(spec, MapOp):
        return "map"
    if isinstance(spec, FilterOp):
        return "filter"
    if isinstance(spec, FlatMapOp):
        return "flat_map"
    if isinstance(spec, TimestampsAndWatermarksOp):
        return "timestamps"
    return None
