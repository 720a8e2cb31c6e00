"""``pyflink.datastream.window``: windows and window assigners."""

from flowc.windowing import (
    CountSlidingWindowAssigner,
    CountTumblingWindowAssigner,
    CountWindow,
    DynamicEventTimeSessionWindows,
    EventTimeSessionWindows,
    SessionWindowTimeGapExtractor,
    SlidingEventTimeWindows,
    TimeWindow,
    TumblingEventTimeWindows,
    WindowAssigner,
)

__all__ = ["CountSlidingWindowAssigner", "CountTumblingWindowAssigner", "CountWindow",
           "DynamicEventTimeSessionWindows", "SessionWindowTimeGapExtractor",
           "EventTimeSessionWindows", "SlidingEventTimeWindows", "TimeWindow",
           "TumblingEventTimeWindows", "WindowAssigner"]
