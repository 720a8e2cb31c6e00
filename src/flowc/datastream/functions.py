"""``pyflink.datastream.functions``: the user-function base classes and ``RuntimeContext``."""

from flowc.api.functions import (
    AggregateFunction,
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
    ProcessFunction,
    ProcessJoinFunction,
    ProcessWindowFunction,
    ReduceFunction,
)
from flowc.executor.runtime.state import RuntimeContext

__all__ = [
    "AggregateFunction", "CoFlatMapFunction", "CoMapFunction", "CoProcessFunction",
    "FilterFunction", "FlatMapFunction", "JoinFunction", "KeyedCoProcessFunction",
    "KeyedProcessFunction", "KeySelector", "MapFunction", "Partitioner", "ProcessFunction",
    "ProcessJoinFunction", "ProcessWindowFunction", "ReduceFunction", "RuntimeContext",
]
