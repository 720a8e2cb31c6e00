"""``pyflink.datastream.state``: keyed state descriptors and state handles."""

from flowc.executor.runtime.state import (
    AggregatingState,
    AggregatingStateDescriptor,
    BroadcastState,
    ListState,
    ListStateDescriptor,
    MapState,
    MapStateDescriptor,
    ReadOnlyBroadcastState,
    ReducingState,
    ReducingStateDescriptor,
    ValueState,
    ValueStateDescriptor,
)

__all__ = ["BroadcastState", "ReadOnlyBroadcastState", "AggregatingState", "AggregatingStateDescriptor", "ListState", "ListStateDescriptor", "MapState", "MapStateDescriptor",
           "ReducingState", "ReducingStateDescriptor", "ValueState", "ValueStateDescriptor"]
