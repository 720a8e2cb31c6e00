"""Computed columns of ``CREATE TABLE``: ``ts AS TO_TIMESTAMP_LTZ(epoch_ms, 3)``.

Flink plans them as a Calc right after the table scan (before its WatermarkAssigner), so a
computed column may be the table's event time. flowc does the same: the source reads the
physical columns, a map in the source's chain computes the table's row in declared order
(``A.SourceStmt.projection``), then the watermark is assigned on that row. ``pt AS
PROCTIME()`` stays apart (flowc.sql.proctime): a query adds it."""

from __future__ import annotations

from dataclasses import dataclass

from sqlglot import exp

from flowc.errors import FlowNameError, FlowTypeError, Span, UnsupportedError
from flowc.errors import did_you_mean as _dym
from flowc.parser import ast as A
from flowc.sql.exprs import ExprTranslator, SpanMap

# What Flink's planner types these calls as (a WATERMARK's column must be TIMESTAMP(p) or
# TIMESTAMP_LTZ(p), p <= 3): a CAST is its target type, checked as a declared column.
_CALL_TYPES = {"to_timestamp_ltz": "TIMESTAMP_LTZ(3)", "to_timestamp": "TIMESTAMP(3)"}


@dataclass(frozen=True)
class Computed:
    """``name AS expr``: the column, its expression (sqlglot's) and where it was written."""

    name: str
    expr: exp.Expression
    span: Span


def computed_expr(col: exp.ColumnDef) -> exp.Expression | None:
    """The expression of ``name AS expr``, or None for another kind of column."""
    for c in col.args.get("constraints") or []:
        k = c.args.get("kind")
        if isinstance(k, exp.ComputedColumnConstraint):
            return k.this  # type: ignore[no-any-return]
    return None


def declared_type(c: Computed) -> exp.DataType | None:
    """The SQL type Flink gives the column when flowc can tell it from the expression (a
    CAST's target), for the WATERMARK type check; None: checked on flowc's type."""
    node = c.expr
    while isinstance(node, exp.Paren):
        node = node.this
    if isinstance(node, (exp.Cast, exp.TryCast)) and isinstance(node.to, exp.DataType):
        return node.to
    return None


def call_type(c: Computed) -> str | None:
    """``TIMESTAMP_LTZ(3)`` for TO_TIMESTAMP_LTZ(...), ``TIMESTAMP(3)`` for TO_TIMESTAMP."""
    node = c.expr
    if isinstance(node, exp.Anonymous):
        name = str(node.this).lower()
    elif isinstance(node, exp.Func):  # sqlglot's own node: its key, as ExprTranslator reads
        name = {"strtotime": "to_timestamp", "unixtotime": "to_timestamp"}.get(
            node.key.lower(), node.key.lower())
    else:
        return None
    return _CALL_TYPES.get(name)


def projection(columns: list[str | Computed], physical: list[str], spans: SpanMap,
               translate: ExprTranslator, span: Span) -> tuple[A.SelectItem, ...]:
    """The table's row, in declared order: each physical column as read, each computed
    column's expression over the physical ones (Flink's ``Calc(select=[...])``)."""
    items: list[A.SelectItem] = []
    for col in columns:
        if isinstance(col, str):
            items.append(A.SelectItem(A.FieldRef(col, None, span), None, span))
            continue
        for ref in col.expr.find_all(exp.Column):
            if ref.name not in physical:
                what = ("another computed column" if any(
                    isinstance(c, Computed) and c.name == ref.name for c in columns)
                    else "")
                if what:
                    raise UnsupportedError(f"computed column '{col.name}' refers to "
                                           f"{what}, '{ref.name}'", spans(ref),
                                           hint="write the expression over the physical "
                                                "columns")
                raise FlowNameError(f"unknown column '{ref.name}' in computed column "
                                    f"'{col.name}'", spans(ref),
                                    hint=_dym(ref.name, physical))
        for sub in col.expr.find_all(exp.AggFunc, exp.Window):
            raise FlowTypeError(f"computed column '{col.name}' cannot use an aggregate or "
                                "window function", spans(sub))
        items.append(A.SelectItem(translate(col.expr), col.name, col.span))
    return tuple(items)
