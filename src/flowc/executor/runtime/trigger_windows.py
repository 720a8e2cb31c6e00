"""Flink's WindowOperator driven by a trigger (``window(...).trigger(t)``, GlobalWindows):
non-merging assigners only.

Processing-time assigners (and user triggers' processing-time timers) run on the
operator's clock (core.py: when processing-time timers fire per executor).

Per element: for each of its windows that is not late (event-time assigners:
``max_timestamp + lateness <= watermark``), add the element to the window's contents, ask
``trigger.on_element``; FIRE emits the contents (if any), PURGE drops them; event-time
windows get a cleanup timer at ``max_timestamp + lateness``. An event-time timer asks
``trigger.on_event_time`` the same way; at the cleanup time the window's contents and the
trigger's state go (``trigger.clear``). As in PyFlink (whose window operator runs in
Python), a timer a trigger registers while timers fire, at or below the watermark, fires
only at the next watermark, not in the same one as in Java Flink. Elements none of whose windows accepted them are late
(side output or dropped). Results carry ``window.max_timestamp()``."""

from __future__ import annotations

from typing import Any

from flowc.api.functions import AggregateFunction, ProcessWindowFunction, ReduceFunction
from flowc.errors import ExecutionError, UnsupportedError
from flowc.executor.runtime.core import LONG_MAX, method_of, require_timestamp
from flowc.executor.runtime.operators import KeyedOperator, emit_results
from flowc.executor.runtime.state import (
    AggregatingState,
    AggregatingStateDescriptor,
    KeyedStateBackend,
    ListState,
    ListStateDescriptor,
    MapState,
    MapStateDescriptor,
    ReducingState,
    ReducingStateDescriptor,
    ValueState,
    ValueStateDescriptor,
)
from flowc.executor.runtime.windows import WindowContext, add_to_window
from flowc.windowing import GlobalWindows

_MISSING = object()


class TriggerContext:
    """PyFlink's Trigger.TriggerContext for one (key, window)."""

    def __init__(self, op: TriggerWindowOperator) -> None:
        self._op = op
        self.key: Any = None
        self.window: Any = None

    def get_current_watermark(self) -> int:
        return self._op.timers.current_watermark

    def get_current_processing_time(self) -> int:
        return self._op.processing_time()

    def register_processing_time_timer(self, time: int) -> None:
        self._op.timers.register_processing(int(time), self.key, self.window)

    def delete_processing_time_timer(self, time: int) -> None:
        self._op.timers.delete_processing(int(time), self.key, self.window)

    def register_event_time_timer(self, time: int) -> None:
        op = self._op
        if op.firing and time <= op.timers.current_watermark:
            # PyFlink runs triggers in Python and hands timers to Java's timer service after
            # the watermark was processed: one registered while timers fire, at or below the
            # watermark, waits for the next watermark (Java Flink would fire it at once).
            op.deferred.append((int(time), self.key, self.window))
            return
        op.timers.register(int(time), self.key, self.window)

    def delete_event_time_timer(self, time: int) -> None:
        self._op.timers.delete(int(time), self.key, self.window)

    def get_partitioned_state(self, descriptor: Any) -> Any:
        """State of this (key, window), for the trigger."""
        b = self._op.trigger_state
        b.current_key = (self.key, self.window)
        table = b.table(descriptor)
        if isinstance(descriptor, ValueStateDescriptor):
            return ValueState(b, table)
        if isinstance(descriptor, ReducingStateDescriptor):
            return ReducingState(b, table, descriptor.reduce_function)
        if isinstance(descriptor, ListStateDescriptor):
            return ListState(b, table)
        if isinstance(descriptor, MapStateDescriptor):
            return MapState(b, table)
        if isinstance(descriptor, AggregatingStateDescriptor):
            return AggregatingState(b, table, descriptor.agg_function)
        raise UnsupportedError(f"state descriptor {type(descriptor).__name__} is not supported")


class TriggerWindowOperator(KeyedOperator):
    def open(self) -> None:
        super().open()
        spec = self.spec
        self.assigner = spec.assigner
        if self.assigner.is_merging:
            raise UnsupportedError("a trigger() on merging (session) windows is not supported")
        self.trigger = spec.trigger
        # Flink's assigner.isEventTime(): processing-time assigners (and GlobalWindows)
        # take no element timestamps, have no late elements and clean up at max_timestamp.
        self.event_time = bool(self.assigner.is_event_time)
        self.timed = not isinstance(self.assigner, GlobalWindows)
        self.lateness = int(spec.allowed_lateness)
        self.late_tag = spec.late_tag
        self.reduce = (method_of(spec.reduce_fn, ReduceFunction, "reduce")
                       if spec.reduce_fn is not None else None)
        self.agg: AggregateFunction | None = spec.aggregate_fn
        self.window_fn = (method_of(spec.window_fn, ProcessWindowFunction, "process")
                          if spec.window_fn is not None else None)
        self.ctx = WindowContext(self)  # type: ignore[arg-type]
        self.tctx = TriggerContext(self)
        self.trigger_state = KeyedStateBackend()
        self.state: dict[tuple[Any, Any], Any] = {}
        self.firing = False
        self.deferred: list[tuple[int, Any, Any]] = []
        for fn in (spec.reduce_fn, spec.aggregate_fn, spec.window_fn):
            if fn is not None:
                self.open_function(fn)

    def _cleanup_time(self, w: Any) -> int:
        if not self.event_time:
            return w.max_timestamp()  # type: ignore[no-any-return]
        t = w.max_timestamp() + self.lateness
        return t if t < LONG_MAX else LONG_MAX

    def _add(self, key: Any, w: Any, value: Any) -> None:
        add_to_window(self.state, (key, w), value, self.reduce, self.agg)

    def _result(self, key: Any, w: Any, r: Any) -> None:
        """Act on a TriggerResult for (key, w)."""
        if r.is_fire():
            contents = self.state.get((key, w), _MISSING)
            if contents is not _MISSING:
                self._emit(key, w, contents)
        if r.is_purge():
            self.state.pop((key, w), None)

    def _emit(self, key: Any, w: Any, contents: Any) -> None:
        ts = w.max_timestamp()
        if self.reduce is not None:
            elements: list[Any] = [contents]
        elif self.agg is not None:
            elements = [self.agg.get_result(contents)]
        else:
            elements = list(contents)
        if self.window_fn is None:
            for e in elements:
                self.out(e, ts)
            return
        self.ctx._window = w
        emit_results(self, self.window_fn(key, self.ctx, elements), ts)

    def process(self, value: Any, ts: Any) -> None:
        if self.event_time:
            t = require_timestamp(ts, "an event-time window")
        else:
            self.poll_processing_time()
            t = self.processing_time() if self.timed else ts
        key = self.key_fn(value)
        self.backend.current_key = key  # type: ignore[union-attr]
        wm = self.timers.current_watermark
        tctx = self.tctx
        skipped = True
        try:
            windows = self.assigner.assign(value, t)
        except ValueError as e:
            raise ExecutionError(str(e)) from None
        for w in windows:
            if self.event_time and self._cleanup_time(w) <= wm:
                continue  # a late window
            skipped = False
            self._add(key, w, value)
            tctx.key, tctx.window = key, w
            self._result(key, w, self.trigger.on_element(value, ts, w, tctx))
            if self.timed and self._cleanup_time(w) != LONG_MAX:
                if self.event_time:
                    self.timers.register(self._cleanup_time(w), key, w)
                else:
                    self.timers.register_processing(self._cleanup_time(w), key, w)
        if skipped and self.event_time and t + self.lateness <= wm:
            if self.late_tag is not None:
                self.side(self.late_tag, value, ts)
            else:
                self.late_records_dropped += 1

    def on_timer(self, ts: int, key: Any, w: Any) -> None:
        self._on_any_timer(ts, key, w, self.event_time, self.trigger.on_event_time)

    def on_processing_time(self, ts: int, key: Any, w: Any) -> None:
        self._on_any_timer(ts, key, w, self.timed and not self.event_time,
                           self.trigger.on_processing_time)

    def _on_any_timer(self, ts: int, key: Any, w: Any, cleans: bool, ask: Any) -> None:
        """Flink's onEventTime / onProcessingTime: ask the trigger, act on its result; at
        the cleanup time in the assigner's own domain, drop the window's state."""
        self.backend.current_key = key  # type: ignore[union-attr]
        tctx = self.tctx
        tctx.key, tctx.window = key, w
        self._result(key, w, ask(ts, w, tctx))
        if cleans and ts == self._cleanup_time(w):
            self.state.pop((key, w), None)
            self.trigger.clear(w, tctx)
            self.trigger_state.current_key = (key, w)
            for table in self.trigger_state.tables.values():
                table.pop((key, w), None)

    def on_watermark(self, wm: int) -> None:
        self.firing = True
        try:
            super().on_watermark(wm)
        finally:
            self.firing = False
        self._register_deferred()

    def finish(self) -> None:
        self.firing = True
        try:
            super().finish()
        finally:
            self.firing = False
        self._register_deferred()

    def _register_deferred(self) -> None:
        for t in self.deferred:
            self.timers.register(*t)
        self.deferred.clear()
