"""``pyflink.datastream.state``: keyed state descriptors and state handles."""

from flowc.executor.runtime.state import (
    AggregatingState,
    AggregatingStateDescriptor,
    ListState,
    ListStateDescriptor,
    MapState,
    MapStateDescriptor,
    ReducingState,
    ReducingStateDescriptor,
    ValueState,
    ValueStateDescriptor,
)

__all__ = ["AggregatingState", "AggregatingStateDescriptor", "ListState", "ListStateDescriptor", "MapState", "MapStateDescriptor",
           "ReducingState", "ReducingStateDescriptor", "ValueState", "ValueStateDescriptor"]
