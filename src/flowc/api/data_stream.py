"""DataStream and DataStreamSink, with PyFlink's method names.

Each method creates the same transformations, in the same order, as Flink's Java API does
for the same call, so transformation ids (and therefore node ids and error texts) match.
Keyed and windowed streams are in ``flowc.api.keyed``; connected, interval-joined and
window-joined streams in ``flowc.api.connected``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from flowc.api.base import OperatorSettings, as_key_selector, check_fn, is_keyable, type_name
from flowc.api.functions import (
    FilterFunction,
    FlatMapFunction,
    MapFunction,
    Partitioner,
    ProcessFunction,
)
from flowc.api.typed import TypedFlatMap, TypedMap, TypedProcess, typed
from flowc.common.typeinfo import TypeInformation
from flowc.errors import ApiError
from flowc.operators import (
    CollectSink,
    DiscardingSink,
    FilterOp,
    FlatMapOp,
    MapOp,
    OperatorSpec,
    PrintSink,
    ProcessOp,
    SinkSpec,
    SortOp,
    TimestampsAndWatermarksOp,
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
    UnionTransformation,
)
from flowc.transformations import (
    Partitioner as PartitionerSpec,
)
from flowc.types import Schema
from flowc.windowing import WatermarkStrategy

if TYPE_CHECKING:
    from flowc.api.connected import JoinedStreams
    from flowc.api.environment import StreamExecutionEnvironment
    from flowc.api.keyed import KeyedStream


class DataStream(OperatorSettings):
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
        fn = typed(check_fn(func, MapFunction, "map", "map"), output_type, TypedMap)
        return self._transform(MapOp(fn), output_type)

    def flat_map(self, func: Any, output_type: Any = None) -> DataStream:
        fn = check_fn(func, FlatMapFunction, "flat_map", "flat_map")
        return self._transform(FlatMapOp(typed(fn, output_type, TypedFlatMap)), output_type)

    def filter(self, func: Any) -> DataStream:
        fn = check_fn(func, FilterFunction, "filter", "filter")
        return self._transform(FilterOp(fn), self.get_type())

    def process(self, func: Any, output_type: Any = None) -> DataStream:
        fn = check_fn(func, ProcessFunction, "process_element", "process")
        return self._transform(ProcessOp(typed(fn, output_type, TypedProcess)), output_type)

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

    def sort(self, columns: Any, limit: int | None = None, offset: int = 0) -> DataStream:
        """flowc's extension (what .flow's ``order by`` / ``limit`` and SQL's ORDER BY /
        LIMIT lower to; BATCH only): all records sorted by ``columns`` - (field position,
        descending, nulls first) triples - then ``offset`` skipped and at most ``limit``
        kept, at parallelism 1 behind a GLOBAL edge."""
        spec = SortOp(tuple((int(p), bool(d), bool(n)) for p, d, n in columns), limit, offset)
        out = self.global_()._transform(spec, self._env._get(self._id).output_type)
        out.set_parallelism(1)
        return out

    def key_by(self, key_selector: Any, key_type: Any = None) -> KeyedStream:
        ks = as_key_selector(key_selector)
        if key_type is not None and not is_keyable(key_type):
            # Flink's KeyedStream.validateKeyType (arrays have no value-based hashCode).
            raise ApiError(f"Type {type_name(key_type)} cannot be used as key. Contained "
                           f"UNSUPPORTED key types: {type_name(key_type)}. Look at the keyBy() "
                           "documentation for the conditions a type has to satisfy in order to "
                           "be eligible for a key.", self._env._caller_span())
        from flowc.api.keyed import KeyedStream

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

    def broadcast(self, *broadcast_state_descriptors: Any) -> Any:
        """BROADCAST partitioning; with state descriptors (PyFlink's
        ``broadcast(MapStateDescriptor(...))``) a BroadcastStream to ``connect`` to."""
        stream = self._partition(PartitionerKind.BROADCAST)
        if not broadcast_state_descriptors:
            return stream
        from flowc.api.broadcast import BroadcastStream

        return BroadcastStream(stream, tuple(broadcast_state_descriptors))

    def global_(self) -> DataStream:
        return self._partition(PartitionerKind.GLOBAL)

    def partition_custom(self, partitioner: Any, key_selector: Any) -> DataStream:
        if isinstance(partitioner, Partitioner):
            part = partitioner.partition
        elif callable(partitioner):
            part = partitioner
        else:
            raise ApiError(f"partition_custom needs a Partitioner or callable, got {partitioner!r}")
        return self._partition(PartitionerKind.CUSTOM, as_key_selector(key_selector), part)

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

    def window_all(self, window_assigner: Any) -> Any:
        """A window over the whole stream (flowc.api.all_windows)."""
        from flowc.api.all_windows import AllWindowedStream

        return AllWindowedStream(self, window_assigner)

    def connect(self, stream: Any) -> Any:
        from flowc.api.broadcast import BroadcastConnectedStream, BroadcastStream

        if isinstance(stream, BroadcastStream) and stream.stream._env is self._env:
            return BroadcastConnectedStream(self, stream)
        if not isinstance(stream, DataStream) or stream._env is not self._env:
            raise ApiError(f"connect needs a DataStream of the same environment, got {stream!r}")
        from flowc.api.connected import ConnectedStreams

        return ConnectedStreams(self._env, self, stream)

    def join(self, other: DataStream) -> JoinedStreams:
        from flowc.api.connected import JoinedStreams

        return JoinedStreams(self, other)

    # ------------------------------------------------------------------ sinks

    def _sink(self, spec: SinkSpec, name: str | None, legacy: bool = False) -> DataStreamSink:
        env = self._env
        source = env._get(self._id)
        # A sorted stream has one subtask; so has its sink, or the order would be lost.
        sorted_input = isinstance(getattr(source, "operator", None), SortOp)
        t = SinkTransformation(id=env._draw_id(), name=name or spec.default_name, input=self._id,
                               sink=spec, parallelism=1 if sorted_input else
                               env.config.parallelism,
                               span=env._caller_span(), output_type=self.get_type(),
                               legacy=legacy)
        env._add(t, register=True)
        return DataStreamSink(env, t.id)

    # Flink 2.3's print() / printToErr() are still the legacy
    # ``addSink(new PrintSinkFunction(..)).name("Print to Std. Out")``: one node
    # ``Sink: Print to Std. Out`` (a Data Sink), no writer expansion; ``sink_to(PrintSink(..))``
    # is the v2 sink (``<name>: Writer``), as ``sinkTo(new PrintSink<>())`` is in Flink.
    def print(self, sink_identifier: str | None = None) -> DataStreamSink:
        return self._sink(PrintSink(sink_identifier, record_type=self._print_type()), None,
                          legacy=True)

    def print_to_err(self, sink_identifier: str | None = None) -> DataStreamSink:
        return self._sink(PrintSink(sink_identifier, stderr=True,
                                    record_type=self._print_type()), None, legacy=True)

    def _print_type(self) -> Any:
        # a .flow / SQL stream's Schema: its rows print as Flink's print connector prints
        # table rows (flowc.executor.sinks.print_text)
        t = self.get_type()
        return t if isinstance(t, (TypeInformation, Schema)) else None

    def sink_to(self, sink: SinkSpec) -> DataStreamSink:
        if not isinstance(sink, SinkSpec):
            raise ApiError(f"sink_to needs a flowc sink (FileSink, PrintSink, ...), got {sink!r}")
        return self._sink(sink, None)

    def execute_and_collect(self, job_execution_name: str | None = None,
                            limit: int | None = None) -> Any:
        """PyFlink's ``execute_and_collect``: runs the environment's job (everything built so
        far, like ``execute()``) with this stream collected, and returns an iterator over its
        records (a context manager, as PyFlink's CloseableIterator). ``limit`` returns a list
        of at most that many records instead."""
        env = self._env
        name = f"execute_and_collect-{self._id}"
        self.sink_to(CollectSink(name))
        result = env.execute(job_execution_name)
        # Under `flowc explain` (dry run) nothing ran: no records.
        records = [] if result is None else result.collected.get(name, [])
        if limit is not None:
            return records[:limit]
        return CollectResults(records)

    def add_discarding_sink(self) -> DataStreamSink:
        return self._sink(DiscardingSink(), None)


class DataStreamSink(OperatorSettings):
    """The result of a sink: its per-operator settings (name, uid, parallelism, ...)."""


class CollectResults:
    """The records ``execute_and_collect()`` returns: iterable once, closeable."""

    def __init__(self, records: list[Any]) -> None:
        self._it = iter(records)

    def __iter__(self) -> CollectResults:
        return self

    def __next__(self) -> Any:
        return next(self._it)

    def close(self) -> None:
        self._it = iter(())

    def __enter__(self) -> CollectResults:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
