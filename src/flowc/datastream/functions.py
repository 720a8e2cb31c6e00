"""``pyflink.datastream.functions``: the user-function base classes and ``RuntimeContext``."""

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
from flowc.executor.runtime.state import RuntimeContext

__all__ = [
    "BroadcastProcessFunction", "KeyedBroadcastProcessFunction",
    "AllWindowFunction", "ProcessAllWindowFunction", "WindowFunction",
    "AggregateFunction", "CoFlatMapFunction", "CoMapFunction", "CoProcessFunction",
    "FilterFunction", "FlatMapFunction", "JoinFunction", "KeyedCoProcessFunction",
    "KeyedProcessFunction", "KeySelector", "MapFunction", "Partitioner", "ProcessFunction",
    "ProcessJoinFunction", "ProcessWindowFunction", "ReduceFunction", "RuntimeContext",
]
