"""SQL words in diagnostics of SQL statements.

SQL is checked by the .flow type checker, whose messages speak of fields and steps
("unknown field 'x' in 'filter'"). For a SQL statement they are reworded in SQL's terms:
columns, and the clause the position is in ("unknown column 'x' in WHERE").
"""

from __future__ import annotations

import re

from sqlglot.tokens import TokenType

from flowc.errors import FlowcError, MultipleErrors
from flowc.sql.source import SqlChunk, tokenize

_CLAUSES = {TokenType.SELECT: "SELECT", TokenType.WHERE: "WHERE", TokenType.HAVING: "HAVING",
            TokenType.GROUP_BY: "GROUP BY", TokenType.ON: "ON", TokenType.FROM: "FROM"}
_STEP = re.compile(r"'(map|filter|aggregate|key by|flat_map)'")
_WORDS = [
    (re.compile(r"\bunknown field\b"), "unknown column"),
    (re.compile(r"\bhas no field\b"), "has no column"),
    (re.compile(r"\bthe fields here are\b"), "the columns here are"),
    (re.compile(r"\bunknown qualifier\b"), "unknown table"),
    (re.compile(r"\bthe condition of '(?:filter)' must\b"), "the {clause} condition must"),
    (re.compile(r"\bin the output of 'map'"), "in the SELECT list"),
    (re.compile(r"^_sql_(?:div|mod)\(\): "), ""),  # SQL's '/' and '%' are library calls
    # LATERAL TABLE(f(x)) is a flat_map (flowc.sql.lateral)
    (re.compile(r"^flat_map needs an array \(one output row per element\), but this is"),
     "LATERAL TABLE needs a function that returns an array (one row per element), but this "
     "returns"),
]
_ARITH_HINT = re.compile(r"^int [/%] int ")


def clause_at(chunk: SqlChunk, offset: int) -> str | None:
    """The SQL clause (SELECT, WHERE, ...) that chunk offset ``offset`` is in."""
    try:
        tokens = tokenize(chunk.text, chunk)
    except FlowcError:
        return None
    found = None
    for tok in tokens:
        if tok.start > offset:
            break
        if tok.token_type in _CLAUSES:
            found = _CLAUSES[tok.token_type]
    return found


def _offset(chunk: SqlChunk, line: int, col: int) -> int:
    pos = 0
    for _ in range(line - 1):
        nl = chunk.full.find("\n", pos)
        if nl < 0:
            break
        pos = nl + 1
    return pos + col - 1 - chunk.offset


def sql_terms(e: FlowcError, chunk: SqlChunk) -> FlowcError:
    """``e`` reworded for SQL (in place; returned for convenience)."""
    if isinstance(e, MultipleErrors):
        for inner in e.errors:
            sql_terms(inner, chunk)
        return e
    span = e.span
    if span is None or span.file != chunk.filename:
        return e
    offset = _offset(chunk, span.line, span.column)
    if not 0 <= offset < len(chunk.text):
        return e
    clause = clause_at(chunk, offset)
    message = e.message
    for pattern, text in _WORDS:
        message = pattern.sub(text.replace("{clause}", clause or "WHERE"), message)

    def step(m: re.Match[str]) -> str:
        which = m.group(1)
        if which == "key by":
            return "GROUP BY"
        if which == "map":
            return "SELECT"
        return clause or ("WHERE" if which == "filter" else "SELECT")

    message = _STEP.sub(step, message)
    if message != e.message:
        e.message = message
        e.args = (message,)
    if e.hint:
        e.hint = _WORDS[2][0].sub(_WORDS[2][1], e.hint)
        if e.hint.startswith("for example: flat_map") and "LATERAL TABLE" in e.message:
            e.hint = "a table function is a CREATE FUNCTION whose Python function returns " \
                "list[...]"
        if _ARITH_HINT.match(e.hint):
            e.hint = "convert it with CAST(... AS DOUBLE) or CAST(... AS BIGINT)"
    e.notes = tuple(n for n in e.notes if "reshapes the stream" not in n)
    return e
