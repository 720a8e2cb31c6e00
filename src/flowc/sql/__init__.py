"""The SQL front end: Flink SQL (parsed with sqlglot) translated to the .flow AST.

SQL is not lowered on its own: each statement becomes .flow statements (``CREATE TABLE`` a
``source``, a query a pipeline, ``CREATE VIEW`` a ``let``, ``INSERT INTO`` a pipeline ending
in the table's sink), which go through the .flow type checker and lowering. So a query and
the equivalent .flow script build the same transformations and JobGraph by construction.

Entry points:

- :func:`compile_sql` ``(text, filename="<input>", *, base_dir=None, env=None, options=None)``
- :func:`compile_sql_file` ``(path, *, env=None, options=None)``

Both return a :class:`SqlScript` (a :class:`~flowc.parser.CompiledScript` plus the
``EXPLAIN`` statements of the file) and raise only :class:`flowc.errors.FlowcError`.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field

from flowc.api.environment import StreamExecutionEnvironment
from flowc.errors import FlowcError, InternalError, PlanError, Span
from flowc.parser import COMMAND_LINE, CompiledScript, _raise, parse_source, read_script
from flowc.parser import ast as A
from flowc.sql.source import split_sql
from flowc.sql.unit import Entry, Explain, Unit

__all__ = ["SqlScript", "Unit", "collect_query", "compile_sql", "compile_sql_file",
           "explain_env"]


@dataclass
class SqlScript(CompiledScript):
    explains: list[tuple[Explain, StreamExecutionEnvironment]] = field(default_factory=list)


def _options(options: Mapping[str, str] | None) -> list[A.Statement]:
    if not options:
        return []
    text = "".join(f"set {k} = {v};\n" for k, v in options.items())
    return list(parse_source(text, COMMAND_LINE).statements)


def compile_sql(text: str, filename: str = "<input>", *, base_dir: str | None = None,
                env: StreamExecutionEnvironment | None = None,
                options: Mapping[str, str] | None = None) -> SqlScript:
    try:
        unit = Unit(filename, text, base_dir)
        settings = _options(options)
        for stmt in settings:
            unit.add_flow(stmt)
        for chunk in split_sql(text, filename):
            unit.add_sql(chunk)
        if unit.errors:
            _raise(unit.errors)
        has_actions = any(e.action for e in unit.entries)
        script = unit.compile(env) if has_actions or not unit.explains else None
        explains = [(x, explain_env(unit, x)) for x in unit.explains]
        if script is None:
            base = explains[0][1]
            return SqlScript(base, {}, [], filename, text, None, {}, explains)
        return SqlScript(script.env, script.streams, script.sinks, filename, text,
                         script.script, script.udfs, explains)
    except FlowcError:
        raise
    except RecursionError as e:
        raise InternalError("internal error: the query is too deeply nested") from e
    except Exception as e:  # noqa: BLE001 - only flowc errors may escape
        raise InternalError(f"internal error while compiling SQL: {type(e).__name__}: "
                            f"{e}") from e


def explain_env(unit: Unit, x: Explain,
                settings: list[A.Statement] | None = None) -> StreamExecutionEnvironment:
    """The environment of an EXPLAINed query, printed as the SQL client would show rows;
    ``settings`` (the REPL's session settings) come first."""
    stmt = A.PipelineStmt(A.Pipeline(x.pipeline.head, x.pipeline.steps +
                                     (A.PrintSink(None, x.span),), x.span,
                                     x.pipeline.head_is_union), x.span)
    child = unit.fork()
    child.entries = [e for e in unit.entries if not e.action] + [Entry(let, False)
                                                                 for let in x.lets]
    return child.compile(extra=[stmt], settings=settings).env


def collect_query(unit: Unit, pipeline: A.Pipeline, lets: list[A.LetStmt] | None = None, *,
                  settings: list[A.Statement] | None = None,
                  sink_name: str = "result") -> tuple[CompiledScript, list[str], list[str]]:
    """Compile ``pipeline`` (a query without a sink) over ``unit``'s definitions into a job
    ending in a CollectSink named ``sink_name``; returns the script and the result's column
    names and type kinds. ``unit`` is not changed (the query is compiled in a fork)."""
    from flowc.operators import CollectSink

    child = unit.fork()
    child.entries = [e for e in child.entries if not e.action] + \
        [Entry(let, False) for let in lets or []]
    result = A.LetStmt("_result", pipeline, pipeline.span, pipeline.span)
    script = child.compile(extra=[result], settings=settings)
    info = script.streams["_result"]
    info.stream.sink_to(CollectSink(sink_name))
    return script, list(info.schema.names), [t.text_kind for t in info.schema.types]


def compile_sql_file(path: str, *, env: StreamExecutionEnvironment | None = None,
                     options: Mapping[str, str] | None = None) -> SqlScript:
    """Compile a .sql file (UTF-8 text, read as a .flow file is); paths in it are relative
    to the file's directory."""
    text = read_script(path)
    script = compile_sql(text, path, base_dir=os.path.dirname(path) or None, env=env,
                         options=options)
    if not script.sinks and not script.explains:
        _nothing_to_run(path, text)
    return script


def _nothing_to_run(path: str, text: str) -> None:
    """A file without a query, INSERT or EXPLAIN builds no job: Flink's planner error, at
    the last statement (or the start of an empty file), as for an empty .flow script."""
    chunks = split_sql(text, path)
    if chunks:
        last = chunks[-1]
        span = last.span(0, len(last.text.rstrip()) - 1)
        hint = ("this file only defines tables, views and settings: add a query (SELECT ...) "
                "or an INSERT INTO <table> SELECT ...")
    else:
        span = Span(path, 1, 1, 1, 2, text)
        hint = ("the file is empty (or only comments): write CREATE TABLE statements and a "
                "query (SELECT ...) or an INSERT INTO <table> SELECT ...")
    raise PlanError("No operators defined in streaming topology. Cannot execute.", span,
                    java_class="IllegalStateException", hint=hint)
