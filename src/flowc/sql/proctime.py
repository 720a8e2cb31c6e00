"""SQL processing time: a table's computed column ``pt AS PROCTIME()``.

The source reads the other columns; a query reading the table gets ``pt`` from a map after
the source (Flink's Calc), and windows over ``pt`` run on the processing-time assigners
(``A.WindowSpec.processing``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from sqlglot import exp

from flowc.parser import ast as A

if TYPE_CHECKING:
    from flowc.sql.ddl import TableDef
    from flowc.sql.query import Piece


def is_proctime(col: exp.ColumnDef) -> bool:
    """``name AS PROCTIME()``: a computed column holding the processing time."""
    for c in col.args.get("constraints") or []:
        k = c.args.get("kind")
        if isinstance(k, exp.ComputedColumnConstraint) and isinstance(k.this, exp.Anonymous) \
                and str(k.this.this).lower() == "proctime" and not k.this.expressions:
            return True
    return False


def is_proctime_column(table: TableDef | None, column: str) -> bool:
    return table is not None and table.proctime is not None and table.proctime[0] == column


def add_proctime(piece: Piece, table: TableDef | None) -> Piece:
    """A table's ``column AS PROCTIME()``: a map adds it at its declared position (Flink's
    ``Calc(select=[..., PROCTIME() AS pt])`` after the source): the processing time when
    the row passes it (docs/sql.md, CREATE TABLE)."""
    if table is None or table.proctime is None:
        return piece
    column, position = table.proctime
    span = piece.span
    assert piece.names is not None
    names = list(piece.names)
    items = [A.SelectItem(A.FieldRef(n, None, span), None, span) for n in names]
    now = A.Call("_proctime", (), span, span, internal=True)
    items.insert(position, A.SelectItem(now, column, span))
    piece.steps.append(A.MapStep(tuple(items), span))
    names.insert(position, column)
    piece.names = names
    return piece
