"""Window triggers with PyFlink's names and semantics (``pyflink.datastream.window``):
``TriggerResult``, the ``Trigger`` base class for user triggers, and the built-in event-time
and processing-time ones. A trigger keeps its own per-(key, window) state through
``ctx.get_partitioned_state(descriptor)``; the runtime is
flowc.executor.runtime.trigger_windows. Processing time is the executor's clock
(executor/runtime/clock.py; docs/executor.md, "Processing time")."""

from __future__ import annotations

from enum import Enum
from typing import Any

from flowc.executor.runtime.state import ReducingStateDescriptor
from flowc.windowing import Duration, to_millis


class TriggerResult(Enum):
    CONTINUE = (False, False)
    FIRE_AND_PURGE = (True, True)
    FIRE = (True, False)
    PURGE = (False, True)

    def is_fire(self) -> bool:
        return self.value[0]  # type: ignore[no-any-return]

    def is_purge(self) -> bool:
        return self.value[1]  # type: ignore[no-any-return]


class Trigger:
    """Base class of triggers (PyFlink's ``Trigger``)."""

    def __class_getitem__(cls, params: Any) -> type:
        return cls  # Generic in PyFlink (``Trigger[T, W]``): type parameters document only

    def on_element(self, element: Any, timestamp: int, window: Any, ctx: Any) -> TriggerResult:
        raise NotImplementedError

    def on_processing_time(self, time: int, window: Any, ctx: Any) -> TriggerResult:
        return TriggerResult.CONTINUE

    def on_event_time(self, time: int, window: Any, ctx: Any) -> TriggerResult:
        raise NotImplementedError

    def can_merge(self) -> bool:
        return False

    def on_merge(self, window: Any, ctx: Any) -> None:
        raise RuntimeError("This trigger does not support merging.")

    def clear(self, window: Any, ctx: Any) -> None:
        """Drop the trigger's state and timers of ``window`` (when the window is purged)."""


class EventTimeTrigger(Trigger):
    """Fires once the watermark passes the end of the window."""

    def on_element(self, element: Any, timestamp: int, window: Any, ctx: Any) -> TriggerResult:
        if window.max_timestamp() <= ctx.get_current_watermark():
            return TriggerResult.FIRE
        ctx.register_event_time_timer(window.max_timestamp())
        return TriggerResult.CONTINUE

    def on_event_time(self, time: int, window: Any, ctx: Any) -> TriggerResult:
        return TriggerResult.FIRE if time == window.max_timestamp() else TriggerResult.CONTINUE

    def clear(self, window: Any, ctx: Any) -> None:
        ctx.delete_event_time_timer(window.max_timestamp())

    @staticmethod
    def create() -> EventTimeTrigger:
        return EventTimeTrigger()


class NeverTrigger(Trigger):
    """GlobalWindows' default: never fires."""

    def on_element(self, element: Any, timestamp: int, window: Any, ctx: Any) -> TriggerResult:
        return TriggerResult.CONTINUE

    def on_event_time(self, time: int, window: Any, ctx: Any) -> TriggerResult:
        return TriggerResult.CONTINUE


def _add(a: int, b: int) -> int:
    return a + b


def _min(a: int, b: int) -> int:
    return min(a, b)


class CountTrigger(Trigger):
    """Fires when the window holds ``count`` elements since it last fired."""

    def __init__(self, count: int) -> None:
        self.count = int(count)
        self.desc = ReducingStateDescriptor("count", _add)

    @staticmethod
    def of(window_size: int) -> CountTrigger:
        return CountTrigger(window_size)

    def on_element(self, element: Any, timestamp: int, window: Any, ctx: Any) -> TriggerResult:
        state = ctx.get_partitioned_state(self.desc)
        state.add(1)
        if state.get() >= self.count:
            state.clear()
            return TriggerResult.FIRE
        return TriggerResult.CONTINUE

    def on_event_time(self, time: int, window: Any, ctx: Any) -> TriggerResult:
        return TriggerResult.CONTINUE

    def clear(self, window: Any, ctx: Any) -> None:
        ctx.get_partitioned_state(self.desc).clear()


class PurgingTrigger(Trigger):
    """Turns every FIRE of the nested trigger into FIRE_AND_PURGE."""

    def __init__(self, nested_trigger: Trigger) -> None:
        self.nested_trigger = nested_trigger

    @staticmethod
    def of(nested_trigger: Trigger) -> PurgingTrigger:
        return PurgingTrigger(nested_trigger)

    @staticmethod
    def _purging(r: TriggerResult) -> TriggerResult:
        return TriggerResult.FIRE_AND_PURGE if r.is_fire() else r

    def on_element(self, element: Any, timestamp: int, window: Any, ctx: Any) -> TriggerResult:
        return self._purging(self.nested_trigger.on_element(element, timestamp, window, ctx))

    def on_event_time(self, time: int, window: Any, ctx: Any) -> TriggerResult:
        return self._purging(self.nested_trigger.on_event_time(time, window, ctx))

    def clear(self, window: Any, ctx: Any) -> None:
        self.nested_trigger.clear(window, ctx)


class ContinuousEventTimeTrigger(Trigger):
    """Fires every ``interval`` of event time within the window, and at its end."""

    def __init__(self, interval: int) -> None:
        self.interval = int(interval)
        self.desc = ReducingStateDescriptor("fire-time", _min)

    @staticmethod
    def of(interval: Duration | int) -> ContinuousEventTimeTrigger:
        return ContinuousEventTimeTrigger(to_millis(interval))

    def _register_next(self, time: int, window: Any, ctx: Any, state: Any) -> None:
        nxt = min(time + self.interval, window.max_timestamp())
        state.add(nxt)
        ctx.register_event_time_timer(nxt)

    def on_element(self, element: Any, timestamp: int, window: Any, ctx: Any) -> TriggerResult:
        if window.max_timestamp() <= ctx.get_current_watermark():
            return TriggerResult.FIRE
        ctx.register_event_time_timer(window.max_timestamp())
        state = ctx.get_partitioned_state(self.desc)
        if state.get() is None:
            # Python's % equals Java's here only for non-negative timestamps; as PyFlink.
            self._register_next(timestamp - (timestamp % self.interval), window, ctx, state)
        return TriggerResult.CONTINUE

    def on_event_time(self, time: int, window: Any, ctx: Any) -> TriggerResult:
        if time == window.max_timestamp():
            return TriggerResult.FIRE
        state = ctx.get_partitioned_state(self.desc)
        if state.get() is not None and state.get() == time:
            state.clear()
            self._register_next(time, window, ctx, state)
            return TriggerResult.FIRE
        return TriggerResult.CONTINUE

    def clear(self, window: Any, ctx: Any) -> None:
        state = ctx.get_partitioned_state(self.desc)
        if state.get() is not None:
            ctx.delete_event_time_timer(state.get())
            state.clear()


class ProcessingTimeTrigger(Trigger):
    """Fires once the processing time passes the end of the window (the default trigger
    of the processing-time assigners)."""

    def on_element(self, element: Any, timestamp: int, window: Any, ctx: Any) -> TriggerResult:
        ctx.register_processing_time_timer(window.max_timestamp())
        return TriggerResult.CONTINUE

    def on_event_time(self, time: int, window: Any, ctx: Any) -> TriggerResult:
        return TriggerResult.CONTINUE

    def on_processing_time(self, time: int, window: Any, ctx: Any) -> TriggerResult:
        return TriggerResult.FIRE

    def can_merge(self) -> bool:
        return True

    def on_merge(self, window: Any, ctx: Any) -> None:
        if window.max_timestamp() > ctx.get_current_processing_time():
            ctx.register_processing_time_timer(window.max_timestamp())

    def clear(self, window: Any, ctx: Any) -> None:
        ctx.delete_processing_time_timer(window.max_timestamp())

    @staticmethod
    def create() -> ProcessingTimeTrigger:
        return ProcessingTimeTrigger()


class ContinuousProcessingTimeTrigger(Trigger):
    """Fires every ``interval`` of processing time (aligned to multiples of it) while the
    window receives elements, up to its end."""

    def __init__(self, interval: int) -> None:
        self.interval = int(interval)
        self.desc = ReducingStateDescriptor("fire-time", _min)

    @staticmethod
    def of(interval: Duration | int) -> ContinuousProcessingTimeTrigger:
        return ContinuousProcessingTimeTrigger(to_millis(interval))

    def _register_next(self, time: int, window: Any, ctx: Any, state: Any) -> None:
        nxt = min(time + self.interval, window.max_timestamp())
        state.add(nxt)
        ctx.register_processing_time_timer(nxt)

    def on_element(self, element: Any, timestamp: int, window: Any, ctx: Any) -> TriggerResult:
        state = ctx.get_partitioned_state(self.desc)
        now = ctx.get_current_processing_time()
        if state.get() is None:
            self._register_next(now - (now % self.interval), window, ctx, state)
        return TriggerResult.CONTINUE

    def on_event_time(self, time: int, window: Any, ctx: Any) -> TriggerResult:
        return TriggerResult.CONTINUE

    def on_processing_time(self, time: int, window: Any, ctx: Any) -> TriggerResult:
        state = ctx.get_partitioned_state(self.desc)
        if state.get() == time:
            state.clear()
            self._register_next(time, window, ctx, state)
            return TriggerResult.FIRE
        return TriggerResult.CONTINUE

    def clear(self, window: Any, ctx: Any) -> None:
        state = ctx.get_partitioned_state(self.desc)
        if state.get() is not None:
            ctx.delete_processing_time_timer(state.get())
            state.clear()


__all__ = ["ContinuousEventTimeTrigger", "ContinuousProcessingTimeTrigger",
           "ProcessingTimeTrigger", "CountTrigger", "EventTimeTrigger", "NeverTrigger",
           "PurgingTrigger", "Trigger", "TriggerResult"]
