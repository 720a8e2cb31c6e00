"""Declared output types with effect: a user function whose operator declares an
``output_type`` (a :class:`~flowc.common.typeinfo.TypeInformation` that changes values: ROW,
TUPLE, FLOAT, LIST, MAP) is wrapped so that what it returns is converted as PyFlink's coders
convert it (a tuple becomes a Row, a float is rounded to 32 bits). The wrappers are the
PyFlink function classes themselves, so the executors run them like any user function and
``open``/``close`` reach the user's function."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from flowc.api.functions import (
    BroadcastProcessFunction,
    FlatMapFunction,
    Function,
    KeyedBroadcastProcessFunction,
    KeyedProcessFunction,
    MapFunction,
    ProcessFunction,
)
from flowc.common.typeinfo import TypeInformation
from flowc.transformations import OutputTag


def _method(fn: Any, cls: type, name: str) -> Any:
    return getattr(fn, name) if isinstance(fn, cls) else fn


class _Typed(Function):
    def __init__(self, fn: Any, output_type: TypeInformation) -> None:
        self.fn = fn
        self.convert = output_type.convert

    def open(self, runtime_context: Any) -> None:
        if isinstance(self.fn, Function):
            self.fn.open(runtime_context)

    def close(self) -> None:
        if isinstance(self.fn, Function):
            self.fn.close()

    def _all(self, results: Iterable[Any] | None) -> Iterator[Any]:
        convert = self.convert
        for r in results or ():
            # PyFlink's side output (``yield output_tag, value``) is not of the main type.
            if type(r) is tuple and len(r) == 2 and isinstance(r[0], OutputTag):
                yield r
            else:
                yield convert(r)


class TypedMap(_Typed, MapFunction):
    def map(self, value: Any) -> Any:
        return self.convert(_method(self.fn, MapFunction, "map")(value))


class TypedFlatMap(_Typed, FlatMapFunction):
    def flat_map(self, value: Any) -> Iterable[Any]:
        return self._all(_method(self.fn, FlatMapFunction, "flat_map")(value))


class TypedProcess(_Typed, ProcessFunction):
    def process_element(self, value: Any, ctx: Any) -> Iterable[Any] | None:
        return self._all(_method(self.fn, ProcessFunction, "process_element")(value, ctx))


class TypedKeyedProcess(_Typed, KeyedProcessFunction):
    def process_element(self, value: Any, ctx: Any) -> Iterable[Any] | None:
        return self._all(_method(self.fn, KeyedProcessFunction, "process_element")(value, ctx))

    def on_timer(self, timestamp: int, ctx: Any) -> Iterable[Any] | None:
        return self._all(self.fn.on_timer(timestamp, ctx)
                         if isinstance(self.fn, KeyedProcessFunction) else None)


class TypedBroadcastProcess(_Typed, BroadcastProcessFunction):
    def process_element(self, value: Any, ctx: Any) -> Iterable[Any] | None:
        return self._all(self.fn.process_element(value, ctx))

    def process_broadcast_element(self, value: Any, ctx: Any) -> Iterable[Any] | None:
        return self._all(self.fn.process_broadcast_element(value, ctx))


class TypedKeyedBroadcastProcess(TypedBroadcastProcess, KeyedBroadcastProcessFunction):
    def on_timer(self, timestamp: int, ctx: Any) -> Iterable[Any] | None:
        return self._all(self.fn.on_timer(timestamp, ctx))


def typed(fn: Any, output_type: Any, wrapper: type[_Typed]) -> Any:
    """``fn`` wrapped to convert its results to ``output_type``, or ``fn`` itself when the
    type converts nothing (or is not a TypeInformation, e.g. a .flow schema)."""
    if isinstance(output_type, TypeInformation) and not output_type.is_identity:
        return wrapper(fn, output_type)
    return fn


def converted(values: Iterable[Any], type_info: Any) -> tuple[Any, ...]:
    """A collection's elements as a source of ``type_info`` emits them."""
    if isinstance(type_info, TypeInformation) and not type_info.is_identity:
        return tuple(type_info.convert(v) for v in values)
    return tuple(values)
