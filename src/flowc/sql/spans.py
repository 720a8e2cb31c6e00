"""Where each node of a sqlglot tree stands in the SQL text: :class:`SpanMap`, the spans the
SQL front end's errors point at (the expression translator, DDL, queries and inserts)."""

from __future__ import annotations

import re

from sqlglot import exp

from flowc.errors import Span
from flowc.sql.source import SqlChunk


class SpanMap:
    """Spans of every node of one statement's tree: the union of the token positions that
    sqlglot records (in ``meta``) on the node and its descendants. Computed once, bottom-up
    and without recursion, so spans of deep trees cost linear time."""

    def __init__(self, tree: exp.Expression, chunk: SqlChunk) -> None:
        self.chunk = chunk
        self.ranges: dict[int, tuple[int, int]] = {}
        nodes = list(tree.walk(bfs=True))
        for node in reversed(nodes):  # children come after their parents in BFS order
            lo, hi = _own(node)
            for child in node.iter_expressions():
                r = self.ranges.get(id(child))
                if r is not None:
                    lo = r[0] if lo is None else min(lo, r[0])
                    hi = r[1] if hi is None else max(hi, r[1])
            if lo is not None and hi is not None:
                self.ranges[id(node)] = (lo, hi)

    def __call__(self, node: exp.Expression | None, fallback: Span | None = None) -> Span:
        r = self.ranges.get(id(node)) if node is not None else None
        parent = node.parent if node is not None else None
        if r is None and isinstance(node, exp.Func) and fallback is None:
            word = self._bare_word(node)  # CURRENT_TIMESTAMP: a keyword without tokens
            if word is not None:
                return word
        while r is None and parent is not None and fallback is None:
            # a node sqlglot recorded no token for (a unit keyword, an implied node): its
            # nearest ancestor's span, never the whole statement
            r = self.ranges.get(id(parent))
            node, parent = parent, parent.parent
        if r is None:
            return fallback or self.chunk.span(0, max(0, len(self.chunk.text.rstrip()) - 1))
        lo, hi = r
        lo = _keyword_start(self.chunk.text, node, lo)
        # Calls, casts and intervals: stretch to the closing ')' / leading keyword, so the
        # caret covers what the user wrote rather than only its inner tokens.
        text = self.chunk.text
        if isinstance(node, exp.Interval):
            k = text.rfind("INTERVAL", 0, lo + 1)
            k = max(k, text.lower().rfind("interval", 0, lo + 1))
            if k >= 0:
                lo = k
            m = hi + 1
            while m < len(text) and text[m] in " \t":
                m += 1
            while m < len(text) and (text[m].isalpha()):
                hi = m
                m += 1
        elif isinstance(node, (exp.Func, exp.Cast)) and not isinstance(node, exp.Anonymous):
            hi = _close_paren(text, hi)
        elif isinstance(node, (exp.Anonymous, exp.Subquery, exp.Exists)):
            hi = _close_paren(text, hi)
        return self.chunk.span(lo, hi)

    def _bare_word(self, node: exp.Func) -> Span | None:
        """The span of a function written as a bare keyword (``CURRENT_TIMESTAMP``), found
        in the text of the nearest ancestor that has a position."""
        names = [n for n in type(node).sql_names() if n] or [node.key]
        pattern = re.compile(r"\b(?:" + "|".join(re.escape(n) for n in names) + r")\b", re.I)
        up = node.parent
        while up is not None:
            r = self.ranges.get(id(up))
            if r is not None:
                # inside the ancestor's text (a call's argument), else the nearest one
                # before it (an alias) or after it (the operand of a comparison)
                text = self.chunk.text
                m = pattern.search(text, r[0], r[1] + 1)
                if m is None:
                    before = list(pattern.finditer(text, 0, r[0]))
                    after = pattern.search(text, r[1] + 1)
                    near = [x for x in (before[-1] if before else None, after) if x]
                    m = min(near, key=lambda x: min(abs(x.start() - r[1]),
                                                    abs(x.end() - r[0]))) if near else None
                return self.chunk.span(m.start(), m.end() - 1) if m is not None else None
            up = up.parent
        return None

    def call_name(self, node: exp.Func) -> tuple[str, Span] | None:
        """A call's function name as the user wrote it, and its span (sqlglot may record
        only the arguments' tokens, as for ``POSITION('c' IN s)``)."""
        r = self.ranges.get(id(node))
        text = self.chunk.text
        if r is None:
            span = self._bare_word(node)
            if span is None:
                return None
            lo = _offset_in(self.chunk, span)
            m = re.match(r"\w+", text[lo:])
            return (m.group(0), span) if m else None
        m = re.match(r"(\w+)\s*\(", text[r[0]:])
        if m is not None:
            return m.group(1), self.chunk.span(r[0], r[0] + len(m.group(1)) - 1)
        m = re.search(r"(\w+)\s*\(\s*$", text[:r[0]])
        if m is not None:
            return m.group(1), self.chunk.span(m.start(1), m.end(1) - 1)
        return None

    def keyword(self, node: exp.Expression, word: str) -> Span:
        """The span of the first ``word`` (a keyword, any case) in ``node``'s text."""
        whole = self(node)
        r = self.ranges.get(id(node))
        lo = _keyword_start(self.chunk.text, node, r[0]) if r is not None else 0
        m = re.compile(rf"\b{word}\b", re.I).search(self.chunk.text, lo)
        if m is None:
            return whole
        return self.chunk.span(m.start(), m.end() - 1)

    def keyword_before(self, node: exp.Expression, pattern: str) -> Span:
        """The span of the last match of ``pattern`` (any case) before ``node``'s text: a
        keyword sqlglot recorded no token for (``FROM``, ``LEFT JOIN``)."""
        r = self.ranges.get(id(node))
        found = list(re.finditer(rf"\b(?:{pattern})\b", self.chunk.text[:r[0] if r else None],
                                 re.I))
        if not found:
            return self(node)
        return self.chunk.span(found[-1].start(), found[-1].end() - 1)

    def range(self, node: exp.Expression) -> tuple[int, int] | None:
        return self.ranges.get(id(node))


_SELECT = r"SELECT(?:\s+(?:ALL|DISTINCT))?"
_KEYWORDS: list[tuple[type, str]] = [
    (exp.Exists, rf"EXISTS\s*\(\s*{_SELECT}"), (exp.Subquery, rf"\(\s*{_SELECT}"),
    (exp.Select, _SELECT),
]


def _keyword_start(text: str, node: exp.Expression | None, lo: int) -> int:
    """Move ``lo`` back over the keyword that starts ``node`` (sqlglot records no token for
    SELECT, EXISTS, a subquery's '('); a statement starts at its first word."""
    if node is not None and node.parent is None and not isinstance(node, exp.Select):
        return len(text) - len(text.lstrip())
    for cls, pattern in _KEYWORDS:
        if isinstance(node, cls):
            m = re.search(rf"(?:{pattern})\s*$", text[:lo], re.I)
            if m:
                lo = m.start()
            break
    return lo


def _offset_in(chunk: SqlChunk, span: Span) -> int:
    """The chunk offset of ``span``'s start."""
    pos = 0
    for _ in range(span.line - 1):
        pos = chunk.full.index("\n", pos) + 1
    return pos + span.column - 1 - chunk.offset


def _own(node: exp.Expression) -> tuple[int | None, int | None]:
    meta = node._meta if hasattr(node, "_meta") else None
    if meta and "start" in meta and "end" in meta:
        return int(meta["start"]), int(meta["end"])
    return None, None


def _close_paren(text: str, hi: int) -> int:
    """Extend ``hi`` over whitespace to a ``)`` right after it (a call's closing paren)."""
    j = hi + 1
    while j < len(text) and text[j] in " \t\n":
        j += 1
    return j if j < len(text) and text[j] == ")" else hi
