"""SQL joins -> .flow ``interval join`` / window ``join`` / regular ``join`` steps.

Three kinds of join:

- regular joins: ON key equalities only, INNER / LEFT / RIGHT / FULL; unbounded state on
  both sides, outer joins retract their null-padded rows (flowc.parser.regular_join);

- interval joins: key equalities plus a time bound between the two event-time columns,
  ``b.ts BETWEEN a.ts - INTERVAL '1' MINUTE AND a.ts`` or two comparisons
  (``b.ts >= a.ts - ...`` and ``b.ts < a.ts + ...``; a strict bound moves by 1 ms, as in
  Flink);
- window joins: both sides are the same window TVF, joined on ``window_start``,
  ``window_end`` and keys.

The output is the left fields, then the right fields (a clashing right field is renamed
``<right alias>_<field>``, as .flow does); column references resolve to those names.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from sqlglot import exp

from flowc.errors import FlowSyntaxError, Span, UnsupportedError
from flowc.parser import ast as A
from flowc.sql.changelog import flowc_limit
from flowc.sql.exprs import interval_millis
from flowc.sql.join_names import JoinSides
from flowc.sql.rank_strategy import join_output

if TYPE_CHECKING:
    from flowc.sql.query import Piece, QueryTranslator

_FLIP = {">=": "<=", ">": "<", "<=": ">=", "<": ">"}
_OPS = {exp.GTE: ">=", exp.GT: ">", exp.LTE: "<=", exp.LT: "<"}


def _conjuncts(node: exp.Expression) -> list[exp.Expression]:
    out: list[exp.Expression] = []
    stack = [node]
    while stack:
        n = stack.pop()
        if isinstance(n, exp.Paren):
            stack.append(n.this)
        elif isinstance(n, exp.And):
            stack.append(n.expression)
            stack.append(n.this)
        else:
            out.append(n)
    return out


def translate_join(qt: QueryTranslator, left_node: exp.Expression, joins: list[exp.Join],
                   span: Span) -> tuple[Piece, Callable[[exp.Column, Span], A.Expr]]:
    spans = qt.spans
    if len(joins) > 1:
        raise UnsupportedError("joins of more than two inputs are not supported", span,
                               hint="join two streams in a view, then join the view")
    join = joins[0]
    jspan = spans(join)
    side_word = (join.args.get("side") or "").upper()
    kind = (join.args.get("kind") or "").upper()
    if kind not in ("", "INNER", "OUTER") or join.args.get("method"):
        what = " ".join(w for w in (side_word, kind) if w and w != "OUTER") or kind
        raise UnsupportedError(f"{what} JOIN is not supported",
                               spans.keyword_before(join, r"(?:LEFT|RIGHT|FULL|CROSS|"
                                                    r"NATURAL|SEMI|ANTI)[\w\s]*?JOIN"),
                               hint="flowc supports inner, left, right and full joins")
    join_kind = side_word.lower() or "inner"
    on = join.args.get("on")
    if on is None:
        raise UnsupportedError("a join without ON (a cross join) is not supported", jspan)
    left = qt.from_item(left_node)
    right = qt.from_item(join.this)
    windowed = (left.window is not None, right.window is not None)
    if windowed[0] != windowed[1]:
        raise UnsupportedError("a window join needs the same window table function on both "
                               "sides", jspan)
    lq, rq = left.alias, right.alias
    if lq == rq:
        raise FlowSyntaxError(f"both sides of the join are called '{lq}'", jspan,
                              hint="give them aliases: FROM t a JOIN t b ON ...")
    window = left.window
    ltime, rtime = left.time_column, right.time_column
    if windowed[0]:
        assert left.window is not None and right.window is not None
        if left.window.spec.__dict__ | {"span": None} != right.window.spec.__dict__ | {
                "span": None}:
            raise UnsupportedError("the two sides of a window join use different windows",
                                   jspan)
        left.window = right.window = None
    lname, rname = qt.named(left), qt.named(right)
    ls, rs = qt.catalog.schema_of(lname), qt.catalog.schema_of(rname)
    assert ls is not None and rs is not None
    if not windowed[0]:
        ltime, rtime = qt.catalog.rowtime_of(lname), qt.catalog.rowtime_of(rname)
    sides = JoinSides(lq, rq, ls, rs, window_columns=windowed[0])
    which = sides.which
    keys: list[A.JoinKey] = []
    window_eq: set[str] = set()
    bounds: dict[str, int] = {}
    for c in _conjuncts(on):
        cspan = spans(c)
        if isinstance(c, exp.EQ) and isinstance(c.this, exp.Column) and \
                isinstance(c.expression, exp.Column):
            a = which(c.this, spans(c.this))
            b = which(c.expression, spans(c.expression))
            if a[0] == b[0]:
                raise UnsupportedError("a join condition must compare the two sides", cspan)
            if a[0] == "right":
                a, b = b, a
            if a[1] in ("window_start", "window_end") and windowed[0]:
                if a[1] != b[1]:
                    raise FlowSyntaxError("join window_start with window_start and "
                                          "window_end with window_end", cspan)
                window_eq.add(a[1])
                continue
            keys.append(A.JoinKey(A.FieldRef(a[1], lname, spans(c.this)),
                                  A.FieldRef(b[1], rq, spans(c.expression)), cspan))
            continue
        if not windowed[0] and _time_bound(c, which, spans, bounds, ltime, rtime):
            continue
        raise UnsupportedError("this join condition is not supported: a join compares keys "
                               "with '=' and bounds the two event times", cspan,
                               hint="filter in WHERE (on the join's output) instead")
    if not keys:
        raise UnsupportedError("a join needs at least one key equality (a.k = b.k)", jspan)
    regular = not windowed[0] and not bounds
    if not regular:
        if join_kind != "inner" and windowed[0]:
            raise UnsupportedError(f"{join_kind.upper()} JOIN of two window table functions "
                                   "is not supported", jspan,
                                   hint="join the window aggregates of both sides (a window "
                                        "join of aggregates may be outer)")
        for side in (left, right):
            if side.updating is not None:
                flowc_limit("joining", side.updating, side.span,
                            hint="join the table itself, or a windowed aggregate of it")
    else:
        return _regular(qt, left_node, lname, rname, sides, keys, join_kind, (left, right),
                        jspan, span, spans(join.this))
    # SQL: a null key equals nothing, so rows with one never join (and a null must not
    # reach the keyed join, where the DataStream rule fails on it): filter them out first
    # an outer side keeps its null-key rows (padded: the interval join's row keys)
    right_in = qt.named(_not_null(rname, [k.right.name for k in keys], rs.names, jspan)) \
        if join_kind in ("inner", "left") else rname
    rq_alias = rq if right_in != rq else None
    if windowed[0]:
        if window_eq != {"window_start", "window_end"}:
            raise FlowSyntaxError("a window join needs ON a.window_start = b.window_start "
                                  "AND a.window_end = b.window_end", spans(on))
        assert window is not None
        step = A.JoinStep(right_in, rq_alias, tuple(keys), window.spec, None, None, None,
                          jspan, spans(join.this))
    else:
        if "lower" not in bounds or "upper" not in bounds:
            raise UnsupportedError("a join with one time bound is not supported", jspan,
                                   hint=f"bound the event times on both sides, e.g. {rq}.ts "
                                   f"BETWEEN {lq}.ts - INTERVAL '1' MINUTE AND {lq}.ts")
        step = A.JoinStep(right_in, rq_alias, tuple(keys), None, None, bounds["lower"],
                          bounds["upper"], jspan, spans(join.this),
                          kind=None if join_kind == "inner" else join_kind, table=True)
    from flowc.sql.query import Piece

    left_filter = _not_null(lname, [k.left.name for k in keys], ls.names, jspan).steps \
        if join_kind in ("inner", "right") else []
    piece = Piece((A.FieldRef(lname, None, spans(left_node)),), left_filter + [step],
                  sides.names(), lq, span)
    piece.star_expansion = sides.stars
    return piece, sides.resolve


_JOIN_TYPES = {"inner": "InnerJoin", "left": "LeftOuterJoin", "right": "RightOuterJoin",
               "full": "FullOuterJoin"}


def _regular(qt: QueryTranslator, left_node: exp.Expression, lname: str, rname: str,
             sides: JoinSides, keys: list[A.JoinKey], join_kind: str,
             pieces: tuple[Piece, Piece], jspan: Span, span: Span,
             right_span: Span) -> tuple[Piece, Callable[[exp.Column, Span], A.Expr]]:
    """A regular join (ON key equalities only): Flink's Join operator, retracting on outer
    sides (flowc.parser.regular_join)."""
    from flowc.sql.query import Piece

    rq = sides.right_alias
    step = A.JoinStep(rname, rq if rq != rname else None, tuple(keys), None, None,
                      None, None, jspan, right_span, kind=join_kind)
    names = sides.names()
    piece = Piece((A.FieldRef(lname, None, qt.spans(left_node)),), [step], names,
                  sides.left_alias, span)
    if join_kind != "inner" or any(p.updating is not None for p in pieces):
        where = " AND ".join(f"=({k.left.name}, {sides.physical_right[k.right.name]})"
                             for k in keys)
        node = (f"Join(joinType=[{_JOIN_TYPES[join_kind]}], where=[{where}], "
                f"select=[{', '.join(names)}], leftInputSpec=[NoUniqueKey], "
                "rightInputSpec=[NoUniqueKey])")
        piece.updating = join_output(pieces[0].updating, pieces[1].updating,
                                     [(k.left.name, k.right.name) for k in keys],
                                     sides.left.names, sides.physical_right, node, join_kind)
    piece.star_expansion = sides.stars
    return piece, sides.resolve


def _not_null(stream: str, keys: list[str], names: tuple[str, ...] | list[str],
              span: Span) -> Piece:
    """``stream | filter k1 is not null and ...``."""
    from flowc.sql.query import Piece

    cond: A.Expr | None = None
    for k in keys:
        test = A.IsNull(A.FieldRef(k, None, span), True, span)
        cond = test if cond is None else A.Binary("and", cond, test, span)
    assert cond is not None
    return Piece((A.FieldRef(stream, None, span),), [A.FilterStep(cond, span)], list(names),
                 stream, span)


def _time_bound(c: exp.Expression, which: Callable[[exp.Column, Span], tuple[str, str]],
                spans: Callable[..., Span], bounds: dict[str, int], ltime: str | None,
                rtime: str | None) -> bool:
    """Record ``right.ts - left.ts`` bounds from a BETWEEN or a comparison; False if ``c``
    is not a bound between the two time columns."""
    if isinstance(c, exp.Between):
        lo = exp.GTE(this=c.this, expression=c.args["low"])
        hi = exp.LTE(this=c.this, expression=c.args["high"])
        parts = [(lo, spans(c)), (hi, spans(c))]
    elif type(c) in _OPS:
        parts = [(c, spans(c))]
    else:
        return False
    found: list[tuple[str, int]] = []
    for cmp, cspan in parts:
        a = _side_offset(cmp.this, which, spans, ltime, rtime)
        b = _side_offset(cmp.expression, which, spans, ltime, rtime)
        if a is None or b is None or a[0] == b[0]:
            return False
        op = _OPS[type(cmp)]
        # normalise to: right.ts OP left.ts + delta
        if a[0] == "left":
            a, b, op = b, a, _FLIP[op]
        delta = b[1] - a[1]
        if op == ">=":
            found.append(("lower", delta))
        elif op == ">":
            found.append(("lower", delta + 1))
        elif op == "<=":
            found.append(("upper", delta))
        else:
            found.append(("upper", delta - 1))
        del cspan
    for k, v in found:
        if k in bounds:
            raise FlowSyntaxError(f"the join has two {k} time bounds", spans(c))
        bounds[k] = v
    return True


def _side_offset(node: exp.Expression, which: Callable[[exp.Column, Span], tuple[str, str]],
                 spans: Callable[..., Span], ltime: str | None,
                 rtime: str | None) -> tuple[str, int] | None:
    """``t.ts``, ``t.ts + INTERVAL ...`` or ``t.ts - INTERVAL ...`` -> (side, offset ms)."""
    offset = 0
    if isinstance(node, exp.Paren):
        node = node.this
    if isinstance(node, (exp.Add, exp.Sub)) and isinstance(node.expression, exp.Interval):
        ms = interval_millis(node.expression, spans(node.expression))
        offset = ms if isinstance(node, exp.Add) else -ms
        node = node.this
    if not isinstance(node, exp.Column):
        return None
    side, name = which(node, spans(node))
    want = ltime if side == "left" else rtime
    if want is not None and name != want:
        raise UnsupportedError(f"a join's time bound must use the event-time column "
                               f"'{want}', not '{name}'", spans(node))
    return side, offset
