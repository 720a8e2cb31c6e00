"""``pyflink.datastream.window``: windows and window assigners."""

from flowc.windowing import (
    CountSlidingWindowAssigner,
    CountTumblingWindowAssigner,
    CountWindow,
    EventTimeSessionWindows,
    SlidingEventTimeWindows,
    TimeWindow,
    TumblingEventTimeWindows,
    WindowAssigner,
)

__all__ = ["CountSlidingWindowAssigner", "CountTumblingWindowAssigner", "CountWindow",
           "EventTimeSessionWindows", "SlidingEventTimeWindows", "TimeWindow",
           "TumblingEventTimeWindows", "WindowAssigner"]
