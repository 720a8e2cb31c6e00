"""Two-input streams: ConnectedStreams (co-map, co-flat-map, (keyed) co-process), interval
joins and window joins (``a.join(b).where(..).equal_to(..).window(..).apply(..)``)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from flowc.api.base import as_key_selector, check_fn
from flowc.api.data_stream import DataStream
from flowc.api.functions import (
    CoFlatMapFunction,
    CoMapFunction,
    CoProcessFunction,
    JoinFunction,
    KeyedCoProcessFunction,
    ProcessJoinFunction,
    ProcessWindowFunction,
)
from flowc.api.keyed import KeyedStream, WindowedStream
from flowc.errors import ApiError
from flowc.operators import (
    CoFlatMapOp,
    CoMapOp,
    CoProcessOp,
    IntervalJoinOp,
    KeyedCoProcessOp,
    OperatorSpec,
)
from flowc.transformations import KeySelector, PartitionerKind, TwoInputTransformation
from flowc.windowing import Duration, WindowAssigner, to_millis

if TYPE_CHECKING:
    from flowc.api.environment import StreamExecutionEnvironment


class ConnectedStreams:
    def __init__(self, env: StreamExecutionEnvironment, first: DataStream,
                 second: DataStream) -> None:
        self._env = env
        self.first = first
        self.second = second

    def key_by(self, key_selector1: Any, key_selector2: Any) -> ConnectedStreams:
        return ConnectedStreams(self._env, self.first.key_by(key_selector1),
                                self.second.key_by(key_selector2))

    def _transform(self, op: OperatorSpec, output_type: Any, name: str | None = None) -> DataStream:
        env = self._env
        k1 = self.first._key()
        k2 = self.second._key()
        t = TwoInputTransformation(
            id=env._draw_id(), name=name or op.default_name, input1=self.first._id,
            input2=self.second._id, operator=op, key1=k1, key2=k2,
            parallelism=env.config.parallelism, span=env._caller_span(),
            output_type=output_type)
        env._add(t, register=True)
        return DataStream(env, t.id)

    def map(self, func: CoMapFunction, output_type: Any = None) -> DataStream:
        if not isinstance(func, CoMapFunction):
            raise ApiError("ConnectedStreams.map needs a CoMapFunction (map1, map2)")
        return self._transform(CoMapOp(func), output_type)

    def flat_map(self, func: CoFlatMapFunction, output_type: Any = None) -> DataStream:
        if not isinstance(func, CoFlatMapFunction):
            raise ApiError("ConnectedStreams.flat_map needs a CoFlatMapFunction")
        return self._transform(CoFlatMapOp(func), output_type)

    def process(self, func: CoProcessFunction, output_type: Any = None) -> DataStream:
        if isinstance(func, KeyedCoProcessFunction):
            if self.first._key() is None or self.second._key() is None:
                raise ApiError("A KeyedCoProcessFunction needs both inputs keyed "
                               "(ConnectedStreams.key_by)")
            return self._transform(KeyedCoProcessOp(func), output_type, "KeyedCoProcess")
        if not isinstance(func, CoProcessFunction):
            raise ApiError("ConnectedStreams.process needs a CoProcessFunction")
        return self._transform(CoProcessOp(func), output_type, "Co-Process")


class IntervalJoin:
    def __init__(self, left: KeyedStream, right: KeyedStream) -> None:
        self._left = left
        self._right = right

    def between(self, lower_bound: Duration | int, upper_bound: Duration | int) -> IntervalJoined:
        lo, hi = to_millis(lower_bound), to_millis(upper_bound)
        if lo > hi:
            raise ApiError("lowerBound <= upperBound must be fulfilled")
        return IntervalJoined(self._left, self._right, lo, hi)


class IntervalJoined:
    def __init__(self, left: KeyedStream, right: KeyedStream, lower: int, upper: int) -> None:
        self._left = left
        self._right = right
        self._lower = lower
        self._upper = upper
        self._lower_inclusive = True
        self._upper_inclusive = True
        self._pad: tuple[int | None, int | None] = (None, None)
        self._table = False

    def _outer(self, left_pad: int | None, right_pad: int | None,
               table: bool = False) -> IntervalJoined:
        """flowc's SQL interval joins (not PyFlink API): pad a left (right) row that joined
        nothing with ``left_pad`` (``right_pad``) nulls when it expires; ``table``: run
        Flink SQL's RowTimeIntervalJoin (IntervalJoinOp.table)."""
        self._pad = (left_pad, right_pad)
        self._table = table
        return self

    def lower_bound_exclusive(self) -> IntervalJoined:
        self._lower_inclusive = False
        return self

    def upper_bound_exclusive(self) -> IntervalJoined:
        self._upper_inclusive = False
        return self

    def process(self, process_join_function: Any, output_type: Any = None) -> DataStream:
        fn = check_fn(process_join_function, ProcessJoinFunction, "process_element",
                       "interval join")
        op = IntervalJoinOp(self._lower, self._upper, fn, self._lower_inclusive,
                            self._upper_inclusive, self._pad, self._table)
        # Flink: left.connect(right).keyBy(k1, k2).transform("Interval Join", ...)
        connected = self._left.connect(self._right).key_by(
            self._left.get_key_selector(), self._right.get_key_selector())
        return connected._transform(op, output_type, "Interval Join")


class JoinedStreams:
    """``a.join(b).where(k1).equal_to(k2).window(assigner).apply(join_fn)``: built as Flink
    builds it, a tagging map per input, a union, a key_by and a window over the union."""

    def __init__(self, first: DataStream, second: DataStream) -> None:
        self._first = first
        self._second = second
        self._k1: KeySelector | None = None
        self._k2: KeySelector | None = None

    def where(self, key_selector: Any) -> JoinedStreams:
        self._k1 = as_key_selector(key_selector)
        return self

    def equal_to(self, key_selector: Any) -> JoinedStreams:
        if self._k1 is None:
            raise ApiError("call where() before equal_to()")
        self._k2 = as_key_selector(key_selector)
        return self

    def window(self, assigner: WindowAssigner) -> _JoinWindow:
        if self._k1 is None or self._k2 is None:
            raise ApiError("a window join needs where() and equal_to() before window()")
        return _JoinWindow(self, assigner)


class _JoinWindow:
    def __init__(self, joined: JoinedStreams, assigner: WindowAssigner) -> None:
        self._joined = joined
        self._assigner = assigner
        self._lateness = 0

    def allowed_lateness(self, time: Duration | int) -> _JoinWindow:
        self._lateness = to_millis(time)
        return self

    def apply(self, join_function: Any, output_type: Any = None) -> DataStream:
        j = self._joined
        fn = join_function.join if isinstance(join_function, JoinFunction) else join_function
        if not callable(fn):
            raise ApiError("a window join needs a JoinFunction or a callable(first, second)")
        k1, k2 = j._k1, j._k2
        assert k1 is not None and k2 is not None
        tagged1 = j._first.map(tag1).set_parallelism(j._first.get_parallelism())
        tagged2 = j._second.map(tag2).set_parallelism(j._second.get_parallelism())
        union = tagged1.union(tagged2)
        union_key = KeySelector(UnionKey(k1, k2), (), "UnionKeySelector")
        keyed = KeyedStream(union._env, union._partition(PartitionerKind.HASH, union_key)._id,
                            union_key)
        return WindowedStream(keyed, self._assigner).allowed_lateness(self._lateness)._window(
            output_type, window_fn=CoGroupWindowFunction(fn))


class UnionKey:
    """The window join's key over the tagged union: ``first`` keys side 1, ``second``
    side 2 (a columnar executor reads them to key each side's columns)."""

    def __init__(self, first: KeySelector, second: KeySelector) -> None:
        self.first = first
        self.second = second

    def __call__(self, tv: tuple[int, Any]) -> Any:
        return self.first(tv[1]) if tv[0] == 1 else self.second(tv[1])


def tag1(v: Any) -> tuple[int, Any]:
    return (1, v)


def tag2(v: Any) -> tuple[int, Any]:
    return (2, v)


class CoGroupWindowFunction(ProcessWindowFunction):
    """Flink's JoinCoGroupFunction: every pair of (first, second) in the window, in order."""

    def __init__(self, fn: Any) -> None:
        self.fn = fn

    def process(self, key: Any, context: Any, elements: Iterable[Any]) -> Iterable[Any]:
        firsts = []
        seconds = []
        for tag, v in elements:
            (firsts if tag == 1 else seconds).append(v)
        for a in firsts:
            for b in seconds:
                yield self.fn(a, b)
