"""The .flow front end: text -> AST -> transformations on a StreamExecutionEnvironment.

Public entry points:

- :func:`compile_source` ``(text, filename="<input>", *, base_dir=None, env=None)``
- :func:`compile_file` ``(path, *, env=None)`` (relative paths in the script resolve against
  the script's directory)
- :func:`parse_source` ``(text, filename="<input>") -> Script`` (syntax only)

Only :class:`flowc.errors.FlowcError` subclasses escape them: one error as itself, several
as :class:`flowc.errors.MultipleErrors` (in source order).
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from flowc.api.environment import StreamExecutionEnvironment
from flowc.errors import FlowcError, InternalError, MultipleErrors, PlanError, Span
from flowc.parser import ast
from flowc.parser.lower import CompiledScript, Lowerer, SinkInfo, StreamInfo
from flowc.parser.reading import read_script
from flowc.parser.syntax import defined_name, parse_chunk, split_statements

__all__ = ["CompiledScript", "SinkInfo", "StreamInfo", "compile_file", "compile_source",
           "parse_source", "read_script"]


def _raise(errors: list[FlowcError]) -> None:
    errors = sorted(errors, key=lambda e: (e.span.line, e.span.column) if e.span else (0, 0))
    if len(errors) == 1:
        raise errors[0]
    raise MultipleErrors(errors)


def _parse(text: str, filename: str) -> tuple[list[ast.Statement], list[FlowcError], set[str]]:
    statements: list[ast.Statement] = []
    errors: list[FlowcError] = []
    broken: set[str] = set()
    for chunk in split_statements(text):
        try:
            statements.append(parse_chunk(chunk, filename, text))
        except FlowcError as e:
            errors.append(e)
            name = defined_name(chunk)
            if name is not None:
                broken.add(name)
    return statements, errors, broken


def parse_source(text: str, filename: str = "<input>") -> ast.Script:
    """Parse without lowering; raises FlowSyntaxError (or MultipleErrors)."""
    try:
        statements, errors, _ = _parse(text, filename)
    except FlowcError:
        raise
    except Exception as e:  # noqa: BLE001 - only flowc errors may escape
        raise InternalError(f"internal error while parsing: {type(e).__name__}: {e}") from e
    if errors:
        _raise(errors)
    return ast.Script(tuple(statements), filename)


COMMAND_LINE = "<command line>"


def compile_source(text: str, filename: str = "<input>", *, base_dir: str | None = None,
                   env: StreamExecutionEnvironment | None = None,
                   options: Mapping[str, str] | None = None) -> CompiledScript:
    """Parse, type-check and lower a script into ``env`` (a new environment by default).

    ``options`` (``flowc run --set k=v``, ``--parallelism``) act as ``set k = v;`` statements
    that take precedence over the script's own."""
    try:
        statements, errors, broken = _parse(text, filename)
        if options:
            cli = "".join(f"set {k} = {v};\n" for k, v in options.items())
            cli_statements, cli_errors, _ = _parse(cli, COMMAND_LINE)
            statements = cli_statements + statements
            errors = cli_errors + errors
        lowerer = Lowerer(filename, text, base_dir, env)
        lowerer.broken |= broken
        lowerer.lower_all(statements)
        errors.extend(lowerer.errors)
    except FlowcError:
        raise
    except RecursionError as e:
        raise InternalError("internal error: the script is too deeply nested") from e
    except Exception as e:  # noqa: BLE001 - only flowc errors may escape
        raise InternalError(f"internal error while compiling: {type(e).__name__}: {e}") from e
    if errors:
        _raise(errors)
    return CompiledScript(lowerer.env, lowerer.streams, lowerer.sinks, filename, text,
                          ast.Script(tuple(statements), filename), lowerer.udfs)


def compile_file(path: str, *, env: StreamExecutionEnvironment | None = None,
                 options: Mapping[str, str] | None = None) -> CompiledScript:
    """Compile a .flow file; paths in it are relative to the file's directory."""
    text = read_script(path)
    script = compile_source(text, path, base_dir=os.path.dirname(path) or None, env=env,
                            options=options)
    if not script.sinks:
        _no_sink(script)
    return script


def _no_sink(script: CompiledScript) -> None:
    """A file without a sink has nothing to run: Flink's planner error, positioned at the
    last statement (or the start of an empty file)."""
    statements = [s for s in (script.script.statements if script.script is not None else ())
                  if s.span.file == script.filename]  # not --set options
    last = statements[-1].span if statements else Span(script.filename, 1, 1, 1, 2,
                                                       script.text)
    raise PlanError("No operators defined in streaming topology. Cannot execute.", last,
                    java_class="IllegalStateException",
                    hint="end a pipeline in a sink: ... | print, | write csv 'path' or "
                         "| blackhole" if statements else "the script is empty: declare a "
                         "source and a pipeline that ends in a sink, such as "
                         "'source n (x int) from sequence 1 to 3; n | print;'")
