"""AST -> calls on :class:`flowc.datastream.StreamExecutionEnvironment`.

Statements are lowered in order, except that ``set`` and ``import udf`` statements are
applied first (they configure the whole script wherever they appear). Each statement is
lowered on its own: a failing statement is reported and the next one is still checked, and
names it would have defined are remembered as "broken" so they cause no follow-up errors.
"""

from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass, field
from typing import Any

from flowc.api.environment import StreamExecutionEnvironment
from flowc.api.stream import DataStream, DataStreamSink
from flowc.errors import (
    ApiError,
    FlowcError,
    FlowNameError,
    FlowSyntaxError,
    FlowTypeError,
    MultipleErrors,
    Span,
    did_you_mean,
)
from flowc.operators import (
    CodeFn,
    DatagenSource,
    FileSource,
    KafkaSource,
    RateDatagenSource,
    SocketSource,
)
from flowc.parser import ast as A
from flowc.parser.decimal_types import decimal_value
from flowc.parser.exprs import (
    BrokenName,
    Column,
    ExprCompiler,
    Scope,
    Udf,
    make_code_fn,
    row_columns,
)
from flowc.parser.functions import AGGREGATES, PUBLIC_FUNCTIONS
from flowc.parser.settings import IDLE_TIMEOUT, apply_hints, apply_set
from flowc.parser.steps import FILE_FORMATS, Flow, PipelineBuilder, check_storable
from flowc.parser.udf_import import check_arity, load_udf
from flowc.parser.udf_types import annotated_types
from flowc.types import BOOL, DOUBLE, INT, STRING, TIMESTAMP, Field, Schema, Type, assignable
from flowc.windowing import WatermarkStrategy

_FILE_OPTIONS = {"csv": {"header": "bool", "delimiter": "char", "quote": "char",
                         "null_value": "string"},
                 "json": {}, "parquet": {}}


@dataclass
class StreamInfo:
    """A named stream: its schema, its DataStream, a pending ``key by`` (if the pipeline
    ended in one) and whether its records carry event-time timestamps."""

    name: str
    schema: Schema
    span: Span
    stream: DataStream
    key: tuple[str, ...] | None = None
    event_time: bool = False
    updating: bool = False  # an updating (changelog) stream, see steps.Flow


@dataclass(frozen=True)
class SinkInfo:
    kind: str  # print, csv, json, parquet, blackhole
    sink: DataStreamSink
    schema: Schema
    span: Span
    path: str | None = None


@dataclass
class CompiledScript:
    """The result of compiling a script: the environment holding its transformations, the
    named streams and the sinks, in script order."""

    env: StreamExecutionEnvironment
    streams: dict[str, StreamInfo]
    sinks: list[SinkInfo]
    filename: str
    text: str
    script: A.Script | None = None
    udfs: dict[str, Udf] = field(default_factory=dict)


class Lowerer:
    def __init__(self, filename: str, text: str, base_dir: str | None,
                 env: StreamExecutionEnvironment | None = None) -> None:
        self.filename = filename
        self.text = text
        self.base_dir = base_dir
        self.env = env or StreamExecutionEnvironment.get_execution_environment()
        self.streams: dict[str, StreamInfo] = {}
        self.sinks: list[SinkInfo] = []
        self.udfs: dict[str, Udf] = {}
        self.broken: set[str] = set()
        self.broken_udfs: set[str] = set()
        self.errors: list[FlowcError] = []
        self._set_at: dict[str, Span] = {}

    # ------------------------------------------------------------------ driver

    def lower_all(self, statements: list[A.Statement]) -> None:
        first = [s for s in statements if isinstance(s, (A.SetStmt, A.ImportUdf))]
        rest = [s for s in statements if not isinstance(s, (A.SetStmt, A.ImportUdf))]
        for stmt in first + rest:
            self._guarded(stmt)

    def _guarded(self, stmt: A.Statement) -> None:
        try:
            with self.env.at(stmt.span):
                self.statement(stmt)
        except BrokenName:
            self._break(stmt)
        except MultipleErrors as e:
            self.errors.extend(e.errors)  # several independent errors in one statement
            self._break(stmt)
        except FlowcError as e:
            if e.span is None:
                e = type(e)(e.message, stmt.span, hint=e.hint, notes=e.notes) \
                    if type(e) is not ApiError else FlowTypeError(e.message, stmt.span)
            self.errors.append(e)
            self._break(stmt)

    def _break(self, stmt: A.Statement) -> None:
        if isinstance(stmt, A.ImportUdf):
            self.broken_udfs.add(stmt.name)
        if isinstance(stmt, (A.SourceStmt, A.LetStmt)):
            self.broken.add(stmt.name)
        if isinstance(stmt, (A.LetStmt, A.PipelineStmt)):
            for step in stmt.pipeline.steps:
                if isinstance(step, A.WindowStep) and step.late_into:
                    self.broken.add(step.late_into)

    def statement(self, stmt: A.Statement) -> None:
        if isinstance(stmt, A.SetStmt):
            prev = self._set_at.get(stmt.setting.key)
            if prev is not None and prev.file == "<command line>":
                return  # flowc run --set / --parallelism win over the script's own set
            if prev is not None:
                raise FlowNameError(f"'{stmt.setting.key}' is set twice", stmt.setting.key_span,
                                    notes=[f"it is first set at line {prev.line}"])
            self._set_at[stmt.setting.key] = stmt.span
            apply_set(self.env, stmt.setting)
        elif isinstance(stmt, A.ImportUdf):
            self.import_udf(stmt)
        elif isinstance(stmt, A.SourceStmt):
            self.source(stmt)
        elif isinstance(stmt, A.LetStmt):
            self.check_new_name(stmt.name, stmt.name_span)
            flow, sink = PipelineBuilder(self).run(stmt.pipeline)
            if sink is not None:
                raise FlowTypeError("a pipeline that ends in a sink has no output to name",
                                    sink.span, hint=f"drop 'let {stmt.name} =', or move the "
                                    "sink to a separate pipeline")
            self.streams[stmt.name] = StreamInfo(stmt.name, flow.schema, stmt.name_span,
                                                 flow.stream, flow.key, flow.event_time,
                                                 flow.updating)
        else:
            flow, sink = PipelineBuilder(self).run(stmt.pipeline)
            if sink is None:
                raise FlowTypeError("this pipeline does not end in a sink, so its result goes "
                                    "nowhere", stmt.pipeline.steps[-1].span if
                                    stmt.pipeline.steps else stmt.span,
                                    hint="end it with '| print' (or write/blackhole), or name "
                                         "it with 'let NAME = ...'")

    # ------------------------------------------------------------------ names

    def stream(self, ref: A.FieldRef) -> StreamInfo:
        info = self.streams.get(ref.name)
        if info is not None:
            return info
        if ref.name in self.broken:
            raise BrokenName(ref.name)
        raise FlowNameError(f"unknown stream '{ref.name}'", ref.span,
                            hint=did_you_mean(ref.name, self.streams) or (
                                "streams are defined with 'source NAME ...' or 'let NAME = ...'"
                                " before they are used"))

    def check_new_name(self, name: str, span: Span) -> None:
        info = self.streams.get(name)
        if info is not None:
            raise FlowNameError(f"stream '{name}' is already defined", span,
                                notes=[f"'{name}' is defined at line {info.span.line}"])

    def define(self, name: str, stream: DataStream, schema: Schema, span: Span, *,
               event_time: bool) -> None:
        self.check_new_name(name, span)
        self.streams[name] = StreamInfo(name, schema, span, stream, None, event_time)

    def add_sink(self, kind: str, sink: DataStreamSink, schema: Schema, span: Span,
                 path: str | None) -> None:
        self.sinks.append(SinkInfo(kind, sink, schema, span, path))

    def resolve_path(self, path: str) -> str:
        if self.base_dir and not os.path.isabs(path) and "://" not in path:
            return os.path.join(self.base_dir, path)
        return path

    def file_options(self, fmt: str, options: tuple[A.Setting, ...], *,
                     sink: bool = False) -> tuple[tuple[str, str], ...]:
        known = _FILE_OPTIONS[fmt]
        out: list[tuple[str, str]] = []
        for opt in options:
            kind = known.get(opt.key)
            if kind is None:
                hint = did_you_mean(opt.key, known) or (
                    f"{fmt} options are: {', '.join(known)}" if known else
                    f"{fmt} files take no options")
                raise FlowNameError(f"unknown {fmt} option '{opt.key}'", opt.key_span, hint=hint)
            value = opt.value
            if kind == "bool" and not (isinstance(value, A.Word) and value.text in (
                    "true", "false")):
                raise FlowTypeError(f"{opt.key} must be true or false", opt.value_span)
            if kind in ("char", "string") and not isinstance(value, str):
                raise FlowTypeError(f"{opt.key} must be a string", opt.value_span)
            if kind == "char" and len(str(value)) != 1:
                raise FlowTypeError(f"{opt.key} must be a single character", opt.value_span)
            out.append((opt.key, str(value)))
        return tuple(out)

    # ------------------------------------------------------------------ import udf

    def import_udf(self, stmt: A.ImportUdf) -> None:
        name = stmt.name
        if name in PUBLIC_FUNCTIONS or name in AGGREGATES:
            raise FlowNameError(f"'{name}' is a built-in function", stmt.path_span,
                                hint=f"import it under another name: ... as my_{name}")
        if name in self.udfs:
            raise FlowNameError(f"function '{name}' is already imported", stmt.path_span,
                                notes=[f"first imported at line {self.udfs[name].span.line}"])
        if stmt.annotated:
            fn = load_udf(stmt, self.base_dir)
            params, returns = annotated_types(fn, f"{stmt.module}.{stmt.function}",
                                              stmt.path_span)
            stmt = dataclasses.replace(stmt, params=params, returns=returns)
        for t in (*stmt.params, stmt.returns):
            check_storable([(str(t), t, stmt.span)])
        if not stmt.annotated:
            fn = load_udf(stmt, self.base_dir)
        check_arity(stmt, fn)
        self.udfs[name] = Udf(name, fn, stmt.params, stmt.returns, stmt.span)

    # ------------------------------------------------------------------ sources

    def source(self, stmt: A.SourceStmt) -> None:
        self.check_new_name(stmt.name, stmt.name_span)
        seen: dict[str, A.FieldDecl] = {}
        for f in stmt.fields:
            if f.name in seen:
                raise FlowNameError(f"field '{f.name}' is declared twice", f.span)
            seen[f.name] = f
        schema = Schema(tuple(Field(f.name, f.type) for f in stmt.fields))
        # computed columns: the watermark comes after the map that computes them
        strategy = None if stmt.projection else self.watermark(stmt, schema)
        body = stmt.body
        if stmt.dead_letter is not None and not isinstance(body, A.FileBody):
            raise FlowTypeError("'dead letter' only applies to file sources",
                                stmt.dead_letter_span or stmt.span)
        if isinstance(body, A.FileBody) and body.format == "socket":
            body = socket_body(body)
        if isinstance(body, A.FileBody):
            stream = self.file_source(stmt, body, schema, strategy)
        elif isinstance(body, A.DatagenBody):
            stream = self.datagen_source(stmt, body, schema, strategy)
        elif isinstance(body, (A.SocketBody, A.KafkaBody)):
            stream = self.message_source(stmt, body, schema, strategy)
        elif isinstance(body, A.ValuesBody):
            stream = self.env.from_collection(self.values(body, schema), type_info=schema)
            stream.name(stmt.name)  # like from_source's name: `Source: <stream>`
            stream = self._finish(stream, stmt, strategy)
        else:
            if len(schema) != 1 or schema.fields[0].type != INT:
                raise FlowTypeError("a sequence source has exactly one int field, as in "
                                    "(n int)", stmt.span)
            if body.start > body.end:
                raise FlowTypeError(f"a sequence runs upwards: {body.start} is after "
                                    f"{body.end}", body.span)
            # Like Flink's fromSequence (a NumberSequenceSource): one parallel source whose
            # subtasks read consecutive ranges; it emits the 1-field rows itself, so no
            # operator is added after it.
            gen = make_code_fn(f"({body.start} + i,)", ("i",), {}, body.span)
            spec = DatagenSource(body.end - body.start + 1, gen,
                                 f"sequence {body.start} to {body.end}")
            stream = self._from_source(spec, stmt, schema, strategy)
        if stmt.projection:
            stream, schema, strategy = self.computed_columns(stmt, stream, schema)
        self.streams[stmt.name] = StreamInfo(stmt.name, schema, stmt.name_span, stream, None,
                                             strategy is not None)

    def computed_columns(self, stmt: A.SourceStmt, stream: DataStream, schema: Schema
                         ) -> tuple[DataStream, Schema, WatermarkStrategy | None]:
        """A SQL table's computed columns: a map after the source (Flink's Calc after the
        scan), then the watermark on its rows (Flink's WatermarkAssigner)."""
        flow = PipelineBuilder(self).map_step(Flow(stream, schema, False),
                                              A.MapStep(stmt.projection, stmt.span))
        strategy = self.watermark(stmt, flow.schema)
        out = flow.stream
        if strategy is not None:
            out = out.assign_timestamps_and_watermarks(strategy)
        return out, flow.schema, strategy

    def _finish(self, stream: DataStream, stmt: A.SourceStmt,
                strategy: WatermarkStrategy | None) -> DataStream:
        apply_hints(stream, stmt.hints)
        if strategy is not None:
            stream = stream.assign_timestamps_and_watermarks(strategy)
        return stream

    def watermark(self, stmt: A.SourceStmt, schema: Schema) -> WatermarkStrategy | None:
        wm = stmt.watermark
        if wm is None:
            return None
        if wm.out_of_orderness < 0 and not wm.exact:  # SQL's `ts + INTERVAL ...` may lead
            raise FlowTypeError("the watermark delay cannot be negative", wm.span)
        c = ExprCompiler(Scope(row_columns(schema.names, schema.types), {}, "in 'watermark'"),
                         self.env)
        typed = c.compile(wm.expr)
        if typed.type != TIMESTAMP and wm.exact:  # a SQL table's: Flink's rule and text
            raise FlowTypeError("Invalid data type of time field for watermark definition. "
                                "The field must be of type TIMESTAMP(p) or TIMESTAMP_LTZ(p), "
                                "the supported precision 'p' is from 0 to 3, but the time "
                                f"field type is {typed.type.sql_name}", wm.expr.span,
                                hint="compute it as a timestamp, e.g. TO_TIMESTAMP_LTZ("
                                     "epoch_ms, 3)")
        if typed.type != TIMESTAMP:
            raise FlowTypeError(f"the watermark needs a timestamp, but this is {typed.type}",
                                wm.expr.span, hint="write: watermark <timestamp field> - 2s")
        assigner = c.code_fn(typed.code, ("r", "record_ts"), wm.span, typed.vec)
        strategy = (WatermarkStrategy.for_sql_watermark(wm.out_of_orderness) if wm.exact else
                    WatermarkStrategy.for_bounded_out_of_orderness(wm.out_of_orderness)
                    ).with_timestamp_assigner(assigner)
        if wm.idle_timeout is not None and wm.idle_timeout <= 0:
            raise FlowTypeError("the idleness timeout must be positive", wm.idle_span or wm.span,
                                hint="for example: watermark ts - 2s idle after 10s")
        idle = wm.idle_timeout  # the source's own, else the job's default (0: none)
        if idle is None:
            idle = int(dict(self.env.config.options).get(IDLE_TIMEOUT, "0")) or None
        return strategy if idle is None else strategy.with_idleness(idle)

    def file_source(self, stmt: A.SourceStmt, body: A.FileBody, schema: Schema,
                    strategy: WatermarkStrategy | None) -> DataStream:
        if body.format not in FILE_FORMATS:
            raise FlowNameError(f"unknown file format '{body.format}'", body.format_span,
                                hint=did_you_mean(body.format, FILE_FORMATS)
                                or "use csv, json or parquet")
        if body.format == "csv":
            for f in schema.fields:
                if f.type.is_array:
                    raise FlowTypeError(f"csv cannot hold the array field '{f.name}'", stmt.span,
                                        hint="read json or parquet for array fields")
        options = self.file_options(body.format, body.options)
        if body.format == "csv" and not any(k == "header" for k, _ in options):
            # The language's default (documented): a csv file's first line names its columns.
            options = (("header", "true"),) + options
        dead = self.resolve_path(stmt.dead_letter) if stmt.dead_letter else None
        if body.monitor is not None and body.monitor <= 0:
            raise FlowTypeError("the monitor interval must be positive", body.monitor_span
                                or body.span, hint="for example: monitor every 1s")
        pairs = schema.as_pairs()
        if body.format in ("csv", "json", "jsonl", "json-lines"):
            pairs = text_pairs(schema)  # parquet holds date32 or a timestamp
        spec = FileSource(self.resolve_path(body.path), body.format, pairs, options,
                          dead, body.monitor)
        return self._from_source(spec, stmt, schema, strategy)

    def message_source(self, stmt: A.SourceStmt, body: A.SocketBody | A.KafkaBody,
                       schema: Schema, strategy: WatermarkStrategy | None) -> DataStream:
        """A socket or Kafka source: each line / message value one record (a one-string-
        field schema without a format), or parsed as csv / json into the schema."""
        fmt = body.format
        if fmt is None:
            if len(schema) != 1 or schema.fields[0].type != STRING:
                raise FlowTypeError("without a format each line is one string: declare one "
                                    "string field, or give (format = csv) or (format = json)",
                                    stmt.span)
            if body.options:
                raise FlowNameError(f"'{body.options[0].key}' needs a format",
                                    body.options[0].key_span, hint="add format = csv")
            options: tuple[tuple[str, str], ...] = ()
        else:
            if fmt not in ("csv", "json"):
                where = body.format_span if isinstance(body, A.SocketBody) else None
                raise FlowNameError(f"unknown line format '{fmt}'", where or body.span,
                                    hint=did_you_mean(fmt, ("csv", "json"))
                                    or "use csv or json")
            options = self.file_options(fmt, body.options)
        pairs = schema.as_pairs() if fmt is None else text_pairs(schema)
        if isinstance(body, A.SocketBody):
            spec: Any = SocketSource(body.hostname, body.port, fmt, pairs, options)
        else:
            spec = KafkaSource(body.bootstrap_servers, body.topics, body.topic_pattern,
                               body.group_id, body.startup, body.timestamp_millis,
                               body.specific_offsets, fmt, pairs, options, body.properties)
        stream = self.env.from_source(spec, strategy or WatermarkStrategy.no_watermarks(),
                                      stmt.name, type_info=schema)
        if isinstance(body, A.SocketBody):
            stream.set_parallelism(1)  # a non-parallel source, as Flink's socket source
        apply_hints(stream, stmt.hints)
        return stream

    def _from_source(self, spec: Any, stmt: A.SourceStmt, schema: Schema,
                     strategy: WatermarkStrategy | None) -> DataStream:
        # As Flink's fromSource: the source applies the watermark strategy itself.
        stream = self.env.from_source(spec, strategy or WatermarkStrategy.no_watermarks(),
                                      stmt.name, type_info=schema)
        apply_hints(stream, stmt.hints)
        return stream

    def values(self, body: A.ValuesBody, schema: Schema) -> list[tuple[Any, ...]]:
        rows: list[tuple[Any, ...]] = []
        compiler = ExprCompiler(Scope([], {}, "in 'values'"), self.env)
        for exprs, span in zip(body.rows, body.row_spans):
            if len(exprs) != len(schema):
                raise FlowTypeError(f"this row has {len(exprs)} value"
                                    f"{'s' if len(exprs) != 1 else ''} but the schema has "
                                    f"{len(schema)} fields", span)
            row = []
            for e, f in zip(exprs, schema.fields):
                typed = compiler.compile(e)
                if f.type.is_decimal and typed.type in (INT, DOUBLE) and typed.const:
                    row.append(decimal_value(compiler.code_fn(typed.code, (), e.span)(),
                                             f.name, f.type, e.span))
                    continue
                if not assignable(typed.type, f.type):
                    raise FlowTypeError(f"'{f.name}' is {f.type}, but this value is "
                                        f"{typed.type}", e.span)
                fn = compiler.code_fn(typed.code, (), e.span)
                try:
                    value = fn()
                except Exception as exc:  # noqa: BLE001 - a constant that fails to evaluate
                    raise FlowTypeError(f"cannot evaluate this value: {exc}", e.span) from None
                row.append(_widen(value, f.type))
            rows.append(tuple(row))
        return rows

    def datagen_source(self, stmt: A.SourceStmt, body: A.DatagenBody, schema: Schema,
                       strategy: WatermarkStrategy | None) -> DataStream:
        if body.rows is not None and body.rows < 0:
            raise FlowTypeError("datagen needs a row count of 0 or more", body.span)
        if body.rows is None and (body.rows_per_second or 0) <= 0:
            raise FlowTypeError("an unbounded datagen source needs at least one row per "
                                "second", body.span, hint="for example: datagen rows 100 every 1s")
        scope = Scope([Column("index", INT, "i")], self.udfs, "in a datagen generator",
                      index_code="i", broken_functions=frozenset(self.broken_udfs))
        compiler = ExprCompiler(scope, self.env)
        given: dict[str, str] = {}
        for name, expr, span in body.generators:
            f = schema.field(name)
            if f is None:
                raise FlowNameError(f"'{name}' is not a field of '{stmt.name}'", span,
                                    hint=did_you_mean(name, schema.names))
            if name in given:
                raise FlowNameError(f"'{name}' has two generators", span)
            typed = compiler.compile(expr)
            if not assignable(typed.type, f.type):
                raise FlowTypeError(f"'{name}' is {f.type}, but its generator gives "
                                    f"{typed.type}", expr.span)
            given[name] = typed.code if typed.type == f.type or f.type != DOUBLE else \
                f"{compiler.helper('cast_double')}({typed.code})"
        codes = [given.get(f.name) or _default_generator(f.name, f.type) for f in schema.fields]
        gen = compiler.code_fn("(" + "".join(c + ", " for c in codes) + ")", ("i",), body.span)
        if body.rows is None:
            assert body.rows_per_second is not None
            spec: Any = RateDatagenSource(body.rows_per_second, gen,
                                          f"datagen {body.rows_per_second} rows/s")
        else:
            spec = DatagenSource(body.rows, gen, f"datagen {body.rows} rows")
        return self._from_source(spec, stmt, schema, strategy)


def text_pairs(schema: Schema) -> tuple[tuple[str, str], ...]:
    """A text format's (csv / json: files, Kafka, socket) column types: a DATE's text must
    be a date, as Flink's formats reject a time of day - the readers' "date" column
    (runtime/converters.py)."""
    return tuple((n, "date" if f.type.flavor == "date" and not f.type.is_array else t)
                 for (n, t), f in zip(schema.as_pairs(), schema.fields))


def socket_body(body: A.FileBody) -> A.SocketBody:
    """``from socket 'host:port' [(format = csv|json, <csv options>)]``: the file source
    syntax with ``socket`` for the format and the server for the path."""
    if body.monitor_span is not None:
        raise FlowSyntaxError("a socket source has no monitor interval (it is unbounded "
                              "anyway)", body.monitor_span)
    host, sep, port = body.path.rpartition(":")
    if not sep or not host or not port.isdigit() or not 0 <= int(port) <= 65535:
        raise FlowSyntaxError(f"expected 'host:port' after 'from socket', got '{body.path}'",
                              body.span, hint="for example: from socket 'localhost:9999'")
    fmt = next((o for o in body.options if o.key == "format"), None)
    rest = tuple(o for o in body.options if o.key != "format")
    return A.SocketBody(host, int(port), None if fmt is None else str(fmt.value), rest,
                        body.span, None if fmt is None else fmt.value_span)


def _widen(value: Any, t: Type) -> Any:
    if t == DOUBLE and isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    if t.is_array and isinstance(value, list) and t.element is not None:
        return [_widen(v, t.element) for v in value]
    return value


def _default_generator(name: str, t: Type) -> str:
    """What a field without a generator gets: a simple function of the row index."""
    if t == INT:
        return "i"
    if t == DOUBLE:
        return "float(i)"
    if t == STRING:
        return f"{name + '_'!r} + str(i)"
    if t == BOOL:
        return "(i % 2 == 0)"
    if t == TIMESTAMP:
        return "(i * 1000)"
    return "[]"


__all__ = ["BrokenName", "CompiledScript", "Lowerer", "SinkInfo", "StreamInfo", "CodeFn"]
