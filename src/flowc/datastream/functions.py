"""``pyflink.datastream.functions``: the user-function base classes and ``RuntimeContext``."""

from flowc.api.functions import (
    AggregateFunction,
    AllWindowFunction,
    CoFlatMapFunction,
    CoMapFunction,
    CoProcessFunction,
    FilterFunction,
    FlatMapFunction,
    JoinFunction,
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
    "AllWindowFunction", "ProcessAllWindowFunction", "WindowFunction",
    "AggregateFunction", "CoFlatMapFunction", "CoMapFunction", "CoProcessFunction",
    "FilterFunction", "FlatMapFunction", "JoinFunction", "KeyedCoProcessFunction",
    "KeyedProcessFunction", "KeySelector", "MapFunction", "Partitioner", "ProcessFunction",
    "ProcessJoinFunction", "ProcessWindowFunction", "ReduceFunction", "RuntimeContext",
]
