"""Text -> AST statements, with one plain-words syntax error per bad statement.

The script is split at top-level ``;`` (outside strings and comments) and each statement is
parsed on its own. That gives error recovery for free: a bad statement is reported and the
next one is parsed as if nothing happened, so one run reports every broken statement.
"""

from __future__ import annotations

import functools
import re
from contextvars import ContextVar
from dataclasses import dataclass
from importlib import resources

from lark import Lark, Token
from lark.exceptions import UnexpectedCharacters, UnexpectedInput, UnexpectedToken, VisitError

from flowc.errors import FlowcError, FlowSyntaxError, Span, did_you_mean
from flowc.parser import ast as A
from flowc.parser.build import AstBuilder

# Strings (possibly unterminated: they stop at the end of the line, like the lexer's), comments
# and semicolons; everything else is skipped by the splitter.
# Strings as `'[^']*(?:''[^']*)*'`, not `'(?:[^']|'')*'`: Python's regex engine keeps
# state for each repetition of a group, so the latter took gigabytes on a 10 MB string.
_SPLIT = re.compile(r"'[^'\n]*(?:''[^'\n]*)*'?|--[^\n]*|;")
_BLANK = re.compile(r"^(?:\s|--[^\n]*)*$")
_DEFINES = re.compile(r"^\s*([A-Za-z_][A-Za-z0-9_]*)\s+([A-Za-z_][A-Za-z0-9_]*)")


# The text being lexed, for the keyword check below.
_LEXING: ContextVar[str] = ContextVar("flow_lexing", default="")
_WORD = re.compile(r"[A-Za-z0-9_]*")


class GluedKeyword(Exception):
    """A keyword immediately followed by letters or digits (``mapuser_id``, ``c asx``)."""

    def __init__(self, token: Token) -> None:
        super().__init__(str(token))
        self.token = token


def _whole_word(token: Token) -> Token:
    # The contextual lexer matches a keyword as a prefix where no name is possible, so
    # `mapuser_id` would silently lex as `map user_id`: reject a keyword glued to a word.
    text = _LEXING.get()
    end = token.end_pos
    if end is not None and end < len(text) and (text[end].isalnum() or text[end] == "_"):
        raise GluedKeyword(token)
    return token


@functools.lru_cache(maxsize=1)
def flow_parser() -> Lark:
    grammar = resources.files("flowc.grammar").joinpath("flow.lark").read_text(encoding="utf-8")
    keywords = {w.upper() for w in re.findall(r'"([a-z_]+)"', grammar)} | {"PARTITIONER"}
    return Lark(grammar, parser="lalr", propagate_positions=True, maybe_placeholders=True,
                lexer_callbacks={k: _whole_word for k in keywords})


@dataclass(frozen=True)
class Chunk:
    """One statement's text (with its ``;`` when it has one) and where it starts."""

    text: str
    offset: int
    line: int
    column: int


BOM = "\ufeff"


def split_statements(text: str) -> list[Chunk]:
    chunks: list[Chunk] = []
    start = 1 if text.startswith(BOM) else 0  # a UTF-8 byte order mark is not text
    for m in _SPLIT.finditer(text):
        if m.group() == ";":
            _add_chunk(chunks, text, start, m.end())
            start = m.end()
    _add_chunk(chunks, text, start, len(text))
    return chunks


def _add_chunk(chunks: list[Chunk], text: str, start: int, end: int) -> None:
    body = text[start:end]
    if _BLANK.match(body):
        return
    # Start the chunk at its first token so positions are cheap to shift back.
    lead = len(body) - len(body.lstrip())
    while body[lead:].startswith("--"):
        nl = body.find("\n", lead)
        lead = len(body) if nl < 0 else nl
        lead += len(body[lead:]) - len(body[lead:].lstrip())
    begin = start + lead
    line = text.count("\n", 0, begin) + 1
    chunks.append(Chunk(text[begin:end], begin, line, _column(text, begin)))


def _column(text: str, offset: int) -> int:
    """1-based column of ``offset``; a byte order mark before it takes no column."""
    line_start = text.rfind("\n", 0, offset) + 1
    if line_start == 0 and text.startswith(BOM) and offset > 0:
        line_start = 1
    return offset - line_start + 1


def defined_name(chunk: Chunk) -> str | None:
    """The stream a statement defines (``source x``/``let x``), found without parsing it, so
    that a statement that fails to parse does not cause "unknown stream" errors later."""
    m = _DEFINES.match(chunk.text)
    if m is None:
        return None
    # `source x`, `let x`, and their misspellings (`sorce x`), reported as such.
    word = m.group(1)
    defines = word in ("source", "let") or did_you_mean(word, ("source", "let")) is not None
    return m.group(2) if defines else None


def parse_chunk(chunk: Chunk, filename: str, text: str) -> A.Statement:
    """Parse one statement; raises a FlowcError (never a Lark exception)."""
    parser = flow_parser()
    failure: UnexpectedInput | GluedKeyword | None = None
    lexing = _LEXING.set(chunk.text)
    try:
        tree = parser.parse(chunk.text)
    except (UnexpectedInput, GluedKeyword) as e:
        failure = e
    finally:
        _LEXING.reset(lexing)
    # Described outside the check: describing parses other texts (examples).
    if isinstance(failure, GluedKeyword):
        raise SyntaxErrors(chunk, filename, text).glued(failure.token) from None
    if failure is not None:
        raise SyntaxErrors(chunk, filename, text).describe(failure) from None
    try:
        return AstBuilder(filename, text, chunk.line, chunk.column).transform(tree)
    except VisitError as e:
        if isinstance(e.orig_exc, FlowcError):
            raise e.orig_exc from None
        raise


# ---------------------------------------------------------------- error messages

_FRIENDLY = {
    "NAME": "a name", "INT": "a number", "FLOAT": "a number", "STRING": "a string",
    "DURATION": "a duration such as 5s", "COMPARE": "a comparison",
    "PARTITIONER": "a partitioning (rebalance, rescale, shuffle, broadcast, global, forward)",
    "$END": "the end of the statement",
}
_EXPR_START = {"INT", "FLOAT", "STRING", "DURATION", "TRUE", "FALSE", "NULL", "NAME", "CAST",
               "CASE", "LSQB", "LPAR", "MINUS", "NOT"}
_OPERATORS = {"PLUS", "MINUS", "STAR", "SLASH", "PERCENT", "COMPARE", "EQUAL", "AND", "OR",
              "IS", "IN", "BETWEEN", "LIKE", "NOT"}
_STATEMENT_START = {"SET", "IMPORT", "SOURCE", "LET", "UNION", "NAME"}
# The words a pipeline step starts with, for "did you mean" on a misspelt step.
STEP_WORDS = ("map", "select", "filter", "where", "flat_map", "key", "window", "aggregate",
              "over", "union", "join", "left", "right", "full", "interval", "top", "rebalance",
              "rescale", "shuffle", "broadcast", "global", "forward", "print", "write",
              "blackhole")
_STEP_START = {"MAP", "SELECT", "FILTER", "WHERE", "FLAT_MAP", "KEY", "WINDOW", "AGGREGATE",
               "OVER", "UNION", "JOIN", "JOIN_SIDE", "INTERVAL", "TOP", "PARTITIONER", "PRINT",
               "WRITE", "BLACKHOLE"}

_STATEMENT_WORDS = ("set", "import", "source", "let", "union")
_STEP_LIST = ("a pipeline step starts after '|': map, select, filter, flat_map, key by, "
              "window, aggregate, over, union, join, left / right / full join, interval join, "
              "top, a partitioning, print, write or blackhole")

_WINDOW_KINDS = ("a window is 'tumbling SIZE', 'sliding SIZE every SLIDE', 'session gap GAP' or "
                 "'cumulating SIZE every STEP'")
# Common mistakes, recognised by the parser state they fail in (Lark's match_examples).
_EXAMPLES: dict[str, list[str]] = {
    "a source needs a schema: source NAME (field type, ...) from ...": [
        "source s from csv 'x';", "source s values (1);"],
    "a field is declared as 'name type', for example (user_id string, ts timestamp)": [
        "source s (a) from csv 'x';", "source s (a, b) from csv 'x';",
        "source s (a int, b) from csv 'x';"],
    # One field and several are different parser states (the grammar's repetition).
    "name the file format before the path: from csv|json|parquet 'path'": [
        "source s (a int) from 'x';", "source s (a int, b int) from 'x';"],
    "to name a stream, write 'let NAME = pipeline;'": ["x = a | map b;", "x = a;"],
    _STEP_LIST: ["a | b;", "a | foo x;"],
    "name the sink's format: write csv|json|parquet 'path'": ["a | write 'x';"],
    _WINDOW_KINDS: [
        # After 'key by' (where a window belongs) the parser is in other states than after a
        # bare stream, so both are examples; a window join's window too.
        "a | window 5s;", "a | window x;", "a | key by b | window 5s;",
        "a | key by b | window x;", "a | key by b, c | window 5s;",
        "a | join b on c window 5s;", "a | join b as d on c window x;"],
}
# Examples of the correct form, shown as help under a label.
_LABEL_HELP = {
    "a field is declared as 'name type', for example (user_id string, ts timestamp)":
        "the types are string, int, double, bool, timestamp and array<T>",
    "name the file format before the path: from csv|json|parquet 'path'":
        "for example: source clicks (user_id string) from csv 'data/clicks.csv'",
    "name the sink's format: write csv|json|parquet 'path'":
        "for example: | write csv 'out/result.csv'",
}


def _describe_terminal(name: str) -> str:
    if name in _FRIENDLY:
        return _FRIENDLY[name]
    for t in flow_parser().terminals:
        if t.name == name:
            if t.pattern.type == "str":
                return f"'{t.pattern.value}'"
            break
    return name.lower()


def _keywords(expected: set[str]) -> list[str]:
    """The keywords among terminal names (the words a misspelling may have meant)."""
    words = {t.name: t.pattern.value for t in flow_parser().terminals
             if t.pattern.type == "str" and t.pattern.value.isalpha()}
    return [words[n] for n in sorted(expected) if n in words]


def describe_expected(expected: set[str]) -> str:
    """Plain words for a set of terminal names: never RPAR or __ANON_3."""
    names = set(expected)
    parts: list[str] = []
    if {"NAME", "INT", "STRING", "LPAR"} <= names:
        parts.append("an expression")
        names -= _EXPR_START
    elif names & _STEP_START and len(names & _STEP_START) >= 5:
        parts.append("a pipeline step (map, filter, key by, window, ..., print)")
        names -= _STEP_START
    elif names >= {"SET", "SOURCE", "LET"}:
        parts.append("a statement (set, import, source, let or a pipeline)")
        names -= _STATEMENT_START
    if len(names & _OPERATORS) >= 4:
        parts.append("an operator")
        names -= _OPERATORS
    anon = sorted(n for n in names if n.startswith("__ANON"))
    names -= set(anon)
    # Punctuation first, then keywords, then token classes: a stable, readable order.
    ordered = sorted(names, key=lambda n: (n in _FRIENDLY, n))
    parts.extend(_describe_terminal(n) for n in ordered)
    parts.extend(_describe_terminal(n) for n in anon)
    seen: list[str] = []
    for p in parts:
        if p not in seen:
            seen.append(p)
    if len(seen) > 6:
        seen = seen[:6] + ["..."]
    if len(seen) == 1:
        return seen[0]
    return ", ".join(seen[:-1]) + " or " + seen[-1]


def _shown(token: Token) -> str:
    if token.type == "$END":
        return "the end of the input"
    text = str(token)
    return f"'{text if len(text) <= 24 else text[:21] + '...'}'"


class SyntaxErrors:
    """Turns a Lark error inside one chunk into a positioned FlowSyntaxError."""

    def __init__(self, chunk: Chunk, filename: str, text: str) -> None:
        self.chunk = chunk
        self.builder = AstBuilder(filename, text, chunk.line, chunk.column)

    def _tokens_before(self, pos: int) -> list[Token]:
        tokens: list[Token] = []
        try:
            for tok in flow_parser().lex(self.chunk.text):
                if tok.start_pos is None or tok.start_pos >= pos:
                    break
                tokens.append(tok)
        except (UnexpectedInput, GluedKeyword):
            pass
        return tokens

    def glued(self, token: Token) -> FlowSyntaxError:
        start = token.start_pos or 0
        word = _WORD.match(self.chunk.text, start).group()  # type: ignore[union-attr]
        span = self.builder.span_of(token.line or 1, token.column or 1, token.line or 1,
                                    (token.column or 1) + len(word))
        keyword = str(token)
        rest = word[len(keyword):]
        # A letter or two too many is a typo (`mapp`); more is a missing space (`mapuser_id`).
        hint = f"write '{keyword} {rest}' if a space is missing"
        if len(rest) <= 2:
            hint = did_you_mean(word, STEP_WORDS if keyword in STEP_WORDS else [keyword]) \
                or hint
        if keyword in STEP_WORDS:
            return FlowSyntaxError(f"unknown pipeline step '{word}'", span, hint=hint)
        return FlowSyntaxError(f"unexpected '{word}'", span, hint=hint)

    def describe(self, e: UnexpectedInput) -> FlowSyntaxError:
        if isinstance(e, UnexpectedCharacters):
            return self._bad_character(e)
        assert isinstance(e, UnexpectedToken)
        return self._bad_token(e)

    def _bad_character(self, e: UnexpectedCharacters) -> FlowSyntaxError:
        span = self.builder.span_of(e.line, e.column, e.line, e.column + 1)
        ch = self.chunk.text[e.pos_in_stream] if e.pos_in_stream < len(self.chunk.text) else ""
        if ch == '"':
            return FlowSyntaxError("strings are written in single quotes", span,
                                   hint="write 'text'; a ' inside a string is written ''")
        if ch == "'":
            return FlowSyntaxError("this string is not closed", span,
                                   hint="a string ends with ' on the same line")
        if ch == ";":
            return FlowSyntaxError("unexpected ';'", span)
        return FlowSyntaxError(f"unexpected character {ch!r}", span)

    def _bad_token(self, e: UnexpectedToken) -> FlowSyntaxError:
        tok = e.token
        pos = tok.start_pos if tok.type != "$END" else len(self.chunk.text)
        before = self._tokens_before(pos if pos is not None else len(self.chunk.text))
        prev = before[-1] if before else None
        expected = self._accepted(e)
        if tok.type == "$END" or (prev is not None and tok.line is not None
                                  and prev.end_line is not None and tok.line > prev.end_line
                                  and "SEMICOLON" in expected):
            if "SEMICOLON" in expected and prev is not None:
                # The statement is complete but its ';' is missing: point just past its end.
                span = self.builder.span_of(prev.end_line or 1, prev.end_column or 1,
                                            prev.end_line or 1, (prev.end_column or 1) + 1)
                hint = None
                if tok.type != "$END":
                    hint = f"the next statement starts with {_shown(tok)}"
                return FlowSyntaxError("expected ';' at the end of the statement", span,
                                       hint=hint)
        if tok.type == "$END":
            span = self.builder.span_of(prev.end_line or 1, prev.end_column or 1,
                                        prev.end_line or 1, (prev.end_column or 1) + 1) \
                if prev is not None else self.builder.span_of(1, 1, 1, 2)
        else:
            span = self.builder.tok(tok)
        if tok.type == "NAME" and len(expected & _STEP_START) >= 5:
            return FlowSyntaxError(f"unknown pipeline step '{tok}'", span,
                                   hint=did_you_mean(str(tok), STEP_WORDS) or _STEP_LIST)
        if prev is not None and before and prev is before[0] and prev.type == "NAME" \
                and tok.type != "EQUAL":
            close = did_you_mean(str(prev), _STATEMENT_WORDS)
            if close is not None:
                return FlowSyntaxError(f"unknown statement '{prev}'", self.builder.tok(prev),
                                       hint=close)
        label = self._match_example(e)
        where = f" after '{prev}'" if prev is not None else ""
        if label is not None:
            # A label that lists what may come needs no "expected ..." note repeating it.
            notes = [] if label in (_STEP_LIST, _WINDOW_KINDS) else [
                f"expected {describe_expected(expected)}{where}"]
            hint = _LABEL_HELP.get(label)
            if label == _WINDOW_KINDS:
                size = str(tok) if tok.type == "DURATION" else "5s"
                hint = f"for example: window tumbling {size}"
            return FlowSyntaxError(label, span, hint=hint, notes=notes)
        found = "" if tok.type in ("SEMICOLON", "$END") else f", found {_shown(tok)}"
        message = f"expected {describe_expected(expected)}{where}{found}"
        if tok.type == "$END":
            message = f"expected {describe_expected(expected)}{where}"
        hint = None
        if "DURATION" in expected and tok.type in ("INT", "FLOAT"):
            hint = "a duration needs a unit: 500ms, 5s, 1m, 1h or 1d"
        elif tok.type == "EQUAL" and "COMPARE" in expected:
            hint = "'=' compares; it cannot be chained (a = b = c)"
        elif tok.type == "NAME":  # a misspelt keyword (`idel after 10s`)
            hint = did_you_mean(str(tok), _keywords(expected))
        return FlowSyntaxError(message, span, hint=hint)

    @staticmethod
    def _accepted(e: UnexpectedToken) -> set[str]:
        # e.expected comes from a merged LALR state and can list tokens that are impossible
        # here; the interactive parser knows what would really be accepted.
        try:
            ip = e.interactive_parser
            if ip is not None:
                accepted = set(ip.accepts())
                if accepted:
                    return accepted
        except Exception:  # noqa: BLE001 - fall back to Lark's coarser set
            pass
        return set(e.expected)

    def _match_example(self, e: UnexpectedToken) -> str | None:
        try:
            return e.match_examples(flow_parser().parse, _EXAMPLES, use_accepts=True)
        except Exception:  # noqa: BLE001 - a failed match only costs the nicer message
            return None


def position_span(filename: str, text: str, offset: int) -> Span:
    line = text.count("\n", 0, offset) + 1
    column = _column(text, offset)
    return Span(filename, line, column, line, column + 1, text)
