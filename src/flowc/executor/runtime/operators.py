"""Flink's one- and two-input operators (everything but windows and interval joins).

Semantics follow Flink's StreamMap/StreamFilter/StreamFlatMap/ProcessOperator/
KeyedProcessOperator/StreamGroupedReduceOperator/TimestampsAndWatermarksOperator and the
co-operators: outputs keep the input record's timestamp, timer outputs carry the timer's.
"""

from __future__ import annotations

import copy
from typing import Any

from flowc.api.functions import (
    CoFlatMapFunction,
    CoMapFunction,
    CoProcessFunction,
    FilterFunction,
    FlatMapFunction,
    KeyedProcessFunction,
    MapFunction,
    ProcessFunction,
    ReduceFunction,
)
from flowc.errors import ExecutionError, UnsupportedError
from flowc.executor.runtime.core import (
    LONG_MAX,
    LONG_MIN,
    Operator,
    TaskInfo,
    method_of,
    results,
    unwrap,
)
from flowc.executor.runtime.ordering import sort_rows
from flowc.transformations import OutputTag
from flowc.windowing import TimeDomain

_MISSING = object()
TIMER_NS = "user-timer"


# ----------------------------------------------------------------- contexts


class _TimerServiceView:
    """``ctx.timer_service()``: event-time and processing-time timers of the current key."""

    def __init__(self, op: Operator, keyed: bool) -> None:
        self._op = op
        self._keyed = keyed

    def current_watermark(self) -> int:
        return self._op.timers.current_watermark

    def current_processing_time(self) -> int:
        return self._op.processing_time()

    def _key(self) -> Any:
        if not self._keyed:
            raise ExecutionError("Setting timers is only supported on a keyed streams.")
        assert self._op.backend is not None
        return self._op.backend.current_key

    def register_event_time_timer(self, ts: int) -> None:
        self._op.timers.register(int(ts), self._key(), TIMER_NS)

    def delete_event_time_timer(self, ts: int) -> None:
        self._op.timers.delete(int(ts), self._key(), TIMER_NS)

    def register_processing_time_timer(self, ts: int) -> None:
        self._op.timers.register_processing(int(ts), self._key(), TIMER_NS)

    def delete_processing_time_timer(self, ts: int) -> None:
        self._op.timers.delete_processing(int(ts), self._key(), TIMER_NS)


class ProcessContext:
    """The ``ctx`` of process functions (and ``on_timer``'s OnTimerContext)."""

    def __init__(self, op: Operator, keyed: bool) -> None:
        self._op = op
        self._ts: int | None = None
        self._timer_service = _TimerServiceView(op, keyed)
        self._keyed = keyed
        self._domain = TimeDomain.EVENT_TIME

    def timestamp(self) -> int | None:
        return self._ts

    def timer_service(self) -> _TimerServiceView:
        return self._timer_service

    def get_current_key(self) -> Any:
        if not self._keyed:
            raise ExecutionError("get_current_key() is only available on keyed streams")
        assert self._op.backend is not None
        return self._op.backend.current_key

    def time_domain(self) -> TimeDomain:
        """The firing timer's domain (``on_timer``'s OnTimerContext)."""
        return self._domain

    def output(self, tag: Any, value: Any) -> None:
        if tag is None:
            raise ExecutionError("OutputTag must not be null.")
        self._op.side(tag, value, self._ts)


def emit_results(op: Operator, produced: Any, ts: int | None) -> None:
    """Emit what a process-style function produced. A ``(OutputTag, value)`` pair goes to
    that side output: PyFlink's way of writing one (``yield output_tag, value``)."""
    out, side = op.out, op.side
    for r in results(produced):
        if type(r) is tuple and len(r) == 2 and isinstance(r[0], OutputTag):
            side(r[0], r[1], ts)
        else:
            out(r, ts)


# ----------------------------------------------------------------- stateless


class MapOperator(Operator):
    def open(self) -> None:
        self.fn = method_of(self.spec.fn, MapFunction, "map")
        self.open_function(self.spec.fn)

    def process(self, value: Any, ts: int | None) -> None:
        self.out(self.fn(value), ts)


class FilterOperator(Operator):
    def open(self) -> None:
        self.fn = method_of(self.spec.fn, FilterFunction, "filter")
        self.open_function(self.spec.fn)

    def process(self, value: Any, ts: int | None) -> None:
        if self.fn(value):
            self.out(value, ts)


class FlatMapOperator(Operator):
    def open(self) -> None:
        self.fn = method_of(self.spec.fn, FlatMapFunction, "flat_map")
        self.open_function(self.spec.fn)

    def process(self, value: Any, ts: int | None) -> None:
        out = self.out
        for r in results(self.fn(value)):
            out(r, ts)


class ProcessOperator(Operator):
    # A non-keyed ProcessFunction reads processing time but cannot set timers (Flink:
    # "Setting timers is only supported on a keyed streams.").
    def open(self) -> None:
        self.fn = method_of(self.spec.fn, ProcessFunction, "process_element")
        self.ctx = ProcessContext(self, keyed=False)
        self.open_function(self.spec.fn)

    def process(self, value: Any, ts: int | None) -> None:
        self.ctx._ts = ts
        emit_results(self, self.fn(value, self.ctx), ts)


# ----------------------------------------------------------------- keyed


class KeyedOperator(Operator):
    keyed = True

    def open(self) -> None:
        key = self.keys[0] if self.keys else None
        if key is None:
            raise ExecutionError(f"{type(self.spec).__name__} needs a keyed input (key_by)")
        self.key_fn = unwrap(key)


class KeyedProcessOperator(KeyedOperator):
    def open(self) -> None:
        super().open()
        self.fn = method_of(self.spec.fn, KeyedProcessFunction, "process_element")
        fn_obj = self.spec.fn
        self.timer_fn = fn_obj.on_timer if isinstance(fn_obj, KeyedProcessFunction) else None
        self.ctx = ProcessContext(self, keyed=True)
        self.open_function(fn_obj)

    def process(self, value: Any, ts: int | None) -> None:
        if self.timers._pt_heap:
            self.poll_processing_time()
        self.backend.current_key = self.key_fn(value)  # type: ignore[union-attr]
        self.ctx._ts = ts
        emit_results(self, self.fn(value, self.ctx), ts)

    def on_timer(self, ts: int, key: Any, namespace: Any) -> None:
        fire_user_timer(self, ts, key, TimeDomain.EVENT_TIME)

    def on_processing_time(self, ts: int, key: Any, namespace: Any) -> None:
        fire_user_timer(self, ts, key, TimeDomain.PROCESSING_TIME)


def fire_user_timer(op: Any, ts: int, key: Any, domain: TimeDomain, ctx: Any = None) -> None:
    """The user's ``on_timer(ts, ctx)`` (``ctx``: the operator's own by default) with
    ``ctx.time_domain()`` set. Its results carry the timer's timestamp for event time; none
    for processing time (Flink's ``collector.eraseTimestamp()``)."""
    if op.timer_fn is None:
        return
    op.backend.current_key = key
    ctx = op.ctx if ctx is None else ctx
    ctx._ts, ctx._domain = ts, domain
    try:
        emit_results(op, op.timer_fn(ts, ctx),
                     ts if domain is TimeDomain.EVENT_TIME else None)
    finally:
        ctx._domain = TimeDomain.EVENT_TIME


class ReduceOperator(KeyedOperator):
    """Rolling reduce: STREAMING emits the running value per record; BATCH emits only the
    final value per key at end of input (Flink's BATCH execution mode), keys in first-seen
    order, with the timestamp of the key's last record."""

    def open(self) -> None:
        super().open()
        self.fn = method_of(self.spec.fn, ReduceFunction, "reduce")
        self.values: dict[Any, Any] = {}
        self.last_ts: dict[Any, int | None] = {}
        self.open_function(self.spec.fn)

    def process(self, value: Any, ts: int | None) -> None:
        key = self.key_fn(value)
        cur = self.values.get(key, _MISSING)
        new = value if cur is _MISSING else self.fn(cur, value)
        self.values[key] = new
        if self.info.batch:
            self.last_ts[key] = ts
        else:
            self.out(new, ts)

    def finish(self) -> None:
        if self.info.batch:
            for key, v in self.values.items():
                self.out(v, self.last_ts[key])
        super().finish()


class SortOperator(Operator):
    """``SortOp``: buffers its input and at end of input emits it sorted (stable: one
    sorting pass per column, least significant first), offset and limit applied. BATCH
    only: an unbounded input never ends, so STREAMING refuses it."""

    def open(self) -> None:
        super().open()
        # A limit without sorting passes its records on as they come (Flink's streaming
        # Limit, append-only): it works on an unbounded stream too.
        self.passing = not self.spec.columns
        if not self.info.batch and not self.passing:
            raise UnsupportedError("sorting (order by / ORDER BY) needs BATCH mode: "
                                   "an unbounded stream never ends")
        self.buffer: list[tuple[Any, int | None]] = []
        self.seen = 0

    def process(self, value: Any, ts: int | None) -> None:
        if self.passing:
            n, self.seen = self.seen, self.seen + 1
            end = None if self.spec.limit is None else self.spec.offset + self.spec.limit
            if n >= self.spec.offset and (end is None or n < end):
                self.out(value, ts)
            return
        self.buffer.append((value, ts))

    def finish(self) -> None:
        if self.passing:
            super().finish()
            return
        rows = sort_rows(self.buffer, self.spec.columns, lambda r: r[0])
        self.buffer = []
        end = None if self.spec.limit is None else self.spec.offset + self.spec.limit
        for value, ts in rows[self.spec.offset:end]:
            self.out(value, ts)
        super().finish()


def get_field(value: Any, position: int | str) -> Any:
    if isinstance(value, (tuple, list)):
        if isinstance(position, str):
            return getattr(value, position)  # a namedtuple / Row
        return value[position]
    if isinstance(value, dict):
        return value[position]
    if position in (0, "0"):
        return value  # a scalar stream: the value is its own field 0
    return getattr(value, position) if isinstance(position, str) else value[position]


def set_field(value: Any, position: int | str, field: Any) -> Any:
    if isinstance(value, tuple):
        if isinstance(position, str):
            return value._replace(**{position: field})  # type: ignore[attr-defined]
        return value[:position] + (field,) + value[position + 1:]
    if isinstance(value, list):
        out = list(value)
        out[position] = field  # type: ignore[index]
        return out
    if isinstance(value, dict):
        d = dict(value)
        d[position] = field
        return d
    if position in (0, "0"):
        return field
    out_obj = copy.copy(value)
    setattr(out_obj, str(position), field)
    return out_obj


class AggregationOperator(ReduceOperator):
    """Flink's SumAggregator / ComparableAggregator as a rolling reduce: ``sum``/``min``/
    ``max`` change one field of the first record; ``min_by``/``max_by`` keep the whole
    extreme record (the first one on ties, Flink's default)."""

    def open(self) -> None:
        KeyedOperator.open(self)
        kind, pos = self.spec.kind, self.spec.position
        if kind == "sum":
            def fn(a: Any, b: Any) -> Any:
                return set_field(a, pos, get_field(a, pos) + get_field(b, pos))
        elif kind in ("min", "max"):
            lt = kind == "min"

            def fn(a: Any, b: Any) -> Any:
                fa, fb = get_field(a, pos), get_field(b, pos)
                better = fb < fa if lt else fb > fa
                return set_field(a, pos, fb) if better else a
        elif kind in ("min_by", "max_by"):
            lt = kind == "min_by"

            def fn(a: Any, b: Any) -> Any:
                fa, fb = get_field(a, pos), get_field(b, pos)
                return b if (fb < fa if lt else fb > fa) else a
        else:
            raise UnsupportedError(f"aggregation '{kind}'")
        self.fn = fn
        self.values = {}
        self.last_ts = {}


# ----------------------------------------------------------------- event time


class TimestampsAndWatermarksOperator(Operator):
    """Assigns timestamps and generates bounded-out-of-orderness watermarks. Flink emits them
    periodically (every 200 ms); flowc's deterministic rule (flowc.planner.watermark_timing):
    every ``strategy.emit_every`` records, emit the generator's watermark if it rose (1: after
    every record; 0: only at the end of input). A SQL table's exact generator
    (``strategy.exact``, Flink SQL's WatermarkAssignerOperator) emits ``max_ts - lag`` only
    above ``strategy.floor`` and also right after a record that raised it by more than
    ``strategy.eager_ms``. Upstream watermarks are swallowed except the final ``LONG_MAX``
    (end of input), as in Flink."""

    def open(self) -> None:
        strategy = self.spec.strategy
        self.strategy = strategy
        self.assigner = strategy.timestamp_assigner
        self.max_ts = LONG_MIN
        self.emitted = LONG_MIN
        self.every = 1 if strategy.emit_every is None else strategy.emit_every
        self.eager = strategy.eager_ms
        self.generates = (strategy.out_of_orderness is not None and not self.info.batch
                          and (self.every > 0 or self.eager is not None))
        self.delay = strategy.lag
        self.floor = strategy.floor
        self.count = 0

    def process(self, value: Any, ts: int | None) -> None:
        if self.assigner is not None:
            ts = int(self.assigner(value, LONG_MIN if ts is None else ts))
        self.out(value, ts)
        if not self.generates:
            return
        if ts is not None and ts > self.max_ts:
            self.max_ts = ts
        if self.every:  # 0: no periodic emission (nothing to count)
            self.count += 1
            if self.count == self.every:
                self.count = 0
                self.emit_periodic()
                return
        if self.eager is not None and self.max_ts != LONG_MIN and \
                self.max_ts - self.delay - max(self.emitted, self.floor) > self.eager:
            self.emit_periodic()

    def emit_periodic(self) -> None:
        """A periodic emission (also outside the record count: the end of a streaming
        micro-batch): the generator's watermark, if it rose."""
        if self.generates and self.max_ts != LONG_MIN and \
                self.max_ts - self.delay > max(self.emitted, self.floor):
            self.emitted = self.max_ts - self.delay
            self.out_wm(self.emitted)

    def on_watermark(self, wm: int) -> None:
        if wm == LONG_MAX and self.watermark < LONG_MAX:
            self.watermark = wm
            self.emitted = wm
            self.out_wm(wm)


# ----------------------------------------------------------------- two inputs


class CoMapOperator(Operator):
    two_input = True

    def open(self) -> None:
        fn = self.spec.fn
        self.f1 = method_of(fn, CoMapFunction, "map1")
        self.f2 = method_of(fn, CoMapFunction, "map2")
        self.open_function(fn)

    def process1(self, value: Any, ts: int | None) -> None:
        self.out(self.f1(value), ts)

    def process2(self, value: Any, ts: int | None) -> None:
        self.out(self.f2(value), ts)


class CoFlatMapOperator(Operator):
    two_input = True

    def open(self) -> None:
        fn = self.spec.fn
        self.f1 = method_of(fn, CoFlatMapFunction, "flat_map1")
        self.f2 = method_of(fn, CoFlatMapFunction, "flat_map2")
        self.open_function(fn)

    def process1(self, value: Any, ts: int | None) -> None:
        for r in results(self.f1(value)):
            self.out(r, ts)

    def process2(self, value: Any, ts: int | None) -> None:
        for r in results(self.f2(value)):
            self.out(r, ts)


class CoProcessOperator(Operator):
    two_input = True

    def open(self) -> None:
        fn = self.spec.fn
        self.f1 = method_of(fn, CoProcessFunction, "process_element1")
        self.f2 = method_of(fn, CoProcessFunction, "process_element2")
        self.ctx = ProcessContext(self, keyed=self.keyed)
        self.timer_fn = getattr(fn, "on_timer", None)
        self.open_function(fn)

    def _run(self, f: Any, value: Any, ts: int | None) -> None:
        self.ctx._ts = ts
        emit_results(self, f(value, self.ctx), ts)

    def process1(self, value: Any, ts: int | None) -> None:
        self._run(self.f1, value, ts)

    def process2(self, value: Any, ts: int | None) -> None:
        self._run(self.f2, value, ts)


class KeyedCoProcessOperator(CoProcessOperator):
    keyed = True

    def process1(self, value: Any, ts: int | None) -> None:
        if self.timers._pt_heap:
            self.poll_processing_time()
        self.backend.current_key = self.keys[0](value)  # type: ignore[union-attr]
        self._run(self.f1, value, ts)

    def process2(self, value: Any, ts: int | None) -> None:
        if self.timers._pt_heap:
            self.poll_processing_time()
        self.backend.current_key = self.keys[1](value)  # type: ignore[union-attr]
        self._run(self.f2, value, ts)

    def on_timer(self, ts: int, key: Any, namespace: Any) -> None:
        fire_user_timer(self, ts, key, TimeDomain.EVENT_TIME)

    def on_processing_time(self, ts: int, key: Any, namespace: Any) -> None:
        fire_user_timer(self, ts, key, TimeDomain.PROCESSING_TIME)


def make_task_info(name: str, subtask: int, parallelism: int, max_parallelism: int,
                   batch: bool) -> TaskInfo:
    return TaskInfo(name, subtask, parallelism, max_parallelism, batch)
