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
    StateDescriptor,
    ValueState,
    ValueStateDescriptor,
)
from flowc.executor.runtime.ttl import StateTtlConfig

__all__ = ["BroadcastState", "ReadOnlyBroadcastState", "AggregatingState", "AggregatingStateDescriptor", "ListState", "ListStateDescriptor", "MapState", "MapStateDescriptor",
           "ReducingState", "ReducingStateDescriptor", "StateDescriptor", "StateTtlConfig",
           "ValueState", "ValueStateDescriptor"]
