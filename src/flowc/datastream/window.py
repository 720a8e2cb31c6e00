"""``pyflink.datastream.window``: windows and window assigners."""

from flowc.windowing import (
    EventTimeSessionWindows,
    SlidingEventTimeWindows,
    TimeWindow,
    TumblingEventTimeWindows,
    WindowAssigner,
)

__all__ = ["EventTimeSessionWindows", "SlidingEventTimeWindows", "TimeWindow",
           "TumblingEventTimeWindows", "WindowAssigner"]
