"""``pyflink.datastream.window``: windows, window assigners and triggers."""

from flowc.triggers import (
    ContinuousEventTimeTrigger,
    ContinuousProcessingTimeTrigger,
    CountTrigger,
    EventTimeTrigger,
    NeverTrigger,
    ProcessingTimeTrigger,
    PurgingTrigger,
    Trigger,
    TriggerResult,
)
from flowc.windowing import (
    CountSlidingWindowAssigner,
    CountTumblingWindowAssigner,
    CountWindow,
    DynamicEventTimeSessionWindows,
    DynamicProcessingTimeSessionWindows,
    EventTimeSessionWindows,
    GlobalWindow,
    GlobalWindows,
    ProcessingTimeSessionWindows,
    SessionWindowTimeGapExtractor,
    SlidingEventTimeWindows,
    SlidingProcessingTimeWindows,
    TimeWindow,
    TumblingEventTimeWindows,
    TumblingProcessingTimeWindows,
    WindowAssigner,
)

__all__ = ["ContinuousEventTimeTrigger", "ContinuousProcessingTimeTrigger", "CountTrigger",
           "EventTimeTrigger", "NeverTrigger", "ProcessingTimeTrigger",
           "PurgingTrigger", "Trigger", "TriggerResult", "CountSlidingWindowAssigner",
           "CountTumblingWindowAssigner", "CountWindow",
           "DynamicEventTimeSessionWindows", "DynamicProcessingTimeSessionWindows",
           "GlobalWindow", "GlobalWindows", "ProcessingTimeSessionWindows",
           "SessionWindowTimeGapExtractor",
           "EventTimeSessionWindows", "SlidingEventTimeWindows",
           "SlidingProcessingTimeWindows", "TimeWindow",
           "TumblingEventTimeWindows", "TumblingProcessingTimeWindows", "WindowAssigner"]
