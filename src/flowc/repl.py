"""``flowc repl``: .flow statements and SQL against one warm Spark session.

The session keeps *definitions* only (sources, lets, SQL tables and views, UDF imports,
settings), in a :class:`flowc.sql.Unit` that doubles as the catalog. Each query is compiled
from scratch: the definitions it reads plus the query, into a fresh environment ending in a
CollectSink; nothing a query creates outlives it, so no state leaks between queries.
"""

from __future__ import annotations

import contextlib
import difflib
import io
import os
import re
import threading
import time
from collections.abc import Callable, Iterable
from typing import Any, TextIO

from rich.console import Console

from flowc.dates import client_text
from flowc.errors import (
    FlowcError,
    FlowNameError,
    FlowSyntaxError,
    MultipleErrors,
    UnsupportedError,
    did_you_mean,
)
from flowc.parser import ast as A
from flowc.parser import parse_source, read_script
from flowc.parser.plan_help import plan_help
from flowc.repl_terminal import (
    META,
    NATURAL_WIDTH,
    cancel_on_interrupt,
    complete_input,
    completer,
    make_table,
    prompt_loop,
    start_spark,
    terminal_pager,
)
from flowc.rowkind import RowKind, kind_of, materialize
from flowc.sql import Unit, collect_query, explain_env
from flowc.sql.changelog import Updating
from flowc.sql.source import MAIN_STATEMENTS, SqlChunk, split_sql
from flowc.sql.terms import sql_terms
from flowc.sql.unit import _SET, set_statement

__all__ = ["Session", "complete_input", "completer", "main", "prompt_loop", "run_init"]

SQL_STARTS = ("select", "with", "create", "insert", "values", "drop", "(")
FLOW_STARTS = ("source", "let", "set", "import", "explain", "union")
SHOW = ("streams", "tables", "settings")
DEFAULT_MAX_ROWS = 20
# Flink's SQL client setting: how an updating result is shown (flowc prints tables, so
# 'changelog' and 'tableau' both show the op column; 'table' the changelog applied)
RESULT_MODE = "sql-client.execution.result-mode"
RESULT_MODES = ("table", "changelog", "tableau")
DEFAULT_RESULT_MODE = "changelog"
HELP = """\
Statements end with ';'. Mix .flow and SQL freely; they share one catalog.
  source NAME (...) from ...;        CREATE TABLE t (...) WITH (...);   define inputs
  let NAME = pipeline;               CREATE VIEW v AS SELECT ...;       name a stream
  clicks | filter ... | map ...;     SELECT ... FROM t ...;             show the first rows
  explain <stream, pipeline or query>   the JobGraph (chains and why edges are not chained)
  show streams | tables | settings   describe <stream or table>
  set key = value | reset [key]      e.g. set parallelism = 2; set max_rows = 50
  DROP TABLE t | DROP VIEW v         forget a definition (nothing may read it)
  help                               quit (or Ctrl-D)
A GROUP BY without a window gives an updating result, shown as Flink's changelog
(op: +I insert, -U/+U the row before/after an update, -D delete); SET
'sql-client.execution.result-mode' = 'table' shows the final rows instead."""


class Session:
    """``pager``: shows a result too long or too wide for the screen whole (the terminal's
    pager in ``flowc repl``); without one, the first ``max_rows`` rows are shown.
    ``spark_start``: the thread starting Spark in the background (see start_spark)."""

    def __init__(self, *, master: str | None = None, out: TextIO | None = None,
                 max_rows: int = DEFAULT_MAX_ROWS, width: int | None = None,
                 pager: Callable[[str], None] | None = None,
                 spark_start: threading.Thread | None = None) -> None:
        self.master = master
        self.pager = pager
        self.spark_start = spark_start
        self.console = Console(file=out, width=width, highlight=False,
                               force_terminal=False if out is not None else None)
        self.max_rows = max_rows
        self.result_mode = DEFAULT_RESULT_MODE
        self.unit = Unit("<repl>", "", os.getcwd())
        self.settings: dict[str, A.SetStmt] = {}
        self.inputs = 0
        self.last_time: float | None = None

    # ------------------------------------------------------------------ dispatch

    def execute(self, text: str, filename: str | None = None) -> bool:
        """Run one input (one or more statements); False when the user asked to quit.
        ``filename`` names the input in diagnostics (an init file)."""
        self.inputs += 1
        name = filename or f"<repl:{self.inputs}>"
        try:
            chunks = split_sql(text, name)
        except FlowcError as e:
            self.report(e)
            return True
        i = 0
        while i < len(chunks):
            chunk = chunks[i]
            try:
                if chunk.statement_set:
                    j = i
                    while j < len(chunks) and chunks[j].statement_set:
                        j += 1
                    self.statement_set(chunks[i:j])
                    i = j - 1
                elif not self.one(chunk):
                    return False
            except FlowcError as e:
                self.report(e)
            self.flush_errors()
            i += 1
        return True

    def statement_set(self, chunks: list[SqlChunk]) -> None:
        """EXECUTE STATEMENT SET: all its INSERTs run as one job, as in Flink."""
        child = self.unit.fork()
        for chunk in chunks:
            child.add_sql(chunk)
        if not child.errors:
            self.run(self._compile_sql(child, chunks), None)
        self.unit.errors.extend(child.errors)

    def _compile_sql(self, child: Unit, chunks: list[SqlChunk]) -> Any:
        """``child``'s job; its errors worded for SQL (each in the statement it is in)."""
        try:
            return child.compile(settings=self._settings())
        except FlowcError as e:
            for chunk in chunks:
                sql_terms(e, chunk)
            raise

    def one(self, chunk: SqlChunk) -> bool:
        body = chunk.text.strip().rstrip(";").strip()
        words = body.split()
        if not words:
            return True
        first = words[0].lower()
        if first in ("quit", "exit", r"\q"):
            return False
        if first == "help":
            self.console.print(HELP, markup=False)
        elif first == "show":
            self.show(words[1:], chunk)
        elif first in ("describe", "desc"):
            self.describe(words[1:], chunk)
        elif first == "reset":
            self.reset(words[1:], chunk)
        elif first == "set":
            self.set(chunk)
        elif first == "explain":
            self.explain(chunk)
        elif first == "drop":
            self.drop(words[1:], chunk)
        elif first in SQL_STARTS or body.startswith("("):
            self.sql(chunk)
        else:
            misspelt = self.misspelt_start(chunk)
            if misspelt is not None:
                raise misspelt
            self.flow(chunk)
        return True

    def misspelt_start(self, chunk: SqlChunk) -> FlowcError | None:
        """``SELEC ...`` or ``sourc ...``: a first word that is close to a statement word of
        SQL or .flow (and names nothing defined) is reported as such, instead of as .flow's
        expectation of a pipeline."""
        m = re.match(r"\s*([A-Za-z_]\w*)\s*(\S?)", chunk.text)
        if m is None or m.group(2) == "|" or m.group(1) in self.unit.names():
            return None
        word = m.group(1)
        vocabulary = [w.lower() for w in MAIN_STATEMENTS] + list(FLOW_STARTS) + list(META)
        if word.lower() in vocabulary:
            return None
        close = difflib.get_close_matches(word.lower(), vocabulary, n=1, cutoff=0.6)
        if not close:
            return None
        guess = close[0].upper() if word.isupper() else close[0]
        return FlowSyntaxError(f"unknown statement '{word}'",
                               chunk.span(m.start(1), m.end(1) - 1),
                               hint=f"did you mean '{guess}'?")

    def report(self, e: FlowcError) -> None:
        self.console.print(e.format(), markup=False, highlight=False)

    def flush_errors(self) -> None:
        if self.unit.errors:
            errors, self.unit.errors = self.unit.errors, []
            self.report(errors[0] if len(errors) == 1 else MultipleErrors(errors))

    # ------------------------------------------------------------------ commands

    def _word_span(self, chunk: SqlChunk, index: int) -> Any:
        """The span of the ``index``-th word of ``chunk`` (the last one if it has fewer)."""
        found = list(re.finditer(r"\S+", chunk.text.rstrip().rstrip(";")))
        m = found[min(index, len(found) - 1)]
        return chunk.span(m.start(), m.end() - 1)

    def show(self, args: list[str], chunk: SqlChunk) -> None:
        what = args[0].lower().strip("'\"") if args else "streams"
        if len(args) > 1 or what not in SHOW:
            raise FlowNameError(f"unknown show command 'show {' '.join(args)}'",
                                self._word_span(chunk, 1),
                                hint=(did_you_mean(what, SHOW) if len(args) == 1 else None)
                                or "show streams, show tables or show settings")
        if what == "tables":
            rows = [(t.name, t.connector, str(t.schema)) for t in self.unit.tables.values()]
            self._table(("table", "connector", "schema"), rows)
        elif what == "settings":
            shown = [(k, _setting_text(s.setting.value)) for k, s in self.settings.items()]
            if self.result_mode != DEFAULT_RESULT_MODE:
                shown.append((RESULT_MODE, self.result_mode))
            self._table(("setting", "value"), shown + [("max_rows", str(self.max_rows))])
        else:
            rows = [(n, str(i.schema)) for n, i in self.unit.scratch.streams.items()
                    if not n.startswith("_")]
            self._table(("stream", "schema"), rows)

    def describe(self, args: list[str], chunk: SqlChunk) -> None:
        known = [n for n in self.unit.names() if not n.startswith("_")]
        if len(args) != 1:
            raise FlowSyntaxError("describe takes one stream or table name: describe <name>",
                                  self._word_span(chunk, 0 if not args else 2),
                                  hint=f"defined: {', '.join(known)}" if known else
                                  "nothing is defined yet: define a source or CREATE TABLE")
        name = args[0].strip("`")
        info = self.unit.scratch.streams.get(name)
        table = self.unit.tables.get(name)
        schema = info.schema if info is not None else table.schema if table else None
        if schema is None:
            raise FlowNameError(f"unknown stream or table '{name}'", self._word_span(chunk, 1),
                                hint=did_you_mean(name, known) or (
                                    f"defined: {', '.join(known)}" if known else None))
        rowtime = self.unit.rowtime_of(name)
        self._table(("field", "type"), [(f.name, str(f.type) + (" (event time)" if
                                         f.name == rowtime else "")) for f in schema.fields])

    def set(self, chunk: SqlChunk) -> None:
        m = _SET.match(chunk.text.strip().rstrip(";"))
        if m is None:
            raise FlowSyntaxError("write: set key = value (or SET 'key' = 'value')",
                                  chunk.span(0, len(chunk.text.rstrip()) - 1))
        stmt = set_statement(chunk, m)
        key = stmt.setting.key
        if key == "max_rows":
            value = stmt.setting.value
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise FlowSyntaxError("max_rows must be a whole number of at least 1",
                                      stmt.setting.value_span)
            self.max_rows = value
            return
        if key == RESULT_MODE:
            mode = str(stmt.setting.value).lower()
            if mode not in RESULT_MODES:
                raise FlowNameError(f"unknown result mode '{stmt.setting.value}'",
                                    stmt.setting.value_span,
                                    hint=did_you_mean(mode, RESULT_MODES) or
                                    "the modes are 'table', 'changelog' and 'tableau'")
            self.result_mode = mode
            return
        from flowc.api.environment import StreamExecutionEnvironment
        from flowc.parser.settings import apply_set

        apply_set(StreamExecutionEnvironment.get_execution_environment(), stmt.setting)
        self.settings[key] = stmt

    def reset(self, args: list[str], chunk: SqlChunk) -> None:
        if not args:
            self.settings.clear()
            self.max_rows = DEFAULT_MAX_ROWS
            self.result_mode = DEFAULT_RESULT_MODE
            return
        key = args[0].strip("'")
        if key == "max_rows":
            self.max_rows = DEFAULT_MAX_ROWS
        elif key == RESULT_MODE:
            self.result_mode = DEFAULT_RESULT_MODE
        elif self.settings.pop(key, None) is None:
            raise FlowNameError(f"'{key}' is not set", self._word_span(chunk, 1),
                                hint=did_you_mean(key, list(self.settings) + ["max_rows"])
                                or "show settings lists what is set")

    def drop(self, args: list[str], chunk: SqlChunk) -> None:
        words = [w.lower() for w in args]
        if not words or words[0] not in ("table", "view", "temporary"):
            raise UnsupportedError("only DROP TABLE and DROP VIEW are supported",
                                   self._word_span(chunk, 1 if args else 0))
        if words[0] == "temporary":
            words, args = words[1:], args[1:]
        if_exists = words[1:3] == ["if", "exists"]
        names = args[3:] if if_exists else args[1:]
        if len(names) != 1:
            raise FlowSyntaxError("write: DROP TABLE [IF EXISTS] name",
                                  self._word_span(chunk, len(chunk.text.split()) - 1))
        name = names[0].strip("`")
        if not self.unit.drop(name) and not if_exists:
            raise FlowNameError(f"unknown table or view '{name}'",
                                self._word_span(chunk, len(chunk.text.split()) - 1),
                                hint=did_you_mean(name, self.unit.names()))

    def explain(self, chunk: SqlChunk) -> None:
        from flowc.explain import render

        m = re.match(r"\s*explain\b\s*", chunk.text, re.I)
        rest = chunk.text[m.end():].strip().rstrip(";") if m else ""
        if not rest:
            raise FlowSyntaxError("explain needs a stream, a pipeline or a query: explain "
                                  "<name>, explain s | filter ..., explain SELECT ...",
                                  self._word_span(chunk, 0))
        assert m is not None
        if rest.split(maxsplit=1)[0].lower() in SQL_STARTS + ("plan",):
            child = self.unit.fork()
            sub = SqlChunk("EXPLAIN " + chunk.text[m.end():], chunk.offset + m.end() - 8,
                           chunk.filename, chunk.full)
            child.add_sql(sub)
            if child.errors:
                self.unit.errors.extend(child.errors)
                return
            try:
                env = explain_env(child, child.explains[-1], self._settings())
            except FlowcError as e:
                raise sql_terms(e, sub) from None
        else:
            script = self._compile_flow(chunk, m.end(), query=False)
            if script is None:
                return
            env = script.env
        with plan_help(env):  # planner errors get script-level help, as in `flowc explain`
            graph = env.get_job_graph()
        self.console.print(render(graph, "text"), markup=False, end="")

    # ------------------------------------------------------------------ statements

    def sql(self, chunk: SqlChunk) -> None:
        first = chunk.text.split(maxsplit=1)[0].lower()
        if first in ("create",):
            self.unit.add_sql(chunk)
            return
        child = self.unit.fork()
        if first == "insert":
            child.add_sql(chunk)
            if not child.errors:
                self.run(self._compile_sql(child, [chunk]), None)
            self.unit.errors.extend(child.errors)
            return
        lets, piece = child.query_piece(chunk, expose_keys=True,
                                        what="this statement is not supported in the REPL")
        self.query(child, piece.pipeline(), lets, piece.updating, chunk=chunk)

    def flow(self, chunk: SqlChunk) -> None:
        script = parse_source(_blank(chunk.full[:chunk.offset]) + chunk.text + ";",
                              chunk.filename)
        for stmt in script.statements:
            if isinstance(stmt, A.SetStmt):
                self.settings[stmt.setting.key] = stmt
            elif isinstance(stmt, A.PipelineStmt):
                child = self.unit.fork()
                last = stmt.pipeline.steps[-1] if stmt.pipeline.steps else None
                if isinstance(last, A.SINK_STEPS):
                    child.add_flow(stmt)
                    if not child.errors:
                        self.run(child.compile(settings=self._settings()), None)
                    self.unit.errors.extend(child.errors)
                else:
                    self.query(child, stmt.pipeline)
            else:
                self.unit.add_flow(stmt)

    def _compile_flow(self, chunk: SqlChunk, start: int, query: bool) -> Any:
        text = _blank(chunk.full[:chunk.offset + start]) + \
            chunk.full[chunk.offset + start:chunk.offset + len(chunk.text)]
        script = parse_source(text.rstrip().rstrip(";") + ";", chunk.filename)
        stmt = script.statements[0]
        if not isinstance(stmt, A.PipelineStmt):
            raise UnsupportedError("explain takes a stream, a pipeline or a query",
                                   stmt.span)
        child = self.unit.fork()
        pipeline = stmt.pipeline
        if not (pipeline.steps and isinstance(pipeline.steps[-1], A.SINK_STEPS)):
            pipeline = A.Pipeline(pipeline.head, pipeline.steps + (
                A.PrintSink(None, stmt.span),), pipeline.span, pipeline.head_is_union)
        return child.compile(extra=[A.PipelineStmt(pipeline, stmt.span)],
                             settings=self._settings())

    def _settings(self) -> list[A.Statement]:
        return list(self.settings.values())

    # ------------------------------------------------------------------ running

    def query(self, child: Unit, pipeline: A.Pipeline, lets: list[A.LetStmt] | None = None,
              updating: Updating | None = None, chunk: SqlChunk | None = None) -> None:
        """Compile and run a query; ``chunk`` is a SQL query's text (its compile errors are
        worded for SQL, exactly as in a file)."""
        try:
            script, names, kinds = collect_query(child, pipeline, lets,
                                                 settings=self._settings())
        except FlowcError as e:
            raise (sql_terms(e, chunk) if chunk is not None else e) from None
        self.run(script, names, kinds, updating)

    def run(self, script: Any, columns: Iterable[str] | None,
            kinds: list[str] | None = None, updating: Updating | None = None) -> None:
        from flowc.executor import run_job_graph
        from flowc.executor.streaming import unbounded_sources

        start = time.perf_counter()
        with plan_help(script.env):  # planner errors get script-level help, as in `flowc run`
            job_graph = script.env.get_job_graph()
        if unbounded_sources(job_graph):  # results until Ctrl-C (repl_stream.py)
            from flowc.repl_stream import run_continuous

            run_continuous(self, job_graph, columns, kinds, updating)
            return
        printed = io.StringIO()
        with cancel_on_interrupt() as interrupted:
            try:
                self._wait_for_spark(interrupted)
                # run_on_spark prints the print sinks' lines itself; they are shown below
                # (once, and paged), from its output
                with contextlib.redirect_stdout(printed), contextlib.redirect_stderr(printed):
                    result = run_job_graph(job_graph, master=self.master, job_name="flowc repl")
            except Exception:
                if interrupted.is_set():  # the cancelled job's error is not news
                    raise KeyboardInterrupt from None
                self._lines(printed.getvalue().splitlines())  # what ran before the error
                raise
            if interrupted.is_set():
                raise KeyboardInterrupt
        self.last_time = time.perf_counter() - start
        self._lines(printed.getvalue().splitlines())
        if columns is None:
            self.console.print(f"done in {self.last_time:.2f} s", markup=False)
            return
        names, cells, note = self.shape(list(columns), result.collected.get("result", []),
                                        kinds, updating)
        rows = cells
        paged = self._paged_table(tuple(names), cells)
        if not paged:
            self._table(tuple(names), cells[: self.max_rows])
        more = f" (showing {self.max_rows}; set max_rows = N for more)" \
            if len(rows) > self.max_rows and not paged else ""
        self.console.print(f"{len(rows)} row{'s' if len(rows) != 1 else ''}{note}{more} in "
                           f"{self.last_time:.2f} s", markup=False)

    def shape(self, names: list[str], records: list[Any], kinds: list[str] | None,
              updating: Updating | None) -> tuple[list[str], list[tuple[Any, ...]], str]:
        """A result's column names, display cells and note, in the result mode: an
        updating result as its changelog (an op column) or, in mode 'table', the changelog
        applied."""
        rows = [r if isinstance(r, tuple) else tuple(r) for r in records]
        kinds = list(kinds or []) + [""] * len(names)
        note = ""
        if updating is not None or any(isinstance(r, RowKind) for r in rows):
            shown = [i for i, n in enumerate(names)
                     if updating is None or n not in updating.hidden]
            if self.result_mode == "table":  # Flink's materialized view of the changelog
                rows = [tuple(r[i] for i in shown) for r in materialize(rows)]
                names = [names[i] for i in shown]
                kinds = [kinds[i] for i in shown]
                note = " (the changelog applied: result-mode table)"
            else:
                names = ["op"] + [names[i] for i in shown]
                kinds = [""] + [kinds[i] for i in shown]
                rows = [(kind_of(r),) + tuple(r[i] for i in shown) for r in rows]
                note = " of changelog (+I insert, -U/+U before/after an update, -D delete)"
        return names, [tuple(_show(v, k) for v, k in zip(r, kinds)) for r in rows], note

    def _wait_for_spark(self, interrupted: threading.Event) -> None:
        """The first query waits for the background start (Ctrl-C stops waiting)."""
        thread = self.spark_start
        if thread is None or not thread.is_alive():
            return
        self.console.print("waiting for Spark to start ...", markup=False)
        while thread.is_alive():
            thread.join(0.2)
            if interrupted.is_set():
                raise KeyboardInterrupt

    def _lines(self, lines: list[str]) -> None:
        """Print sinks' lines: all of them through the pager, else the first max_rows."""
        if len(lines) > self.max_rows and self.pager is not None:
            self.pager("\n".join(lines) + "\n")
            return
        for line in lines[: self.max_rows]:
            self.console.print(line, markup=False, highlight=False)
        if len(lines) > self.max_rows:
            self.console.print(f"... {len(lines) - self.max_rows} more printed lines (set "
                               "max_rows = N for more)", markup=False)

    def _paged_table(self, columns: tuple[str, ...], rows: list[tuple[Any, ...]]) -> bool:
        """A result with more than max_rows rows, or wider than the screen, goes whole
        through the pager at its natural width (when there is one)."""
        if self.pager is None:
            return False
        table = make_table(columns, rows)
        wide = Console(width=NATURAL_WIDTH).measure(table).maximum > self.console.width
        if len(rows) <= self.max_rows and not wide:
            return False
        text = io.StringIO()
        Console(file=text, width=NATURAL_WIDTH, force_terminal=False,
                highlight=False).print(table, crop=False)
        self.pager(text.getvalue())
        return True

    def _table(self, columns: tuple[str, ...], rows: list[tuple[Any, ...]]) -> None:
        self.console.print(make_table(columns, rows))

    # ------------------------------------------------------------------ completion data

    def words(self) -> list[str]:
        from flowc.lexer import FLOW_KEYWORDS, SQL_KEYWORDS
        from flowc.parser.functions import AGGREGATES, PUBLIC_FUNCTIONS

        names = set(self.unit.names())
        fields = {f for i in self.unit.scratch.streams.values() for f in i.schema.names}
        fields |= {f for t in self.unit.tables.values() for f in t.schema.names}
        sql_upper = [k.upper() for k in SQL_KEYWORDS] + ["SELECT", "FROM", "WHERE", "GROUP BY",
                                                         "UNION ALL", "INTERVAL", "JOIN"]
        return sorted({n for n in names if not n.startswith("_")} | fields |
                      set(FLOW_KEYWORDS) | set(sql_upper) | set(PUBLIC_FUNCTIONS) | set(AGGREGATES)
                      | {"window_start", "window_end"})


def _setting_text(value: Any) -> str:
    if isinstance(value, A.DurationLit):
        return f"{value.millis}ms"
    return str(value)


def _blank(text: str) -> str:
    """Spaces for everything but newlines: text parsed after it keeps its line/column."""
    return re.sub(r"[^\n]", " ", text)


def _show(v: Any, kind: str) -> Any:
    if v is None:
        return "null"
    shown = client_text(v, kind) if isinstance(v, int) else None
    return v if shown is None else shown


def run_init(session: Session, path: str) -> None:
    """Run an init file: diagnostics name the file, and its relative data paths are
    relative to the file (as for ``flowc run``), not to the working directory. A file that
    cannot be read (or is not UTF-8 text) is reported as any other error; the session goes
    on without it."""
    try:
        text = read_script(path)
    except FlowcError as e:
        session.report(e)
        return
    unit = session.unit
    base, unit.path_base = unit.scratch.base_dir, os.path.dirname(os.path.abspath(path))
    unit.scratch.base_dir = unit.path_base  # `import udf` finds modules next to the file
    try:
        session.execute(text, filename=path)
    finally:
        unit.path_base, unit.scratch.base_dir = None, base


def main(init: str | None = None, master: str | None = None,
         history: str | None = None) -> int:
    import sys

    from flowc.executor.spark.session import spark_running, stop_spark

    pager = terminal_pager() if sys.stdout.isatty() else None
    session = Session(master=master, pager=pager, spark_start=start_spark(master))
    session.console.print("Starting Spark in the background (the first query waits for it); "
                          "type help for help.", markup=False)
    if init is not None:
        run_init(session, init)
    try:
        return prompt_loop(session, history=history)
    finally:
        # A session still starting is left to exit with the process (its JVM ends when
        # this process does); a running one is stopped cleanly.
        if session.spark_start is not None and not session.spark_start.is_alive() \
                and spark_running():
            stop_spark()
