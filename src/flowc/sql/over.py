"""OVER aggregates -> ``[map *, partition expressions] | key by p | over <frame> aggregate
... | map <select list>`` (the .flow ``over`` step, flowc.parser.over).

``agg(x) OVER (PARTITION BY k ORDER BY rowtime ROWS BETWEEN n PRECEDING AND CURRENT ROW)``,
``RANGE BETWEEN INTERVAL ... PRECEDING AND CURRENT ROW`` and ``UNBOUNDED PRECEDING``, inline
or named in a ``WINDOW w AS (...)`` clause; all aggregates of one SELECT share one window
(Flink's rule). What Flink rejects gets Flink's text; what Flink runs but flowc does not
(an unbounded window ordered by a non-time column, which updates its
results) gets a positioned error saying so. Without PARTITION BY all rows are one partition
(keyed by a constant: one subtask holds them, as Flink's parallelism 1).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from sqlglot import exp

from flowc.errors import (
    FlowNameError,
    FlowSyntaxError,
    FlowTypeError,
    Span,
    UnsupportedError,
    did_you_mean,
)
from flowc.parser import ast as A
from flowc.sql.exprs import ExprTranslator, interval_millis
from flowc.types import INT

if TYPE_CHECKING:
    from flowc.sql.query import Piece, QueryTranslator


@dataclass(frozen=True)
class Frame:
    partition: tuple[str, ...]  # SQL text of each PARTITION BY item
    order: str
    rows: bool
    preceding: int | None  # None: unbounded


def over_windows(node: exp.Select) -> list[exp.Window]:
    """The OVER calls of the select list (not the WINDOW clause's definitions)."""
    return [n for item in node.expressions for n in item.walk() if isinstance(n, exp.Window)]


def translate_over(qt: QueryTranslator, node: exp.Select, piece: Piece, ex: ExprTranslator,
                   resolve: Callable[[exp.Column, Span], A.Expr]) -> Piece:
    from flowc.sql.aggregate import _integer_averages, stream_of
    from flowc.sql.query import is_aggregate

    spans = qt.spans
    for key in ("group", "having"):
        if node.args.get(key) is not None:
            raise UnsupportedError("OVER aggregates together with GROUP BY are not supported",
                                   spans(node.args[key]),
                                   hint="aggregate in a subquery, then apply OVER to its rows")
    named = {str(w.this.name if isinstance(w.this, exp.Identifier) else w.alias): w
             for w in node.args.get("windows") or []}
    windows = over_windows(node)
    rowtime = qt.catalog.rowtime_of(stream_of(piece) or "")
    frames: list[tuple[Frame, exp.Window]] = []
    for w in windows:
        if not is_aggregate(w.this):
            raise UnsupportedError(f"{w.this.sql()} OVER (...) is not supported: only "
                                   "aggregate functions (COUNT, SUM, AVG, MIN, MAX, "
                                   "FIRST_VALUE, LAST_VALUE) run over a window", spans(w.this),
                                   hint="ROW_NUMBER() is supported for window Top-N only")
        definition = _definition(w, named, spans)
        frames.append((_frame(definition, rowtime, spans), w))
    first = frames[0][0]
    for f, w in frames[1:]:
        if f != first:
            raise UnsupportedError("Over Agg: Unsupported use of OVER windows. All aggregates "
                                   "must be computed on the same window. please re-check the "
                                   "over window statement.", spans(w),
                                   hint="give all OVER aggregates of this SELECT the same "
                                        "window (a WINDOW w AS (...) clause helps)")
    for item in node.expressions:  # aggregates outside OVER would need GROUP BY
        todo = [item]
        while todo:
            sub = todo.pop()
            if isinstance(sub, exp.Window):
                continue
            if is_aggregate(sub):
                raise UnsupportedError("OVER aggregates together with GROUP BY aggregates are "
                                       "not supported", spans(sub),
                                       hint=f"write {sub.sql()} OVER (...)")
            todo.extend(sub.iter_expressions())

    definition = _definition(frames[0][1], named, spans)
    span = spans(node)
    # PARTITION BY: columns as they are, expressions as hidden columns first
    keys: list[A.FieldRef] = []
    extra: list[A.SelectItem] = []
    for i, p in enumerate(definition.args.get("partition_by") or []):
        if isinstance(p, exp.Column):
            ref = resolve(p, spans(p))
            if isinstance(ref, A.FieldRef):
                keys.append(ref)
                continue
        hidden = f"_over_key{i}"
        extra.append(A.SelectItem(ex(p), hidden, spans(p)))
        keys.append(A.FieldRef(hidden, None, spans(p)))
    if not keys:  # one partition of all rows (Flink runs it at parallelism 1)
        extra.append(A.SelectItem(A.Literal(0, INT, span), "_over_all", span))
        keys.append(A.FieldRef("_over_all", None, span))
    original = list(piece.names) if piece.names is not None else None
    if extra:
        star = A.SelectItem(None, None, span, star=True)
        piece.steps.append(A.MapStep((star, *extra), span))
    agg_items: list[A.SelectItem] = []
    by_text: dict[str, str] = {}
    for w in windows:
        text = w.this.sql()
        if text not in by_text:
            by_text[text] = f"_over{len(agg_items)}"
            call = ex(w.this)
            agg_items.append(A.SelectItem(call, by_text[text], spans(w)))
    int_avgs = _integer_averages(qt, piece, agg_items)
    for w in windows:
        name = by_text[w.this.sql()]
        ref: A.Expr = A.FieldRef(name, None, spans(w))
        ex.overrides[id(w)] = A.Cast(ref, INT, ref.span) if name in int_avgs else ref
    piece.steps.append(A.KeyByStep(tuple(keys), spans(definition), row_key=True))
    order = A.FieldRef(first.order, None, span)
    piece.steps.append(A.OverStep(first.rows, first.preceding, tuple(agg_items), span,
                                  order=order))
    if original is not None and piece.star_expansion is None:
        piece.star_expansion = lambda q, s: [(n, n) for n in original]
    items, names = qt.projection(node, piece, ex)
    assert items is not None  # the OVER columns are always selected
    piece.steps.append(A.MapStep(tuple(items), span))
    piece.names = names
    piece.span = span
    return piece


def _definition(w: exp.Window, named: dict[str, exp.Window],
                spans: Callable[..., Span]) -> exp.Window:
    """The window of ``agg OVER w`` (from the WINDOW clause) or of ``agg OVER (...)``."""
    ref = w.args.get("alias")
    if ref is None or w.args.get("partition_by") or w.args.get("order") or \
            w.args.get("spec"):
        return w
    name = ref.name
    if name not in named:
        raise FlowNameError(f"Window '{name}' not found", spans(ref),
                            hint=did_you_mean(name, named) or
                            f"define it: WINDOW {name} AS (PARTITION BY ... ORDER BY ...)")
    return named[name]


def _frame(w: exp.Window, rowtime: str | None, spans: Callable[..., Span]) -> Frame:
    order = w.args.get("order")
    at = spans(w)
    if order is None or not order.expressions:
        raise UnsupportedError("an OVER window needs ORDER BY <time attribute>", at,
                               hint="for example: OVER (PARTITION BY k ORDER BY ts ROWS "
                                    "BETWEEN 2 PRECEDING AND CURRENT ROW)")
    if len(order.expressions) > 1:
        raise UnsupportedError("The window can only be ordered by a single time column.",
                               spans(order.expressions[1]))
    ordered = order.expressions[0]
    if ordered.args.get("desc"):
        raise UnsupportedError("The window can only be ordered in ASCENDING mode.",
                               spans(ordered))
    col = ordered.this
    spec = w.args.get("spec")
    kind = str(spec.args.get("kind")).upper() if spec is not None else "RANGE"
    start = spec.args.get("start") if spec is not None else "UNBOUNDED"
    if spec is not None:
        for side, bound in (("start_side", "start"), ("end_side", "end")):
            if spec.args.get(side) == "FOLLOWING" or spec.args.get(bound) == "UNBOUNDED" and \
                    bound == "end":
                raise UnsupportedError("OVER RANGE FOLLOWING windows are not supported yet.",
                                       spans(spec))
        end = spec.args.get("end")
        if end is not None and str(end).upper() != "CURRENT ROW":
            raise UnsupportedError("OVER windows end at CURRENT ROW", spans(spec))
    # a view's or CTE's time attribute is not tracked: its ORDER BY column is taken as one
    # (the over step checks that it is a timestamp, and orders the rows by its values)
    if not isinstance(col, exp.Column) or (rowtime is not None and col.name != rowtime):
        if start == "UNBOUNDED":
            raise UnsupportedError("an unbounded OVER window ordered by a column that is not "
                                   "the time attribute updates its results: not supported",
                                   spans(col), hint=f"ORDER BY {rowtime}" if rowtime else None)
        raise UnsupportedError("Non-time attribute sort is not supported for bounded OVER "
                               "window.", spans(col),
                               hint=f"ORDER BY {rowtime}, the table's time attribute"
                               if rowtime else "order by the WATERMARK column of the table")
    preceding: int | None
    if start == "UNBOUNDED":
        preceding = None
    elif isinstance(start, str) and start.upper() == "CURRENT ROW":
        preceding = 0
    elif kind == "ROWS":
        if not (isinstance(start, exp.Literal) and not start.is_string and
                str(start.this).isdigit()):
            raise FlowTypeError("ROWS takes a row count: ROWS BETWEEN 2 PRECEDING AND "
                                "CURRENT ROW", spans(start))
        preceding = int(str(start.this))
    else:
        if not isinstance(start, exp.Interval):
            raise FlowSyntaxError("Data Type mismatch between ORDER BY and RANGE clause",
                                  spans(start), hint="a time range is an interval: RANGE "
                                  "BETWEEN INTERVAL '10' SECOND PRECEDING AND CURRENT ROW")
        preceding = interval_millis(start, spans(start))
    partition = tuple(p.sql() for p in w.args.get("partition_by") or [])
    return Frame(partition, col.name, kind == "ROWS", preceding)
