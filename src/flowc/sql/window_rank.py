"""Window Top-N and window deduplication: ``SELECT ... FROM (SELECT *, ROW_NUMBER() OVER
(PARTITION BY window_start, window_end[, k] ORDER BY ...) AS rn FROM <window TVF or window
aggregate>) WHERE rn <= N`` -> ``<inner rows> | key by ... | window top N by ... as rn``
(or ``window first|last by <time column>`` when Flink plans a WindowDeduplicate: rank 1
ordered by the time attribute), then the outer query over it.

Only queries whose PARTITION BY holds both window columns are taken here (Flink's
WindowRank); any other ROW_NUMBER is left to the rest of the translator.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sqlglot import exp

from flowc.errors import FlowSyntaxError, Span, UnsupportedError
from flowc.parser import ast as A
from flowc.sql.windows import window_rows

if TYPE_CHECKING:
    from flowc.sql.query import Piece, QueryTranslator

_RANKS = (exp.RowNumber, exp.Rank, exp.DenseRank)
_NAMES = {exp.RowNumber: "ROW_NUMBER", exp.Rank: "RANK", exp.DenseRank: "DENSE_RANK"}


def window_rank(qt: QueryTranslator, node: exp.Select) -> Piece | None:
    """The translated query if ``node`` is a window Top-N / deduplication, else None."""
    frm = node.args.get("from_")
    if frm is None or node.args.get("joins") or not isinstance(frm.this, exp.Subquery) or \
            not isinstance(frm.this.this, exp.Select):
        return None
    inner = frm.this.this
    found = [(i, it) for i, it in enumerate(inner.expressions)
             if isinstance(_bare(it), exp.Window) and isinstance(_bare(it).this, _RANKS)]
    if len(found) != 1:
        return None
    index, item = found[0]
    w = _bare(item)
    parts = [p.name for p in w.args.get("partition_by") or [] if isinstance(p, exp.Column)]
    if "window_start" not in parts or "window_end" not in parts:
        return None
    spans = qt.spans
    if not isinstance(w.this, exp.RowNumber):
        name = _NAMES[type(w.this)]
        raise UnsupportedError(f"{name}() function is not supported on Window TopN currently, "
                               "only ROW_NUMBER() is supported.", spans(w.this))
    if index != len(inner.expressions) - 1:
        raise UnsupportedError("ROW_NUMBER() must be the last column of the window Top-N's "
                               "select list here", spans(item),
                               hint="move it to the end: SELECT *, ROW_NUMBER() OVER (...) "
                                    "AS rn")
    if len(parts) != len(w.args["partition_by"]):
        raise UnsupportedError("PARTITION BY of a window Top-N takes columns only",
                               spans(w.args["partition_by"][0]))
    rank_name = item.alias if isinstance(item, exp.Alias) else f"EXPR${index}"
    where = node.args.get("where")
    lo, hi, rest = _rank_range(where.this if where is not None else None, rank_name, spans,
                               spans(node))
    order = w.args.get("order")
    if order is None or not order.expressions:
        raise UnsupportedError("a window Top-N needs ORDER BY", spans(w))

    body = inner.copy()
    body.set("expressions", [e.copy() for e in inner.expressions[:index]])
    piece = qt.query(body)
    if piece.window is not None:
        window_rows(piece)
    items: list[A.OrderItem] = []
    for o in order.expressions:
        if not isinstance(o.this, exp.Column):
            raise UnsupportedError("ORDER BY of a window Top-N takes columns only", spans(o))
        ref = A.FieldRef(o.this.name, None, spans(o.this))
        items.append(A.OrderItem(ref, bool(o.args.get("desc")),
                                 None if o.args.get("nulls_first") is None else
                                 bool(o.args.get("nulls_first")), spans(o)))
    span = spans(w)
    keep = None
    time_columns = {piece.time_column, "window_time"} - {None}
    if (lo, hi) == (1, 1) and len(items) == 1 and items[0].field.name in time_columns:
        keep = "last" if items[0].descending else "first"  # Flink's WindowDeduplicate
    keys = tuple(A.FieldRef(p.name, None, spans(p)) for p in w.args["partition_by"])
    piece.steps.append(A.KeyByStep(keys, spans(w.args["partition_by"][0]), row_key=True))
    piece.steps.append(A.WindowRankStep(lo - 1, hi - lo + 1, tuple(items), rank_name, span,
                                        keep=keep))
    if piece.names is not None:
        piece.names = [*piece.names, rank_name]
    name = qt.named(piece)
    outer = node.copy()
    outer.set("with_", None)
    alias = frm.this.alias
    outer.set("from_", exp.From(this=exp.Table(
        this=exp.to_identifier(name),
        alias=exp.TableAlias(this=exp.to_identifier(alias)) if alias else None)))
    outer.set("where", exp.Where(this=rest) if rest is not None else None)
    return qt.select(outer)


def _bare(node: exp.Expression) -> exp.Expression:
    return node.this if isinstance(node, exp.Alias) else node


def _rank_range(cond: exp.Expression | None, rank: str, spans: object,
                at: Span) -> tuple[int, int, exp.Expression | None]:
    """(first rank, last rank, the other conditions) of the outer WHERE."""
    conjuncts: list[exp.Expression] = []
    todo = [cond] if cond is not None else []
    while todo:
        c = todo.pop()
        if isinstance(c, exp.And):
            todo.extend([c.expression, c.this])
        elif isinstance(c, exp.Paren):
            todo.append(c.this)
        else:
            conjuncts.append(c)
    lo, hi = 1, None
    rest: list[exp.Expression] = []
    for c in conjuncts:
        bound = _bound(c, rank)
        if bound is None:
            if any(isinstance(n, exp.Column) and n.name == rank for n in c.walk()):
                raise UnsupportedError(f"this condition on '{rank}' is not a rank range",
                                       spans(c),  # type: ignore[operator]
                                       hint=f"write {rank} <= N, {rank} = 1 or {rank} BETWEEN "
                                            "a AND b")
            rest.append(c)
            continue
        low, high = bound
        lo = max(lo, low)
        if high is not None:
            hi = high if hi is None else min(hi, high)
    if hi is None:
        raise UnsupportedError(f"a window Top-N needs an upper bound on its row number: WHERE "
                               f"{rank} <= N", at)
    if hi < lo:
        raise FlowSyntaxError(f"the rank range {lo} .. {hi} is empty", at)
    other = None
    for c in rest:
        other = c.copy() if other is None else exp.And(this=other, expression=c.copy())
    return lo, hi, other


def _bound(c: exp.Expression, rank: str) -> tuple[int, int | None] | None:
    def is_rank(n: exp.Expression) -> bool:
        return isinstance(n, exp.Column) and n.name == rank and not n.table

    def num(n: exp.Expression) -> int | None:
        if isinstance(n, exp.Literal) and not n.is_string and str(n.this).isdigit():
            return int(str(n.this))
        return None

    if isinstance(c, exp.Between) and is_rank(c.this):
        a, b = num(c.args["low"]), num(c.args["high"])
        return None if a is None or b is None else (a, b)
    if not isinstance(c, (exp.LTE, exp.LT, exp.EQ, exp.GTE, exp.GT)):
        return None
    left, right = c.this, c.expression
    flipped = {exp.LTE: exp.GTE, exp.LT: exp.GT, exp.GTE: exp.LTE, exp.GT: exp.LT,
               exp.EQ: exp.EQ}
    op: type = type(c)
    if is_rank(right) and num(left) is not None:
        left, right, op = right, left, flipped[op]
    n = num(right)
    if not is_rank(left) or n is None:
        return None
    return {exp.LTE: (1, n), exp.LT: (1, n - 1), exp.EQ: (n, n), exp.GTE: (n, None),
            exp.GT: (n + 1, None)}[op]
