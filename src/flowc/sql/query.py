"""SELECT / UNION ALL -> a .flow pipeline (head | steps), plus ``let`` statements for inputs
that are not plain streams (subqueries on the right of a join, union branches, CTEs).

The mapping (each a .flow construct, so lowering and planning are shared):

- ``FROM t WHERE c``                      -> ``t | filter c``
- ``SELECT a, f(b) AS x``                 -> ``| map a, f(b) as x`` (none for ``SELECT *``)
- ``GROUP BY k``                          -> ``| key by k | aggregate ...`` (rolling)
- ``FROM TABLE(TUMBLE(TABLE t, DESCRIPTOR(ts), INTERVAL '5' SECOND)) GROUP BY window_start,
  window_end, k`` and ``GROUP BY TUMBLE(ts, INTERVAL '5' SECOND), k``
                                          -> ``| key by k | window tumbling 5s | aggregate``
- ``HAVING c``                            -> ``| filter c`` after the aggregate
- ``a JOIN b ON a.k = b.k AND b.ts BETWEEN a.ts - INTERVAL '1' MINUTE AND a.ts``
                                          -> ``a | interval join b on a.k = b.k between -1m and 0s``
- two windowed TVFs joined on window_start/window_end and keys -> ``a | join b on ... window``
- ``UNION ALL``                           -> ``union a, b``
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from dataclasses import dataclass
from typing import Protocol

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
from flowc.sql import ordering, setops
from flowc.sql.changelog import KEY, Updating
from flowc.sql.ddl import TableDef
from flowc.sql.exprs import ExprTranslator, SpanMap
from flowc.sql.joins import translate_join
from flowc.sql.lateral import is_lateral, lateral_join
from flowc.sql.over import over_windows, translate_over
from flowc.sql.proctime import add_proctime
from flowc.sql.rank_strategy import after_filter
from flowc.sql.source import Rewrites
from flowc.sql.state_ttl_hint import hinted, state_ttl_hint
from flowc.sql.window_join import window_join
from flowc.sql.window_rank import window_rank
from flowc.sql.window_tvf import TVF_KINDS, tvf_arguments, window_spec
from flowc.sql.windows import window_rows
from flowc.types import Schema, Type, common_type

WINDOW_COLUMNS = ("window_start", "window_end")
_AGG_NAMES = ("first", "last", "first_value", "last_value")


class Catalog(Protocol):
    def schema_of(self, name: str) -> Schema | None: ...
    def rowtime_of(self, name: str) -> str | None: ...
    def names(self) -> list[str]: ...
    def table(self, name: str) -> TableDef | None: ...
    def define_let(self, stmt: A.LetStmt) -> Schema: ...
    def fresh_name(self) -> str: ...
    def updating_of(self, name: str) -> Updating | None: ...
    def set_updating(self, name: str, up: Updating | None) -> None: ...
    def udf_names(self) -> Collection[str]: ...
    def is_batch(self) -> bool: ...


@dataclass
class Piece:
    """A pipeline under construction: its head, steps, and what is known of its output."""

    head: tuple[A.FieldRef, ...]
    steps: list[A.Step]
    names: list[str] | None
    alias: str
    span: Span
    head_is_union: bool = False
    window: A.WindowStep | None = None  # a window TVF waiting for its GROUP BY
    time_column: str | None = None
    # after a join: ``*``, ``a.*``, ``b.*`` -> (physical name, SQL name) of each column
    star_expansion: Callable[[str, Span], list[tuple[str, str]]] | None = None
    # the rows are updates of a non-windowed GROUP BY (see flowc.sql.changelog)
    updating: Updating | None = None

    @property
    def is_name(self) -> bool:
        return not self.steps and not self.head_is_union and self.window is None

    def pipeline(self) -> A.Pipeline:
        return A.Pipeline(self.head, tuple(self.steps), self.span, self.head_is_union)


def _sql_type(t: Type) -> str:
    return {"int": "BIGINT", "timestamp": "TIMESTAMP(3)"}.get(str(t), str(t).upper())


def _sql_schema(schema: Schema) -> str:
    return ", ".join(f"{f.name} {_sql_type(f.type)}" for f in schema.fields)


def is_aggregate(node: exp.Expression) -> bool:
    if isinstance(node, exp.Filter):  # agg(x) FILTER (WHERE c)
        return is_aggregate(node.this)
    if isinstance(node, (exp.AggFunc, exp.FirstValue, exp.LastValue)):
        return True
    return isinstance(node, exp.Anonymous) and str(node.this).lower() in _AGG_NAMES


class QueryTranslator:
    def __init__(self, catalog: Catalog, spans: SpanMap, rw: Rewrites, *,
                 expose_keys: bool = False) -> None:
        self.catalog = catalog
        self.spans = spans
        self.rw = rw
        # the REPL: an updating result keeps its group keys (hidden if not selected), so
        # its changelog can be shown
        self.expose_keys = expose_keys

    # ------------------------------------------------------------------ entry

    def query(self, node: exp.Expression) -> Piece:
        if isinstance(node, exp.Subquery):
            return self.query(node.this)
        if ordering.has_modifiers(node):
            return ordering.ordered_query(self, node)
        if isinstance(node, exp.Union):
            return self.union(node)
        if isinstance(node, (exp.Intersect, exp.Except)):
            return self.intersect_except(node)
        if isinstance(node, exp.Values):
            raise UnsupportedError("VALUES as a query is not supported", self.spans(node),
                                   hint="declare inline rows in .flow: source t (...) values "
                                        "(...)")
        if not isinstance(node, exp.Select):
            raise UnsupportedError(f"this statement ({node.key.upper()}) is not a query",
                                   self.spans(node))
        return self.select(node)

    def named(self, piece: Piece) -> str:
        """A stream name for ``piece``: itself if it is one, else a new ``let``."""
        if piece.window is not None:
            window_rows(piece)  # read as a table: its rows with their window columns
        if piece.is_name:
            return piece.head[0].name
        name = self.catalog.fresh_name()
        let = A.LetStmt(name, piece.pipeline(), piece.span, piece.span)
        self.catalog.define_let(let)
        self.catalog.set_updating(name, piece.updating)
        self.lets.append(let)
        return name

    lets: list[A.LetStmt]

    def translate(self, node: exp.Expression) -> tuple[list[A.LetStmt], Piece]:
        self.lets = []
        piece = self.query(node)
        if piece.window is not None:
            window_rows(piece)
        up = piece.updating
        if self.expose_keys and up is not None and up.key_columns() is None and \
                up.agg_map is not None and piece.steps and piece.steps[-1] is up.agg_map:
            hidden = tuple(f"_changelog_key{i}" for i in range(len(up.keys)))
            last = up.agg_map
            extra = tuple(A.SelectItem(A.FieldRef(k, None, last.span), h, last.span)
                          for k, h in zip(up.keys, hidden))
            piece.steps[-1] = A.MapStep(last.items + extra, last.span)
            cols = dict(up.columns) | {h: f"{KEY}:{k}" for k, h in zip(up.keys, hidden)}
            piece.updating = Updating(up.node, up.keys, cols, hidden)
            if piece.names is not None:
                piece.names = piece.names + list(hidden)
        return self.lets, piece

    # ------------------------------------------------------------------ union

    def union(self, node: exp.Union) -> Piece:
        branches: list[exp.Expression] = []
        kinds: set[bool] = set()  # UNION (distinct) and/or UNION ALL
        stack: list[exp.Expression] = [node]
        while stack:  # left-to-right leaves of the union tree, without recursion
            n = stack.pop()
            if isinstance(n, exp.Subquery) and isinstance(n.this, exp.Union):
                n = n.this
            if isinstance(n, exp.Union) and not isinstance(n, (exp.Intersect, exp.Except)):
                kinds.add(bool(n.args.get("distinct")))
                if n.args.get("distinct") and not self.catalog.is_batch():
                    raise setops.streaming_error("UNION (which removes duplicates)",
                                                 self.spans.keyword(n, "UNION"))
                if len(kinds) > 1:
                    raise UnsupportedError("mixing UNION and UNION ALL in one query is not "
                                           "supported", self.spans.keyword(n, "UNION"),
                                           hint="put one of them in a view")
                if n is not node and ordering.has_modifiers(n):  # inside: a sub-union
                    self._modifier(n, next(k for k in ordering.MODIFIERS if n.args.get(k)))
                stack.append(n.expression)
                stack.append(n.this)
            else:
                branches.append(n)
        pieces = [self.query(b) for b in branches]
        span = self.spans(node)
        names = self._union_inputs(branches, [self.named(p) for p in pieces], pieces)
        up = next((p.updating for p in pieces if p.updating is not None), None)
        # the branches' keys may collide: which row an update replaces is unknown
        piece = Piece(tuple(names), [], pieces[0].names, names[0].name, span,
                      head_is_union=True,
                      updating=Updating(up.node, up.keys) if up is not None else None)
        return self.distinct(piece, span) if True in kinds else piece

    # ------------------------------------------------------------------ set operations

    def distinct(self, piece: Piece, span: Span) -> Piece:
        return setops.distinct(self, piece, span)

    def intersect_except(self, node: exp.Intersect | exp.Except) -> Piece:
        return setops.intersect_except(self, node)

    def _union_inputs(self, branches: list[exp.Expression], streams: list[str],
                      pieces: list[Piece]) -> list[A.FieldRef]:
        """UNION ALL matches columns by position, as Flink does: the names are the first
        input's, each column's type is the one all inputs widen to; an input that differs
        gets a ``map`` (renaming and casting) first, since .flow's union needs one schema."""
        schemas = [self.catalog.schema_of(s) for s in streams]
        assert all(sc is not None for sc in schemas)
        first = schemas[0]
        assert first is not None
        types = list(first.types)
        for b, p, sc in zip(branches[1:], pieces[1:], schemas[1:]):
            assert sc is not None
            if len(sc) != len(first):
                raise FlowTypeError(f"Column count mismatch in UNION ALL: the first input has "
                                    f"{len(first)} columns, this one has {len(sc)}", p.span,
                                    notes=[f"the first input is ({_sql_schema(first)})"])
            for i, t in enumerate(sc.types):
                wide = common_type(types[i], t)
                if wide is None:
                    item = b.expressions[i] if isinstance(b, exp.Select) and \
                        len(b.expressions) == len(sc) else None
                    raise FlowTypeError(
                        f"UNION ALL cannot combine column {i + 1} ('{first.names[i]}'): it is "
                        f"{_sql_type(types[i])} in the first input but {_sql_type(t)} here",
                        self.spans(item) if item is not None else p.span,
                        hint="CAST the column so both inputs have the same type")
                types[i] = wide
        out: list[A.FieldRef] = []
        for name, p, sc in zip(streams, pieces, schemas):
            assert sc is not None
            if list(sc.names) == list(first.names) and list(sc.types) == types:
                out.append(A.FieldRef(name, None, p.span))
                continue
            items = []
            for col, t, want, wtype in zip(sc.names, sc.types, first.names, types):
                ref: A.Expr = A.FieldRef(col, None, p.span)
                if t != wtype:
                    ref = A.Cast(ref, wtype, p.span)
                items.append(A.SelectItem(ref, None if (col == want and t == wtype) else want,
                                          p.span))
            mapped = Piece((A.FieldRef(name, None, p.span),), [A.MapStep(tuple(items), p.span)],
                           list(first.names), name, p.span, updating=p.updating)
            out.append(A.FieldRef(self.named(mapped), None, p.span))
        return out

    # ------------------------------------------------------------------ select

    def _modifier(self, node: exp.Expression, key: str) -> None:
        mod = node.args.get(key)
        if isinstance(mod, list):  # WINDOW, LATERAL: a list of clauses; point at the first
            mod = mod[0] if mod else None
        span = self.spans(mod, self.spans(node))
        if key in ("order", "limit", "offset"):
            raise UnsupportedError(f"{key.upper()} inside a UNION branch is not supported",
                                   span, hint="put it after the whole UNION (it then sorts or "
                                              "limits the union's result)")
        clause = {"windows": "WINDOW", "laterals": "LATERAL VIEW", "cluster": "CLUSTER BY",
                  "distribute": "DISTRIBUTE BY", "sort": "SORT BY"}.get(key, key.upper())
        raise UnsupportedError(f"{clause} is not supported", span)

    def select(self, node: exp.Select) -> Piece:
        for key in ("qualify", "windows", "laterals", "cluster", "distribute", "sort"):
            if node.args.get(key) and not (key == "windows" and over_windows(node)):
                self._modifier(node, key)
        if node.args.get("distinct") is not None:
            if not self.catalog.is_batch():
                raise setops.streaming_error("SELECT DISTINCT",
                                             self.spans.keyword(node, "DISTINCT"))
            mark = node.args.pop("distinct")  # the rows first, then one of each
            try:
                piece = self.select(node)
            finally:
                node.set("distinct", mark)
            return self.distinct(piece, self.spans(node))
        for cte in (node.args.get("with_") or exp.With()).expressions:
            inner = self.query(cte.this)
            if inner.window is not None:
                window_rows(inner)
            let = A.LetStmt(cte.alias, inner.pipeline(), self.spans(cte), self.spans(cte))
            self.catalog.define_let(let)
            self.catalog.set_updating(cte.alias, inner.updating)
            self.lets.append(let)
        from flowc.sql.topn import rewrite_top_n

        rewrite_top_n(self, node)  # ROW_NUMBER() OVER (...) filtered on the rank
        ttl_hint = state_ttl_hint(self.spans, node)
        frm = node.args.get("from_")
        if not node.expressions:
            # sqlglot takes `SELECT FROM t`; Flink's parser does not
            at = self.spans.keyword_before(frm, "FROM") if frm is not None else \
                self.spans(node)
            raise FlowSyntaxError("syntax error: expected a column list (or *) after SELECT",
                                  at, hint="for example: SELECT * FROM t")
        if frm is None:
            raise UnsupportedError("SELECT without FROM is not supported", self.spans(node),
                                   hint="read from a table or stream")
        ranked = window_rank(self, node)
        if ranked is not None:
            return hinted(ttl_hint, node, ranked, 0)
        joins = node.args.get("joins") or []
        where = node.args.get("where")
        if joins and where is not None and len(joins) == 1 and \
                joins[0].args.get("on") is None and not joins[0].args.get("kind") and \
                not is_lateral(joins):
            # FROM a, b WHERE <keys and time bounds>: the WHERE is the join condition
            joins[0].set("on", where.this)
            where = None
        first = 0  # the first of the steps this block makes (a join's sides are named)
        if joins and is_lateral(joins):
            piece, resolve = lateral_join(self, frm.this, joins, self.spans(node))
        elif joins:
            piece, resolve = window_join(self, node, frm.this, joins, self.spans(node)) or \
                translate_join(self, frm.this, joins, self.spans(node))
        else:
            piece = self.from_item(frm.this)
            first = len(piece.steps)
            resolve = self._single_resolver(piece)
            aggregated = node.args.get("group") is not None or any(
                is_aggregate(n) for item in node.expressions for n in item.walk())
            plain = len(node.expressions) == 1 and _is_star(node.expressions[0], None)
            if piece.window is not None and not aggregated and (where is not None or
                                                                not plain):
                window_rows(piece)  # the query reads the window columns
        ex = ExprTranslator(self.spans, resolve)
        ex.udfs = self.catalog.udf_names()
        if where is not None:  # over an updating input each row kind is filtered alike
            piece.steps.append(A.FilterStep(ex(where.this), self.spans(where)))
            if piece.updating is not None:
                piece.updating = after_filter(piece.updating, where.this)
        for item in node.expressions:
            for n in item.walk():
                if isinstance(n, (exp.Subquery, exp.Select, exp.Exists)):
                    ex(n)  # raises: subqueries in expressions are not supported
        if over_windows(node):
            return hinted(ttl_hint, node, translate_over(self, node, piece, ex, resolve), first)
        group = node.args.get("group")
        if group is not None or any(is_aggregate(n) for item in node.expressions
                                    for n in item.walk()):
            return hinted(ttl_hint, node, self.aggregate(node, piece, ex, resolve), first)
        if node.args.get("having") is not None:
            raise FlowSyntaxError("HAVING needs GROUP BY", self.spans(node.args["having"]))
        items, names = self.projection(node, piece, ex)
        if items is not None:
            piece.steps.append(A.MapStep(tuple(items), self.spans(node)))
            if piece.updating is not None:
                piece.updating = piece.updating.renamed(_sources(node, piece))
            piece.names = names
        piece.span = self.spans(node)
        return hinted(ttl_hint, node, piece, first)

    def _single_resolver(self, piece: Piece) -> Callable[[exp.Column, Span], A.Expr]:
        def resolve(col: exp.Column, span: Span) -> A.Expr:
            q = col.table
            if q and q != piece.alias:
                raise FlowNameError(f"unknown table '{q}'", span,
                                    hint=did_you_mean(q, [piece.alias]) or
                                    f"the table here is '{piece.alias}'")
            return A.FieldRef(col.name, None, span)
        return resolve

    def projection(self, node: exp.Select, piece: Piece,
                   ex: ExprTranslator) -> tuple[list[A.SelectItem] | None, list[str] | None]:
        """Map items, or None when the select list is just ``*`` (no operator needed)."""
        exprs = node.expressions
        if len(exprs) == 1 and _is_star(exprs[0], None) and (
                piece.star_expansion is None or all(
                    p == q for p, q in _unique(piece.star_expansion("", self.spans(node))))):
            return None, piece.names
        items: list[A.SelectItem] = []
        names: list[str] | None = []
        used: set[str] = set()
        for item in exprs:
            span = self.spans(item)
            if _is_star(item, None):
                expanded = piece.star_expansion
                q = item.table if isinstance(item, exp.Column) else ""
                if expanded is not None:
                    # Calcite's names: a repeated column name gets 0, 1, ... (user_id0)
                    for physical, name in expanded(q, span):
                        out = uniquify(name, used)
                        items.append(A.SelectItem(A.FieldRef(physical, None, span),
                                                  None if out == physical else out, span))
                        if names is not None:
                            names.append(out)
                    continue
                if q and q != piece.alias:
                    raise FlowNameError(f"unknown table '{q}'", span,
                                        hint=did_you_mean(q, [piece.alias]))
                items.append(A.SelectItem(None, None, span, star=True))
                names = None if piece.names is None or names is None else \
                    names + list(piece.names)
                continue
            expr_node, alias = _unalias(item)
            e = ex(expr_node)
            # Calcite: an alias, a column's own name, or EXPR$<ordinal>; then made unique
            wanted = alias or (expr_node.name if isinstance(expr_node, exp.Column) else
                               f"EXPR${len(items)}")
            out = uniquify(wanted, used)
            items.append(A.SelectItem(e, None if isinstance(e, A.FieldRef) and e.name == out
                                      else out, span))
            if names is not None:
                names.append(out)
        return items, names

    # ------------------------------------------------------------------ FROM items

    def from_item(self, node: exp.Expression) -> Piece:
        if isinstance(node, exp.Subquery):
            piece = self.query(node.this)
            if node.alias:
                piece.alias = node.alias
            return piece
        if isinstance(node, exp.Table) and isinstance(node.this, exp.Anonymous):
            return self.tvf(node)
        if isinstance(node, exp.Table) and isinstance(node.this, exp.Identifier):
            if node.args.get("db") is not None:
                raise UnsupportedError("catalog/database qualified names are not supported",
                                       self.spans(node))
            return self.stream(node.name, self.spans(node.this), node.alias or node.name)
        raise UnsupportedError(f"this FROM item ({node.key}) is not supported",
                               self.spans(node))

    def stream(self, name: str, span: Span, alias: str) -> Piece:
        schema = self.catalog.schema_of(name)
        if schema is None:
            table = self.catalog.table(name)
            if table is not None and table.partition_by:
                raise UnsupportedError(f"reading the partitioned table '{name}' is not "
                                       "supported: flowc writes partition directories but "
                                       "does not read them back", span,
                                       hint="read the files of one partition with a table "
                                            "without PARTITIONED BY")
            if table is not None and not table.readable:
                raise FlowNameError(f"table '{name}' uses the '{table.connector}' connector: "
                                    "it can only be written (INSERT INTO)", span)
            raise FlowNameError(f"unknown table '{name}'", span,
                                hint=did_you_mean(name, self.catalog.names()) or (
                                    "define it with CREATE TABLE (or a .flow source)"))
        return add_proctime(Piece((A.FieldRef(name, None, span),), [], list(schema.names), alias,
                                  span, updating=self.catalog.updating_of(name)),
                            self.catalog.table(name))

    def tvf(self, node: exp.Table) -> Piece:
        call = node.this
        assert isinstance(call, exp.Anonymous)
        fn = str(call.this).lower()
        span = self.spans(call)
        if fn not in TVF_KINDS:
            raise UnsupportedError(f"table function {fn.upper()} is not supported", span,
                                   hint="window table functions are TUMBLE, HOP, CUMULATE "
                                        "and SESSION")
        args = tvf_arguments(self.spans, fn, list(call.expressions), span)
        if len(args) < 3 or not isinstance(args[0], exp.Column) or not (
                isinstance(args[1], exp.Anonymous) and str(args[1].this).lower() ==
                "descriptor" and len(args[1].expressions) == 1):
            raise FlowSyntaxError(f"write {fn.upper()}(TABLE t, DESCRIPTOR(time_column), "
                                  "INTERVAL ...)", span)
        base = self.stream(args[0].name, self.spans(args[0]), node.alias or args[0].name)
        if base.updating is not None:
            # Flink's validation: an aggregate's result has no time attribute
            raise FlowTypeError("The window function requires the timecol is a time "
                                "attribute type, but is TIMESTAMP(3).", base.span,
                                hint="window the table the GROUP BY reads instead (an "
                                     "aggregate's result has no time attribute)")
        tcol = args[1].expressions[0]
        spec = self.window_spec(fn, tcol, args[2:], span, args[0].name)
        if self.rw.partitions.get(self._range(call)[0]):
            pass  # SESSION(TABLE t PARTITION BY k, ...): the keys come from GROUP BY anyway
        base.window = A.WindowStep(spec, None, None, span)
        base.time_column = tcol.name
        base.span = span
        return base

    def _range(self, node: exp.Expression) -> tuple[int, int]:
        return self.spans.range(node) or (0, 0)

    def window_spec(self, fn: str, tcol: exp.Expression, sizes: list[exp.Expression],
                    span: Span, stream: str | None) -> A.WindowSpec:
        return window_spec(self.spans, self.catalog, fn, tcol, sizes, span, stream)

    # ------------------------------------------------------------------ aggregation

    def aggregate(self, node: exp.Select, piece: Piece, ex: ExprTranslator,
                  resolve: Callable[[exp.Column, Span], A.Expr]) -> Piece:
        from flowc.sql.aggregate import translate_aggregate

        return translate_aggregate(self, node, piece, ex, resolve)


def _is_star(node: exp.Expression, _q: str | None) -> bool:
    return isinstance(node, exp.Star) or (isinstance(node, exp.Column) and
                                          isinstance(node.this, exp.Star))


def uniquify(name: str, used: set[str]) -> str:
    """Calcite's ``SqlValidatorUtil.uniquify`` with its EXPR suggester: ``name``, else
    ``name0``, ``name1``, ...; the result is added to ``used``."""
    out, i = name, 0
    while out in used:
        out, i = f"{name}{i}", i + 1
    used.add(out)
    return out


def _unique(pairs: list[tuple[str, str]]) -> list[tuple[str, str]]:
    used: set[str] = set()
    return [(p, uniquify(n, used)) for p, n in pairs]


def _sources(node: exp.Select, piece: Piece) -> list[tuple[str | None, str]]:
    """(input column or None, output name) of each select item, for Updating.renamed."""
    out: list[tuple[str | None, str]] = []
    for i, item in enumerate(node.expressions):
        if _is_star(item, None):
            cols = piece.updating.columns if piece.updating is not None else {}
            out.extend((n, n) for n in cols)
            continue
        e, alias = _unalias(item)
        if isinstance(e, exp.Column):
            out.append((e.name, alias or e.name))
        else:
            out.append((None, alias or f"EXPR${i}"))
    return out


def _unalias(node: exp.Expression) -> tuple[exp.Expression, str | None]:
    if isinstance(node, exp.Alias):
        return node.this, node.alias
    return node, None
