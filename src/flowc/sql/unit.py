"""A compilation unit of SQL and .flow statements sharing one catalog.

Every statement is translated to .flow AST statements and lowered at once into a *scratch*
environment: that type-checks it, reports its errors in order, and gives later statements
the schemas they refer to (tables from SQL and streams from .flow live in the same
``streams`` catalog). :meth:`Unit.compile` then lowers, into a fresh environment, the
actions (pipelines, INSERTs, queries) and only the definitions they use: in SQL a table
that is declared but not read must not become a source operator (Flink creates none).
"""

from __future__ import annotations

import os
import re
from collections.abc import Collection
from dataclasses import dataclass, field, replace

from sqlglot import exp

from flowc.api.environment import StreamExecutionEnvironment
from flowc.errors import (
    FlowcError,
    FlowNameError,
    FlowSyntaxError,
    FlowTypeError,
    Span,
    UnsupportedError,
)
from flowc.parser import ast as A
from flowc.parser.lower import BrokenName, CompiledScript, Lowerer
from flowc.sql.changelog import Updating, consumer_error
from flowc.sql.ddl import TableDef, create_table, file_body, kafka_sink_step
from flowc.sql.exprs import SpanMap
from flowc.sql.function_ddl import create_function
from flowc.sql.insert import check_form, check_own_input
from flowc.sql.partitions import sink_options
from flowc.sql.query import Piece, QueryTranslator
from flowc.sql.source import SqlChunk, deep_stack, parse_statement, rewrite, unknown_statement
from flowc.sql.terms import sql_terms
from flowc.transformations import RuntimeExecutionMode
from flowc.types import STRING, Schema, Type, assignable

_EXPLAIN = re.compile(r"^\s*EXPLAIN\s+(?:PLAN\s+FOR\s+)?", re.I)
_SET = re.compile(r"^\s*SET\s+'?([A-Za-z_][\w.\-]*)'?\s*=\s*('[^']*(?:''[^']*)*'|\S+)\s*$", re.I | re.S)
_WORDS = {"on", "off", "true", "false", "streaming", "batch", "new", "never"}
_STATEMENT_HINTS = {
    "SHOW": "flowc repl lists them: show tables, show streams",
    "DESCRIBE": "flowc repl shows a table's columns: describe <table>",
    "DROP": "a file's tables last for its run; flowc repl has DROP TABLE / DROP VIEW",
    "USE": "catalogs and databases are not supported: tables live in one namespace",
}


@dataclass
class Explain:
    span: Span
    lets: list[A.LetStmt]
    pipeline: A.Pipeline


@dataclass
class Entry:
    stmt: A.Statement
    action: bool


@dataclass
class Unit:
    filename: str
    text: str
    base_dir: str | None = None
    scratch: Lowerer = field(init=False)
    tables: dict[str, TableDef] = field(default_factory=dict)
    rowtimes: dict[str, str] = field(default_factory=dict)
    updating: dict[str, Updating] = field(default_factory=dict)
    entries: list[Entry] = field(default_factory=list)
    explains: list[Explain] = field(default_factory=list)
    errors: list[FlowcError] = field(default_factory=list)
    counter: int = 0
    # relative file paths of statements added while this is set are made absolute against
    # it (the REPL's init file: its paths are relative to the file, not to the cwd)
    path_base: str | None = None

    def __post_init__(self) -> None:
        self.scratch = Lowerer(self.filename, self.text, self.base_dir)

    def fork(self) -> Unit:
        """A copy whose new definitions do not reach this unit (REPL queries)."""
        child = Unit(self.filename, self.text, self.base_dir)
        child.scratch = Lowerer(self.filename, self.text, self.base_dir, self.scratch.env)
        child.scratch.streams = dict(self.scratch.streams)
        child.scratch.udfs = self.scratch.udfs
        child.scratch.broken = set(self.scratch.broken)
        child.tables = dict(self.tables)
        child.rowtimes = dict(self.rowtimes)
        child.entries = list(self.entries)
        child.counter = self.counter
        child.updating = dict(self.updating)
        child.path_base = self.path_base
        return child

    # ------------------------------------------------------------------ catalog protocol

    def schema_of(self, name: str) -> Schema | None:
        info = self.scratch.streams.get(name)
        if info is None and name in self.scratch.broken:
            raise BrokenName(name)
        return info.schema if info is not None else None

    def rowtime_of(self, name: str) -> str | None:
        return self.rowtimes.get(name)

    def names(self) -> list[str]:
        return sorted(set(self.scratch.streams) | set(self.tables))

    def table(self, name: str) -> TableDef | None:
        return self.tables.get(name)

    def define_let(self, stmt: A.LetStmt) -> Schema:
        self._lower_scratch(stmt, raise_errors=True)
        return self.scratch.streams[stmt.name].schema

    def updating_of(self, name: str) -> Updating | None:
        return self.updating.get(name)

    def set_updating(self, name: str, up: Updating | None) -> None:
        if up is not None:
            self.updating[name] = up

    def udf_names(self) -> Collection[str]:
        return set(self.scratch.udfs) | set(self.scratch.broken_udfs)

    def is_batch(self) -> bool:
        return self.scratch.env.config.mode is RuntimeExecutionMode.BATCH

    def fresh_name(self) -> str:
        while True:
            self.counter += 1
            name = f"_sql{self.counter}"
            if name not in self.scratch.streams:
                return name

    # ------------------------------------------------------------------ adding statements

    def _lower_scratch(self, stmt: A.Statement, raise_errors: bool = False) -> bool:
        before = len(self.scratch.errors)
        self.scratch.lower_all([stmt])
        if len(self.scratch.errors) > before:
            new = self.scratch.errors[before:]
            del self.scratch.errors[before:]
            if raise_errors:
                raise new[0]
            self.errors.extend(new)
            return False
        return True

    def add_flow(self, stmt: A.Statement) -> bool:
        """A .flow statement (already parsed). Returns whether it compiled."""
        if isinstance(stmt, A.SourceStmt) and isinstance(stmt.watermark, A.Watermark) and \
                isinstance(stmt.watermark.expr, A.FieldRef):
            self.rowtimes[stmt.name] = stmt.watermark.expr.name
        if isinstance(stmt, A.SourceStmt | A.LetStmt) and stmt.name in self.tables:
            self.errors.append(FlowNameError(f"'{stmt.name}' is already a SQL table",
                                             stmt.name_span))
            return False
        if self.path_base is not None:
            stmt = absolute_paths(stmt, self.path_base)
        ok = self._lower_scratch(stmt)
        if ok:
            self.entries.append(Entry(stmt, isinstance(stmt, A.PipelineStmt)))
        return ok

    def drop(self, name: str) -> bool:
        """Forget a table, view or stream (the REPL's DROP); False if it is not defined.
        Refused while another definition reads it."""
        if name not in self.tables and name not in self.scratch.streams:
            return False
        for e in self.entries:
            if name in references(e.stmt) and not e.action:
                user = defined(e.stmt)
                raise FlowNameError(f"cannot drop '{name}': "
                                    f"'{user[0] if user else '?'}' reads it",
                                    hint=f"drop '{user[0] if user else '?'}' first")
        self.entries = [e for e in self.entries if name not in defined(e.stmt)]
        self.tables.pop(name, None)
        self.scratch.streams.pop(name, None)
        self.rowtimes.pop(name, None)
        self.updating.pop(name, None)
        return True

    def add_sql(self, chunk: SqlChunk, *, query_sink: str = "print") -> str:
        """Translate and check one SQL statement. Returns its kind ('table', 'view', 'set',
        'insert', 'query', 'explain'); errors are collected in ``errors``."""
        before = len(self.errors)
        try:
            with deep_stack():
                return self._add_sql(chunk, query_sink)
        except BrokenName:
            return "broken"
        except FlowcError as e:
            self.errors.append(e)
            return "error"
        finally:
            for e in self.errors[before:]:
                sql_terms(e, chunk)

    def _add_sql(self, chunk: SqlChunk, query_sink: str) -> str:
        m = _SET.match(chunk.text)
        if m:
            self.add_flow(set_statement(chunk, m))
            return "set"
        m = _EXPLAIN.match(chunk.text)
        if m:
            sub = SqlChunk(chunk.text[m.end():], chunk.offset + m.end(), chunk.filename,
                           chunk.full)
            lets, pipeline = self.query(sub)
            self.explains.append(Explain(chunk.span(0, len(chunk.text.rstrip()) - 1), lets,
                                         pipeline))
            return "explain"
        rw = rewrite(chunk)
        tree = parse_statement(chunk, rw.text)
        spans = SpanMap(tree, chunk)
        span = spans(tree)
        if isinstance(tree, exp.Command):
            span = chunk.span(0, len(chunk.text.rstrip()) - 1)
        if chunk.statement_set and not isinstance(tree, exp.Insert):
            raise UnsupportedError("a STATEMENT SET holds only INSERT INTO statements", span,
                                   hint="move this statement before EXECUTE STATEMENT SET")
        if isinstance(tree, exp.Create):
            kind = str(tree.args.get("kind") or "").upper()
            if tree.args.get("replace"):
                raise UnsupportedError(f"CREATE OR REPLACE {kind} is not supported", span,
                                       hint=f"CREATE {kind} with a new name")
            target = tree.this.this if isinstance(tree.this, exp.Schema) else tree.this
            if tree.args.get("exists") and isinstance(target, exp.Table) and (
                    target.name in self.tables or target.name in self.scratch.streams):
                return kind.lower()  # IF NOT EXISTS: already there, nothing to do
            if kind == "TABLE":
                return self._create_table(tree, rw, chunk, spans)
            if kind == "FUNCTION":
                return self._create_function(tree, spans, span)
            if kind == "VIEW":
                name_node = tree.this
                name = name_node.name
                if not isinstance(tree.expression, exp.Expression):
                    end = len(chunk.text.rstrip()) - 1
                    raise FlowSyntaxError(f"CREATE VIEW {name} needs AS and a query",
                                          chunk.span(end, end),
                                          hint=f"CREATE VIEW {name} AS SELECT ...")
                try:
                    lets, piece = QueryTranslator(self, spans, rw).translate(tree.expression)
                except FlowcError:
                    if name not in self.tables and name not in self.scratch.streams:
                        self.scratch.broken.add(name)  # its users are not errors again
                    raise
                self._defs(lets)
                let = A.LetStmt(name, piece.pipeline(), span, spans(name_node))
                if name in self.tables:
                    raise FlowNameError(f"'{name}' is already a table", spans(name_node))
                if self.add_flow(let):
                    self.set_updating(name, piece.updating)
                return "view"
            raise UnsupportedError(f"CREATE {kind} is not supported", span,
                                   hint="flowc supports CREATE TABLE, CREATE VIEW and "
                                        "CREATE FUNCTION")
        if isinstance(tree, exp.Insert):
            return self._insert(tree, rw, spans, span)
        if isinstance(tree, (exp.Select, exp.SetOperation, exp.Subquery)):
            lets, piece = QueryTranslator(self, spans, rw).translate(tree)
            self._defs(lets)
            sink = A.PrintSink(None, span) if query_sink == "print" else None
            steps = tuple(piece.steps) + ((sink,) if sink is not None else ())
            self.add_flow(A.PipelineStmt(A.Pipeline(piece.head, steps, span,
                                                    piece.head_is_union), span))
            return "query"
        unknown = unknown_statement(chunk)
        if unknown is not None:
            raise unknown
        what = tree.key.upper() if not isinstance(tree, exp.Command) else str(tree.this)
        what = what.upper()
        raise UnsupportedError(f"the SQL statement {what} is not supported", span,
                               hint=_STATEMENT_HINTS.get(what, "flowc supports CREATE TABLE, "
                                                         "CREATE VIEW, SELECT, INSERT INTO, "
                                                         "EXPLAIN and SET"))

    def query(self, chunk: SqlChunk,
              what: str = "EXPLAIN needs a query") -> tuple[list[A.LetStmt], A.Pipeline]:
        """A query (SELECT/UNION) as lets plus a pipeline without a sink."""
        lets, piece = self.query_piece(chunk, what=what)
        return lets, piece.pipeline()

    def query_piece(self, chunk: SqlChunk, *, expose_keys: bool = False,
                    what: str = "a query is expected here") -> tuple[list[A.LetStmt], Piece]:
        """The translated query; ``expose_keys`` keeps the group keys of an updating result
        (hidden columns if they are not selected), for showing its changelog."""
        try:
            rw = rewrite(chunk)
            tree = parse_statement(chunk, rw.text)
            spans = SpanMap(tree, chunk)
            if not isinstance(tree, (exp.Select, exp.SetOperation, exp.Subquery, exp.Values)):
                unknown = unknown_statement(chunk)
                if unknown is not None:
                    raise unknown
                kind = tree.key.upper() if not isinstance(tree, exp.Command) else str(tree.this)
                raise UnsupportedError(f"{what} (SELECT ...), not {kind}", spans(tree))
            lets, piece = QueryTranslator(self, spans, rw, expose_keys=expose_keys).translate(
                tree)
            # type-check the query here, so its errors are worded for SQL like a file's
            # (EXPLAIN and the REPL compile it later, outside this statement)
            self.define_let(A.LetStmt(self.fresh_name(), piece.pipeline(), piece.span,
                                      piece.span))
            return lets, piece
        except FlowcError as e:
            raise sql_terms(e, chunk) from None

    def _defs(self, lets: list[A.LetStmt]) -> None:
        # already lowered into the scratch catalog by define_let
        self.entries.extend(Entry(let, False) for let in lets)

    def _create_table(self, tree: exp.Create, rw: object, chunk: SqlChunk,
                      spans: SpanMap) -> str:
        name = tree.this.this.name if isinstance(tree.this, exp.Schema) else tree.this.name
        known = self.scratch.streams.get(name)
        if name in self.tables or known is not None:
            raise FlowNameError(f"table '{name}' is already defined",
                                spans(tree.this), notes=[f"'{name}' is defined at line "
                                                         f"{(known.span if known else self.tables[name].span).line}"])
        try:
            tdef = create_table(tree, rw, chunk, spans)  # type: ignore[arg-type]
        except FlowcError:
            self.scratch.broken.add(name)
            raise
        if self.path_base is not None:
            for key in ("path", "dead-letter"):
                if key in tdef.options:
                    tdef.options[key] = _absolute(tdef.options[key], self.path_base)
        self.scratch.broken.discard(name)  # defined again (the REPL) after a failure
        if tdef.source is not None:
            if not self.add_flow(tdef.source):
                self.scratch.broken.add(name)
                return "error"
        if tdef.rowtime is not None:
            self.rowtimes[name] = tdef.rowtime
        self.tables[name] = tdef
        return "table"

    def _create_function(self, tree: exp.Create, spans: SpanMap, span: Span) -> str:
        name = tree.this.name if isinstance(tree.this, exp.Table) else str(tree.this)
        if tree.args.get("exists") and name in self.scratch.udfs:
            return "function"  # IF NOT EXISTS: already there
        try:
            stmt = create_function(tree, spans, span)
        except FlowcError:
            self.scratch.broken_udfs.add(name)  # its calls are not errors again
            raise
        self.add_flow(stmt)
        return "function"

    def _insert(self, tree: exp.Insert, rw: object, spans: SpanMap, span: Span) -> str:
        target = tree.this
        if isinstance(target, exp.Schema):
            raise UnsupportedError("INSERT INTO with a column list is not supported",
                                   spans(target), hint="select the columns in table order")
        name = target.name
        tdef = self.tables.get(name)
        if tdef is None and name in self.scratch.broken:
            # its CREATE TABLE failed and was reported; the query is still checked
            lets, piece = QueryTranslator(self, spans, rw).translate(tree.expression)  # type: ignore[arg-type]
            self.define_let(A.LetStmt(self.fresh_name(), piece.pipeline(), span, span))
            raise BrokenName(name)
        if tdef is None:
            hint = None
            if name in self.scratch.streams:
                hint = f"'{name}' is a stream; INSERT needs a table with a sink connector"
            from flowc.errors import did_you_mean
            raise FlowNameError(f"unknown table '{name}'", spans(target),
                                hint=hint or did_you_mean(name, self.tables))
        check_form(tree, spans, tdef, self.scratch.env.config.mode)
        lets, piece = QueryTranslator(self, spans, rw).translate(tree.expression)  # type: ignore[arg-type]
        if piece.updating is not None and tdef.connector in ("filesystem", "kafka"):
            consumer_error(f"Table sink 'default_catalog.default_database.{name}'",
                           piece.updating, spans(target),
                           hint="write updates to a 'print' or 'blackhole' table, or "
                                "aggregate in a window (TUMBLE, HOP or SESSION), which emits "
                                "final rows")
        self._defs(lets)
        steps = list(piece.steps)
        # check the query's output against the table, by position as in Flink
        probe = A.LetStmt(self.fresh_name(), piece.pipeline(), span, span)
        schema = self.define_let(probe)
        self._check_insert(schema, tdef, spans(tree.expression))
        casts = [_insert_cast(q.type, t.type) for q, t in zip(schema, tdef.schema)]
        # csv / json hold a DATE and a TIMESTAMP_LTZ as Flink writes them, 2024-05-01 and
        # 2024-05-01 10:00:01Z (flowc.dates)
        text_dates = tdef.connector == "filesystem" and tdef.options.get("format") in (
            "csv", "json")
        dates = [t.type.flavor if text_dates else "" for t in tdef.schema]
        if list(schema.names) != list(tdef.schema.names) or any(casts) or any(dates):
            # a file sink writes column names: rename to the table's (by position); a
            # number into a DECIMAL column is cast to it, as Flink's INSERT does
            items = tuple(A.SelectItem(_written(A.FieldRef(q.name, None, span), t.type, cast,
                                                date, span), t.name, span)
                          for q, t, cast, date in zip(schema, tdef.schema, casts, dates))
            steps.append(A.MapStep(items, span))
        sink = _sink_step(tdef, span)
        steps.append(sink)
        stmt = A.PipelineStmt(A.Pipeline(piece.head, tuple(steps), span, piece.head_is_union),
                              span)
        if isinstance(sink, A.FileSinkStep):
            reads = needed([(e.stmt, False) for e in self.entries] + [(stmt, True)])
            check_own_input(tdef, sink.path, reads, self.scratch.resolve_path, spans(target))
        self.add_flow(stmt)
        return "insert"

    def _check_insert(self, schema: Schema, tdef: TableDef, span: Span) -> None:
        if len(schema) != len(tdef.schema):
            raise FlowTypeError(f"the query has {len(schema)} columns but table '{tdef.name}' "
                                f"has {len(tdef.schema)}", span,
                                notes=[f"'{tdef.name}' is {tdef.schema}"])
        for q, t in zip(schema.fields, tdef.schema.fields):
            if not assignable(q.type, t.type) and not _insert_cast(q.type, t.type):
                raise FlowTypeError(f"column '{q.name}' is {q.type} but '{tdef.name}.{t.name}' "
                                    f"is {t.type}", span, hint="convert it with CAST")

    # ------------------------------------------------------------------ compiling

    def compile(self, env: StreamExecutionEnvironment | None = None,
                extra: list[A.Statement] | None = None,
                settings: list[A.Statement] | None = None) -> CompiledScript:
        statements = needed([(e.stmt, e.action) for e in self.entries] +
                            [(s, True) for s in extra or []])
        lowerer = Lowerer(self.filename, self.text, self.base_dir, env)
        lowerer.lower_all(list(settings or []) + statements)
        if lowerer.errors:
            from flowc.parser import _raise
            _raise(lowerer.errors)
        return CompiledScript(lowerer.env, lowerer.streams, lowerer.sinks, self.filename,
                              self.text, A.Script(tuple(statements), self.filename),
                              lowerer.udfs)


def _written(ref: A.FieldRef, target: Type, cast: bool, date: str, span: Span) -> A.Expr:
    """A column as INSERT writes it: cast to a DECIMAL column's type; in csv / json (``date``:
    the column's flavour) a DATE or TIMESTAMP_LTZ as its text."""
    if date == "date":
        return A.Cast(A.Cast(ref, target, span), STRING, span)
    if date == "ltz":
        return A.Call("_file_ltz_text", (A.Cast(ref, target, span),), span, span, internal=True)
    return A.Cast(ref, target, span) if cast else ref


def _insert_cast(source: Type, target: Type) -> bool:
    """Whether INSERT casts a column (a number into a DECIMAL of another type, a DECIMAL
    into DOUBLE): Flink's implicit casts between numeric types."""
    if source == target or not (source.is_decimal or target.is_decimal):
        return False
    return source.is_numeric and target.is_numeric


def _absolute(path: str, base: str) -> str:
    if os.path.isabs(path) or "://" in path or path.startswith("file:"):
        return path
    return os.path.join(base, path)


def absolute_paths(stmt: A.Statement, base: str) -> A.Statement:
    """``stmt`` with its relative file paths (sources, dead letters, file sinks) joined to
    ``base``."""
    if isinstance(stmt, A.SourceStmt):
        body = stmt.body
        if isinstance(body, A.FileBody):
            body = replace(body, path=_absolute(body.path, base))
        dead = _absolute(stmt.dead_letter, base) if stmt.dead_letter else stmt.dead_letter
        return replace(stmt, body=body, dead_letter=dead)
    if isinstance(stmt, (A.LetStmt, A.PipelineStmt)):
        steps = tuple(replace(s, path=_absolute(s.path, base))
                      if isinstance(s, A.FileSinkStep) else s for s in stmt.pipeline.steps)
        return replace(stmt, pipeline=replace(stmt.pipeline, steps=steps))
    return stmt


def _sink_step(t: TableDef, span: Span) -> A.Step:
    if t.connector == "print":
        return A.PrintSink(t.options.get("print-identifier"), span, _sink_hints(t))
    if t.connector == "blackhole":
        return A.BlackholeSink(span, _sink_hints(t))
    if t.connector == "filesystem":
        body = file_body(t)
        extra = sink_options(t.options, t.option_spans, bool(t.partition_by), t.span)
        return A.FileSinkStep(body.format, body.path, body.options + extra, span,
                              body.format_span, _sink_hints(t), partition_by=tuple(
                                  A.FieldRef(c, None, t.name_span) for c in t.partition_by))
    if t.connector == "kafka":
        return replace(kafka_sink_step(t, span), hints=_sink_hints(t))
    raise UnsupportedError(f"table '{t.name}' ({t.connector}) cannot be written", span)


def _sink_hints(t: TableDef) -> tuple[A.Setting, ...]:
    from flowc.sql.ddl import int_setting

    if "sink.parallelism" in t.options:
        return (int_setting("parallelism", t.options["sink.parallelism"],
                            t.option_spans["sink.parallelism"]),)
    return ()


def set_statement(chunk: SqlChunk, m: re.Match[str]) -> A.SetStmt:
    key = m.group(1)
    raw = m.group(2)
    kspan = chunk.span(m.start(1), m.end(1) - 1)
    vspan = chunk.span(m.start(2), m.end(2) - 1)
    value: object
    text = raw[1:-1].replace("''", "'") if raw.startswith("'") and len(raw) > 1 else raw
    if re.fullmatch(r"-?\d+", text):
        value = int(text)
    elif text.lower() in _WORDS:
        value = A.Word(text.lower())
    else:
        value = text
    span = chunk.span(0, len(chunk.text.rstrip()) - 1)
    return A.SetStmt(A.Setting(key, value, span, kspan, vspan), span)


def references(stmt: A.Statement) -> list[str]:
    """Stream names a statement reads."""
    if not isinstance(stmt, (A.LetStmt, A.PipelineStmt)):
        return []
    out = [r.name for r in stmt.pipeline.head]
    for step in stmt.pipeline.steps:
        if isinstance(step, A.UnionStep):
            out.extend(r.name for r in step.streams)
        elif isinstance(step, (A.JoinStep, A.WindowJoinStep)):
            out.append(step.other)
    return out


def defined(stmt: A.Statement) -> list[str]:
    out: list[str] = []
    if isinstance(stmt, (A.SourceStmt, A.LetStmt)):
        out.append(stmt.name)
    if isinstance(stmt, (A.LetStmt, A.PipelineStmt)):
        out.extend(s.late_into for s in stmt.pipeline.steps
                   if isinstance(s, A.WindowStep) and s.late_into)
    return out


def needed(entries: list[tuple[A.Statement, bool]]) -> list[A.Statement]:
    """Actions, settings and imports, plus the definitions they (transitively) read, in
    their original order. A worklist, not recursion: views can chain arbitrarily deep."""
    by_name: dict[str, int] = {}
    for i, (stmt, _) in enumerate(entries):
        for name in defined(stmt):
            by_name[name] = i
    keep = {i for i, (stmt, action) in enumerate(entries)
            if action or isinstance(stmt, (A.SetStmt, A.ImportUdf))}
    work = list(keep)
    while work:
        i = work.pop()
        for name in references(entries[i][0]):
            j = by_name.get(name)
            if j is not None and j not in keep:
                keep.add(j)
                work.append(j)
    return [stmt for i, (stmt, _) in enumerate(entries) if i in keep]
