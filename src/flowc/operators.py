"""Typed operator, source and sink specifications carried by transformations (the sink
specs live in flowc.sink_specs and are re-exported here).

They say *what* an operator computes (its user function and settings); the planner only
reads ``default_name``, ``keyed`` and the chaining default, and the executors interpret the
rest. Each kind is its own frozen class, so executors dispatch on the type (``visit_<Kind>``)
and reject unknown kinds by name.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from flowc.sink_specs import DEFAULT_PARTITION as DEFAULT_PARTITION  # re-exported
from flowc.sink_specs import CollectSink as CollectSink
from flowc.sink_specs import DiscardingSink as DiscardingSink
from flowc.sink_specs import FileSink as FileSink
from flowc.sink_specs import KafkaSink as KafkaSink
from flowc.sink_specs import PrintSink as PrintSink
from flowc.sink_specs import RowFormatFileSink as RowFormatFileSink
from flowc.sink_specs import SinkSpec as SinkSpec
from flowc.windowing import WatermarkStrategy, WindowAssigner

if TYPE_CHECKING:
    from flowc.transformations import OutputTag


@dataclass(frozen=True, eq=False)
class CodeFn:
    """A function given both as a callable and as Python source over named variables, so a
    code-generating executor can inline it: ``source`` is an expression in ``params`` that may
    use the names in ``env``. ``fn`` must compute the same thing. ``vector``: the same
    computation over whole columns (``flowc.vector``) when the front end knows one - a VExpr,
    or a tuple of them for a function returning a record."""

    fn: Callable[..., Any]
    source: str
    params: tuple[str, ...]
    env: dict[str, Any] = field(default_factory=dict)
    vector: Any = None

    def __call__(self, *args: Any) -> Any:
        return self.fn(*args)


@dataclass(frozen=True, eq=False)
class OperatorSpec:
    """Base class. ``fn`` is the user's function object (callable or PyFlink function)."""

    @property
    def default_name(self) -> str:
        return type(self).__name__

    keyed = False


@dataclass(frozen=True, eq=False)
class MapOp(OperatorSpec):
    fn: Any

    @property
    def default_name(self) -> str:
        return "Map"


@dataclass(frozen=True, eq=False)
class FilterOp(OperatorSpec):
    fn: Any

    @property
    def default_name(self) -> str:
        return "Filter"


@dataclass(frozen=True, eq=False)
class FlatMapOp(OperatorSpec):
    fn: Any

    @property
    def default_name(self) -> str:
        return "Flat Map"


@dataclass(frozen=True, eq=False)
class ProcessOp(OperatorSpec):
    """A non-keyed ProcessFunction (may emit to side outputs)."""

    fn: Any

    @property
    def default_name(self) -> str:
        return "Process"


@dataclass(frozen=True, eq=False)
class SortOp(OperatorSpec):
    """BATCH only: all records of the input, sorted by ``columns`` - (field position,
    descending, nulls first) pairs, most significant first; ties keep their input order -
    then ``offset`` skipped and at most ``limit`` emitted (None: all). Runs at parallelism
    1 behind a GLOBAL edge, as Flink's Sort / SortLimit / Limit after a singleton exchange."""

    columns: tuple[tuple[int, bool, bool], ...]
    limit: int | None = None
    offset: int = 0

    def __post_init__(self) -> None:
        if self.offset < 0 or (self.limit is not None and self.limit < 0):
            raise ValueError("offset and limit are not negative")

    @property
    def default_name(self) -> str:
        if not self.columns:
            return "Limit"
        return "SortLimit" if self.limit is not None else "Sort"


@dataclass(frozen=True, eq=False)
class KeyedProcessOp(OperatorSpec):
    fn: Any
    keyed = True

    @property
    def default_name(self) -> str:
        return "KeyedProcess"


@dataclass(frozen=True, eq=False)
class ReduceOp(OperatorSpec):
    """Rolling keyed reduce: emits the running value for every input record."""

    fn: Any
    keyed = True

    @property
    def default_name(self) -> str:
        return "Keyed Reduce"


@dataclass(frozen=True, eq=False)
class AggregationOp(OperatorSpec):
    """Rolling keyed ``sum``/``min``/``max``/``min_by``/``max_by`` over a field position/name."""

    kind: str
    position: int | str
    keyed = True

    @property
    def default_name(self) -> str:
        return "Keyed Aggregation"


@dataclass(frozen=True, eq=False)
class TimestampsAndWatermarksOp(OperatorSpec):
    strategy: WatermarkStrategy

    @property
    def default_name(self) -> str:
        return "Timestamps/Watermarks"


@dataclass(frozen=True, eq=False)
class WindowOp(OperatorSpec):
    """A keyed time window (the assigner's default trigger: event or processing time).
    Exactly one of ``reduce_fn``/``aggregate_fn`` may be set;
    ``window_fn`` (a ProcessWindowFunction: ``process(key, context, elements)``) then receives
    the pre-aggregated value, or all elements when neither is set."""

    assigner: WindowAssigner
    allowed_lateness: int = 0
    late_tag: OutputTag | None = None
    reduce_fn: Any = None
    aggregate_fn: Any = None
    window_fn: Any = None
    keyed = True

    @property
    def default_name(self) -> str:
        # Flink's WindowOperatorBuilder.generateOperatorName().
        return type(self.assigner).__name__

    @property
    def default_description(self) -> str:
        """Flink's ``generateOperatorDescription``: the assigner, the trigger, then the
        pre-aggregating function and the window function (PassThroughWindowFunction when the
        user gave none)."""
        trigger = "EventTimeTrigger" if self.assigner.is_event_time else "ProcessingTimeTrigger"
        parts = [self.assigner.describe(), trigger]
        pre = self.reduce_fn if self.reduce_fn is not None else self.aggregate_fn
        if pre is not None:
            parts.append(function_name(pre))
            parts.append(function_name(self.window_fn) if self.window_fn is not None
                         else "PassThroughWindowFunction")
        elif self.window_fn is not None:
            parts.append(function_name(self.window_fn))
        return f"Window({', '.join(parts)})"


@dataclass(frozen=True, eq=False)
class CountWindowOp(OperatorSpec):
    """PyFlink's keyed count window (``count_window(size[, slide])``): the same functions as
    :class:`WindowOp`; windows fire when full (flowc.windowing.CountWindowAssigner)."""

    assigner: Any
    reduce_fn: Any = None
    aggregate_fn: Any = None
    window_fn: Any = None
    keyed = True

    @property
    def default_name(self) -> str:
        return type(self.assigner).__name__

    @property
    def default_description(self) -> str:
        parts = [self.assigner.describe(), "CountTrigger"]
        parts += [function_name(f) for f in (self.reduce_fn, self.aggregate_fn, self.window_fn)
                  if f is not None]
        return f"Window({', '.join(parts)})"


@dataclass(frozen=True, eq=False)
class TriggerWindowOp(OperatorSpec):
    """A keyed window with a trigger of its own (``window(...).trigger(t)``, or
    ``GlobalWindows``): Flink's WindowOperator driven by the trigger's results
    (runtime.trigger_windows). The functions are those of :class:`WindowOp`."""

    assigner: WindowAssigner
    trigger: Any
    allowed_lateness: int = 0
    late_tag: OutputTag | None = None
    reduce_fn: Any = None
    aggregate_fn: Any = None
    window_fn: Any = None
    keyed = True

    @property
    def default_name(self) -> str:
        return type(self.assigner).__name__

    @property
    def default_description(self) -> str:
        parts = [self.assigner.describe(), type(self.trigger).__name__]
        pre = self.reduce_fn if self.reduce_fn is not None else self.aggregate_fn
        if pre is not None:
            parts.append(function_name(pre))
            parts.append(function_name(self.window_fn) if self.window_fn is not None
                         else "PassThroughWindowFunction")
        elif self.window_fn is not None:
            parts.append(function_name(self.window_fn))
        return f"Window({', '.join(parts)})"


def function_name(fn: Any) -> str:
    """What Flink prints for a user function: its class's simple name (a plain Python
    function prints as its own name)."""
    if hasattr(fn, "__name__") and not isinstance(fn, type) and callable(fn) and \
            type(fn).__name__ in ("function", "builtin_function_or_method", "method"):
        return str(fn.__name__)
    return type(fn).__name__


@dataclass(frozen=True, eq=False)
class CoMapOp(OperatorSpec):
    fn: Any

    @property
    def default_name(self) -> str:
        return "Co-Map"


@dataclass(frozen=True, eq=False)
class CoFlatMapOp(OperatorSpec):
    fn: Any

    @property
    def default_name(self) -> str:
        return "Co-Flat Map"


@dataclass(frozen=True, eq=False)
class CoProcessOp(OperatorSpec):
    fn: Any

    @property
    def default_name(self) -> str:
        return "Co-Process"


@dataclass(frozen=True, eq=False)
class KeyedCoProcessOp(OperatorSpec):
    fn: Any
    keyed = True

    @property
    def default_name(self) -> str:
        return "KeyedCoProcess"


@dataclass(frozen=True, eq=False)
class BroadcastProcessOp(OperatorSpec):
    """``connect(broadcast_stream).process(BroadcastProcessFunction)``: input 2 is the
    broadcast side; ``descriptors`` name its broadcast states."""

    fn: Any
    descriptors: tuple[Any, ...] = ()

    @property
    def default_name(self) -> str:
        return "Co-Process-Broadcast"


@dataclass(frozen=True, eq=False)
class KeyedBroadcastProcessOp(OperatorSpec):
    fn: Any
    descriptors: tuple[Any, ...] = ()
    keyed = True

    @property
    def default_name(self) -> str:
        return "Co-Process-Broadcast-Keyed"


@dataclass(frozen=True, eq=False)
class IntervalJoinOp(OperatorSpec):
    """``left.ts + lower <= right.ts <= left.ts + upper`` (bounds inclusive unless excluded);
    ``fn`` is a ProcessJoinFunction ``process_element(left, right, ctx)``."""

    lower: int
    upper: int
    fn: Any
    lower_inclusive: bool = True
    upper_inclusive: bool = True
    # SQL's outer interval joins: the width of the other side's null padding of a left /
    # right row that joined nothing (None: an inner side), emitted when its buffer expires
    pad: tuple[int | None, int | None] = (None, None)
    # SQL's interval joins: Flink SQL's RowTimeIntervalJoin (TimeIntervalJoin), whose rows
    # behind the watermark join the other side's cached rows, not the DataStream operator
    # that drops them (an outer join, ``pad`` set, is always one)
    table: bool = False
    keyed = True

    @property
    def default_name(self) -> str:
        return "Interval Join"

    @property
    def table_runtime(self) -> bool:
        """Whether this is Flink SQL's time-interval join (inner or outer)."""
        return self.table or self.pad != (None, None)


# ---------------------------------------------------------------- sources and sinks


@dataclass(frozen=True, eq=False)
class SourceSpec:
    # Flink's Boundedness: BOUNDED, or CONTINUOUS_UNBOUNDED (a monitored directory).
    bounded = True

    @property
    def default_name(self) -> str:
        return type(self).__name__


@dataclass(frozen=True, eq=False)
class CollectionSource(SourceSpec):
    values: tuple[Any, ...]

    @property
    def default_name(self) -> str:
        return "Collection Source"


@dataclass(frozen=True, eq=False)
class SequenceSource(SourceSpec):
    """Numbers ``start..end`` inclusive, like Flink's NumberSequenceSource."""

    start: int
    end: int

    @property
    def default_name(self) -> str:
        return "Sequence Source"


@dataclass(frozen=True, eq=False)
class FileSource(SourceSpec):
    """A csv / json-lines / parquet file or directory read with a declared schema.

    ``schema`` is a sequence of (field name, type name) pairs; ``dead_letter`` names where
    rows that do not parse go (None: fail the job naming the file and row)."""

    path: str
    format: str
    schema: tuple[tuple[str, str], ...]
    options: tuple[tuple[str, str], ...] = ()
    dead_letter: str | None = None
    # Milliseconds between listings of ``path`` for new files (Flink's
    # ``source.monitor-interval`` / ``monitorContinuously``); None: read once (bounded).
    monitor_interval: int | None = None

    @property
    def bounded(self) -> bool:  # type: ignore[override]
        return self.monitor_interval is None

    @property
    def default_name(self) -> str:
        return f"{self.format} {self.path}"


@dataclass(frozen=True, eq=False)
class TextLineFileSource(SourceSpec):
    """Flink's ``FileSource.forRecordStreamFormat(new TextLineInputFormat(), paths)``: every
    line of every file under ``paths`` (directories recursively, hidden files and files
    starting with ``_`` skipped) as a string; one split per file
    (flowc.executor.runtime.sources)."""

    paths: tuple[str, ...]
    monitor_interval: int | None = None  # ms; see FileSource.monitor_interval

    @property
    def bounded(self) -> bool:  # type: ignore[override]
        return self.monitor_interval is None

    @property
    def default_name(self) -> str:
        return "FileSource"


@dataclass(frozen=True, eq=False)
class DatagenSource(SourceSpec):
    """Rows generated on the executors: ``generator(index) -> record`` for index in
    ``[0, rows)``; deterministic in the index so any subtask can generate its share."""

    rows: int
    generator: Callable[[int], Any]
    description: str = "datagen"

    @property
    def default_name(self) -> str:
        return "DataGen"


@dataclass(frozen=True, eq=False)
class SocketSource(SourceSpec):
    """Lines read from a TCP server (Flink's ``socketTextStream``, a non-parallel legacy
    source; SQL's ``'connector' = 'socket'``). ``format`` None: each line is one string
    record; csv / json: each line is parsed into ``schema``. Unbounded and not replayable."""

    hostname: str
    port: int
    format: str | None = None
    schema: tuple[tuple[str, str], ...] = ()
    options: tuple[tuple[str, str], ...] = ()
    bounded = False
    unbounded_reason = "it reads a socket until it closes"

    @property
    def default_name(self) -> str:
        return "Socket Stream"


@dataclass(frozen=True, eq=False)
class RateDatagenSource(SourceSpec):
    """Flink's datagen without ``number-of-rows``: ``generator(index) -> record`` for index
    0, 1, 2, ... at ``rows_per_second``, unbounded (``DatagenSource`` is the bounded one)."""

    rows_per_second: int
    generator: Callable[[int], Any]
    description: str = "datagen"
    bounded = False
    unbounded_reason = "it generates rows without a row limit"

    @property
    def default_name(self) -> str:
        return "DataGen"


@dataclass(frozen=True, eq=False)
class KafkaSource(SourceSpec):
    """Flink's Kafka source (SQL ``'connector' = 'kafka'``, PyFlink's ``KafkaSource``):
    ``topics`` or ``topic_pattern``; ``startup`` earliest-offset / latest-offset /
    group-offsets / timestamp / specific-offsets. ``format`` None: each value is one string
    record (``SimpleStringSchema``); csv / json: parsed into ``schema``. ``properties`` are
    the ``properties.*`` options (Kafka client settings) without their prefix."""

    bootstrap_servers: str
    topics: tuple[str, ...] = ()
    topic_pattern: str | None = None
    group_id: str | None = None
    startup: str = "group-offsets"
    timestamp_millis: int | None = None
    specific_offsets: tuple[tuple[str, int, int], ...] = ()  # (topic, partition, offset)
    format: str | None = None
    schema: tuple[tuple[str, str], ...] = ()
    options: tuple[tuple[str, str], ...] = ()
    properties: tuple[tuple[str, str], ...] = ()
    bounded = False
    unbounded_reason = "it reads a Kafka topic"

    @property
    def default_name(self) -> str:
        return "KafkaSource"
