"""Updating (changelog) results of a non-windowed GROUP BY.

In Flink SQL a ``GROUP BY`` without a window is a GroupAggregate: it emits a changelog
(``+I`` the first row of a key, ``-U`` the old row and ``+U`` the new one per update, ``-D``
when a key's last row is retracted). flowc's rolling aggregate emits exactly that
(flowc.parser.changes, records carry their kind: flowc.rowkind), and Calcs (WHERE, HAVING,
projections) and a second GROUP BY consume it as Flink does. The translator still tracks
which pieces are updating (:class:`Updating`) for the consumers that take insert-only
input:

- filesystem sinks: Flink's text ("... doesn't support consuming update changes which is
  produced by node GroupAggregate(...)");
- joins and group windows, which Flink runs as a regular join and a retracting window, are
  flowc limits (:func:`flowc_limit`, flowc's own text); window table functions fail as in
  Flink (an aggregate's result has no time attribute).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from sqlglot import exp

from flowc.errors import Span, UnsupportedError

UP, DOWN, KEY = "up", "down", "key"
CONST = "const"  # constant for its row, not a group key (flowc.sql.rank_strategy)
_MONOTONE = {"count": UP, "max": UP, "min": DOWN}


@dataclass(frozen=True)
class Updating:
    """An updating piece: the GroupAggregate that made it, and what each output column is
    (a group key, an aggregate that only grows or only shrinks; others are absent)."""

    node: str  # Flink's description, e.g. GroupAggregate(groupBy=[k], select=[k, COUNT(*) AS n])
    keys: tuple[str, ...]  # the group keys, in GROUP BY order
    columns: dict[str, str] = field(default_factory=dict)  # output column -> KEY / UP / DOWN
    hidden: tuple[str, ...] = ()  # key columns added for the REPL only (not shown)
    # the GroupAggregate's own final projection (its input still has the key columns)
    agg_map: Any = field(default=None, compare=False)
    # Flink's upsert key when not the group keys (a deduplication's, a join's: output
    # names), and whether a Top-N after it may take upserts (flowc.sql.rank_strategy)
    upsert: tuple[str, ...] | None = None
    fast: bool = True

    def upsert_key(self) -> list[str] | None:
        return list(self.upsert) if self.upsert is not None else self.key_columns()

    def key_columns(self) -> list[str] | None:
        """Output names of the group keys in GROUP BY order, or None if one is not there."""
        by_key: dict[str, str] = {}
        for col, kind in self.columns.items():
            if kind.startswith(KEY + ":"):
                by_key.setdefault(kind[len(KEY) + 1:], col)
        if any(k not in by_key for k in self.keys):
            return None
        return [by_key[k] for k in self.keys]

    def renamed(self, pairs: Iterable[tuple[str | None, str]]) -> Updating:
        """After a projection: ``pairs`` are (input column or None if computed, output)."""
        pairs = list(pairs)
        cols = {out: self.columns[src] for src, out in pairs
                if src is not None and src in self.columns}
        upsert = None
        if self.upsert is not None:
            first: dict[str | None, str] = {}
            for src, out in pairs:
                first.setdefault(src, out)
            upsert = tuple(first[c] for c in self.upsert) \
                if all(c in first for c in self.upsert) else None
        return replace(self, columns=cols, hidden=(), agg_map=None, upsert=upsert)


def node_description(keys: Sequence[str], items: Sequence[tuple[str, str]]) -> str:
    """``GroupAggregate(groupBy=[k], select=[k, COUNT(*) AS n])`` as Flink describes it."""
    select = list(keys) + [f"{text} AS {name}" for text, name in items]
    return f"GroupAggregate(groupBy=[{', '.join(keys)}], select=[{', '.join(select)}])"


def aggregate_kind(call: exp.Expression) -> str | None:
    if isinstance(call, exp.Filter):  # FILTER (WHERE ...) keeps the direction
        call = call.this
    name = call.key.lower() if not isinstance(call, exp.Anonymous) else str(call.this).lower()
    return _MONOTONE.get(name)


def flowc_limit(what: str, up: Updating, span: Span, hint: str) -> None:
    """A consumer of updates Flink plans (it retracts) but flowc cannot run: flowc's own
    words, never a Flink text Flink does not give for the query."""
    raise UnsupportedError(f"{what} an updating result is not supported: Flink runs this "
                           f"(retracting rows as they change), flowc's operators take "
                           f"insert-only input; the updates come from {up.node}", span,
                           hint=hint)


def consumer_error(consumer: str, up: Updating, span: Span, hint: str | None = None) -> None:
    """Flink's rejection of an insert-only consumer (a join, a window, a file sink)."""
    raise UnsupportedError(f"{consumer} doesn't support consuming update changes which is "
                           f"produced by node {up.node}", span,
                           hint=hint or "aggregate in a window (TUMBLE, HOP or SESSION): "
                                        "a window emits final rows, not updates")

