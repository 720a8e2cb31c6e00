"""Top-N and deduplication: ``SELECT ... FROM (SELECT ..., ROW_NUMBER() OVER (PARTITION BY
k ORDER BY c [DESC]) AS rn FROM t) WHERE rn <= N`` (or ``rn < N``, ``rn = 1``) -> .flow's
``key by k | top N by c [desc] [as rn]`` (flowc.parser.topn), read by the outer query as a
table. The rank column is kept when the outer query reads it (Flink's Rank outputs the
rank number then). ``RANK()`` / ``DENSE_RANK()`` fail as in Flink's STREAMING mode. A
PARTITION BY / ORDER BY column of the subquery's FROM that its select list leaves out
(``SELECT a, ROW_NUMBER() OVER (ORDER BY ts) ...``) is ranked on and projected away after the
Top-N, as Flink's Rank reads its input's columns and a Calc drops them.

Window Top-N (``PARTITION BY window_start, window_end``) and OVER aggregates are another
module's; this rewrite leaves any other query to them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sqlglot import exp

from flowc.errors import FlowNameError, UnsupportedError, did_you_mean
from flowc.parser import ast as A
from flowc.sql.joins import _conjuncts
from flowc.sql.rank_strategy import rank_output, update_fast_key

if TYPE_CHECKING:
    from flowc.sql.query import QueryTranslator

_RANKS = {exp.RowNumber: "ROW_NUMBER", exp.Rank: "RANK"}


def _rank_bound(c: exp.Expression, name: str) -> int | None:
    """N of ``rn <= N`` / ``rn < N+1`` / ``rn = 1`` (either side), else None."""
    if not isinstance(c, (exp.LTE, exp.LT, exp.EQ, exp.GTE, exp.GT)):
        return None
    left, right = c.this, c.expression
    flipped = isinstance(right, exp.Column)
    if flipped:
        left, right = right, left
    if not (isinstance(left, exp.Column) and left.name == name and not left.table
            and isinstance(right, exp.Literal) and not right.is_string):
        return None
    n = int(right.this)
    kind = type(c)
    if flipped:
        kind = {exp.GTE: exp.LTE, exp.GT: exp.LT}.get(kind, kind)
    if kind is exp.LTE:
        return n
    if kind is exp.LT:
        return n - 1
    if kind is exp.EQ and n == 1:
        return 1
    return None


def _selected(select: exp.Select) -> set[str] | None:
    """The names a select list gives its columns; None when it has a ``*``."""
    if any(isinstance(e, exp.Star) or (isinstance(e, exp.Column) and
                                       isinstance(e.this, exp.Star)) for e in select.expressions):
        return None
    return {e.alias if isinstance(e, exp.Alias) else e.name for e in select.expressions
            if isinstance(e, (exp.Alias, exp.Column))}


def _add_hidden(qt: QueryTranslator, inner: exp.Select,
                columns: list[exp.Expression]) -> set[str]:
    """Append to ``inner``'s select list the PARTITION BY / ORDER BY columns it does not
    select (they are read from its FROM, as in Flink); their names, to drop after ranking."""
    selected = _selected(inner)
    if selected is None:
        return set()
    frm = inner.args.get("from_")
    source = frm.this if frm is not None else None
    known = _selected(source.this) if isinstance(source, exp.Subquery) and \
        isinstance(source.this, exp.Select) else None
    hidden: set[str] = set()
    for c in columns:
        if known is not None and isinstance(c, exp.Column) and c.name not in known:
            raise FlowNameError(f"Column '{c.name}' not found in any table", qt.spans(c),
                                hint=did_you_mean(c.name, sorted(known)) or "the OVER clause "
                                "reads the columns of the subquery's FROM")  # Flink's text
        if isinstance(c, exp.Column) and c.name not in selected | hidden:
            copy = c.copy()
            r = qt.spans.ranges.get(id(c))
            if r is not None:  # an unknown column is reported where the OVER clause names it
                qt.spans.ranges[id(copy)] = r
            inner.append("expressions", copy)
            hidden.add(c.name)
    return hidden


def rewrite_top_n(qt: QueryTranslator, node: exp.Select) -> bool:
    """Rewrite ``node`` in place when it is a Top-N query (its FROM becomes the Top-N's
    stream, its WHERE loses the rank condition); False (untouched) otherwise."""
    frm = node.args.get("from_")
    where = node.args.get("where")
    if frm is None or where is None or node.args.get("joins") or \
            not isinstance(frm.this, exp.Subquery) or not isinstance(frm.this.this, exp.Select):
        return False
    inner: exp.Select = frm.this.this
    found = None
    for item in inner.expressions:
        if isinstance(item, exp.Alias) and isinstance(item.this, exp.Window):
            found = item
            break
    if found is None:
        return False
    window: exp.Window = found.this
    rank_name = found.alias
    conds = _conjuncts(where.this)
    bounds = [(c, _rank_bound(c, rank_name)) for c in conds]
    bound = next(((c, n) for c, n in bounds if n is not None), None)
    if bound is None:
        return False
    partition = list(window.args.get("partition_by") or [])
    if any(isinstance(p, exp.Column) and p.name in ("window_start", "window_end")
           for p in partition):
        return False  # window Top-N: not this module's
    spans = qt.spans
    fn = window.this
    if isinstance(fn, (exp.Rank,)) or (isinstance(fn, exp.Anonymous) and
                                       str(fn.this).upper() == "DENSE_RANK") or \
            isinstance(fn, getattr(exp, "DenseRank", ())):
        what = "RANK()" if isinstance(fn, exp.Rank) else "DENSE_RANK()"
        raise UnsupportedError(f"{what} on streaming table is not supported currently",
                               spans(fn), hint="use ROW_NUMBER() (Flink's text)")
    if not isinstance(fn, exp.RowNumber):
        return False
    order = window.args.get("order")
    if order is None or not order.expressions:
        raise UnsupportedError("a Top-N needs ORDER BY in its OVER clause", spans(window))
    found.pop()  # the inner query without the rank column
    hidden = _add_hidden(qt, inner, [*partition, *(o.this for o in order.expressions)])
    piece = qt.query(inner)
    name = qt.named(piece)
    schema = qt.catalog.schema_of(name)
    assert schema is not None

    def column(c: exp.Expression, what: str) -> A.FieldRef:
        if not isinstance(c, exp.Column) or c.name not in schema.names:
            cname = c.name if isinstance(c, exp.Column) else c.sql()
            raise FlowNameError(f"unknown column '{cname}' in the OVER clause's {what}",
                                spans(c), hint=did_you_mean(cname, schema.names) or
                                "partition and order by columns of the subquery")
        return A.FieldRef(c.name, None, spans(c))

    keys = tuple(column(p, "PARTITION BY") for p in partition)
    items = tuple(A.OrderItem(column(o.this, "ORDER BY"), bool(o.args.get("desc")),
                              o.args.get("nulls_first"), spans(o))
                  for o in order.expressions)
    outer_reads = any(isinstance(n, exp.Star) or (isinstance(n, exp.Column) and
                                                  n.name == rank_name)
                      for item in node.expressions for n in item.walk())
    wspan = spans(window)
    steps: list[A.Step] = []
    if keys:
        steps.append(A.KeyByStep(keys, wspan, row_key=True))
    order_cols = [(i.field.name, i.descending) for i in items]
    part_cols = [k.name for k in keys]
    unique = update_fast_key(piece.updating, part_cols, order_cols) if piece.updating else None
    steps.append(A.TopStep(bound[1], items, rank_name if outer_reads else None, wspan,
                           unique=unique))
    from flowc.sql.query import Piece

    names = list(schema.names) + ([rank_name] if outer_reads else [])
    if hidden:
        names = [n for n in names if n not in hidden]
        steps.append(A.MapStep(tuple(A.SelectItem(A.FieldRef(n, None, wspan), None, wspan)
                                     for n in names), wspan))
    top = Piece((A.FieldRef(name, None, wspan),), steps, names, frm.this.alias or name, wspan)
    part = ", ".join(k.name for k in keys)
    strategy = ("AppendFastStrategy" if piece.updating is None else "RetractStrategy"
                if unique is None else
                f"UpdateFastStrategy[{','.join(str(i) for i in sorted(map(names.index, unique)))}]")
    top.updating = rank_output(
        piece.updating, f"Rank(strategy=[{strategy}], rankType=[ROW_NUMBER], "
        f"rankRange=[rankStart=1, rankEnd={bound[1]}], partitionBy=[{part}], "
        f"orderBy=[{order.sql()[9:]}], select=[{', '.join(names)}])", part_cols, order_cols,
        rank_name if outer_reads else None, bound[1] == 1,
        bool(order_cols) and order_cols[0][0] == qt.catalog.rowtime_of(name))
    if qt.catalog.is_batch():  # BATCH: a sort-based Rank emitting final rows (parser.topn.BatchTopN)
        top.updating = None
    top_name = qt.named(top)
    alias = frm.this.alias
    frm.set("this", exp.Table(this=exp.to_identifier(top_name),
                              alias=exp.TableAlias(this=exp.to_identifier(alias))
                              if alias else None))
    rest = [c for c in conds if c is not bound[0]]
    if rest:
        cond = rest[0]
        for c in rest[1:]:
            cond = exp.And(this=cond, expression=c)
        where.set("this", cond)
    else:
        node.set("where", None)
    return True
