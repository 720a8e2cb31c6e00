"""SQL text -> statements, positions, and the Flink syntax stock sqlglot cannot parse.

A SQL file is split at top-level ``;`` (sqlglot's own tokenizer finds them, so strings and
comments are handled as sqlglot handles them). Each statement is parsed on its own, so a
broken statement is reported and the next one is still checked, as in .flow files.

Flink syntax that sqlglot does not parse is rewritten *in place* before parsing, by
replacing characters with spaces: every remaining character keeps its offset, so sqlglot's
positions (and our spans) still point into the user's text. What was blanked out is
remembered in :class:`Rewrites`:

- ``TABLE(TUMBLE(TABLE t, ...))`` -> ``      TUMBLE(      t, ...) `` (a table function
  sqlglot parses), with ``PARTITION BY ...`` inside a ``SESSION`` call removed;
- ``WATERMARK FOR ts AS <expr>`` inside ``CREATE TABLE`` -> blanks, the column and the
  expression's text range kept for the DDL translator.
"""

from __future__ import annotations

import bisect
import contextlib
import functools
import logging
import re
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field, replace

import sqlglot
from sqlglot import exp
from sqlglot.dialects.dialect import Dialect
from sqlglot.errors import ParseError, TokenError
from sqlglot.parser import Parser
from sqlglot.tokens import Token, Tokenizer, TokenType

from flowc.errors import FlowSyntaxError, Span, UnsupportedError
from flowc.parser.exprs import MAX_DEPTH
from flowc.parser.syntax import BOM


class _NoCommandFallback(logging.Filter):
    """sqlglot logs a warning when it parses a statement as an opaque Command; flowc reports
    such statements itself, so the warning must not reach the user's terminal."""

    def filter(self, record: logging.LogRecord) -> bool:
        return "Falling back to parsing as a 'Command'" not in record.getMessage()


logging.getLogger("sqlglot").addFilter(_NoCommandFallback())


def _raw_call(name: str):  # type: ignore[no-untyped-def]
    return lambda args: exp.Anonymous(this=name, expressions=args)


class FlowcSQL(Dialect):
    """Flink-flavoured SQL: ``SESSION`` is a window function here, not a keyword; identifiers
    are quoted with backticks; TIMESTAMPDIFF/TIMESTAMPADD keep Flink's argument order."""

    class Tokenizer(Tokenizer):
        KEYWORDS = {k: v for k, v in Tokenizer.KEYWORDS.items() if k != "SESSION"}
        IDENTIFIERS = ["`", '"']  # '"' only to report it (Flink has no such quoting)

    class Parser(Parser):
        FUNCTIONS = {**Parser.FUNCTIONS, "TIMESTAMPDIFF": _raw_call("TIMESTAMPDIFF"),
                     "TIMESTAMPADD": _raw_call("TIMESTAMPADD")}


@dataclass(frozen=True)
class SqlChunk:
    """One statement: its text, its offset in the whole text, and the whole text."""

    text: str
    offset: int
    filename: str
    full: str
    statement_set: bool = False  # inside EXECUTE STATEMENT SET BEGIN ... END

    def span(self, start: int, end: int) -> Span:
        """Span of chunk offsets ``start`` .. ``end`` (inclusive, as sqlglot reports)."""
        return span_at(self.full, self.filename, self.offset + start, self.offset + end + 1)


def span_at(text: str, filename: str, start: int, end: int) -> Span:
    """Span of text offsets ``start`` .. ``end`` (exclusive); multi-line spans keep their end."""
    starts = _line_starts(text)
    line = bisect.bisect_right(starts, start)
    col = start - starts[line - 1] + 1
    end_line = bisect.bisect_right(starts, max(start, end))
    end_col = end - starts[bisect.bisect_right(starts, end) - 1] + 1
    if text.startswith(BOM):  # a UTF-8 byte order mark takes no column (as in .flow files)
        col -= line == 1 and start > 0
        end_col -= end_line == 1 and end > 0
    return Span(filename, line, col, end_line, end_col, text)


@functools.lru_cache(maxsize=4)
def _line_starts(text: str) -> list[int]:
    """Offsets where each line starts: a statement with 100,000 terms asks for 400,000
    spans, and counting newlines for each one made that quadratic."""
    return [0, *(m.end() for m in re.finditer("\n", text))]


def tokenize(text: str, chunk: SqlChunk | None = None, filename: str = "<input>") -> list[Token]:
    try:
        # a byte order mark is read as a space: every other character keeps its offset
        return FlowcSQL().tokenize(" " + text[1:] if text.startswith(BOM) else text)
    except TokenError:
        # sqlglot's message carries no position; find the usual culprit ourselves
        start = _unterminated(text)
        base = chunk.offset if chunk is not None else 0
        full = chunk.full if chunk is not None else text
        name = chunk.filename if chunk is not None else filename
        if start is not None:
            raise FlowSyntaxError("unterminated string", span_at(full, name, base + start,
                                                                 base + start + 1),
                                  hint="close it with ' (write '' for a quote inside)") \
                from None
        raise FlowSyntaxError("cannot read this text", span_at(full, name, base, base + 1)) \
            from None


def _unterminated(text: str) -> int | None:
    """Offset of a string literal that never closes (comments and '' escapes skipped)."""
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("--", i):
            nl = text.find("\n", i)
            i = n if nl < 0 else nl
        elif text.startswith("/*", i):
            end = text.find("*/", i + 2)
            i = n if end < 0 else end + 2
        elif c in "'\"`":
            j = i + 1
            while j < n:
                if text[j] == c and text.startswith(c * 2, j):
                    j += 2
                    continue
                if text[j] == c:
                    break
                j += 1
            if j >= n:
                return i
            i = j + 1
        else:
            i += 1
        continue
    return None


def _offset_of(text: str, line: int, col: int) -> int:
    """0-based offset of a 1-based line/column in ``text`` (clamped to the text)."""
    pos = 0
    for _ in range(line - 1):
        nl = text.find("\n", pos)
        if nl < 0:
            break
        pos = nl + 1
    return max(0, min(len(text) - 1, pos + col - 1))


def split_sql(text: str, filename: str) -> list[SqlChunk]:
    """Split at top-level semicolons; empty statements are dropped. A UTF-8 byte order mark
    at the start is not part of the first statement."""
    tokens = tokenize(text, None, filename)
    chunks: list[SqlChunk] = []
    start: int | None = None
    for tok in tokens:
        if tok.token_type == TokenType.SEMICOLON:
            if start is not None:
                chunks.append(SqlChunk(text[start:tok.start], start, filename, text))
            start = None
        elif start is None:
            start = tok.start
    if start is not None:
        chunks.append(SqlChunk(text[start:].rstrip(), start, filename, text))
    return statement_sets(chunks)


_SET_OPEN = re.compile(r"\s*EXECUTE\s+STATEMENT\s+SET\s+BEGIN\b\s*", re.I)
_SET_OPEN_CLIENT = re.compile(r"\s*BEGIN\s+STATEMENT\s+SET\s*", re.I)  # the SQL client's
_SET_CLOSE = re.compile(r"\s*END\s*", re.I)


def statement_sets(chunks: list[SqlChunk]) -> list[SqlChunk]:
    """``EXECUTE STATEMENT SET BEGIN <insert>; ...; END;`` (and the SQL client's ``BEGIN
    STATEMENT SET; ...; END;``): the inner statements, marked ``statement_set``."""
    out: list[SqlChunk] = []
    opened: SqlChunk | None = None
    for c in chunks:
        m = _SET_OPEN.match(c.text)
        if opened is None and (m or _SET_OPEN_CLIENT.fullmatch(c.text)):
            opened = c
            if m and c.text[m.end():].strip():
                out.append(SqlChunk(c.text[m.end():], c.offset + m.end(), c.filename, c.full,
                                    True))
            continue
        if opened is not None and _SET_CLOSE.fullmatch(c.text):
            opened = None
            continue
        out.append(replace(c, statement_set=True) if opened is not None else c)
    if opened is not None:
        end = opened.text.upper().find("SET") + 2
        raise FlowSyntaxError("this STATEMENT SET is not closed", opened.span(0, max(end, 0)),
                              hint="end it with END;")
    return out


@dataclass
class Watermark:
    """``WATERMARK FOR column AS expr``: chunk offsets of the column and of the expression."""

    column: str
    column_range: tuple[int, int]
    expr_range: tuple[int, int]


@dataclass
class Rewrites:
    text: str
    watermarks: list[Watermark] = field(default_factory=list)
    # chunk offset of a TVF name -> the PARTITION BY columns blanked out of its call
    partitions: dict[int, list[str]] = field(default_factory=dict)


_UNSUPPORTED_WORDS = {
    "MATCH_RECOGNIZE": ("MATCH_RECOGNIZE (pattern recognition) is not supported", None),
    "METADATA": ("metadata columns (METADATA [FROM ...]) are not supported",
                 "declare only physical columns; a connector's metadata is not available"),
    "SYSTEM_TIME": ("temporal joins (FOR SYSTEM_TIME AS OF) are not supported",
                    "join two streams with an interval or a window join"),
    "UNNEST": ("UNNEST is not supported", None),
    # LATERAL TABLE(f(x)) is a table function (flowc.sql.lateral); other LATERAL is not
    "LATERAL": ("LATERAL (other than LATERAL TABLE(...)) is not supported",
                "a table function is written LATERAL TABLE(f(x)) AS T(col)"),
}
# a ',' may not be followed by these (an empty list item: sqlglot drops it silently)
_NOT_AFTER_COMMA = (TokenType.COMMA, TokenType.FROM, TokenType.R_PAREN, TokenType.WHERE,
                    TokenType.GROUP_BY, TokenType.HAVING)


# sqlglot parses recursively, about 25 Python frames for each level of parentheses or CASE:
# a statement deeper than .flow's expression limit is refused before parsing, and parsing
# (and translating) runs with room for that many levels (see deep_stack).
MAX_NESTING = MAX_DEPTH
_FRAMES_PER_LEVEL = 40


def check_nesting(tokens: list[Token], chunk: SqlChunk) -> None:
    """Refuse parentheses and CASE nested deeper than MAX_NESTING, at the first level
    too many (sqlglot would run out of stack on it)."""
    depth = 0
    for tok in tokens:
        kind = tok.token_type
        if kind in (TokenType.L_PAREN, TokenType.CASE):
            depth += 1
            if depth > MAX_NESTING:
                raise FlowSyntaxError(
                    f"this statement is nested too deeply (the limit is {MAX_NESTING} levels "
                    "of parentheses, function calls, subqueries and CASE inside one another)",
                    chunk.span(tok.start, tok.end),
                    hint="compute inner parts in a view (CREATE VIEW ... AS SELECT ...) and "
                         "select from it")
        elif kind in (TokenType.R_PAREN, TokenType.END) and depth > 0:
            depth -= 1


@contextlib.contextmanager
def deep_stack() -> Iterator[None]:
    """Room on the Python stack for sqlglot and the translator at MAX_NESTING levels."""
    old = sys.getrecursionlimit()
    depth, frame = 0, sys._getframe()
    while frame is not None:
        depth, frame = depth + 1, frame.f_back
    sys.setrecursionlimit(max(old, depth + 1000 + MAX_NESTING * _FRAMES_PER_LEVEL))
    try:
        yield
    finally:
        sys.setrecursionlimit(old)


def check_tokens(tokens: list[Token], chunk: SqlChunk) -> None:
    """Flink SQL that sqlglot would reject with a confusing message, or accept silently."""
    check_nesting(tokens, chunk)
    for i, tok in enumerate(tokens):
        nxt = tokens[i + 1] if i + 1 < len(tokens) else None
        span = chunk.span(tok.start, tok.end)
        if tok.token_type == TokenType.IDENTIFIER and chunk.text[tok.start] == '"':
            raise FlowSyntaxError("double quotes are not used in Flink SQL", span,
                                  hint=f"quote a name with backticks (`{tok.text}`) and text "
                                       f"with single quotes ('{tok.text}')")
        word = tok.text.upper() if tok.token_type != TokenType.STRING else ""
        if word in _UNSUPPORTED_WORDS and _is_keyword_use(word, tokens, i) and not (
                word == "LATERAL" and nxt is not None and nxt.text.upper() == "TABLE"):
            message, hint = _UNSUPPORTED_WORDS[word]
            raise UnsupportedError(message, span, hint=hint)
        if word in ("ROW", "MULTISET") and nxt is not None and \
                nxt.token_type in (TokenType.LT, TokenType.L_PAREN) and _in_type(tokens, i):
            raise UnsupportedError(f"the SQL type {word}<...> is not supported", span,
                                   hint="flowc types are STRING, BIGINT/INT, DOUBLE, "
                                        "DECIMAL(p, s), BOOLEAN, TIMESTAMP(3), ARRAY<T> and "
                                        "MAP<K, V>")
        comma_first = tok.token_type == TokenType.COMMA and (
            nxt is None or nxt.token_type in _NOT_AFTER_COMMA)
        if comma_first:
            at = nxt or tok
            what = f"'{nxt.text}' after ','" if nxt is not None else \
                "end of statement after ','"
            raise FlowSyntaxError(f"syntax error: unexpected {what}",
                                  chunk.span(at.start, at.end),
                                  hint="a list item is missing (or remove the extra ',')")
        if tok.token_type in (TokenType.SELECT, TokenType.L_PAREN) and nxt is not None and \
                nxt.token_type == TokenType.COMMA:
            raise FlowSyntaxError("syntax error: unexpected ','", chunk.span(nxt.start, nxt.end),
                                  hint="a list item is missing (or remove the extra ',')")


def _is_keyword_use(word: str, tokens: list[Token], i: int) -> bool:
    """Whether ``word`` at ``i`` is the Flink keyword, not a column called so."""
    prev = tokens[i - 1] if i > 0 else None
    nxt = tokens[i + 1] if i + 1 < len(tokens) else None
    if word == "SYSTEM_TIME":
        return prev is not None and prev.token_type == TokenType.FOR
    if word == "METADATA":  # after a column's type: `ts TIMESTAMP(3) METADATA FROM ...`
        return prev is not None and (prev.token_type == TokenType.R_PAREN or
                                     prev.text.upper() in _TYPE_WORDS)
    # MATCH_RECOGNIZE (...), UNNEST(...), LATERAL TABLE(...)
    return nxt is not None and nxt.token_type in (TokenType.L_PAREN, TokenType.TABLE)


_TYPE_WORDS = {"STRING", "VARCHAR", "CHAR", "BIGINT", "INT", "INTEGER", "SMALLINT", "TINYINT",
               "DOUBLE", "FLOAT", "DECIMAL", "BOOLEAN", "TIMESTAMP", "TIMESTAMP_LTZ", "DATE",
               "TIME", "BYTES", "BINARY", "VARBINARY"}


def _in_type(tokens: list[Token], i: int) -> bool:
    """Whether token ``i`` stands where a type does: after a column name in a column list,
    or after AS in a CAST, or inside ARRAY<...>."""
    prev = tokens[i - 1] if i > 0 else None
    if prev is None:
        return False
    if prev.token_type in (TokenType.ALIAS, TokenType.LT):
        return True
    before = tokens[i - 2] if i > 1 else None
    return before is not None and before.token_type in (TokenType.L_PAREN, TokenType.COMMA) \
        and prev.token_type in (TokenType.VAR, TokenType.IDENTIFIER)


def rewrite(chunk: SqlChunk) -> Rewrites:
    """Blank out the Flink-only syntax of one statement (see the module docstring)."""
    chars = list(chunk.text)
    out = Rewrites(chunk.text)
    tokens = tokenize(chunk.text, chunk)
    check_tokens(tokens, chunk)

    def blank(a: int, b: int) -> None:  # inclusive offsets; newlines stay for line numbers
        for i in range(a, b + 1):
            if chars[i] != "\n":
                chars[i] = " "

    depth_close = _matching_parens(tokens)
    n = len(tokens)
    for i, tok in enumerate(tokens):
        nxt = tokens[i + 1] if i + 1 < n else None
        if tok.token_type == TokenType.TABLE and nxt is not None:
            if nxt.token_type == TokenType.L_PAREN and i > 0 and tokens[i - 1].token_type in (
                    TokenType.FROM, TokenType.JOIN, TokenType.COMMA):
                blank(tok.start, nxt.end)  # TABLE( ... ) around a window TVF
                close = depth_close.get(i + 1)
                if close is not None:
                    blank(tokens[close].start, tokens[close].end)
            elif nxt.token_type in (TokenType.VAR, TokenType.STRING) or nxt.text.isidentifier():
                if i > 0 and tokens[i - 1].token_type in (TokenType.L_PAREN, TokenType.COMMA,
                                                          TokenType.FARROW):
                    blank(tok.start, tok.end)  # TABLE t, the TVF's first argument
                    _blank_partition(tokens, i + 2, blank, out, chunk, i)
        elif tok.text.upper() == "WATERMARK" and nxt is not None and \
                nxt.token_type == TokenType.FOR:
            wm = _watermark(tokens, i, depth_close)
            if wm is not None:
                out.watermarks.append(wm[0])
                blank(tok.start, wm[1])
                # the comma before the clause, so the column list stays well-formed
                if i > 0 and tokens[i - 1].token_type == TokenType.COMMA:
                    blank(tokens[i - 1].start, tokens[i - 1].end)
    out.text = "".join(chars)
    return out


def _matching_parens(tokens: list[Token]) -> dict[int, int]:
    stack: list[int] = []
    pairs: dict[int, int] = {}
    for i, tok in enumerate(tokens):
        if tok.token_type == TokenType.L_PAREN:
            stack.append(i)
        elif tok.token_type == TokenType.R_PAREN and stack:
            pairs[stack.pop()] = i
    return pairs


def _blank_partition(tokens: list[Token], j: int, blank: object, out: Rewrites,
                     chunk: SqlChunk, table_index: int) -> None:
    """``SESSION(TABLE t PARTITION BY a, b, DESCRIPTOR(ts), ...)``: drop the PARTITION BY."""
    if j + 1 >= len(tokens) or tokens[j].token_type != TokenType.PARTITION_BY:
        if not (j + 1 < len(tokens) and tokens[j].text.upper() == "PARTITION"):
            return
    k = j + 1 if tokens[j].token_type == TokenType.PARTITION_BY else j + 2
    cols: list[str] = []
    end = tokens[j].end
    while k < len(tokens) and tokens[k].token_type != TokenType.R_PAREN:
        if tokens[k].token_type == TokenType.COMMA:
            if k + 1 < len(tokens) and tokens[k + 1].text.upper() == "DESCRIPTOR":
                break
        else:
            cols.append(tokens[k].text)
        end = tokens[k].end
        k += 1
    assert callable(blank)
    blank(tokens[j].start, end)
    # keyed by the TVF name's offset (two tokens before TABLE: name then '(')
    name_tok = tokens[table_index - 2] if table_index >= 2 else tokens[table_index]
    out.partitions[name_tok.start] = cols


def _watermark(tokens: list[Token], i: int,
               pairs: dict[int, int]) -> tuple[Watermark, int] | None:
    # WATERMARK FOR col AS expr, up to the next top-level ',' or the closing ')'
    if i + 3 >= len(tokens) or tokens[i + 3].token_type != TokenType.ALIAS:
        return None
    col = tokens[i + 2]
    j = i + 4
    depth = 0
    last = j - 1
    while j < len(tokens):
        t = tokens[j].token_type
        if t == TokenType.L_PAREN:
            depth += 1
        elif t == TokenType.R_PAREN:
            if depth == 0:
                break
            depth -= 1
        elif t == TokenType.COMMA and depth == 0:
            break
        last = j
        j += 1
    if last < i + 4:
        return None
    return Watermark(col.text, (col.start, col.end),
                     (tokens[i + 4].start, tokens[last].end)), tokens[last].end


# words a statement may start with (sqlglot parses more; those are reported by name)
STATEMENT_WORDS = ("SELECT", "WITH", "INSERT", "CREATE", "EXPLAIN", "SET", "EXECUTE", "BEGIN",
                   "END", "VALUES", "DROP", "SHOW", "DESCRIBE", "DESC", "USE", "ALTER",
                   "UPDATE", "DELETE", "MERGE", "TRUNCATE", "RESET", "LOAD", "UNLOAD", "ANALYZE",
                   "CALL", "ADD", "REMOVE", "JAR", "COMPILE", "STOP", "TABLE", "FROM")
# what a user most likely meant, for did-you-mean
MAIN_STATEMENTS = ("SELECT", "WITH", "INSERT", "CREATE", "EXPLAIN", "SET", "EXECUTE", "DROP",
                   "VALUES")


def unknown_statement(chunk: SqlChunk) -> FlowSyntaxError | None:
    """The error for a statement whose first word starts no statement (``SELEC ...``)."""
    m = re.match(r"\s*([A-Za-z_]\w*)", chunk.text)
    if m is None or m.group(1).upper() in STATEMENT_WORDS:
        return None
    word = m.group(1)
    from flowc.errors import did_you_mean

    hint = did_you_mean(word.upper(), MAIN_STATEMENTS)
    return FlowSyntaxError(f"unknown statement '{word}'", chunk.span(m.start(1), m.end(1) - 1),
                           hint=hint or "a SQL statement starts with SELECT, INSERT INTO, "
                                        "CREATE TABLE, CREATE VIEW, EXPLAIN or SET")


def parse_statement(chunk: SqlChunk, text: str | None = None) -> exp.Expression:
    """Parse one (rewritten) statement; sqlglot errors become positioned FlowSyntaxErrors."""
    body = chunk.text if text is None else text
    try:
        with deep_stack():
            tree = sqlglot.parse_one(body, read=FlowcSQL)
    except ParseError as e:
        raise (unknown_statement(chunk) or syntax_error(e, chunk)) from None
    except TokenError:
        tokenize(body, chunk)
        raise
    if tree is None:
        raise FlowSyntaxError("empty statement", chunk.span(0, 0))
    return tree


_DESCRIPTIONS = [
    (re.compile(r"^Expecting (.+)$"), "expected {0}"),
    (re.compile(r"^Expected (.+?) but got <Token .*$", re.S), "expected {0}"),
    (re.compile(r"^Required keyword: '(?:this|expression)' missing for .*$"),
     "expected an expression after {tok}"),
    (re.compile(r"^Required keyword: '(\w+)' missing for .*$"), "this is incomplete"),
    (re.compile(r"^Invalid expression / Unexpected token$"), "unexpected {tok}"),
]


def syntax_error(e: ParseError, chunk: SqlChunk) -> FlowSyntaxError:
    info = e.errors[0] if e.errors else {}
    line = int(info.get("line") or 1)
    col = int(info.get("col") or 1)
    highlight = str(info.get("highlight") or "")
    end = _offset_of(chunk.text, line, col)
    start = max(0, end - max(len(highlight), 1) + 1)
    desc = str(info.get("description") or "syntax error")
    message = desc
    for pattern, template in _DESCRIPTIONS:
        m = pattern.match(desc)
        if m:
            message = template.format(*m.groups(), tok=f"'{highlight}'" if highlight else
                                      "end of statement")
            break
    if highlight and message.startswith("expected") and " after " not in message:
        at_end = not chunk.text[end + 1:].strip()
        quoted = highlight if highlight.startswith("'") else f"'{highlight}'"
        message += f" {'after' if at_end else 'before'} {quoted}"
    hint = None
    if highlight.upper() in MAIN_STATEMENTS and start > 0:
        hint = "a statement ends with ';' (is one missing before this?)"
    elif message.startswith("unexpected"):
        hint = _misspelt_keyword(chunk, start)
    return FlowSyntaxError(f"syntax error: {message}", chunk.span(start, end), hint=hint)


_CLAUSE_WORDS = ("FROM", "WHERE", "GROUP", "BY", "HAVING", "AND", "OR", "NOT", "JOIN", "ON",
                 "UNION", "ALL", "AS", "BETWEEN", "LIKE", "IS", "NULL", "CASE", "WHEN", "THEN",
                 "ELSE", "END", "INTERVAL", "TABLE", "SELECT", "INSERT", "INTO", "DISTINCT",
                 "ORDER", "LIMIT", "WITH", "VALUES", "CAST", "IN", "INNER", "SECOND", "MINUTE",
                 "HOUR", "DESCRIPTOR")


def _misspelt_keyword(chunk: SqlChunk, offset: int) -> str | None:
    """For ``unexpected X``: a did-you-mean when X, or the word before it, is a misspelt
    keyword (``FORM clicks``, ``WHER a = 1``, ``a = 1 ADN b = 2``); sqlglot takes such a word
    for a name, so the error shows up one token later."""
    import difflib

    try:
        tokens = FlowcSQL().tokenize(chunk.text)
    except TokenError:
        return None
    at = next((i for i, t in enumerate(tokens) if t.start >= offset), None)
    if at is None:
        return None
    for i in (at - 1, at):
        tok = tokens[i] if i >= 0 else None
        if tok is None or tok.token_type != TokenType.VAR or len(tok.text) < 2:
            continue
        word = tok.text.upper()
        # a typo keeps its first letter (FORM, WHER, ADN); 'clicks' is not LIKE
        pool = [w for w in _CLAUSE_WORDS if w[0] == word[0]]
        close = difflib.get_close_matches(word, pool, n=1, cutoff=0.6)
        if close and word not in _CLAUSE_WORDS:
            return f"'{tok.text}' is not a keyword: did you mean {close[0]}?"
    return None
