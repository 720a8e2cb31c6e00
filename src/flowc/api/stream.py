"""DataStream and friends, with PyFlink's method names.

Each method creates the same transformations, in the same order, as Flink's Java API does
for the same call, so transformation ids (and therefore node ids and error texts) match.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

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
    MapFunction,
    Partitioner,
    ProcessFunction,
    ProcessJoinFunction,
    ProcessWindowFunction,
    ReduceFunction,
    key_selector_fn,
)
from flowc.errors import ApiError
from flowc.operators import (
    AggregationOp,
    CoFlatMapOp,
    CoMapOp,
    CoProcessOp,
    DiscardingSink,
    FilterOp,
    FlatMapOp,
    IntervalJoinOp,
    KeyedCoProcessOp,
    KeyedProcessOp,
    MapOp,
    OperatorSpec,
    PrintSink,
    ProcessOp,
    ReduceOp,
    SinkSpec,
    TimestampsAndWatermarksOp,
    WindowOp,
)
from flowc.transformations import (
    ChainingStrategy,
    KeySelector,
    OneInputTransformation,
    OutputTag,
    PartitionerKind,
    PartitionTransformation,
    SideOutputTransformation,
    SinkTransformation,
    SourceTransformation,
    Transformation,
    TwoInputTransformation,
    UnionTransformation,
)
from flowc.transformations import (
    Partitioner as PartitionerSpec,
)
from flowc.windowing import Duration, WatermarkStrategy, WindowAssigner, to_millis

if TYPE_CHECKING:
    from flowc.api.environment import StreamExecutionEnvironment

_HEX32 = re.compile(r"^[0-9a-fA-F]{32}$")


def _check_fn(func: Any, cls: type, method: str, what: str) -> Any:
    if isinstance(func, cls) or callable(func):
        return func
    raise ApiError(f"{what} needs a callable or a {cls.__name__} (with {method}()), got {func!r}")


def _as_key_selector(selector: Any) -> KeySelector:
    if isinstance(selector, KeySelector):
        return selector
    if isinstance(selector, str):
        # A field name: the key is that attribute/item of the record.
        name = selector
        return KeySelector(lambda v, n=name: v[n] if isinstance(v, dict) else getattr(v, n),
                           (name,), name)
    if isinstance(selector, int) and not isinstance(selector, bool):
        pos = selector
        return KeySelector(lambda v, p=pos: v[p], (), f"[{pos}]")
    try:
        fn = key_selector_fn(selector)
    except TypeError as e:
        raise ApiError(str(e)) from None
    return KeySelector(fn, (), getattr(selector, "__name__", type(selector).__name__))


_UNHASHABLE = (list, dict, set, frozenset, bytearray, bytes)


def _keyable(key_type: Any) -> bool:
    """Whether records of ``key_type`` (a flowc type, or a Python class) may be keys."""
    from flowc.types import Type

    if isinstance(key_type, Type):
        return not key_type.is_array
    if isinstance(key_type, type):
        return not issubclass(key_type, _UNHASHABLE)
    return True


def _type_name(key_type: Any) -> str:
    return key_type.__name__ if isinstance(key_type, type) else str(key_type)


class _Settings:
    """Per-operator settings shared by DataStream (operators) and DataStreamSink."""

    _env: StreamExecutionEnvironment
    _id: int

    def _require_operator(self, what: str) -> Transformation:
        t = self._env._get(self._id)
        if not isinstance(t, (OneInputTransformation, TwoInputTransformation,
                              SourceTransformation, SinkTransformation)):
            kind = type(t).__name__.replace("Transformation", "").lower() or "stream"
            raise ApiError(f"{what}() can only be called on an operator (a source, map, filter, "
                           f"..., or sink), not on a {kind} stream", t.span)
        return t

    def name(self, name: str) -> Any:
        self._require_operator("name")
        if not isinstance(name, str):
            raise ApiError(f"name must be a string, got {name!r}")
        self._env._update(self._id, name=name)
        return self

    def get_name(self) -> str:
        return self._env._get(self._id).name

    def uid(self, uid: str) -> Any:
        self._require_operator("uid")
        if not isinstance(uid, str):
            raise ApiError(f"uid must be a string, got {uid!r}")
        if uid == "":
            raise ApiError("Empty string operator uid is not allowed")
        self._env._update(self._id, uid=uid)
        return self

    def set_uid_hash(self, uid_hash: str) -> Any:
        t = self._require_operator("set_uid_hash")
        if isinstance(t, SinkTransformation) and not t.legacy:
            # Flink's DataStreamSink.setUidHash: a v2 sink expands into several operators.
            raise ApiError("Cannot set a custom UID hash on a non-legacy sink", t.span)
        if not isinstance(uid_hash, str) or not _HEX32.match(uid_hash):
            raise ApiError("Node hash must be a 32 character String that describes a hex code. "
                           f"Found: {uid_hash}")
        self._env._update(self._id, uid_hash=uid_hash.lower())
        return self

    def set_description(self, description: str) -> Any:
        self._require_operator("set_description")
        self._env._update(self._id, description=description)
        return self

    def set_parallelism(self, parallelism: int) -> Any:
        from flowc.api.environment import validate_parallelism

        self._require_operator("set_parallelism")
        self._env._update(self._id, parallelism=validate_parallelism(parallelism))
        return self

    def get_parallelism(self) -> int:
        return self._env._get(self._id).parallelism

    def set_max_parallelism(self, max_parallelism: int) -> Any:
        from flowc.api.environment import validate_max_parallelism

        self._require_operator("set_max_parallelism")
        self._env._update(self._id, max_parallelism=validate_max_parallelism(max_parallelism))
        return self

    def slot_sharing_group(self, slot_sharing_group: str) -> Any:
        self._require_operator("slot_sharing_group")
        name = getattr(slot_sharing_group, "name", slot_sharing_group)
        if not isinstance(name, str) or not name:
            raise ApiError(f"slot sharing group must be a non-empty string, got {name!r}")
        self._env._update(self._id, slot_sharing_group=name)
        return self

    def disable_chaining(self) -> Any:
        self._require_operator("disable_chaining")
        self._env._update(self._id, chaining=ChainingStrategy.NEVER)
        return self


class DataStream(_Settings):
    def __init__(self, env: StreamExecutionEnvironment, tid: int) -> None:
        self._env = env
        self._id = tid

    @property
    def transformation_id(self) -> int:
        return self._id

    def get_execution_environment(self) -> StreamExecutionEnvironment:
        return self._env

    def get_type(self) -> Any:
        return self._env._get(self._id).output_type

    def start_new_chain(self) -> DataStream:
        self._require_operator("start_new_chain")
        self._env._update(self._id, chaining=ChainingStrategy.HEAD)
        return self

    # ------------------------------------------------------------------ helpers

    def _key(self) -> KeySelector | None:
        return None

    def _transform(self, op: OperatorSpec, output_type: Any = None,
                   name: str | None = None, description: str = "") -> DataStream:
        env = self._env
        t = OneInputTransformation(
            id=env._draw_id(), name=name or op.default_name, input=self._id, operator=op,
            key=self._key(), parallelism=env.config.parallelism, span=env._caller_span(),
            output_type=output_type, description=description)
        env._add(t, register=True)
        return DataStream(env, t.id)

    def _partition(self, kind: PartitionerKind, key: KeySelector | None = None,
                   custom: Any = None) -> DataStream:
        env = self._env
        t = PartitionTransformation(
            id=env._draw_id(), name=kind.value, input=self._id,
            partitioner=PartitionerSpec(kind, key, custom),
            parallelism=env._get(self._id).parallelism, span=env._caller_span(),
            output_type=env._get(self._id).output_type)
        env._add(t, register=False)
        return DataStream(env, t.id)

    # ------------------------------------------------------------------ one-input operators

    def map(self, func: Any, output_type: Any = None) -> DataStream:
        return self._transform(MapOp(_check_fn(func, MapFunction, "map", "map")), output_type)

    def flat_map(self, func: Any, output_type: Any = None) -> DataStream:
        fn = _check_fn(func, FlatMapFunction, "flat_map", "flat_map")
        return self._transform(FlatMapOp(fn), output_type)

    def filter(self, func: Any) -> DataStream:
        fn = _check_fn(func, FilterFunction, "filter", "filter")
        return self._transform(FilterOp(fn), self.get_type())

    def process(self, func: Any, output_type: Any = None) -> DataStream:
        fn = _check_fn(func, ProcessFunction, "process_element", "process")
        return self._transform(ProcessOp(fn), output_type)

    def assign_timestamps_and_watermarks(self, strategy: WatermarkStrategy) -> DataStream:
        if not isinstance(strategy, WatermarkStrategy):
            raise ApiError(f"expected a WatermarkStrategy, got {strategy!r}")
        out = self._transform(TimestampsAndWatermarksOp(strategy), self.get_type())
        # Flink gives this operator its input's parallelism, not the environment's.
        self._env._update(out._id, parallelism=self._env._get(self._id).parallelism)
        return out

    def get_side_output(self, output_tag: OutputTag) -> DataStream:
        if not isinstance(output_tag, OutputTag):
            raise ApiError(f"get_side_output needs an OutputTag, got {output_tag!r}")
        # Java has getSideOutput only on SingleOutputStreamOperator (sources and operators).
        self._require_operator("get_side_output")
        env = self._env
        requested = env._side_outputs.setdefault(self._id, {})
        if output_tag.tag_id in requested and requested[output_tag.tag_id] != output_tag.type_info:
            raise ApiError("A side output with a matching id was already requested with a "
                           "different type. This is not allowed, side output ids need to be "
                           "unique.", env._caller_span())
        requested[output_tag.tag_id] = output_tag.type_info
        t = SideOutputTransformation(
            id=env._draw_id(), name="SideOutput", input=self._id, tag=output_tag,
            parallelism=env._get(self._id).parallelism, span=env._caller_span(),
            output_type=output_tag.type_info)
        env._add(t, register=False)
        return DataStream(env, t.id)

    # ------------------------------------------------------------------ partitioning

    def key_by(self, key_selector: Any, key_type: Any = None) -> KeyedStream:
        ks = _as_key_selector(key_selector)
        if key_type is not None and not _keyable(key_type):
            # Flink's KeyedStream.validateKeyType (arrays have no value-based hashCode).
            raise ApiError(f"Type {_type_name(key_type)} cannot be used as key. Contained "
                           f"UNSUPPORTED key types: {_type_name(key_type)}. Look at the keyBy() "
                           "documentation for the conditions a type has to satisfy in order to "
                           "be eligible for a key.", self._env._caller_span())
        p = self._partition(PartitionerKind.HASH, ks)
        return KeyedStream(self._env, p._id, ks)

    def forward(self) -> DataStream:
        return self._partition(PartitionerKind.FORWARD)

    def rebalance(self) -> DataStream:
        return self._partition(PartitionerKind.REBALANCE)

    def rescale(self) -> DataStream:
        return self._partition(PartitionerKind.RESCALE)

    def shuffle(self) -> DataStream:
        return self._partition(PartitionerKind.SHUFFLE)

    def broadcast(self) -> DataStream:
        return self._partition(PartitionerKind.BROADCAST)

    def global_(self) -> DataStream:
        return self._partition(PartitionerKind.GLOBAL)

    def partition_custom(self, partitioner: Any, key_selector: Any) -> DataStream:
        if isinstance(partitioner, Partitioner):
            part = partitioner.partition
        elif callable(partitioner):
            part = partitioner
        else:
            raise ApiError(f"partition_custom needs a Partitioner or callable, got {partitioner!r}")
        return self._partition(PartitionerKind.CUSTOM, _as_key_selector(key_selector), part)

    # ------------------------------------------------------------------ multi-input

    def union(self, *streams: DataStream) -> DataStream:
        env = self._env
        mine = env._get(self._id).output_type
        ids = [self._id]
        for s in streams:
            if not isinstance(s, DataStream):
                raise ApiError(f"union needs DataStreams, got {s!r}")
            if s._env is not env:
                raise ApiError("cannot union streams of different environments")
            theirs = env._get(s._id).output_type
            if mine is not None and theirs is not None and mine != theirs:
                raise ApiError(f"Cannot union streams of different types: {mine} and {theirs}")
            ids.append(s._id)
        t = UnionTransformation(id=env._draw_id(), name="Union", union_inputs=tuple(ids),
                                parallelism=env._get(self._id).parallelism,
                                span=env._caller_span(), output_type=mine)
        env._add(t, register=False)
        return DataStream(env, t.id)

    def connect(self, stream: DataStream) -> ConnectedStreams:
        if not isinstance(stream, DataStream) or stream._env is not self._env:
            raise ApiError(f"connect needs a DataStream of the same environment, got {stream!r}")
        return ConnectedStreams(self._env, self, stream)

    def join(self, other: DataStream) -> JoinedStreams:
        return JoinedStreams(self, other)

    # ------------------------------------------------------------------ sinks

    def _sink(self, spec: SinkSpec, name: str | None) -> DataStreamSink:
        env = self._env
        t = SinkTransformation(id=env._draw_id(), name=name or spec.default_name, input=self._id,
                               sink=spec, parallelism=env.config.parallelism,
                               span=env._caller_span(), output_type=self.get_type())
        env._add(t, register=True)
        return DataStreamSink(env, t.id)

    def print(self, sink_identifier: str | None = None) -> DataStreamSink:
        return self._sink(PrintSink(sink_identifier), None)

    def print_to_err(self, sink_identifier: str | None = None) -> DataStreamSink:
        return self._sink(PrintSink(sink_identifier, stderr=True), None)

    def sink_to(self, sink: SinkSpec) -> DataStreamSink:
        if not isinstance(sink, SinkSpec):
            raise ApiError(f"sink_to needs a flowc sink (FileSink, PrintSink, ...), got {sink!r}")
        return self._sink(sink, None)

    def add_discarding_sink(self) -> DataStreamSink:
        return self._sink(DiscardingSink(), None)


class DataStreamSink(_Settings):
    def __init__(self, env: StreamExecutionEnvironment, tid: int) -> None:
        self._env = env
        self._id = tid

    @property
    def transformation_id(self) -> int:
        return self._id


class KeyedStream(DataStream):
    def __init__(self, env: StreamExecutionEnvironment, tid: int, key: KeySelector) -> None:
        super().__init__(env, tid)
        self._key_selector = key

    def _key(self) -> KeySelector | None:
        return self._key_selector

    def get_key_selector(self) -> KeySelector:
        return self._key_selector

    def reduce(self, func: Any) -> DataStream:
        fn = _check_fn(func, ReduceFunction, "reduce", "reduce")
        return self._transform(ReduceOp(fn), self.get_type())

    def process(self, func: Any, output_type: Any = None) -> DataStream:
        fn = _check_fn(func, KeyedProcessFunction, "process_element", "process")
        return self._transform(KeyedProcessOp(fn), output_type)

    def _aggregate(self, kind: str, position: int | str) -> DataStream:
        return self._transform(AggregationOp(kind, position), self.get_type())

    def sum(self, position_to_sum: int | str = 0) -> DataStream:
        return self._aggregate("sum", position_to_sum)

    def min(self, position_to_min: int | str = 0) -> DataStream:
        return self._aggregate("min", position_to_min)

    def max(self, position_to_max: int | str = 0) -> DataStream:
        return self._aggregate("max", position_to_max)

    def min_by(self, position_to_min_by: int | str = 0) -> DataStream:
        return self._aggregate("min_by", position_to_min_by)

    def max_by(self, position_to_max_by: int | str = 0) -> DataStream:
        return self._aggregate("max_by", position_to_max_by)

    def window(self, window_assigner: WindowAssigner) -> WindowedStream:
        if not isinstance(window_assigner, WindowAssigner):
            raise ApiError(f"window needs a window assigner, got {window_assigner!r}")
        return WindowedStream(self, window_assigner)

    def interval_join(self, other: KeyedStream) -> IntervalJoin:
        if not isinstance(other, KeyedStream):
            raise ApiError("interval_join needs a KeyedStream (call key_by first)")
        return IntervalJoin(self, other)


class WindowedStream:
    def __init__(self, keyed: KeyedStream, assigner: WindowAssigner) -> None:
        self._keyed = keyed
        self._assigner = assigner
        self._lateness = 0
        self._late_tag: OutputTag | None = None

    def allowed_lateness(self, time: Duration | int) -> WindowedStream:
        ms = to_millis(time)
        if ms < 0:
            raise ApiError("The allowed lateness cannot be negative.")
        self._lateness = ms
        return self

    def side_output_late_data(self, output_tag: OutputTag) -> WindowedStream:
        if not isinstance(output_tag, OutputTag):
            raise ApiError(f"side_output_late_data needs an OutputTag, got {output_tag!r}")
        self._late_tag = output_tag
        return self

    def _window(self, output_type: Any, **fns: Any) -> DataStream:
        op = WindowOp(self._assigner, self._lateness, self._late_tag, **fns)
        return self._keyed._transform(op, output_type, None, op.default_description)

    def reduce(self, reduce_function: Any, window_function: Any = None,
               output_type: Any = None) -> DataStream:
        fn = _check_fn(reduce_function, ReduceFunction, "reduce", "reduce")
        wf = None if window_function is None else _check_fn(
            window_function, ProcessWindowFunction, "process", "window function")
        out = output_type if wf is not None else (output_type or self._keyed.get_type())
        return self._window(out, reduce_fn=fn, window_fn=wf)

    def aggregate(self, aggregate_function: AggregateFunction, window_function: Any = None,
                  accumulator_type: Any = None, output_type: Any = None) -> DataStream:
        if not isinstance(aggregate_function, AggregateFunction):
            raise ApiError("aggregate needs an AggregateFunction "
                           "(create_accumulator, add, get_result, merge)")
        wf = None if window_function is None else _check_fn(
            window_function, ProcessWindowFunction, "process", "window function")
        return self._window(output_type, aggregate_fn=aggregate_function, window_fn=wf)

    def process(self, process_window_function: Any, output_type: Any = None) -> DataStream:
        wf = _check_fn(process_window_function, ProcessWindowFunction, "process", "process")
        return self._window(output_type, window_fn=wf)


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

    def lower_bound_exclusive(self) -> IntervalJoined:
        self._lower_inclusive = False
        return self

    def upper_bound_exclusive(self) -> IntervalJoined:
        self._upper_inclusive = False
        return self

    def process(self, process_join_function: Any, output_type: Any = None) -> DataStream:
        fn = _check_fn(process_join_function, ProcessJoinFunction, "process_element",
                       "interval join")
        op = IntervalJoinOp(self._lower, self._upper, fn, self._lower_inclusive,
                            self._upper_inclusive)
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
        self._k1 = _as_key_selector(key_selector)
        return self

    def equal_to(self, key_selector: Any) -> JoinedStreams:
        if self._k1 is None:
            raise ApiError("call where() before equal_to()")
        self._k2 = _as_key_selector(key_selector)
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
        tagged1 = j._first.map(_tag1).set_parallelism(j._first.get_parallelism())
        tagged2 = j._second.map(_tag2).set_parallelism(j._second.get_parallelism())
        union = tagged1.union(tagged2)
        union_key = KeySelector(lambda tv: k1(tv[1]) if tv[0] == 1 else k2(tv[1]),
                                (), "UnionKeySelector")
        keyed = KeyedStream(union._env, union._partition(PartitionerKind.HASH, union_key)._id,
                            union_key)
        return WindowedStream(keyed, self._assigner).allowed_lateness(self._lateness)._window(
            output_type, window_fn=CoGroupWindowFunction(fn))


def _tag1(v: Any) -> tuple[int, Any]:
    return (1, v)


def _tag2(v: Any) -> tuple[int, Any]:
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
