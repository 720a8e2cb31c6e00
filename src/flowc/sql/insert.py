"""Checks of an ``INSERT`` statement that need more than the query: the keyword form, the
OVERWRITE rules of Flink's connectors, and a job that would replace a file it reads."""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable

from sqlglot import exp

from flowc.errors import FlowSyntaxError, PlanError, UnsupportedError
from flowc.parser import ast as A
from flowc.sql.ddl import TableDef
from flowc.sql.exprs import SpanMap
from flowc.transformations import RuntimeExecutionMode

_FORM = re.compile(r"\s*INSERT\s+(?:(INTO)|(OVERWRITE))?\b\s*(\S*)", re.I)


def check_form(tree: exp.Insert, spans: SpanMap, tdef: TableDef,
               mode: RuntimeExecutionMode) -> None:
    """``INSERT INTO t`` or ``INSERT OVERWRITE t`` (Flink's grammar; sqlglot also takes a
    bare ``INSERT t``); OVERWRITE only where Flink's connector allows it."""
    chunk = spans.chunk
    m = _FORM.match(chunk.text)
    if m is None:
        return
    if not m.group(1) and not m.group(2):
        at = m.start(3)
        word = m.group(3) or "end of statement"
        raise FlowSyntaxError(f"syntax error: expected INTO or OVERWRITE after INSERT, not "
                              f"'{word}'", chunk.span(at, at + max(len(m.group(3)), 1) - 1),
                              hint=f"write INSERT INTO {tdef.name} SELECT ...")
    if not tree.args.get("overwrite"):
        return
    span = chunk.span(m.start(2), m.end(2) - 1)
    table = f"default_catalog.default_database.{tdef.name}"
    if tdef.connector != "filesystem":
        raise UnsupportedError(f"INSERT OVERWRITE requires that the underlying "
                               f"DynamicTableSink of table '{table}' implements the "
                               "SupportsOverwrite interface.", span,
                               hint=f"the '{tdef.connector}' connector has nothing to "
                                    "overwrite: write INSERT INTO")
    if mode is not RuntimeExecutionMode.BATCH:
        raise UnsupportedError("Streaming mode not support overwrite.", span,
                               hint="INSERT OVERWRITE needs SET 'execution.runtime-mode' = "
                                    "'batch' (in streaming mode, write INSERT INTO)")


def _overlap(a: str, b: str) -> bool:
    a, b = os.path.normpath(a), os.path.normpath(b)
    return a == b or a.startswith(b + os.sep) or b.startswith(a + os.sep)


def check_own_input(tdef: TableDef, sink_path: str, statements: Iterable[A.Statement],
                    resolve: Callable[[str], str], span: object) -> None:
    """Reject a job that writes a file (or directory) it also reads: a file sink replaces
    its target when the job commits, so the input would be gone (Flink would append to it
    while reading it)."""
    target = os.path.abspath(resolve(sink_path))
    for stmt in statements:
        if isinstance(stmt, A.SourceStmt) and isinstance(stmt.body, A.FileBody):
            path = os.path.abspath(resolve(stmt.body.path))
            if _overlap(path, target):
                raise PlanError(f"writing to '{tdef.name}' would replace the query's own "
                                f"input: it reads '{stmt.body.path}' ({stmt.name}) and "
                                f"'{tdef.name}' writes to '{sink_path}'",
                                span,  # type: ignore[arg-type]
                                hint=f"give '{tdef.name}' another 'path'")
