"""Typed, frozen AST of a .flow script. Every node carries the :class:`Span` it came from.

The AST is what the parser proves about the text and nothing more: names are not resolved
and expressions are not typed yet (that is lowering's job), so every node is plain data.
The expression nodes are ``ast_exprs.py`` (re-exported here, so ``A.Literal`` works).
"""

from __future__ import annotations

from dataclasses import dataclass

from flowc.errors import Span
from flowc.parser.ast_exprs import (  # noqa: F401 - re-exported: A.Literal, A.Expr, ...
    ArrayLit,
    Between,
    Binary,
    Call,
    Case,
    Cast,
    DurationLit,
    Expr,
    FieldRef,
    InList,
    IsNull,
    Like,
    Literal,
    Unary,
    When,
)
from flowc.types import Type

# ---------------------------------------------------------------- settings and hints


@dataclass(frozen=True)
class Setting:
    """``key = value`` inside ``with (...)``/``options (...)`` or a ``set`` statement. ``value``
    is a Python value (str, int, float, bool) or a :class:`Word` for a bare name."""

    key: str
    value: object
    span: Span
    key_span: Span
    value_span: Span


@dataclass(frozen=True)
class Word:
    """A bare name used as a value (``chaining = off``, ``chain = new``)."""

    text: str

    def __str__(self) -> str:
        return self.text


# ---------------------------------------------------------------- pipeline steps


@dataclass(frozen=True)
class SelectItem:
    """One output column of ``map``: ``expr [as alias]``; ``star`` for ``*``."""

    expr: Expr | None
    alias: str | None
    span: Span
    star: bool = False


@dataclass(frozen=True)
class MapStep:
    items: tuple[SelectItem, ...]
    span: Span
    hints: tuple[Setting, ...] = ()


@dataclass(frozen=True)
class FilterStep:
    condition: Expr
    span: Span
    hints: tuple[Setting, ...] = ()


@dataclass(frozen=True)
class FlatMapStep:
    expr: Expr
    alias: str
    span: Span
    hints: tuple[Setting, ...] = ()


@dataclass(frozen=True)
class KeyByStep:
    fields: tuple[FieldRef, ...]
    span: Span
    hints: tuple[Setting, ...] = ()
    # SQL GROUP BY: the key is a row of the fields (a tuple even for one field), so a null
    # field is allowed and hashes as 0, as in Flink's Row/Tuple; .flow keeps DataStream's
    # rule (a null single-field key fails with "Assigned key must not be null!").
    row_key: bool = False


@dataclass(frozen=True)
class WindowSpec:
    """``tumbling SIZE [offset O]``, ``sliding SIZE every SLIDE [offset O]``, ``session gap G``,
    ``cumulating SIZE every STEP [offset O]`` (kind ``cumulative``: ``slide`` is the step);
    ``processing``: ``on processing time`` (windows by the operator's clock); ``ltz``: SQL's
    time attribute is a TIMESTAMP_LTZ, and so are ``window_time`` and ``*_ROWTIME``."""

    kind: str
    size: int
    slide: int
    offset: int
    span: Span
    processing: bool = False
    ltz: bool = False


@dataclass(frozen=True)
class WindowStep:
    spec: WindowSpec
    lateness: int | None
    late_into: str | None
    span: Span
    late_span: Span | None = None
    hints: tuple[Setting, ...] = ()


@dataclass(frozen=True)
class AggregateStep:
    items: tuple[SelectItem, ...]
    span: Span
    hints: tuple[Setting, ...] = ()


@dataclass(frozen=True)
class OverStep:
    """``over rows 2 preceding aggregate ...`` (SQL's OVER window): every input row with
    aggregates over the rows before it in event-time order (``preceding`` None: unbounded;
    a row count for ``rows``, milliseconds for ``range``)."""

    rows: bool
    preceding: int | None
    items: tuple[SelectItem, ...]
    span: Span
    hints: tuple[Setting, ...] = ()
    # the timestamp field ordering the rows (SQL's ORDER BY); None: the records' event time
    order: FieldRef | None = None


@dataclass(frozen=True)
class WindowRankStep:
    """``window top 3 [offset 1] by x desc [as rn]`` (SQL's window Top-N) and ``window
    first|last by ts [as rn]`` (window deduplication): per key and window (the stream's
    ``window_end``), the rows ranked ``offset + 1`` .. ``offset + count``, emitted when the
    watermark passes the window's end. ``keep`` is "first" / "last" for deduplication."""

    offset: int
    count: int
    items: tuple[OrderItem, ...]
    alias: str | None
    span: Span
    keep: str | None = None
    hints: tuple[Setting, ...] = ()


@dataclass(frozen=True)
class UnionStep:
    streams: tuple[FieldRef, ...]  # bare names, spans for diagnostics
    span: Span
    hints: tuple[Setting, ...] = ()


@dataclass(frozen=True)
class JoinKey:
    """One ``left.x = right.y`` of a join's ``on``; a bare ``x`` means ``x = x``."""

    left: FieldRef
    right: FieldRef
    span: Span


@dataclass(frozen=True)
class JoinStep:
    """A window join (``window`` set), an interval join (``lower``/``upper`` set) or a
    regular join (``kind`` set: inner, left, right or full)."""

    other: str
    alias: str | None
    keys: tuple[JoinKey, ...]
    window: WindowSpec | None
    lateness: int | None
    lower: int | None
    upper: int | None
    span: Span
    other_span: Span
    hints: tuple[Setting, ...] = ()
    kind: str | None = None
    # SQL's interval join: Flink SQL's RowTimeIntervalJoin (a row behind the watermark joins
    # the other side's cached rows) rather than .flow's DataStream IntervalJoinOperator
    table: bool = False


@dataclass(frozen=True)
class WindowJoinStep:
    """``window [inner|left|right|full] join b on ...``: joins rows that carry their window
    (``window_start`` / ``window_end`` columns, e.g. two window aggregates) on keys and
    window, when the watermark passes the window's end (SQL's window join)."""

    other: str
    alias: str | None
    keys: tuple[JoinKey, ...]
    kind: str  # inner, left, right, full
    span: Span
    other_span: Span
    hints: tuple[Setting, ...] = ()


@dataclass(frozen=True)
class PartitionStep:
    """``rebalance``, ``rescale``, ``shuffle``, ``broadcast``, ``global`` or ``forward``."""

    kind: str
    span: Span
    hints: tuple[Setting, ...] = ()


@dataclass(frozen=True)
class OrderItem:
    """``field [asc | desc] [nulls first | nulls last]``; ``nulls_first`` None: Flink's
    default (first when ascending, last when descending)."""

    field: FieldRef
    descending: bool
    nulls_first: bool | None
    span: Span


@dataclass(frozen=True)
class OrderStep:
    """``order by ...`` (SQL's ORDER BY): BATCH only, a global sort."""

    items: tuple[OrderItem, ...]
    span: Span
    hints: tuple[Setting, ...] = ()


@dataclass(frozen=True)
class TopStep:
    """``top n by f [desc], ... [as rank]`` after ``key by`` (or without one: one group):
    Flink SQL's Top-N (``ROW_NUMBER() OVER (PARTITION BY .. ORDER BY ..)`` filtered on the
    rank); ``top 1`` is its deduplication. ``rank``: the name of an output rank column."""

    count: int
    items: tuple[OrderItem, ...]
    rank: str | None
    span: Span
    hints: tuple[Setting, ...] = ()
    # SQL over an upsert input whose sort key only moves one way: the unique key's columns
    # (Flink's UpdateFastStrategy, flowc.parser.topn_update); None: retract as needed
    unique: tuple[str, ...] | None = None


@dataclass(frozen=True)
class LimitStep:
    """``limit n [offset m]`` (SQL's LIMIT / OFFSET)."""

    count: int
    offset: int
    span: Span
    hints: tuple[Setting, ...] = ()


@dataclass(frozen=True)
class PrintSink:
    identifier: str | None
    span: Span
    hints: tuple[Setting, ...] = ()


@dataclass(frozen=True)
class FileSinkStep:
    format: str
    path: str
    options: tuple[Setting, ...]
    span: Span
    format_span: Span
    hints: tuple[Setting, ...] = ()
    partition_by: tuple[FieldRef, ...] = ()  # ``partitioned by dt, ...``


@dataclass(frozen=True)
class BlackholeSink:
    span: Span
    hints: tuple[Setting, ...] = ()


@dataclass(frozen=True)
class KafkaSinkStep:
    """INSERT INTO a SQL ``'connector' = 'kafka'`` table (checked in sql/ddl.py): one topic,
    the value format (csv / json), the key fields and their format, Flink's
    'value.fields-include' (True: the key fields are in the value too) and delivery
    guarantee."""

    bootstrap_servers: str
    topic: str
    format: str
    key_fields: tuple[str, ...]
    key_format: str | None
    value_includes_key: bool
    delivery_guarantee: str
    properties: tuple[tuple[str, str], ...]
    span: Span
    hints: tuple[Setting, ...] = ()


Step = (
    MapStep
    | FilterStep
    | FlatMapStep
    | KeyByStep
    | WindowStep
    | AggregateStep
    | OverStep
    | WindowRankStep
    | WindowJoinStep
    | UnionStep
    | JoinStep
    | PartitionStep
    | OrderStep
    | TopStep
    | LimitStep
    | PrintSink
    | FileSinkStep
    | BlackholeSink
    | KafkaSinkStep
)
SINK_STEPS = (PrintSink, FileSinkStep, BlackholeSink, KafkaSinkStep)


@dataclass(frozen=True)
class Pipeline:
    """``head | step | step ...``; the head is a stream name, or ``union a, b, ...``."""

    head: tuple[FieldRef, ...]
    steps: tuple[Step, ...]
    span: Span
    head_is_union: bool = False


# ---------------------------------------------------------------- statements


@dataclass(frozen=True)
class SetStmt:
    setting: Setting
    span: Span


@dataclass(frozen=True)
class ImportUdf:
    """``import udf pkg.module.fn(type, ...) -> type [as alias]``."""

    module: str
    function: str
    params: tuple[Type, ...]
    returns: Type
    alias: str | None
    span: Span
    path_span: Span
    # SQL's CREATE FUNCTION: the types come from the function's annotations on import
    # (``params`` and ``returns`` are placeholders until then)
    annotated: bool = False

    @property
    def name(self) -> str:
        return self.alias or self.function


@dataclass(frozen=True)
class FieldDecl:
    name: str
    type: Type
    span: Span


@dataclass(frozen=True)
class FileBody:
    format: str
    path: str
    options: tuple[Setting, ...]
    span: Span
    format_span: Span
    # ``monitor every <duration>``: list the path for new files every this many ms
    # (an unbounded source); None: read the files there once.
    monitor: int | None = None
    monitor_span: Span | None = None


@dataclass(frozen=True)
class ValuesBody:
    rows: tuple[tuple[Expr, ...], ...]
    row_spans: tuple[Span, ...]
    span: Span


@dataclass(frozen=True)
class DatagenBody:
    rows: int | None  # None: unbounded, ``rows_per_second`` rows a second
    generators: tuple[tuple[str, Expr, Span], ...]
    span: Span
    rows_per_second: int | None = None


@dataclass(frozen=True)
class SocketBody:
    """``from socket 'host:port'`` (.flow) / ``'connector' = 'socket'`` (SQL): lines from a
    TCP server; ``format`` None: a one-string-field schema gets each line, else csv / json
    with the csv ``options``."""

    hostname: str
    port: int
    format: str | None
    options: tuple[Setting, ...]
    span: Span
    format_span: Span | None = None


@dataclass(frozen=True)
class KafkaBody:
    """SQL ``'connector' = 'kafka'`` (checked in sql/ddl.py): topics or a topic pattern,
    Flink's startup mode and the value format."""

    bootstrap_servers: str
    topics: tuple[str, ...]
    topic_pattern: str | None
    group_id: str | None
    startup: str
    timestamp_millis: int | None
    specific_offsets: tuple[tuple[str, int, int], ...]
    format: str
    options: tuple[Setting, ...]
    properties: tuple[tuple[str, str], ...]
    span: Span


@dataclass(frozen=True)
class SequenceBody:
    start: int
    end: int
    span: Span


SourceBody = (
    FileBody
    | ValuesBody
    | DatagenBody
    | SequenceBody
    | SocketBody
    | KafkaBody
)


@dataclass(frozen=True)
class Watermark:
    """``watermark <timestamp expr> [- <duration>] [idle after <duration>]``;
    ``idle_timeout``: .flow's ``idle after``, SQL's ``'scan.watermark.idle-timeout'``
    (``WatermarkStrategy.with_idleness``); ``idle_span`` where it was written. ``exact``: a
    SQL table's ``WATERMARK`` (``WatermarkStrategy.for_sql_watermark``: no -1 ms)."""

    expr: Expr
    out_of_orderness: int
    span: Span
    idle_timeout: int | None = None
    idle_span: Span | None = None
    exact: bool = False


@dataclass(frozen=True)
class SourceStmt:
    name: str
    fields: tuple[FieldDecl, ...]
    body: SourceBody
    watermark: Watermark | None
    dead_letter: str | None
    hints: tuple[Setting, ...]
    span: Span
    name_span: Span
    dead_letter_span: Span | None = None
    # A SQL table with computed columns: its row, computed from the physical ``fields`` by a
    # map in the source's chain before the watermark (Flink's Calc before its
    # WatermarkAssigner); empty: the row is ``fields``.
    projection: tuple[SelectItem, ...] = ()


@dataclass(frozen=True)
class LetStmt:
    name: str
    pipeline: Pipeline
    span: Span
    name_span: Span


@dataclass(frozen=True)
class PipelineStmt:
    pipeline: Pipeline
    span: Span


Statement = (
    SetStmt
    | ImportUdf
    | SourceStmt
    | LetStmt
    | PipelineStmt
)


@dataclass(frozen=True)
class Script:
    statements: tuple[Statement, ...]
    filename: str
