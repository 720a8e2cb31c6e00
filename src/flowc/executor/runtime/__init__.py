"""Flink's operator semantics in pure Python, shared by the reference and Spark executors."""

from flowc.executor.runtime.core import LONG_MAX, LONG_MIN, Operator, TaskInfo, Watermark
from flowc.executor.runtime.factory import UNSUPPORTED_KINDS, create_operator
from flowc.executor.runtime.state import (
    ListStateDescriptor,
    MapStateDescriptor,
    ReducingStateDescriptor,
    RuntimeContext,
    ValueStateDescriptor,
)

__all__ = [
    "LONG_MAX", "LONG_MIN", "UNSUPPORTED_KINDS", "ListStateDescriptor", "MapStateDescriptor",
    "Operator", "ReducingStateDescriptor", "RuntimeContext", "TaskInfo", "ValueStateDescriptor",
    "Watermark", "create_operator",
]
