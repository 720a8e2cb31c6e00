"""PyFlink's user-function base classes (same names and method names).

Plain callables are accepted everywhere a function is; these classes exist so PyFlink
programs port by changing imports, and for ``open``/``close`` and keyed state.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any


class Function:
    def __class_getitem__(cls, params: Any) -> type:
        # PyFlink's functions are Generic (``ProcessWindowFunction[IN, OUT, KEY, W]``): a
        # subscripted base class is the class itself (type parameters are documentation).
        return cls

    def open(self, runtime_context: Any) -> None:  # noqa: B027 - optional hook
        pass

    def close(self) -> None:  # noqa: B027 - optional hook
        pass


class MapFunction(Function):
    def map(self, value: Any) -> Any:
        raise NotImplementedError


class FlatMapFunction(Function):
    def flat_map(self, value: Any) -> Iterable[Any]:
        raise NotImplementedError


class FilterFunction(Function):
    def filter(self, value: Any) -> bool:
        raise NotImplementedError


class ReduceFunction(Function):
    def reduce(self, value1: Any, value2: Any) -> Any:
        raise NotImplementedError


class KeySelector(Function):
    def get_key(self, value: Any) -> Any:
        raise NotImplementedError


class AggregateFunction(Function):
    def create_accumulator(self) -> Any:
        raise NotImplementedError

    def add(self, value: Any, accumulator: Any) -> Any:
        raise NotImplementedError

    def get_result(self, accumulator: Any) -> Any:
        raise NotImplementedError

    def merge(self, acc_a: Any, acc_b: Any) -> Any:
        raise NotImplementedError


class ProcessFunction(Function):
    """``process_element(value, ctx)`` yields outputs; ``ctx.output(tag, v)`` for side outputs."""

    def process_element(self, value: Any, ctx: Any) -> Iterable[Any] | None:
        raise NotImplementedError


class KeyedProcessFunction(Function):
    def process_element(self, value: Any, ctx: Any) -> Iterable[Any] | None:
        raise NotImplementedError

    def on_timer(self, timestamp: int, ctx: Any) -> Iterable[Any] | None:
        return None


class ProcessWindowFunction(Function):
    def process(self, key: Any, context: Any, elements: Iterable[Any]) -> Iterable[Any]:
        raise NotImplementedError


class WindowFunction(Function):
    """``apply(key, window, inputs)`` over all elements of a window."""

    def apply(self, key: Any, window: Any, inputs: Iterable[Any]) -> Iterable[Any]:
        raise NotImplementedError


class AllWindowFunction(Function):
    def apply(self, window: Any, inputs: Iterable[Any]) -> Iterable[Any]:
        raise NotImplementedError


class ProcessAllWindowFunction(Function):
    def process(self, context: Any, elements: Iterable[Any]) -> Iterable[Any]:
        raise NotImplementedError


class _WindowFnAdapter(ProcessWindowFunction):
    """A WindowFunction / AllWindowFunction / ProcessAllWindowFunction run as the
    ProcessWindowFunction the window operator calls (the all-window ones ignore the key)."""

    def __init__(self, fn: Any) -> None:
        self.fn = fn

    def open(self, runtime_context: Any) -> None:
        self.fn.open(runtime_context)

    def close(self) -> None:
        self.fn.close()

    def process(self, key: Any, context: Any, elements: Iterable[Any]) -> Iterable[Any]:
        fn = self.fn
        if isinstance(fn, WindowFunction):
            return fn.apply(key, context.window(), elements)
        if isinstance(fn, AllWindowFunction):
            return fn.apply(context.window(), elements)
        return fn.process(context, elements)


def as_process_window_function(fn: Any) -> Any:
    """``fn`` as the window operator's ProcessWindowFunction."""
    if isinstance(fn, (WindowFunction, AllWindowFunction, ProcessAllWindowFunction)):
        return _WindowFnAdapter(fn)
    return fn


class BroadcastProcessFunction(Function):
    """A non-keyed stream connected with a broadcast stream: ``process_element(value, ctx)``
    reads the broadcast state (``ctx.get_broadcast_state(descriptor)``, read-only),
    ``process_broadcast_element(value, ctx)`` may change it."""

    def process_element(self, value: Any, ctx: Any) -> Iterable[Any] | None:
        raise NotImplementedError

    def process_broadcast_element(self, value: Any, ctx: Any) -> Iterable[Any] | None:
        raise NotImplementedError


class KeyedBroadcastProcessFunction(BroadcastProcessFunction):
    """The keyed variant: keyed state and event-time timers on the keyed side."""

    def on_timer(self, timestamp: int, ctx: Any) -> Iterable[Any] | None:
        return None


class CoMapFunction(Function):
    def map1(self, value: Any) -> Any:
        raise NotImplementedError

    def map2(self, value: Any) -> Any:
        raise NotImplementedError


class CoFlatMapFunction(Function):
    def flat_map1(self, value: Any) -> Iterable[Any]:
        raise NotImplementedError

    def flat_map2(self, value: Any) -> Iterable[Any]:
        raise NotImplementedError


class CoProcessFunction(Function):
    def process_element1(self, value: Any, ctx: Any) -> Iterable[Any] | None:
        raise NotImplementedError

    def process_element2(self, value: Any, ctx: Any) -> Iterable[Any] | None:
        raise NotImplementedError


class KeyedCoProcessFunction(CoProcessFunction):
    def on_timer(self, timestamp: int, ctx: Any) -> Iterable[Any] | None:
        return None


class ProcessJoinFunction(Function):
    def process_element(self, left: Any, right: Any, ctx: Any) -> Iterable[Any] | None:
        raise NotImplementedError


class JoinFunction(Function):
    def join(self, first: Any, second: Any) -> Any:
        raise NotImplementedError


class Partitioner(Function):
    def partition(self, key: Any, num_partitions: int) -> int:
        raise NotImplementedError


def key_selector_fn(selector: Any) -> Any:
    """A KeySelector instance or a plain callable -> a callable."""
    if isinstance(selector, KeySelector):
        return selector.get_key
    if callable(selector):
        return selector
    raise TypeError(f"a key selector must be callable or a KeySelector, got {selector!r}")
