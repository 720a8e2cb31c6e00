"""GROUP BY -> ``key by k [| window ...] | aggregate ... [| filter having] [| map ...]``.

Aggregate calls are collected from the select list and HAVING; an item that is exactly one
aggregate keeps its name (its alias, or .flow's default name such as ``count`` or
``sum_amount``), aggregates nested in expressions get hidden names, and a final ``map``
computes the select list -- left out when the aggregate's output already is the select list,
so ``SELECT k, COUNT(*) AS n ... GROUP BY k`` is exactly ``key by k | aggregate count(*) as n``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING

from sqlglot import exp

from flowc.errors import FlowNameError, FlowSyntaxError, Span, UnsupportedError, did_you_mean
from flowc.parser import ast as A
from flowc.sql.changelog import (
    DOWN,
    UP,
    Updating,
    aggregate_kind,
    flowc_limit,
    node_description,
)
from flowc.sql.exprs import ExprTranslator
from flowc.sql.query import WINDOW_COLUMNS, Piece, _unalias, is_aggregate, uniquify
from flowc.sql.rank_strategy import after_filter, aggregate_columns, sum_kind
from flowc.sql.window_tvf import LEGACY as _LEGACY
from flowc.types import INT, TIMESTAMP_LTZ

if TYPE_CHECKING:
    from flowc.sql.query import QueryTranslator

_LEGACY_PROPS = {f"{fn}_{p}": (fn, f"window_{p}") for fn in _LEGACY
                 for p in ("start", "end", "rowtime")}
_PROCTIME = {f"{fn}_proctime" for fn in _LEGACY}


def _default_name(call: A.Call) -> str | None:
    # .flow's naming of unnamed aggregates (flowc.parser.aggregates), so SQL output names
    # match what the equivalent .flow script produces
    if call.star:
        return call.name
    if len(call.args) == 1 and isinstance(call.args[0], A.FieldRef):
        prefix = f"{call.name}_distinct" if call.distinct else call.name
        return f"{prefix}_{call.args[0].name}"
    return None


def window_time(span: Span, ltz: bool) -> A.Expr:
    """``window_time`` / ``*_ROWTIME``: the window's end - 1 ms, of the time attribute's type
    (a TIMESTAMP_LTZ one's is a TIMESTAMP_LTZ, as Flink's)."""
    end = A.Binary("-", A.FieldRef("window_end", None, span), A.DurationLit(1, span), span)
    return A.Cast(end, TIMESTAMP_LTZ, span) if ltz else end


def translate_aggregate(qt: QueryTranslator, node: exp.Select, piece: Piece,
                        ex: ExprTranslator,
                        resolve: Callable[[exp.Column, Span], A.Expr]) -> Piece:
    spans = qt.spans
    group = node.args.get("group")
    # no GROUP BY: a non-keyed aggregate (Flink: a GroupAggregate at parallelism 1)
    group_exprs = list(group.expressions) if group is not None else []
    group_span = spans(group) if group is not None else spans(node)
    keys: list[A.FieldRef] = []
    # GROUP BY on expressions: Flink computes them in a Calc before the aggregate
    expr_keys: dict[str, str] = {}  # sql text -> the computed key column
    pre_items: list[A.SelectItem] = []
    window_cols: set[str] = set()
    legacy: tuple[str, A.WindowSpec] | None = None
    legacy_call: tuple[str, object, int, int, int] | None = None
    for g in group_exprs:
        gspan = spans(g)
        if isinstance(g, exp.Column) and g.name in WINDOW_COLUMNS and piece.window is not None:
            window_cols.add(g.name)
        elif isinstance(g, exp.Column):
            if g.name == "window_time" and piece.window is not None:
                if set(WINDOW_COLUMNS) <= {c.name for c in group_exprs
                                           if isinstance(c, exp.Column)}:
                    continue  # window_end - 1 ms: the select list computes it so
                raise UnsupportedError("GROUP BY window_time is not supported", gspan,
                                       hint="group by window_start, window_end")
            if not g.table and piece.names is not None and g.name not in piece.names:
                raise FlowNameError(f"unknown column '{g.name}' in GROUP BY", gspan,
                                    hint=did_you_mean(g.name, piece.names) or
                                    f"the columns here are: {', '.join(piece.names)}")
            ref = resolve(g, gspan)
            if not isinstance(ref, A.FieldRef):
                raise UnsupportedError("GROUP BY on this column is not supported", gspan)
            keys.append(ref)
        elif isinstance(g, exp.Anonymous) and str(g.this).lower() in _LEGACY:
            fn = str(g.this).lower()
            if piece.window is not None or legacy is not None:
                raise FlowSyntaxError("only one window per GROUP BY", gspan)
            args = list(g.expressions)
            if not args:
                raise FlowSyntaxError(f"write {fn.upper()}(time_column, INTERVAL ...)", gspan)
            stream = stream_of(piece)
            legacy = (fn, qt.window_spec(fn, args[0], args[1:], gspan, stream))
            legacy_call = _window_call(qt, fn, args, gspan, stream)
        else:
            if any(is_aggregate(n) for n in g.walk()):
                raise FlowSyntaxError("an aggregate cannot be a GROUP BY key", gspan)
            name = expr_keys.get(g.sql()) or f"_group{len(expr_keys)}"
            if g.sql() not in expr_keys:
                expr_keys[g.sql()] = name
                pre_items.append(A.SelectItem(ex(g), name, gspan))
            keys.append(A.FieldRef(name, None, gspan))
    if piece.window is not None and window_cols != set(WINDOW_COLUMNS):
        raise FlowSyntaxError("a window table function needs GROUP BY window_start, "
                              "window_end", group_span)
    windowed = piece.window is not None or legacy is not None
    ltz = (piece.window.spec.ltz if piece.window is not None else
           legacy is not None and legacy[1].ltz)
    piece_in_updating = piece.updating  # the input's, for the output's monotonicity
    if piece.updating is not None and legacy is not None:
        flowc_limit("a group window over", piece.updating, group_span,
                    hint="window the table the GROUP BY reads instead")
    key_names = [k.name for k in keys]
    if len(set(key_names)) != len(key_names):
        raise FlowSyntaxError("a column is listed twice in GROUP BY", group_span)

    # Aggregates: direct items keep their names, nested ones get hidden names.
    agg_items: list[A.SelectItem] = []
    agg_names: dict[str, str] = {}  # sql text of the call -> output name
    agg_calls: list[exp.Expression] = []
    overrides: dict[int, A.Expr] = {}
    taken = set(key_names) | (set(WINDOW_COLUMNS) if windowed else set())

    def add_agg(call: exp.Expression, name: str | None) -> str:
        text = call.sql()
        if text in agg_names and name is None:
            return agg_names[text]
        translated = ex(call)
        assert isinstance(translated, A.Call)
        if _monotone(call, piece):  # Flink's MAX/MIN that ignores retractions
            translated = replace(translated, internal=True)
        out = name or _default_name(translated) or f"_agg{len(agg_items)}"
        if out in taken:
            out = f"_agg{len(agg_items)}"
        taken.add(out)
        agg_items.append(A.SelectItem(translated, out, spans(call)))
        agg_calls.append(call)
        agg_names.setdefault(text, out)
        return out

    select_items = list(node.expressions)
    direct: dict[int, str] = {}
    for i, item in enumerate(select_items):
        e, alias = _unalias(item)
        if is_aggregate(e):
            added = len(agg_items)
            direct[i] = add_agg(e, alias or None)
            if alias is None and len(agg_items) > added:  # Calcite's name of the column
                direct[i] = _rename_last(agg_items, f"EXPR${i}")
    having = node.args.get("having")
    nested_roots = [it for i, it in enumerate(select_items) if i not in direct]
    if having is not None:
        nested_roots.append(having.this)
    for root in nested_roots:
        todo = [root]
        while todo:  # not into an aggregate: FILTER (WHERE ...) holds a call of its own
            sub = todo.pop()
            if is_aggregate(sub):
                overrides[id(sub)] = A.FieldRef(add_agg(sub, None), None, spans(sub))
            else:
                todo.extend(reversed(list(sub.iter_expressions())))

    # Columns outside aggregates must be grouped; window properties become fields.
    allowed = set(key_names) | (set(WINDOW_COLUMNS) if windowed else set())
    legacy_fn = legacy[0] if legacy else None
    legacy_text = next((g.sql() for g in group_exprs if isinstance(g, exp.Anonymous)
                        and str(g.this).lower() in _LEGACY), None)
    for root in nested_roots:
        stack = [root]
        while stack:
            sub = stack.pop()
            if is_aggregate(sub):
                continue
            if sub.sql() in expr_keys:  # a GROUP BY expression: its computed key
                overrides[id(sub)] = A.FieldRef(expr_keys[sub.sql()], None, spans(sub))
                continue
            if isinstance(sub, exp.Anonymous) and str(sub.this).lower() in _LEGACY_PROPS.keys() | \
                    _PROCTIME:
                fn, col = _LEGACY_PROPS.get(str(sub.this).lower()) or (
                    str(sub.this).lower()[:-9], "window_proctime")
                aux = str(sub.this).upper()
                args = list(sub.expressions)
                if legacy_fn != fn or not args or _window_call(
                        qt, fn, args, spans(sub), stream_of(piece)) != legacy_call:
                    # Calcite's check: the same function over the same arguments
                    raise FlowSyntaxError(
                        f"Call to auxiliary group function '{aux}' must have matching call "
                        f"to group function '${fn.upper()}' in GROUP BY clause", spans(sub),
                        hint=_aux_hint(aux, fn, legacy_fn, legacy_text))
                sspan = spans(sub)
                processing = legacy is not None and legacy[1].processing
                if col == "window_rowtime" and processing:
                    raise FlowSyntaxError("A proctime window cannot provide a rowtime "
                                          "attribute.", sspan,
                                          hint=f"{fn.upper()}_PROCTIME is a processing-time "
                                               "window's time attribute")
                if col == "window_proctime":
                    if not processing:  # Flink casts an unset proctime to a ROWTIME type
                        raise UnsupportedError(
                            f"{aux} over an event-time window is not supported",
                            sspan, hint=f"{fn.upper()}_ROWTIME is the window's event time")
                    # Flink's PROCTIME_MATERIALIZE in the Calc after the window aggregate:
                    # the processing time when the window's row passes it
                    overrides[id(sub)] = A.Call("_proctime", (), sspan, sspan, internal=True)
                elif col == "window_rowtime":  # the window's time attribute: its end - 1 ms
                    overrides[id(sub)] = window_time(sspan, ltz)
                else:
                    overrides[id(sub)] = A.FieldRef(col, None, sspan)
                continue
            if isinstance(sub, exp.Anonymous):
                ex.check_function(sub)  # a misspelt aggregate is not a column error
                fn = str(sub.this).lower()
                if fn in _LEGACY or fn == "cumulate":
                    ex(sub)  # raises: a group window call belongs in GROUP BY
                if fn in ("timestampdiff", "timestampadd"):
                    stack.extend(sub.expressions[1:])  # the first argument is a unit
                    continue
            if isinstance(sub, exp.Column) and not isinstance(sub.this, exp.Star):
                if sub.name == "window_time" and windowed:
                    overrides[id(sub)] = window_time(spans(sub), ltz)
                    continue
                if sub.name not in allowed:
                    raise FlowSyntaxError(f"column '{sub.name}' is neither in GROUP BY nor "
                                          "inside an aggregate", spans(sub),
                                          hint=f"add it to GROUP BY, or aggregate it, e.g. "
                                               f"LAST_VALUE({sub.name})")
                overrides[id(sub)] = A.FieldRef(sub.name, None, spans(sub))
                continue
            if isinstance(sub, exp.Star) or (isinstance(sub, exp.Column)):
                raise FlowSyntaxError("SELECT * cannot be combined with GROUP BY", spans(sub))
            stack.extend(sub.iter_expressions())

    int_avgs = _integer_averages(qt, piece, agg_items)
    for k, v in list(overrides.items()):
        if isinstance(v, A.FieldRef) and v.name in int_avgs:
            overrides[k] = A.Cast(v, INT, v.span)
    window = piece.window
    if legacy is not None:
        window = A.WindowStep(legacy[1], None, None, legacy[1].span)
    if pre_items:
        piece.steps.append(A.MapStep((A.SelectItem(None, None, group_span, star=True),
                                      *pre_items), group_span))
    if keys:
        piece.steps.append(A.KeyByStep(tuple(keys), group_span, row_key=True))
    if window is not None:
        piece.steps.append(window)
    piece.window = None
    piece.steps.append(A.AggregateStep(tuple(agg_items), spans(node)))
    out_names = key_names + (list(WINDOW_COLUMNS) if windowed else []) + \
        [str(it.alias) for it in agg_items]
    post = ExprTranslator(spans, lambda c, s: A.FieldRef(c.name, None, s))
    post.overrides = overrides
    post.udfs = ex.udfs
    if having is not None:  # a Calc over the changelog: a row that stops matching is -U
        piece.steps.append(A.FilterStep(post(having.this), spans(having)))
    items: list[A.SelectItem] = []
    names: list[str] = []
    used: set[str] = set()
    for i, item in enumerate(select_items):
        e, alias = _unalias(item)
        span = spans(item)
        if i in direct:
            name = uniquify(alias or direct[i], used)
            ref: A.Expr = A.FieldRef(direct[i], None, span)
            if direct[i] in int_avgs:
                ref = A.Cast(ref, INT, span)
            items.append(A.SelectItem(ref, None if name == direct[i] and
                                      isinstance(ref, A.FieldRef) else name, span))
        else:
            translated = post(e)
            name = uniquify(alias or (
                f"EXPR${i}" if e.sql() in expr_keys else
                translated.name if isinstance(translated, A.FieldRef) else
                "window_time" if isinstance(e, exp.Column) else f"EXPR${i}"), used)
            items.append(A.SelectItem(translated, None if (
                isinstance(translated, A.FieldRef) and translated.name == name) else name,
                span))
        names.append(name)
    identity = names == out_names and all(
        isinstance(it.expr, A.FieldRef) and it.alias is None for it in items)
    final = None
    if not identity:
        final = A.MapStep(tuple(items), spans(node))
        piece.steps.append(final)
    if not windowed:
        columns, fast = aggregate_columns(
            piece_in_updating, key_names,
            [None if k.name in expr_keys.values() else k.name for k in keys],
            [_call_facts(call, str(it.alias), node.args.get("where"))
             for call, it in zip(agg_calls, agg_items)])
        node_text = node_description(key_names, [(c.sql(), str(it.alias))
                                                 for c, it in zip(agg_calls, agg_items)])
        up = Updating(node_text, tuple(key_names), columns)
        pairs = [(it.expr.name if isinstance(it.expr, A.FieldRef) else None, name)
                 for it, name in zip(items, names)]
        piece.updating = Updating(node_text, tuple(key_names), up.renamed(pairs).columns,
                                  agg_map=final, fast=fast)
        if having is not None:
            piece.updating = after_filter(piece.updating, having.this)
    piece.names = names
    piece.span = spans(node)
    return piece


def _call_facts(call: exp.Expression, name: str, where: exp.Expression | None) -> tuple[
        str, str | None, bool, str | None]:
    """(output name, direction over an insert-only input, is a COUNT, argument column)."""
    inner = call.this if isinstance(call, exp.Filter) else call
    arg = inner.this if isinstance(inner, (exp.Sum, exp.Max, exp.Min, exp.Count)) else None
    col = arg.name if isinstance(arg, exp.Column) else None
    kind = aggregate_kind(call)
    if isinstance(inner, exp.Sum) and col is not None:
        cond = where.this if where is not None else None
        if isinstance(call, exp.Filter):  # SUM(x) FILTER (WHERE ...): its own range too
            f = call.expression.this
            cond = f if cond is None else exp.And(this=cond, expression=f)
        kind = sum_kind(col, cond)
    return name, kind, isinstance(inner, exp.Count), col


def _monotone(call: exp.Expression, piece: Piece) -> bool:
    """MAX over an updating input's column that only grows (a COUNT or MAX of the
    aggregate before), MIN over one that only shrinks: Flink's planner (its modified
    monotonicity) lets these ignore retractions, so flowc's does too."""
    up = piece.updating
    if up is None or not isinstance(call, (exp.Max, exp.Min)) or \
            not isinstance(call.this, exp.Column):
        return False
    kind = up.columns.get(call.this.name)
    return kind == (UP if isinstance(call, exp.Max) else DOWN)


def _integer_averages(qt: QueryTranslator, piece: Piece,
                      agg_items: list[A.SelectItem]) -> set[str]:
    """The AVG outputs whose argument is an integer: Flink's AVG keeps its argument's type
    (the sum divided by the count in long arithmetic, truncated), while .flow's avg is a
    double, so these are cast back in the final map. The argument types come from a probe
    of the input pipeline."""
    avgs = [it for it in agg_items if isinstance(it.expr, A.Call) and it.expr.name == "avg"
            and len(it.expr.args) == 1]
    if not avgs:
        return set()
    probe = A.MapStep(tuple(A.SelectItem(it.expr.args[0], f"_avg{i}", it.span)  # type: ignore[union-attr]
                            for i, it in enumerate(avgs)), avgs[0].span)
    span = piece.span
    schema = qt.catalog.define_let(A.LetStmt(qt.catalog.fresh_name(), A.Pipeline(
        piece.head, tuple(piece.steps) + (probe,), span, piece.head_is_union), span, span))
    return {str(it.alias) for it, t in zip(avgs, schema.types) if t == INT}


def _aux_hint(aux: str, fn: str, group_fn: str | None, group_text: str | None) -> str:
    if group_fn is None or group_text is None:
        return f"add {fn.upper()}(<time column>, ...) to GROUP BY"
    if group_fn == fn:
        return f"GROUP BY has {group_text}: write {aux}{group_text[len(fn):]}"
    return f"GROUP BY has {group_text}: use {group_fn.upper()}_START / {group_fn.upper()}_END"


def stream_of(piece: Piece) -> str | None:
    return piece.head[0].name if piece.is_name or not piece.head_is_union else None


def _window_call(qt: QueryTranslator, fn: str, args: list[exp.Expression], span: Span,
                 stream: str | None) -> tuple[str, object, int, int, int]:
    """What identifies a group window call: function, time column, sizes."""
    spec = qt.window_spec(fn, args[0], args[1:], span, stream)
    col = args[0].name if isinstance(args[0], exp.Column) else args[0].sql()
    return fn, col, spec.size, spec.slide, spec.offset


def _rename_last(items: list[A.SelectItem], name: str) -> str:
    last = items[-1]
    items[-1] = A.SelectItem(last.expr, name, last.span)
    return name
