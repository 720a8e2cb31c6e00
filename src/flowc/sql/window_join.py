"""Window joins of window aggregates (and outer window joins): ``FROM (<window aggregate>)
L [LEFT | RIGHT | FULL] JOIN (<window aggregate>) R ON L.k = R.k AND L.window_start =
R.window_start AND L.window_end = R.window_end`` -> ``L | window [kind] join R on ...``
(flowc.parser.window_join: Flink's WindowJoin, emitted when the watermark passes the
window's end). The window columns of both sides stay available after the join.

An inner join of two window table functions that reads no window column after the join
stays with flowc.sql.joins (a DataStream window join over the same windows); every other
join whose ON equates both window columns is taken here.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from sqlglot import exp

from flowc.errors import FlowSyntaxError, Span, UnsupportedError
from flowc.parser import ast as A
from flowc.sql.changelog import flowc_limit
from flowc.sql.join_names import JoinSides
from flowc.sql.joins import _conjuncts
from flowc.sql.windows import window_rows

if TYPE_CHECKING:
    from flowc.sql.query import Piece, QueryTranslator

_WINDOW = ("window_start", "window_end")
_KINDS = {"": "inner", "LEFT": "left", "RIGHT": "right", "FULL": "full"}


def _is_tvf(node: exp.Expression) -> bool:
    """A window table function, directly or as ``(SELECT * FROM TABLE(TUMBLE(...)) [WHERE])``."""
    if isinstance(node, exp.Subquery) and isinstance(node.this, exp.Select):
        sel = node.this
        if sel.args.get("group") is not None or sel.args.get("joins"):
            return False
        frm = sel.args.get("from_")
        node = frm.this if frm is not None else node
    return isinstance(node, exp.Table) and isinstance(node.this, exp.Anonymous)


def _takes(select: exp.Select, left: exp.Expression, join: exp.Join) -> bool:
    on = join.args.get("on")
    if on is None:
        return False
    found: set[str] = set()
    for c in _conjuncts(on):
        if isinstance(c, exp.EQ) and isinstance(c.this, exp.Column) and \
                isinstance(c.expression, exp.Column) and c.this.name == c.expression.name \
                and c.this.name in _WINDOW:
            found.add(c.this.name)
    if found != set(_WINDOW):
        return False
    side = (join.args.get("side") or "").upper()
    kind = (join.args.get("kind") or "").upper()
    if side not in _KINDS or kind not in ("", "INNER", "OUTER"):
        return False
    if side or not (_is_tvf(left) and _is_tvf(join.this)):
        return True
    reads = [select.expressions, select.args.get("where")]
    return any(isinstance(n, exp.Column) and n.name in (*_WINDOW, "window_time")
               for part in reads if part is not None
               for item in (part if isinstance(part, list) else [part]) for n in item.walk())


def window_join(qt: QueryTranslator, select: exp.Select, left_node: exp.Expression,
                joins: list[exp.Join], span: Span
                ) -> tuple[Piece, Callable[[exp.Column, Span], A.Expr]] | None:
    """The joined piece and its column resolver, or None when this is not such a join."""
    if len(joins) != 1 or not _takes(select, left_node, joins[0]):
        return None
    from flowc.sql.query import Piece

    spans = qt.spans
    join = joins[0]
    jspan = spans(join)
    kind = _KINDS[(join.args.get("side") or "").upper()]
    left, right = qt.from_item(left_node), qt.from_item(join.this)
    for p in (left, right):
        if p.updating is not None:
            flowc_limit("joining", p.updating, p.span,
                        hint="join the table itself, or a windowed aggregate of it")
        if p.window is not None:
            window_rows(p)
    lq, rq = left.alias, right.alias
    if lq == rq:
        raise FlowSyntaxError(f"both sides of the join are called '{lq}'", jspan,
                              hint="give them aliases: FROM t a JOIN t b ON ...")
    lname, rname = qt.named(left), qt.named(right)
    ls, rs = qt.catalog.schema_of(lname), qt.catalog.schema_of(rname)
    assert ls is not None and rs is not None
    for schema, p in ((ls, left), (rs, right)):
        if not all(w in schema.names for w in _WINDOW):
            raise UnsupportedError("a window join needs window_start and window_end on both "
                                   "sides: select them in the window aggregate", p.span)
    sides = JoinSides(lq, rq, ls, rs)
    which = sides.which

    keys: list[A.JoinKey] = []
    on = join.args["on"]
    for c in _conjuncts(on):
        cspan = spans(c)
        if not (isinstance(c, exp.EQ) and isinstance(c.this, exp.Column) and
                isinstance(c.expression, exp.Column)):
            raise UnsupportedError("this window join condition is not supported: a window "
                                   "join compares keys and the window columns with '='",
                                   cspan, hint="filter in WHERE (on the join's output) instead")
        a, b = which(c.this, spans(c.this)), which(c.expression, spans(c.expression))
        if a[0] == b[0]:
            raise UnsupportedError("a join condition must compare the two sides", cspan)
        if a[0] == "right":
            a, b = b, a
        if a[1] in _WINDOW or b[1] in _WINDOW:
            if a[1] != b[1]:
                raise FlowSyntaxError("join window_start with window_start and window_end "
                                      "with window_end", cspan)
            continue
        keys.append(A.JoinKey(A.FieldRef(a[1], lname, spans(c.this)),
                              A.FieldRef(b[1], rq, spans(c.expression)), cspan))
    if not keys:
        raise UnsupportedError("a window join needs at least one key equality (a.k = b.k) "
                               "besides the window columns", jspan)
    step = A.WindowJoinStep(rname, rq, tuple(keys), kind, jspan, spans(join.this))
    piece = Piece((A.FieldRef(lname, None, spans(left_node)),), [step], sides.names(), lq,
                  span)
    piece.star_expansion = sides.stars
    return piece, sides.resolve
