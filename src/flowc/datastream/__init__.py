"""PyFlink-shaped DataStream API: ``from flowc.datastream import StreamExecutionEnvironment``."""

from flowc.api.broadcast import BroadcastConnectedStream, BroadcastStream
from flowc.api.environment import StreamExecutionEnvironment
from flowc.api.functions import (
    AggregateFunction,
    AllWindowFunction,
    BroadcastProcessFunction,
    CoFlatMapFunction,
    CoMapFunction,
    CoProcessFunction,
    FilterFunction,
    FlatMapFunction,
    JoinFunction,
    KeyedBroadcastProcessFunction,
    KeyedCoProcessFunction,
    KeyedProcessFunction,
    KeySelector,
    MapFunction,
    Partitioner,
    ProcessAllWindowFunction,
    ProcessFunction,
    ProcessJoinFunction,
    ProcessWindowFunction,
    ReduceFunction,
    WindowFunction,
)
from flowc.api.stream import (
    ConnectedStreams,
    DataStream,
    DataStreamSink,
    KeyedStream,
    WindowedStream,
)
from flowc.executor.runtime.state import (
    ListStateDescriptor,
    MapStateDescriptor,
    ReducingStateDescriptor,
    RuntimeContext,
    ValueStateDescriptor,
)
from flowc.operators import CollectSink, DiscardingSink, FileSink, PrintSink
from flowc.transformations import OutputTag, RuntimeExecutionMode
from flowc.triggers import Trigger, TriggerResult
from flowc.windowing import (
    CountWindow,
    Duration,
    EventTimeSessionWindows,
    GlobalWindow,
    ProcessingTimeSessionWindows,
    SlidingEventTimeWindows,
    SlidingProcessingTimeWindows,
    Time,
    TimeDomain,
    TimestampAssigner,
    TimeWindow,
    TumblingEventTimeWindows,
    TumblingProcessingTimeWindows,
    WatermarkStrategy,
    WindowAssigner,
)

__all__ = [
    "BroadcastConnectedStream", "BroadcastProcessFunction", "BroadcastStream",
    "KeyedBroadcastProcessFunction",
    "CountWindow", "GlobalWindow", "Trigger", "TriggerResult",
    "AllWindowFunction", "ProcessAllWindowFunction", "WindowFunction",
    "AggregateFunction", "CoFlatMapFunction", "CoMapFunction", "CoProcessFunction",
    "CollectSink", "ConnectedStreams", "DataStream", "DataStreamSink", "DiscardingSink",
    "Duration", "EventTimeSessionWindows", "FileSink", "FilterFunction", "FlatMapFunction",
    "JoinFunction", "KeySelector", "ListStateDescriptor", "MapStateDescriptor",
    "ReducingStateDescriptor", "RuntimeContext", "ValueStateDescriptor", "KeyedCoProcessFunction", "KeyedProcessFunction",
    "KeyedStream", "MapFunction", "OutputTag", "Partitioner", "PrintSink", "ProcessFunction",
    "ProcessJoinFunction", "ProcessWindowFunction", "ReduceFunction", "RuntimeExecutionMode",
    "SlidingEventTimeWindows", "StreamExecutionEnvironment", "Time", "TimeWindow",
    "TimestampAssigner", "TumblingEventTimeWindows", "WatermarkStrategy", "WindowAssigner",
    "WindowedStream", "ProcessingTimeSessionWindows", "SlidingProcessingTimeWindows",
    "TimeDomain", "TumblingProcessingTimeWindows",
]
