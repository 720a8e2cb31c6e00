"""``FROM t, LATERAL TABLE(f(args)) AS T(col)`` (also ``CROSS JOIN LATERAL TABLE``, Flink's
syntax for a table function): one row per element of the array ``f`` returns, t's columns
plus ``col``, as the .flow ``flat_map f(args) as col``. A table function is a function that
returns an array: a ``CREATE FUNCTION`` whose Python function returns ``list[...]`` (flowc
has no ROW type, so a table function has one column). Rows whose array is null or empty
produce nothing, as Flink's inner lateral join; ``LEFT JOIN LATERAL`` is not supported."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from sqlglot import exp

from flowc.errors import FlowNameError, FlowSyntaxError, Span, UnsupportedError
from flowc.parser import ast as A
from flowc.sql.exprs import ExprTranslator
from flowc.sql.windows import window_rows

if TYPE_CHECKING:
    from flowc.sql.query import Piece, QueryTranslator

Resolver = Callable[[exp.Column, Span], A.Expr]


def is_lateral(joins: list[exp.Join]) -> bool:
    return any(isinstance(j.this, exp.Lateral) for j in joins)


def lateral_join(qt: QueryTranslator, frm: exp.Expression, joins: list[exp.Join],
                 span: Span) -> tuple[Piece, Resolver]:
    if len(joins) != 1:
        raise UnsupportedError("a LATERAL TABLE with other joins is not supported", span,
                               hint="join in a view first, then apply the table function")
    join = joins[0]
    lat = join.this
    assert isinstance(lat, exp.Lateral)
    lspan = qt.spans(lat)
    side = (join.args.get("side") or "").upper()
    kind = (join.args.get("kind") or "").upper()
    if side or kind not in ("", "CROSS", "INNER") or join.args.get("on") is not None:
        raise UnsupportedError(f"{' '.join(w for w in (side, kind) if w) or 'this'} JOIN "
                               "LATERAL TABLE is not supported", lspan,
                               hint="write FROM t, LATERAL TABLE(f(x)) AS T(col) (rows "
                                    "whose function returns no element are dropped)")
    table = lat.this
    if not (isinstance(table, exp.Anonymous) and str(table.this).upper() == "TABLE" and
            len(table.expressions) == 1 and isinstance(table.expressions[0], exp.Func)):
        raise FlowSyntaxError("expected LATERAL TABLE(function(...)) AS T(col)", lspan)
    alias = lat.args.get("alias")
    columns = list(alias.columns) if alias is not None else []
    if not columns:
        raise FlowSyntaxError("name the table function's column: LATERAL TABLE(f(x)) AS "
                              "T(col)", lspan)
    if len(columns) > 1:
        raise UnsupportedError("a table function with several columns is not supported: a "
                               "flowc table function returns an array (one column)",
                               qt.spans(columns[1]))
    col = columns[0].name
    t_alias = alias.name or None
    base = qt.from_item(frm)
    if base.window is not None:
        window_rows(base)
    if base.names is not None and col in base.names:
        raise FlowNameError(f"'{col}' is already a column of '{base.alias}'",
                            qt.spans(columns[0]), hint="name the function's column "
                                                    "differently")
    base_resolve = qt._single_resolver(base)  # noqa: SLF001 - the translator's own

    def resolve(c: exp.Column, at: Span) -> A.Expr:
        if (t_alias is not None and c.table == t_alias) or (not c.table and c.name == col):
            if c.name != col:
                raise FlowNameError(f"unknown column '{c.name}' of '{t_alias}'", at,
                                    hint=f"its column is '{col}'")
            return A.FieldRef(col, None, at)
        return base_resolve(c, at)

    ex = ExprTranslator(qt.spans, base_resolve)
    ex.udfs = qt.catalog.udf_names()
    base.steps.append(A.FlatMapStep(ex(table.expressions[0]), col, lspan))
    if base.names is not None:
        base.names = base.names + [col]
    return base, resolve
