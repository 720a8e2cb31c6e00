"""Updating (changelog) results of a non-windowed GROUP BY.

In Flink SQL a ``GROUP BY`` without a window is a GroupAggregate: it emits a changelog
(``+I`` the first row of a key, then ``-U`` the old row and ``+U`` the new one per update).
flowc's rolling aggregate emits the new row only, with no retraction (no ``-U``). That is
exact for a consumer that keeps the latest row per key (the REPL, a print sink read as
upserts), but an operator that needs retractions would compute wrong results silently. So
the translator tracks which pieces are updating (:class:`Updating`) and rejects, with
Flink's texts where Flink rejects too, every consumer that would need them:

- filesystem sinks (Flink: "... doesn't support consuming update changes which is produced
  by node GroupAggregate(...)"); joins and group windows, which Flink runs as a regular join
  and a retracting window, are flowc limits (:func:`flowc_limit`, flowc's own text); window
  table functions fail as in Flink (an aggregate's result has no time attribute);
- a second GROUP BY (Flink retracts; flowc cannot);
- a filter (HAVING, or WHERE over an updating view) that can turn false for a key after it
  was true: Flink retracts the row then. Conditions on the group keys, and ``COUNT``/``MAX``
  ``>``/``>=`` a constant (``MIN`` ``<``/``<=``), stay true once true and are allowed.

:func:`changelog` turns the rows of an updating query into Flink's ``+I``/``-U``/``+U``
changelog for the REPL.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from sqlglot import exp

from flowc.errors import Span, UnsupportedError

UP, DOWN, KEY = "up", "down", "key"
_MONOTONE = {"count": UP, "max": UP, "min": DOWN}
_GROWS = (exp.GT, exp.GTE)  # col > c stays true if col only grows
_SHRINKS = (exp.LT, exp.LTE)


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
        cols = {out: self.columns[src] for src, out in pairs
                if src is not None and src in self.columns}
        return replace(self, columns=cols, hidden=(), agg_map=None)


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


def aggregate_error(up: Updating, span: Span) -> None:
    raise UnsupportedError(
        "aggregating an updating result is not supported: its rows are updates of "
        f"{up.node} and flowc sends no retractions (-U) for the rows they replace, so a "
        "second aggregation would count every update", span,
        hint="aggregate the table directly, or aggregate in a window (TUMBLE, HOP or "
             "SESSION) first: a window emits final rows")


def check_filter(cond: exp.Expression, span_of: Any, columns: dict[str, str],
                 is_agg: Any, where: str) -> None:
    """Reject a condition on an updating result that could turn false for a key after it
    was true (Flink would retract the row then; flowc cannot). ``columns`` classifies the
    columns the condition may name; ``is_agg(node)`` tells aggregate calls (HAVING)."""
    stack = [cond]
    while stack:
        c = stack.pop()
        if isinstance(c, exp.Paren):
            stack.append(c.this)
            continue
        if isinstance(c, exp.And):
            stack.extend((c.expression, c.this))
            continue
        if _stays_true(c, columns, is_agg):
            continue
        raise UnsupportedError(
            f"this {where} condition on an updating result is not supported: a row that "
            "stops matching after an update would have to be retracted (-U), which flowc "
            "cannot do", span_of(c),
            hint="conditions on the GROUP BY columns, and COUNT/MAX > or >= a constant "
                 "(MIN < or <=), are supported; or aggregate in a window")


def _stays_true(c: exp.Expression, columns: dict[str, str], is_agg: Any) -> bool:
    aggs = [n for n in c.walk() if is_agg(n)]
    cols = [n for n in c.walk() if isinstance(n, exp.Column)
            and not any(n in a.walk() for a in aggs)]
    if not aggs and all(columns.get(n.name, "").startswith(KEY) for n in cols):
        return True  # only group keys: the same for every update of a key
    if not isinstance(c, (*_GROWS, *_SHRINKS)):
        return False
    left, right = c.this, c.expression
    flipped = False
    if _constant(left) and not _constant(right):
        left, right, flipped = right, left, True
    if not _constant(right):
        return False
    if is_agg(left):
        kind = aggregate_kind(left)
    elif isinstance(left, exp.Column):
        kind = columns.get(left.name)
    else:
        return False
    grows = isinstance(c, _GROWS) != flipped
    return (kind == UP and grows) or (kind == DOWN and not grows)


def _constant(node: exp.Expression) -> bool:
    return not any(isinstance(n, exp.Column) for n in node.walk()) and not any(
        isinstance(n, exp.AggFunc) for n in node.walk())


def changelog(rows: Sequence[Sequence[Any]], key_positions: Sequence[int],
              ) -> list[tuple[str, tuple[Any, ...]]]:
    """Flink's changelog of an updating result from flowc's rows (the latest row of a key
    per update): ``+I`` for a key's first row, then ``-U`` old / ``+U`` new; an update that
    changes nothing is not shown (Flink's GroupAggregate does not emit it)."""
    latest: dict[tuple[Any, ...], tuple[Any, ...]] = {}
    out: list[tuple[str, tuple[Any, ...]]] = []
    for r in rows:
        row = tuple(r)
        key = tuple(row[i] for i in key_positions)
        old = latest.get(key)
        if old is None:
            out.append(("+I", row))
        elif old != row:
            out.append(("-U", old))
            out.append(("+U", row))
        latest[key] = row
    return out
