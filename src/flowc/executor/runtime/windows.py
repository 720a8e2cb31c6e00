"""Flink's WindowOperator with its assigner's default trigger: EventTimeTrigger for
tumbling, sliding and session (merging) event-time windows, allowed lateness and the
late-data side output; ProcessingTimeTrigger for the processing-time assigners (windows by
the operator's clock, fired by processing-time timers, never late; cleanup at
``max_timestamp``, as Flink's ``cleanupTime``).

State per (key, state window): the element list, the reduced value or the accumulator.
Merging follows Flink's MergingWindowSet (the merged window keeps the state of one of the
windows it absorbed). ``max_timestamp = end - 1``; ``cleanup = max_timestamp + lateness``;
a window is late when ``cleanup <= watermark``; an element none of whose windows accepts it
is sent to the late side output (or dropped and counted) when
``timestamp + lateness <= watermark``.
"""

from __future__ import annotations

from collections.abc import Iterable
from operator import itemgetter
from typing import Any

from flowc.api.functions import AggregateFunction, ProcessWindowFunction, ReduceFunction
from flowc.errors import ExecutionError
from flowc.executor.runtime.core import (
    LONG_MAX,
    Partial,
    method_of,
    require_timestamp,
)
from flowc.executor.runtime.operators import KeyedOperator, emit_results
from flowc.windowing import CountWindow, TimeWindow, merge_windows

_MISSING = object()
_FIRE = "fire"


def add_to_window(state: dict[Any, Any], k: Any, value: Any, reduce: Any, agg: Any) -> None:
    """One element into a window's state: the reduced value, the accumulator, or the
    element list (neither function: the window function gets all elements)."""
    cur = state.get(k, _MISSING)
    if reduce is not None:
        state[k] = value if cur is _MISSING else reduce(cur, value)
    elif agg is not None:
        state[k] = agg.add(value, agg.create_accumulator() if cur is _MISSING else cur)
    elif cur is _MISSING:
        state[k] = [value]
    else:
        cur.append(value)


class WindowContext:
    """ProcessWindowFunction.Context."""

    def __init__(self, op: WindowOperator) -> None:
        self._op = op
        self._window: TimeWindow | None = None

    def window(self) -> TimeWindow:
        assert self._window is not None
        return self._window

    def current_watermark(self) -> int:
        return self._op.timers.current_watermark

    def current_processing_time(self) -> int:
        return self._op.processing_time()

    def output(self, tag: Any, value: Any) -> None:
        assert self._window is not None
        self._op.side(tag, value, self._window.max_timestamp())


class WindowOperator(KeyedOperator):
    def open(self) -> None:
        super().open()
        spec = self.spec
        self.assigner = spec.assigner
        self.lateness = int(spec.allowed_lateness)
        self.late_tag = spec.late_tag
        self.merging = bool(self.assigner.is_merging)
        self.event_time = bool(self.assigner.is_event_time)
        self.reduce = (method_of(spec.reduce_fn, ReduceFunction, "reduce")
                       if spec.reduce_fn is not None else None)
        agg = spec.aggregate_fn
        self.agg: AggregateFunction | None = agg
        self.window_fn = (method_of(spec.window_fn, ProcessWindowFunction, "process")
                          if spec.window_fn is not None else None)
        self.ctx = WindowContext(self)
        # (key, state window) -> contents
        self.state: dict[tuple[Any, TimeWindow], Any] = {}
        # merging only: key -> {window: state window} (Flink's MergingWindowSet mapping)
        self.mapping: dict[Any, dict[TimeWindow, TimeWindow]] = {}
        # BATCH, non-merging: no timers at all; every window fires once at end of input, in
        # (end, first-seen) order, which is exactly the order the timer heap would give.
        self.fast_batch = self.info.batch and not self.merging and self.event_time
        self.batch_state: dict[tuple[Any, int, int], Any] = {}
        for fn in (spec.reduce_fn, agg, spec.window_fn):
            if fn is not None:
                self.open_function(fn)

    # -- helpers ------------------------------------------------------------------

    def _cleanup_time(self, w: TimeWindow) -> int:
        # Flink: maxTimestamp + lateness, Long.MAX_VALUE when the Java sum overflows;
        # processing time: maxTimestamp.
        if not self.event_time:
            return w.end - 1
        t = w.end - 1 + self.lateness
        return t if t < LONG_MAX else LONG_MAX

    def _window_late(self, w: TimeWindow) -> bool:
        return self.event_time and self._cleanup_time(w) <= self.timers.current_watermark

    def _timer(self, t: int, key: Any, w: TimeWindow) -> None:
        if self.event_time:
            self.timers.register(t, key, w)
        else:
            self.timers.register_processing(t, key, w)

    def _delete_timer(self, t: int, key: Any, w: TimeWindow) -> None:
        if self.event_time:
            self.timers.delete(t, key, w)
        else:
            self.timers.delete_processing(t, key, w)

    def _add(self, key: Any, sw: TimeWindow, value: Any) -> None:
        add_to_window(self.state, (key, sw), value, self.reduce, self.agg)

    def _merge_state(self, key: Any, target: TimeWindow, sources: Iterable[TimeWindow]) -> None:
        st = self.state
        t = st.get((key, target), _MISSING)
        for s in sources:
            v = st.pop((key, s), _MISSING)
            if v is _MISSING:
                continue
            if t is _MISSING:
                t = v
            elif self.reduce is not None:
                t = self.reduce(t, v)
            elif self.agg is not None:
                t = self.agg.merge(t, v)
            else:
                t = t + v
        if t is not _MISSING:
            st[(key, target)] = t

    def _register_cleanup(self, key: Any, w: TimeWindow) -> None:
        t = self._cleanup_time(w)
        if t != LONG_MAX:
            self._timer(t, key, w)

    def _emit(self, key: Any, w: TimeWindow, contents: Any) -> None:
        ts = w.end - 1
        if self.reduce is not None:
            elements: list[Any] = [contents]
        elif self.agg is not None:
            elements = [self.agg.get_result(contents)]
        else:
            elements = list(contents)
        out = self.out
        if self.window_fn is None:
            for e in elements:
                out(e, ts)
            return
        self.ctx._window = w
        emit_results(self, self.window_fn(key, self.ctx, elements), ts)

    # -- elements -----------------------------------------------------------------

    def _batch_add(self, g: tuple[Any, int, int], value: Any) -> None:
        add_to_window(self.batch_state, g, value, self.reduce, self.agg)

    def finish(self) -> None:
        if self.fast_batch:
            self._fire_all()
        super().finish()

    def _fire_all(self) -> None:
        """BATCH, non-merging: fire every window once, by end, first-seen order within an
        end (the sort is stable; itemgetter: no Python call per group)."""
        st, self.batch_state = self.batch_state, {}
        backend, emit = self.backend, self._emit
        for g in sorted(st, key=itemgetter(2)):
            backend.current_key = g[0]  # type: ignore[union-attr]
            emit(g[0], TimeWindow(g[1], g[2]), st[g])

    def process_partial(self, partial: Any) -> None:
        key, start, end, acc, n = partial
        self.extra_records += n - 1
        if self.fast_batch:
            g = (key, start, end)
            st = self.batch_state
            cur = st.get(g, _MISSING)
            if cur is _MISSING:
                st[g] = acc
            elif self.reduce is not None:
                st[g] = self.reduce(cur, acc)
            else:
                st[g] = self.agg.merge(cur, acc)  # type: ignore[union-attr]
            return
        w = TimeWindow(start, end)
        k = (key, w)
        cur = self.state.get(k, _MISSING)
        if cur is _MISSING:
            self.state[k] = acc
        elif self.reduce is not None:
            self.state[k] = self.reduce(cur, acc)
        else:
            self.state[k] = self.agg.merge(cur, acc)  # type: ignore[union-attr]
        self.timers.register(w.max_timestamp(), key, w)
        self._register_cleanup(key, w)

    def process(self, value: Any, ts: Any) -> None:
        if ts is Partial:
            self.process_partial(value)
            return
        if self.event_time:
            t = require_timestamp(ts, "an event-time window")
        else:
            self.poll_processing_time()
            t = self.processing_time()
        key = self.key_fn(value)
        if self.fast_batch:
            for w in self.assigner.assign_windows(t):
                self._batch_add((key, w.start, w.end), value)
            return
        self.backend.current_key = key  # type: ignore[union-attr]
        wm = self.timers.current_watermark
        skipped = True
        try:
            windows = self.assigner.assign(value, t)
        except ValueError as e:  # a dynamic gap <= 0
            raise ExecutionError(str(e)) from None
        if self.merging:
            for w in windows:
                actual, state_window = self._add_merging_window(key, w)
                if self._window_late(actual):
                    mapping = self.mapping[key]
                    mapping.pop(actual, None)
                    if not mapping:  # a key with only late records keeps no entry
                        del self.mapping[key]
                    continue
                skipped = False
                self._add(key, state_window, value)
                self._on_element(key, actual, state_window)
        else:
            for w in windows:
                if self._window_late(w):
                    continue
                skipped = False
                self._add(key, w, value)
                self._on_element(key, w, w)
        if skipped and self.event_time and t + self.lateness <= wm:
            if self.late_tag is not None:
                self.side(self.late_tag, value, ts)
            else:
                self.late_records_dropped += 1

    def _on_element(self, key: Any, w: TimeWindow, state_window: TimeWindow) -> None:
        # EventTimeTrigger.onElement: fire at once if the watermark is past the window
        # (possible with allowed lateness), else register the end-of-window timer; then
        # the cleanup timer (``_register_cleanup``, inlined: this runs per element).
        timers = self.timers
        end_ts = w.end - 1
        if not self.event_time:
            # ProcessingTimeTrigger.onElement: a timer at the window's end (its cleanup
            # time too: one timer), never an immediate fire.
            timers.register_processing(end_ts, key, w)
            return
        if end_ts <= timers.current_watermark:
            self._emit(key, w, self.state[(key, state_window)])
        else:
            timers.register(end_ts, key, w)
        cleanup = end_ts + self.lateness
        if cleanup < LONG_MAX:
            timers.register(cleanup, key, w)

    def _add_merging_window(self, key: Any, new: TimeWindow) -> tuple[TimeWindow, TimeWindow]:
        mapping = self.mapping.setdefault(key, {})
        candidates = list(mapping) + [new]
        result = new
        merged_new = False
        for merge_result, merged in merge_windows(candidates):
            if len(merged) <= 1:
                continue
            merged = list(merged)
            if new in merged:
                merged.remove(new)
                merged_new = True
                result = merge_result
            state_window = mapping[merged[0]]
            merged_state = [sw for m in merged if (sw := mapping.pop(m, None)) is not None]
            mapping[merge_result] = state_window
            merged_state.remove(state_window)
            if not (merge_result in merged and len(merged) == 1):
                self._merge(key, merge_result, merged, state_window, merged_state)
        if result == new and not merged_new:
            mapping[result] = result
        return result, mapping[result]

    def _merge(self, key: Any, result: TimeWindow, merged: list[TimeWindow],
               state_window: TimeWindow, merged_state: list[TimeWindow]) -> None:
        now = self.timers.current_watermark if self.event_time else self.processing_time()
        if self.event_time and result.max_timestamp() + self.lateness <= now:
            raise ExecutionError("The end timestamp of an event-time window cannot become "
                                 "earlier than the current watermark by merging.")
        # The trigger's onMerge (EventTimeTrigger / ProcessingTimeTrigger: a timer at the
        # merged window's end if still ahead), then clear the absorbed windows' triggers
        # and cleanup timers.
        if result.max_timestamp() > now:
            self._timer(result.max_timestamp(), key, result)
        for m in merged:
            self._delete_timer(m.max_timestamp(), key, m)
            ct = self._cleanup_time(m)
            if ct != LONG_MAX:
                self._delete_timer(ct, key, m)
        self._merge_state(key, state_window, merged_state)

    # -- timers -------------------------------------------------------------------

    def on_timer(self, ts: int, key: Any, w: Any) -> None:
        self.backend.current_key = key  # type: ignore[union-attr]
        if self.merging:
            mapping = self.mapping.get(key, {})
            state_window = mapping.get(w)
            if state_window is None:
                return
        else:
            state_window = w
        contents = self.state.get((key, state_window), _MISSING)
        end_ts = w.end - 1
        if contents is not _MISSING and ts == end_ts:
            self._emit(key, w, contents)
        if ts == self._cleanup_time(w):
            self.state.pop((key, state_window), None)
            self._delete_timer(end_ts, key, w)
            if self.merging:
                self.mapping[key].pop(w, None)
                if not self.mapping[key]:
                    del self.mapping[key]

    # ProcessingTimeTrigger.onProcessingTime fires; the same timer is the cleanup.
    on_processing_time = on_timer


class CountWindowOperator(KeyedOperator):
    """PyFlink's count windows: a per-key element counter assigns each element to window ids
    (CountWindowAssigner.window_ids); a window fires (CountTrigger) when it holds ``size``
    elements and is then dropped (no element can reach it again). Results carry
    ``CountWindow.max_timestamp()``, Long.MAX_VALUE, as in PyFlink."""

    def open(self) -> None:
        super().open()
        spec = self.spec
        self.assigner = spec.assigner
        self.size = spec.assigner.size
        self.reduce = (method_of(spec.reduce_fn, ReduceFunction, "reduce")
                       if spec.reduce_fn is not None else None)
        self.agg: AggregateFunction | None = spec.aggregate_fn
        self.window_fn = (method_of(spec.window_fn, ProcessWindowFunction, "process")
                          if spec.window_fn is not None else None)
        self.ctx = WindowContext(self)  # type: ignore[arg-type]
        self.counts: dict[Any, int] = {}
        # (key, window id) -> [elements seen, contents]
        self.state: dict[tuple[Any, int], list[Any]] = {}
        for fn in (spec.reduce_fn, spec.aggregate_fn, spec.window_fn):
            if fn is not None:
                self.open_function(fn)

    def process(self, value: Any, ts: Any) -> None:
        key = self.key_fn(value)
        self.backend.current_key = key  # type: ignore[union-attr]
        count = self.counts.get(key, 0)
        self.counts[key] = count + 1
        for wid in self.assigner.window_ids(count):
            entry = self.state.get((key, wid))
            if entry is None:
                acc = self.agg.create_accumulator() if self.agg is not None else None
                entry = self.state[(key, wid)] = [0, acc if self.agg is not None else []]
            entry[0] += 1
            if self.reduce is not None:
                entry[1] = value if entry[0] == 1 else self.reduce(entry[1], value)
            elif self.agg is not None:
                entry[1] = self.agg.add(value, entry[1])
            else:
                entry[1].append(value)
            if entry[0] == self.size:
                del self.state[(key, wid)]
                self._fire(key, CountWindow(wid), entry[1])

    def _fire(self, key: Any, w: CountWindow, contents: Any) -> None:
        ts = w.max_timestamp()
        if self.reduce is not None:
            elements: list[Any] = [contents]
        elif self.agg is not None:
            elements = [self.agg.get_result(contents)]
        else:
            elements = contents
        if self.window_fn is None:
            for e in elements:
                self.out(e, ts)
            return
        self.ctx._window = w  # type: ignore[assignment]
        emit_results(self, self.window_fn(key, self.ctx, elements), ts)
