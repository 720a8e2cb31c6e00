"""Event time: durations, watermark strategies and window assigners (Flink's semantics).

Pure data plus the arithmetic Flink's assigners do; shared by the API, the planner's names
and both executors. Times are integer milliseconds since the epoch.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from enum import Enum
from typing import Any, NamedTuple

LONG_MIN = -(2**63)
LONG_MAX = 2**63 - 1


class TimeDomain(Enum):
    """PyFlink's ``TimeDomain``: which clock fired a timer (``ctx.time_domain()``)."""

    EVENT_TIME = 0
    PROCESSING_TIME = 1


@dataclass(frozen=True, order=True)
class Duration:
    """A length of time in milliseconds (PyFlink's ``Duration`` / ``Time``)."""

    millis: int

    @staticmethod
    def of_millis(ms: int) -> Duration:
        return Duration(int(ms))

    @staticmethod
    def of_seconds(s: int | float) -> Duration:
        return Duration(int(round(s * 1000)))

    @staticmethod
    def of_minutes(m: int | float) -> Duration:
        return Duration(int(round(m * 60_000)))

    @staticmethod
    def of_hours(h: int | float) -> Duration:
        return Duration(int(round(h * 3_600_000)))

    @staticmethod
    def of_days(d: int | float) -> Duration:
        return Duration(int(round(d * 86_400_000)))

    def to_milliseconds(self) -> int:
        return self.millis


class Time:
    """Flink's legacy ``Time`` factory; returns :class:`Duration`."""

    milliseconds = staticmethod(Duration.of_millis)
    seconds = staticmethod(Duration.of_seconds)
    minutes = staticmethod(Duration.of_minutes)
    hours = staticmethod(Duration.of_hours)
    days = staticmethod(Duration.of_days)


def to_millis(d: Duration | int) -> int:
    if isinstance(d, Duration):
        return d.millis
    if isinstance(d, bool) or not isinstance(d, int):
        raise TypeError(f"expected a Duration or milliseconds, got {d!r}")
    return d


class TimeWindow(NamedTuple):
    """Flink's TimeWindow ``[start, end)``. A named tuple: window state and timers hash and
    compare windows per record, and a tuple's hash and order are computed in C (same
    fields, equality and order as a frozen, ordered dataclass)."""

    start: int
    end: int

    def max_timestamp(self) -> int:
        return self.end - 1

    def intersects(self, other: TimeWindow) -> bool:
        return self.start <= other.end and self.end >= other.start

    def cover(self, other: TimeWindow) -> TimeWindow:
        return TimeWindow(min(self.start, other.start), max(self.end, other.end))


def window_start_with_offset(timestamp: int, offset: int, window_size: int) -> int:
    """Flink's ``TimeWindow.getWindowStartWithOffset`` (Java ``%`` semantics)."""
    remainder = _java_mod(timestamp - offset, window_size)
    if remainder < 0:
        return timestamp - (remainder + window_size)
    return timestamp - remainder


def _java_mod(a: int, b: int) -> int:
    # Java's % truncates toward zero; Python's floors.
    r = abs(a) % abs(b)
    return -r if a < 0 else r


class WindowAssigner:
    """Base of window assigners. ``is_event_time`` is Flink's ``isEventTime()``: the
    window operator then assigns by the element's timestamp and fires on the watermark;
    otherwise (processing time) by the operator's clock, firing on processing-time
    timers."""

    def __class_getitem__(cls, params: Any) -> type:
        return cls  # Generic in PyFlink (``Trigger[T, W]``): type parameters document only

    is_merging = False
    is_event_time = True

    def assign_windows(self, timestamp: int) -> list[TimeWindow]:
        raise NotImplementedError

    def assign(self, element: Any, timestamp: int) -> list[TimeWindow]:
        """The windows of ``element`` (only dynamic session gaps look at it)."""
        return self.assign_windows(timestamp)

    def describe(self) -> str:
        raise NotImplementedError


@dataclass(frozen=True)
class TumblingEventTimeWindows(WindowAssigner):
    size: int
    offset: int = 0

    def __post_init__(self) -> None:
        if abs(self.offset) >= self.size or self.size <= 0:
            raise ValueError(
                "TumblingEventTimeWindows parameters must satisfy abs(offset) < size")

    @staticmethod
    def of(size: Duration | int, offset: Duration | int = 0) -> TumblingEventTimeWindows:
        return TumblingEventTimeWindows(to_millis(size), to_millis(offset))

    def assign_windows(self, timestamp: int) -> list[TimeWindow]:
        start = window_start_with_offset(timestamp, self.offset, self.size)
        return [TimeWindow(start, start + self.size)]

    def describe(self) -> str:
        return f"TumblingEventTimeWindows({self.size})"


@dataclass(frozen=True)
class SlidingEventTimeWindows(WindowAssigner):
    size: int
    slide: int
    offset: int = 0

    def __post_init__(self) -> None:
        if abs(self.offset) >= self.slide or self.size <= 0 or self.slide <= 0:
            raise ValueError(
                "SlidingEventTimeWindows parameters must satisfy abs(offset) < slide and size > 0")

    @staticmethod
    def of(size: Duration | int, slide: Duration | int,
           offset: Duration | int = 0) -> SlidingEventTimeWindows:
        return SlidingEventTimeWindows(to_millis(size), to_millis(slide), to_millis(offset))

    def assign_windows(self, timestamp: int) -> list[TimeWindow]:
        return sliding_windows(timestamp, self.size, self.slide, self.offset)

    def describe(self) -> str:
        return f"SlidingEventTimeWindows({self.size}, {self.slide})"


@dataclass(frozen=True)
class EventTimeSessionWindows(WindowAssigner):
    gap: int
    is_merging = True

    def __post_init__(self) -> None:
        if self.gap <= 0:
            raise ValueError("EventTimeSessionWindows parameters must satisfy 0 < size")

    @staticmethod
    def with_gap(gap: Duration | int) -> EventTimeSessionWindows:
        return EventTimeSessionWindows(to_millis(gap))

    @staticmethod
    def with_dynamic_gap(extractor: Any) -> DynamicEventTimeSessionWindows:
        return DynamicEventTimeSessionWindows(extractor)

    def assign_windows(self, timestamp: int) -> list[TimeWindow]:
        return [TimeWindow(timestamp, timestamp + self.gap)]

    def describe(self) -> str:
        return f"EventTimeSessionWindows({self.gap})"


class SessionWindowTimeGapExtractor:
    """PyFlink's gap extractor: ``extract(element)`` -> the session gap in milliseconds."""

    def extract(self, element: Any) -> int:
        raise NotImplementedError


@dataclass(frozen=True)
class DynamicEventTimeSessionWindows(WindowAssigner):
    """Session windows whose gap each element gives (Flink's
    DynamicEventTimeSessionWindows)."""

    extractor: Any
    is_merging = True

    def assign(self, element: Any, timestamp: int) -> list[TimeWindow]:
        ex = self.extractor
        gap = int(ex.extract(element) if isinstance(ex, SessionWindowTimeGapExtractor)
                  else ex(element))
        if gap <= 0:
            raise ValueError("Dynamic gap can not be negative or zero.")
        return [TimeWindow(timestamp, timestamp + gap)]

    def assign_windows(self, timestamp: int) -> list[TimeWindow]:
        raise TypeError("dynamic session windows need the element (assign)")

    def describe(self) -> str:
        return "DynamicEventTimeSessionWindows()"


class GlobalWindow(NamedTuple):
    """The one window of GlobalWindows (a named tuple with no fields: all are equal)."""

    def max_timestamp(self) -> int:
        return LONG_MAX


@dataclass(frozen=True)
class GlobalWindows(WindowAssigner):
    """All elements of a key in one window that never ends; it fires only through a trigger
    (``trigger(...)``; the default NeverTrigger never fires)."""

    @staticmethod
    def create() -> GlobalWindows:
        return GlobalWindows()

    is_event_time = False

    def assign_windows(self, timestamp: int) -> list[Any]:
        return [GlobalWindow()]

    def describe(self) -> str:
        return "GlobalWindows()"


class CountWindow(NamedTuple):
    """PyFlink's CountWindow: the ``id``-th count window of a key. It has no end in time."""

    id: int

    def max_timestamp(self) -> int:
        return LONG_MAX


class CountWindowAssigner(WindowAssigner):
    """Base of PyFlink's count window assigners: windows by the per-key element count, fired
    by a CountTrigger when a window holds ``size`` elements (never before: a count window
    that is not full at the end of input never fires, as in PyFlink)."""

    size: int
    is_event_time = False

    def window_ids(self, count: int) -> list[int]:
        """The ids of the windows the key's ``count``-th element (0-based) belongs to."""
        raise NotImplementedError

    def assign_windows(self, timestamp: int) -> list[TimeWindow]:
        raise TypeError("count windows are assigned by count, not by timestamp")


@dataclass(frozen=True)
class CountTumblingWindowAssigner(CountWindowAssigner):
    size: int

    def __post_init__(self) -> None:
        if self.size <= 0:
            raise ValueError("the size of a count window must be positive")

    @staticmethod
    def of(window_size: int) -> CountTumblingWindowAssigner:
        return CountTumblingWindowAssigner(int(window_size))

    def window_ids(self, count: int) -> list[int]:
        return [count // self.size]

    def describe(self) -> str:
        return f"CountTumblingWindowAssigner({self.size})"


@dataclass(frozen=True)
class CountSlidingWindowAssigner(CountWindowAssigner):
    size: int
    slide: int

    def __post_init__(self) -> None:
        if self.size <= 0 or self.slide <= 0:
            raise ValueError("the size and slide of a count window must be positive")

    @staticmethod
    def of(window_size: int, window_slide: int) -> CountSlidingWindowAssigner:
        return CountSlidingWindowAssigner(int(window_size), int(window_slide))

    def window_ids(self, count: int) -> list[int]:
        # PyFlink's CountSlidingWindowAssigner: window k holds elements
        # [k * slide, k * slide + size - 1]; latest window first.
        last_id = count // self.slide
        start = last_id * self.slide
        ids = []
        while last_id >= 0 and start <= count <= start + self.size - 1:
            ids.append(last_id)
            last_id -= 1
            start -= self.slide
        return ids

    def describe(self) -> str:
        return f"CountSlidingWindowAssigner({self.size}, {self.slide})"


def sliding_windows(timestamp: int, size: int, slide: int, offset: int) -> list[TimeWindow]:
    """The sliding windows holding ``timestamp``, latest first (Flink's order)."""
    windows = []
    start = window_start_with_offset(timestamp, offset, slide)
    while start > timestamp - size:
        windows.append(TimeWindow(start, start + size))
        start -= slide
    return windows


def cumulative_windows(timestamp: int, max_size: int, step: int,
                       offset: int) -> list[TimeWindow]:
    """The cumulating windows holding ``timestamp``: ``[start, start + k * step)`` of its
    ``max_size`` epoch for each k whose window has not ended at the timestamp, earliest end
    first (Flink's table runtime ``CumulativeWindowAssigner.assignWindows``)."""
    start = window_start_with_offset(timestamp, offset, max_size)
    last_end = start + max_size
    end = window_start_with_offset(timestamp, offset, step) + step
    windows = []
    while end <= last_end:
        windows.append(TimeWindow(start, end))
        end += step
    return windows


def check_cumulative(max_size: int, step: int, offset: int) -> None:
    """Flink's CUMULATE parameter checks, with its texts (``CumulativeWindowAssigner``)."""
    if max_size <= 0 or step <= 0:
        raise ValueError("Cumulative Window parameters must satisfy maxSize > 0 and step > 0, "
                         f"but got maxSize {max_size}ms and step {step}ms.")
    if max_size % step != 0:
        raise ValueError("Cumulative Window requires maxSize must be an integral multiple of "
                         f"step, but got maxSize {max_size}ms and step {step}ms.")


@dataclass(frozen=True)
class CumulativeEventTimeWindows(WindowAssigner):
    """SQL's CUMULATE window (Flink has it in the table runtime only): windows growing by
    ``step`` from the start of each ``max_size`` epoch, each fired at its own end."""

    max_size: int
    step: int
    offset: int = 0

    def __post_init__(self) -> None:
        check_cumulative(self.max_size, self.step, self.offset)

    @staticmethod
    def of(max_size: Duration | int, step: Duration | int,
           offset: Duration | int = 0) -> CumulativeEventTimeWindows:
        return CumulativeEventTimeWindows(to_millis(max_size), to_millis(step),
                                          to_millis(offset))

    def assign_windows(self, timestamp: int) -> list[TimeWindow]:
        return cumulative_windows(timestamp, self.max_size, self.step, self.offset)

    def describe(self) -> str:
        return f"CumulativeEventTimeWindows({self.max_size}, {self.step})"


# -- processing time: the same windows, assigned by the operator's clock -------------------
# (``assign`` gets the processing time from the window operator, not the element's
# timestamp; Flink's assigners read ``context.getCurrentProcessingTime()``).


@dataclass(frozen=True)
class TumblingProcessingTimeWindows(WindowAssigner):
    size: int
    offset: int = 0
    is_event_time = False

    def __post_init__(self) -> None:
        if abs(self.offset) >= self.size or self.size <= 0:
            raise ValueError(
                "TumblingProcessingTimeWindows parameters must satisfy abs(offset) < size")

    @staticmethod
    def of(size: Duration | int,
           offset: Duration | int = 0) -> TumblingProcessingTimeWindows:
        return TumblingProcessingTimeWindows(to_millis(size), to_millis(offset))

    def assign_windows(self, timestamp: int) -> list[TimeWindow]:
        start = window_start_with_offset(timestamp, self.offset, self.size)
        return [TimeWindow(start, start + self.size)]

    def describe(self) -> str:
        return f"TumblingProcessingTimeWindows({self.size})"


@dataclass(frozen=True)
class SlidingProcessingTimeWindows(WindowAssigner):
    size: int
    slide: int
    offset: int = 0
    is_event_time = False

    def __post_init__(self) -> None:
        if abs(self.offset) >= self.slide or self.size <= 0 or self.slide <= 0:
            raise ValueError("SlidingProcessingTimeWindows parameters must satisfy "
                             "abs(offset) < slide and size > 0")

    @staticmethod
    def of(size: Duration | int, slide: Duration | int,
           offset: Duration | int = 0) -> SlidingProcessingTimeWindows:
        return SlidingProcessingTimeWindows(to_millis(size), to_millis(slide),
                                            to_millis(offset))

    def assign_windows(self, timestamp: int) -> list[TimeWindow]:
        return sliding_windows(timestamp, self.size, self.slide, self.offset)

    def describe(self) -> str:
        return f"SlidingProcessingTimeWindows({self.size}, {self.slide})"


@dataclass(frozen=True)
class CumulativeProcessingTimeWindows(CumulativeEventTimeWindows):
    """CUMULATE over a processing-time attribute (windows by the operator's clock)."""

    is_event_time = False

    @staticmethod
    def of(max_size: Duration | int, step: Duration | int,
           offset: Duration | int = 0) -> CumulativeProcessingTimeWindows:
        return CumulativeProcessingTimeWindows(to_millis(max_size), to_millis(step),
                                               to_millis(offset))

    def describe(self) -> str:
        return f"CumulativeProcessingTimeWindows({self.max_size}, {self.step})"


@dataclass(frozen=True)
class ProcessingTimeSessionWindows(WindowAssigner):
    gap: int
    is_merging = True
    is_event_time = False

    def __post_init__(self) -> None:
        if self.gap <= 0:
            raise ValueError("ProcessingTimeSessionWindows parameters must satisfy 0 < size")

    @staticmethod
    def with_gap(gap: Duration | int) -> ProcessingTimeSessionWindows:
        return ProcessingTimeSessionWindows(to_millis(gap))

    @staticmethod
    def with_dynamic_gap(extractor: Any) -> DynamicProcessingTimeSessionWindows:
        return DynamicProcessingTimeSessionWindows(extractor)

    def assign_windows(self, timestamp: int) -> list[TimeWindow]:
        return [TimeWindow(timestamp, timestamp + self.gap)]

    def describe(self) -> str:
        return f"ProcessingTimeSessionWindows({self.gap})"


@dataclass(frozen=True)
class DynamicProcessingTimeSessionWindows(DynamicEventTimeSessionWindows):
    """Session windows whose gap each element gives, on processing time."""

    is_event_time = False

    def describe(self) -> str:
        return "DynamicProcessingTimeSessionWindows()"


def merge_windows(windows: list[TimeWindow]) -> list[tuple[TimeWindow, list[TimeWindow]]]:
    """Flink's ``TimeWindow.mergeWindows``: sort by start, merge overlapping (intersecting)."""
    ordered = sorted(windows)
    merged: list[tuple[TimeWindow, list[TimeWindow]]] = []
    current: tuple[TimeWindow, list[TimeWindow]] | None = None
    for w in ordered:
        if current is None:
            current = (w, [w])
        elif current[0].intersects(w):
            current = (current[0].cover(w), current[1] + [w])
        else:
            merged.append(current)
            current = (w, [w])
    if current is not None:
        merged.append(current)
    return merged


class TimestampAssigner:
    """PyFlink's ``TimestampAssigner``: ``extract_timestamp(value, record_timestamp)``."""

    def extract_timestamp(self, value: Any, record_timestamp: int) -> int:
        raise NotImplementedError


@dataclass(frozen=True)
class WatermarkStrategy:
    """``for_bounded_out_of_orderness(d)``: watermark = max timestamp - d - 1 (Flink's
    BoundedOutOfOrdernessWatermarks); monotonous = out-of-orderness 0; ``no_watermarks``.
    ``for_sql_watermark(d)``: a SQL table's ``WATERMARK FOR ts AS ts - d`` (``exact``), Flink
    SQL's WatermarkAssignerOperator: the watermark is the expression's value, max timestamp - d
    (no -1; d may be negative), never at or below 0, and besides the periodic emission it is
    emitted right after a record that raised it by more than ``eager_ms``."""

    out_of_orderness: int | None  # None: no watermarks
    timestamp_assigner: Callable[[Any, int], int] | None = None
    idleness: int | None = None
    # How often the generator's watermark is emitted, in records the generating subtask
    # handled: 1 = after every record, 0 = never before the end of input. The planner sets
    # it from the job's configuration (flowc.planner.watermark_timing); None = not yet set.
    emit_every: int | None = None
    exact: bool = False
    # An exact generator's eager emission: pipeline.auto-watermark-interval in ms, set by the
    # planner with emit_every (None: no eager emission).
    eager_ms: int | None = None

    @staticmethod
    def for_monotonous_timestamps() -> WatermarkStrategy:
        return WatermarkStrategy(0)

    @staticmethod
    def for_bounded_out_of_orderness(max_out_of_orderness: Duration | int) -> WatermarkStrategy:
        ms = to_millis(max_out_of_orderness)
        if ms < 0:
            raise ValueError("maxOutOfOrderness cannot be negative")
        return WatermarkStrategy(ms)

    @staticmethod
    def for_sql_watermark(offset_ms: int) -> WatermarkStrategy:
        """``WATERMARK FOR ts AS ts - offset`` of a SQL table (a negative offset: ``+``)."""
        return WatermarkStrategy(offset_ms, exact=True)

    @staticmethod
    def no_watermarks() -> WatermarkStrategy:
        return WatermarkStrategy(None)

    def with_timestamp_assigner(
        self, assigner: TimestampAssigner | Callable[[Any, int], int]
    ) -> WatermarkStrategy:
        fn = assigner.extract_timestamp if isinstance(assigner, TimestampAssigner) else assigner
        return replace(self, timestamp_assigner=fn)

    def with_idleness(self, idle_timeout: Duration | int) -> WatermarkStrategy:
        return replace(self, idleness=to_millis(idle_timeout))

    @property
    def lag(self) -> int:
        """How far the watermark stays behind the largest timestamp seen."""
        return (self.out_of_orderness or 0) + (0 if self.exact else 1)

    @property
    def floor(self) -> int:
        """A watermark is emitted only above this (Flink SQL's assigner starts at 0)."""
        return 0 if self.exact else LONG_MIN

    def watermark_for(self, max_timestamp: int) -> int:
        """The watermark after seeing ``max_timestamp`` (Long.MIN_VALUE before any record)."""
        if self.out_of_orderness is None:
            return LONG_MIN
        if max_timestamp == LONG_MIN:
            return LONG_MIN
        return max_timestamp - self.lag

    def describe(self) -> str:
        if self.out_of_orderness is None:
            return "no watermarks"
        if self.exact:
            return f"timestamp - {self.out_of_orderness} ms (SQL)"
        return f"bounded out-of-orderness {self.out_of_orderness} ms"
