"""``pyflink.datastream.window``: windows, window assigners and triggers."""

from flowc.triggers import (
    ContinuousEventTimeTrigger,
    CountTrigger,
    EventTimeTrigger,
    NeverTrigger,
    PurgingTrigger,
    Trigger,
    TriggerResult,
)
from flowc.windowing import (
    CountSlidingWindowAssigner,
    CountTumblingWindowAssigner,
    CountWindow,
    DynamicEventTimeSessionWindows,
    EventTimeSessionWindows,
    GlobalWindow,
    GlobalWindows,
    SessionWindowTimeGapExtractor,
    SlidingEventTimeWindows,
    TimeWindow,
    TumblingEventTimeWindows,
    WindowAssigner,
)

__all__ = ["ContinuousEventTimeTrigger", "CountTrigger", "EventTimeTrigger", "NeverTrigger",
           "PurgingTrigger", "Trigger", "TriggerResult","CountSlidingWindowAssigner", "CountTumblingWindowAssigner", "CountWindow",
           "DynamicEventTimeSessionWindows", "GlobalWindow",
           "GlobalWindows", "SessionWindowTimeGapExtractor",
           "EventTimeSessionWindows", "SlidingEventTimeWindows", "TimeWindow",
           "TumblingEventTimeWindows", "WindowAssigner"]
