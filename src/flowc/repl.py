"""``flowc repl``: .flow statements and SQL against one warm Spark session.

The session keeps *definitions* only (sources, lets, SQL tables and views, UDF imports,
settings), in a :class:`flowc.sql.Unit` that doubles as the catalog. Each query is compiled
from scratch: the definitions it reads plus the query, into a fresh environment ending in a
CollectSink; nothing a query creates outlives it, so no state leaks between queries.
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Iterable
from typing import Any, TextIO

from rich.console import Console
from rich.table import Table

from flowc.errors import FlowcError, MultipleErrors, UnsupportedError
from flowc.parser import ast as A
from flowc.parser import parse_source
from flowc.sql import Unit, explain_env
from flowc.sql.source import SqlChunk, split_sql
from flowc.sql.unit import _SET, Entry, set_statement

SQL_STARTS = ("select", "with", "create", "insert", "values", "drop", "(")
META = ("help", "quit", "exit", "show", "describe", "desc", "reset", r"\q")
HELP = """\
Statements end with ';'. Mix .flow and SQL freely; they share one catalog.
  source NAME (...) from ...;        CREATE TABLE t (...) WITH (...);   define inputs
  let NAME = pipeline;               CREATE VIEW v AS SELECT ...;       name a stream
  clicks | filter ... | map ...;     SELECT ... FROM t ...;             show the first rows
  explain <stream, pipeline or query>   the JobGraph (chains and why edges are not chained)
  show streams | show tables         describe <stream>
  set key = value | reset [key]      e.g. set parallelism = 2; set max_rows = 50
  help                               quit (or Ctrl-D)"""


class Session:
    def __init__(self, *, master: str | None = None, out: TextIO | None = None,
                 max_rows: int = 20, width: int | None = None) -> None:
        self.master = master
        self.console = Console(file=out, width=width, highlight=False,
                               force_terminal=False if out is not None else None)
        self.max_rows = max_rows
        self.unit = Unit("<repl>", "", os.getcwd())
        self.settings: dict[str, A.SetStmt] = {}
        self.inputs = 0
        self.last_time: float | None = None

    # ------------------------------------------------------------------ dispatch

    def execute(self, text: str) -> bool:
        """Run one input (one or more statements); False when the user asked to quit."""
        self.inputs += 1
        name = f"<repl:{self.inputs}>"
        try:
            chunks = split_sql(text, name)
        except FlowcError as e:
            self.report(e)
            return True
        for chunk in chunks:
            try:
                if not self.one(chunk):
                    return False
            except FlowcError as e:
                self.report(e)
            self.flush_errors()
        return True

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
            self.show(words[1].lower() if len(words) > 1 else "streams")
        elif first in ("describe", "desc") and len(words) == 2:
            self.describe(words[1])
        elif first == "reset":
            self.reset(words[1] if len(words) > 1 else None)
        elif first == "set":
            self.set(chunk)
        elif first == "explain":
            self.explain(chunk)
        elif first in SQL_STARTS or body.startswith("("):
            self.sql(chunk)
        else:
            self.flow(chunk)
        return True

    def report(self, e: FlowcError) -> None:
        self.console.print(e.format(), markup=False, highlight=False)

    def flush_errors(self) -> None:
        if self.unit.errors:
            errors, self.unit.errors = self.unit.errors, []
            self.report(errors[0] if len(errors) == 1 else MultipleErrors(errors))

    # ------------------------------------------------------------------ commands

    def show(self, what: str) -> None:
        if what == "tables":
            rows = [(t.name, t.connector, str(t.schema)) for t in self.unit.tables.values()]
            self._table(("table", "connector", "schema"), rows)
            return
        rows = [(n, str(i.schema)) for n, i in self.unit.scratch.streams.items()
                if not n.startswith("_")]
        self._table(("stream", "schema"), rows)

    def describe(self, name: str) -> None:
        info = self.unit.scratch.streams.get(name)
        table = self.unit.tables.get(name)
        schema = info.schema if info is not None else table.schema if table else None
        if schema is None:
            from flowc.errors import FlowNameError, did_you_mean
            raise FlowNameError(f"unknown stream '{name}'",
                                hint=did_you_mean(name, self.unit.names()))
        rowtime = self.unit.rowtime_of(name)
        self._table(("field", "type"), [(f.name, str(f.type) + (" (event time)" if
                                         f.name == rowtime else "")) for f in schema.fields])

    def set(self, chunk: SqlChunk) -> None:
        m = _SET.match(chunk.text.strip().rstrip(";"))
        if m is None:
            raise UnsupportedError("write: set key = value", chunk.span(0, 0))
        stmt = set_statement(chunk, m)
        key = stmt.setting.key
        if key == "max_rows":
            self.max_rows = int(str(stmt.setting.value))
            return
        from flowc.api.environment import StreamExecutionEnvironment
        from flowc.parser.settings import apply_set

        apply_set(StreamExecutionEnvironment.get_execution_environment(), stmt.setting)
        self.settings[key] = stmt

    def reset(self, key: str | None) -> None:
        if key is None:
            self.settings.clear()
            self.max_rows = 20
        else:
            self.settings.pop(key, None)

    def explain(self, chunk: SqlChunk) -> None:
        from flowc.explain import render

        m = re.match(r"\s*explain\s+", chunk.text, re.I)
        assert m is not None
        rest = chunk.text[m.end():].strip().rstrip(";")
        if rest.split(maxsplit=1)[0].lower() in SQL_STARTS + ("plan",):
            child = self.unit.fork()
            sub = SqlChunk("EXPLAIN " + chunk.text[m.end():], chunk.offset + m.end() - 8,
                           chunk.filename, chunk.full)
            child.add_sql(sub)
            if child.errors:
                self.unit.errors.extend(child.errors)
                return
            env = explain_env(child, child.explains[-1])
        else:
            script = self._compile_flow(chunk, m.end(), query=False)
            if script is None:
                return
            env = script.env
        self.console.print(render(env.get_job_graph(), "text"), markup=False, end="")

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
                self.run(child.compile(settings=self._settings()), None)
            self.unit.errors.extend(child.errors)
            return
        lets, pipeline = child.query(chunk)
        child.entries = [e for e in child.entries if not e.action] + \
            [Entry(let, False) for let in lets]
        self.query(child, pipeline)

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

    def query(self, child: Unit, pipeline: A.Pipeline) -> None:
        from flowc.operators import CollectSink

        result = A.LetStmt("_result", pipeline, pipeline.span, pipeline.span)
        script = child.compile(extra=[result], settings=self._settings())
        info = script.streams["_result"]
        info.stream.sink_to(CollectSink("result"))
        self.run(script, info.schema.names, [t.kind for t in info.schema.types])

    def run(self, script: Any, columns: Iterable[str] | None,
            kinds: list[str] | None = None) -> None:
        from flowc.executor import run_job_graph

        start = time.perf_counter()
        result = run_job_graph(script.env.get_job_graph(), master=self.master,
                               job_name="flowc repl")
        self.last_time = time.perf_counter() - start
        for line in result.printed[: self.max_rows]:
            self.console.print(line, markup=False)
        if columns is not None:
            rows = result.collected.get("result", [])
            kinds = kinds or []
            self._table(tuple(columns), [tuple(_show(v, k) for v, k in zip(r, kinds + [""] * len(r)))
                                         for r in rows[: self.max_rows]])
            more = f" (showing {self.max_rows})" if len(rows) > self.max_rows else ""
            self.console.print(f"{len(rows)} row{'s' if len(rows) != 1 else ''}{more} in "
                               f"{self.last_time:.2f} s", markup=False)
        else:
            self.console.print(f"done in {self.last_time:.2f} s", markup=False)

    def _table(self, columns: tuple[str, ...], rows: list[tuple[Any, ...]]) -> None:
        table = Table(*columns, show_lines=False)
        for row in rows:
            table.add_row(*(str(v) for v in row))
        self.console.print(table)

    # ------------------------------------------------------------------ completion data

    def words(self) -> list[str]:
        from flowc.lexer import FLOW_KEYWORDS, SQL_KEYWORDS
        from flowc.parser.functions import AGGREGATES, FUNCTIONS

        names = set(self.unit.names())
        fields = {f for i in self.unit.scratch.streams.values() for f in i.schema.names}
        fields |= {f for t in self.unit.tables.values() for f in t.schema.names}
        sql_upper = [k.upper() for k in SQL_KEYWORDS] + ["SELECT", "FROM", "WHERE", "GROUP BY",
                                                         "UNION ALL", "INTERVAL", "JOIN"]
        return sorted({n for n in names if not n.startswith("_")} | fields |
                      set(FLOW_KEYWORDS) | set(sql_upper) | set(FUNCTIONS) | set(AGGREGATES)
                      | {"window_start", "window_end"})


def _blank(text: str) -> str:
    """Spaces for everything but newlines: text parsed after it keeps its line/column."""
    return re.sub(r"[^\n]", " ", text)


def _show(v: Any, kind: str) -> Any:
    if v is None:
        return "null"
    if kind == "timestamp" and isinstance(v, int):
        import datetime as dt

        t = dt.datetime.fromtimestamp(v / 1000, dt.timezone.utc)
        return t.strftime("%Y-%m-%d %H:%M:%S.%f")[:-3]
    return v


def complete_input(text: str) -> bool:
    """Whether Enter submits ``text``: it ends with ';', or is a one-line command."""
    body = text.strip()
    if not body or body.endswith(";"):
        return True
    first = body.split(maxsplit=1)[0].lower()
    return "\n" not in body and first in META


def prompt_loop(session: Session, *, history: str | None = None, input: Any = None,
                output: Any = None) -> int:
    """Read-eval-print until quit or Ctrl-D. ``input``/``output`` are prompt_toolkit's
    (tests pass a pipe input and a DummyOutput)."""
    from prompt_toolkit import PromptSession
    from prompt_toolkit.completion import Completer, Completion
    from prompt_toolkit.history import FileHistory, InMemoryHistory
    from prompt_toolkit.key_binding import KeyBindings
    from prompt_toolkit.lexers import PygmentsLexer

    from flowc.lexer import FlowLexer

    class Words(Completer):
        def get_completions(self, document: Any, complete_event: Any) -> Any:
            word = document.get_word_before_cursor(WORD=False)
            if not word:
                return
            low = word.lower()
            for w in session.words():
                if w.lower().startswith(low) and w != word:
                    yield Completion(w, start_position=-len(word))

    kb = KeyBindings()

    @kb.add("enter")
    def _(event: Any) -> None:
        buf = event.current_buffer
        if complete_input(buf.text):
            buf.validate_and_handle()
        else:
            buf.insert_text("\n")

    path = history if history is not None else os.path.expanduser("~/.flowc_history")
    hist: Any
    try:
        hist = FileHistory(path) if path else InMemoryHistory()
    except OSError:
        hist = InMemoryHistory()
    prompt: Any = PromptSession(history=hist, completer=Words(), lexer=PygmentsLexer(FlowLexer),
                                multiline=True, key_bindings=kb, input=input, output=output,
                                complete_while_typing=False)
    while True:
        try:
            text = prompt.prompt("flowc> ", prompt_continuation="  ...> ")
        except KeyboardInterrupt:
            continue
        except EOFError:
            return 0
        try:
            if not session.execute(text):
                return 0
        except KeyboardInterrupt:
            session.console.print("interrupted", markup=False)
        except Exception as e:  # noqa: BLE001 - the session survives our bugs too
            session.console.print(f"internal error: {type(e).__name__}: {e}", markup=False)


def main(init: str | None = None, master: str | None = None,
         history: str | None = None) -> int:
    session = Session(master=master)
    if init is not None:
        with open(init, encoding="utf-8") as fh:
            text = fh.read()
        session.execute(text)
    return prompt_loop(session, history=history)
