"""ORDER BY / LIMIT / OFFSET of a query: .flow's ``order by`` and ``limit`` steps after it
(one sort operator at parallelism 1: Flink's Sort, SortLimit or Limit). ORDER BY needs BATCH
mode (Flink sorts a STREAMING query only on an ascending time attribute, which flowc does
not build yet); LIMIT alone also works in STREAMING (the first rows, as they come); ORDER BY names output columns or their positions; nulls sort as Flink's (first
when ascending, last when descending) unless NULLS FIRST / LAST says otherwise."""

from __future__ import annotations

from typing import TYPE_CHECKING

from sqlglot import exp

from flowc.errors import FlowNameError, FlowSyntaxError, UnsupportedError, did_you_mean
from flowc.parser import ast as A

if TYPE_CHECKING:
    from flowc.sql.query import Piece, QueryTranslator

MODIFIERS = ("order", "limit", "offset")


def has_modifiers(node: exp.Expression) -> bool:
    return isinstance(node, (exp.Select, exp.Union)) and any(
        node.args.get(k) is not None for k in MODIFIERS)


def ordered_query(tr: QueryTranslator, node: exp.Expression) -> Piece:
    from flowc.sql.query import window_rows

    mods = {k: node.args.get(k) for k in MODIFIERS}
    first = next(m for m in mods.values() if m is not None)
    if not tr.catalog.is_batch() and mods["order"] is not None:
        raise UnsupportedError("ORDER BY is only supported in BATCH mode", tr.spans(first),
                               hint="SET 'execution.runtime-mode' = 'batch'; (a STREAMING "
                                    "sort on a time attribute is not built yet; LIMIT alone "
                                    "works in STREAMING)")
    for k in MODIFIERS:
        node.args.pop(k, None)
    try:
        piece = tr.query(node)
    finally:
        for k, m in mods.items():
            if m is not None:
                node.set(k, m)
    if piece.window is not None:
        window_rows(piece)
    span = tr.spans(first)
    if mods["order"] is not None:
        items = tuple(_item(tr, o, piece) for o in mods["order"].expressions)
        piece.steps.append(A.OrderStep(items, tr.spans(mods["order"])))
    if mods["limit"] is not None or mods["offset"] is not None:
        count = _number(tr, mods["limit"], "LIMIT") if mods["limit"] is not None else None
        offset = _number(tr, mods["offset"], "OFFSET") if mods["offset"] is not None else 0
        where = tr.spans(mods["limit"] if mods["limit"] is not None else mods["offset"], span)
        piece.steps.append(A.LimitStep(count if count is not None else 2**62, offset, where))
    return piece


def _item(tr: QueryTranslator, o: exp.Expression, piece: Piece) -> A.OrderItem:
    this = o.this if isinstance(o, exp.Ordered) else o
    span = tr.spans(this, tr.spans(o))
    names = piece.names
    if isinstance(this, exp.Literal) and not this.is_string and this.this.isdigit():
        pos = int(this.this)
        if names is None or not 1 <= pos <= len(names):
            raise FlowSyntaxError(f"ORDER BY {pos}: there is no output column {pos}", span)
        name = names[pos - 1]
    elif isinstance(this, exp.Column) and not this.table:
        name = this.name
        if names is not None and name not in names:
            raise FlowNameError(f"ORDER BY '{name}': not a column of the query's result",
                                span, hint=did_you_mean(name, names) or
                                "ORDER BY names output columns (or their positions)")
    else:
        raise UnsupportedError("ORDER BY takes output column names or positions", span,
                               hint="compute the value as a column in SELECT and order by it")
    desc = bool(o.args.get("desc")) if isinstance(o, exp.Ordered) else False
    nulls = o.args.get("nulls_first") if isinstance(o, exp.Ordered) else None
    nulls_first = (not desc) if nulls is None else bool(nulls)
    return A.OrderItem(A.FieldRef(name, None, span), desc, nulls_first, tr.spans(o))


def _number(tr: QueryTranslator, node: exp.Expression, what: str) -> int:
    value = node.args.get("expression")
    if isinstance(value, exp.Literal) and not value.is_string and value.this.isdigit():
        return int(value.this)
    raise FlowSyntaxError(f"{what} takes a whole number", tr.spans(value or node))
