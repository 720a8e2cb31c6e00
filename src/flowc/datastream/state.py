"""``pyflink.datastream.state``: keyed state descriptors and state handles."""

from flowc.executor.runtime.state import (
    ListState,
    ListStateDescriptor,
    MapState,
    MapStateDescriptor,
    ReducingState,
    ReducingStateDescriptor,
    ValueState,
    ValueStateDescriptor,
)

__all__ = ["ListState", "ListStateDescriptor", "MapState", "MapStateDescriptor",
           "ReducingState", "ReducingStateDescriptor", "ValueState", "ValueStateDescriptor"]
