"""A window table function read without aggregation: ``SELECT * FROM TABLE(TUMBLE(...))``.

Flink's window TVF appends ``window_start``, ``window_end`` and ``window_time`` (its end
minus 1 ms) to every row: TUMBLE gives one row per input row, HOP one per window the row
falls in; a row with a null time attribute is dropped (Flink's WindowTableFunctionOperator
does the same). The columns are computed as Flink's window assigners compute them
(``TimeWindow.getWindowStartWithOffset``), so this lowers onto plain ``filter``, ``map``
and ``flat_map`` steps; CUMULATE gives one row per window the row falls in, its epoch's
windows ``[start, start + k * step)`` whose end is past the row's time. A SESSION window
needs the whole session first: not supported.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from flowc.errors import UnsupportedError
from flowc.parser import ast as A
from flowc.types import INT, TIMESTAMP_LTZ

if TYPE_CHECKING:
    from flowc.sql.query import Piece

WINDOW_TVF_COLUMNS = ("window_start", "window_end", "window_time")


def window_rows(piece: Piece) -> None:
    """Replace ``piece``'s pending window TVF by the steps that add its window columns."""
    step = piece.window
    assert step is not None and piece.time_column is not None
    spec = step.spec
    span = step.span
    if spec.kind == "session":
        raise UnsupportedError("a SESSION window table function without aggregation is not "
                               "supported", span,
                               hint="aggregate it: GROUP BY window_start, window_end, <key>")

    def lit(v: int) -> A.Expr:
        return A.Literal(v, INT, span)

    ts = A.FieldRef(piece.time_column, None, span)
    millis = A.Call("epoch_millis", (ts,), span, span)

    def start_of(unit: int) -> A.Expr:
        # TimeWindow.getWindowStartWithOffset: ts - (ts - offset + unit) % unit
        rem = A.Binary("%", A.Binary("+", A.Binary("-", millis, lit(spec.offset), span),
                                     lit(unit), span), lit(unit), span)
        return A.Binary("-", millis, rem, span)

    def as_ts(e: A.Expr) -> A.Expr:
        return A.Call("to_timestamp", (e,), span, span)

    steps: list[A.Step] = [A.FilterStep(A.IsNull(ts, True, span), span)]
    end: A.Expr | None = None
    if spec.kind == "tumbling":
        start: A.Expr = as_ts(start_of(spec.size))
    elif spec.kind == "cumulative":
        from flowc.parser.steps import assigner_of

        assigner_of(spec)  # Flink's checks of the step and size
        # CumulativeWindowAssigner: ends from the step's next boundary up to the epoch's end
        start = as_ts(start_of(spec.size))
        first = A.Binary("+", start_of(spec.slide), lit(spec.slide), span)
        ends = tuple(as_ts(A.Binary("+", first, lit(i * spec.slide), span))
                     for i in range(spec.size // spec.slide))
        steps.append(A.FlatMapStep(A.ArrayLit(ends, span), "window_end", span))
        end = A.FieldRef("window_end", None, span)
        steps.append(A.FilterStep(A.Binary(
            "<=", end, A.Binary("+", start, A.DurationLit(spec.size, span), span), span), span))
    else:
        # SlidingWindowAssigner: starts from the last one down, while start > ts - size
        last = start_of(spec.slide)
        count = -(-spec.size // spec.slide)
        starts = tuple(as_ts(A.Binary("-", last, lit(i * spec.slide), span))
                       for i in range(count))
        steps.append(A.FlatMapStep(A.ArrayLit(starts, span), "window_start", span))
        start = A.FieldRef("window_start", None, span)
        late = A.Binary("-", ts, A.DurationLit(spec.size, span), span)
        steps.append(A.FilterStep(A.Binary(">", start, late, span), span))
    if end is None:
        end = A.Binary("+", start, A.DurationLit(spec.size, span), span)
    assert piece.names is not None  # a TVF reads a table, whose columns are known
    items = [A.SelectItem(A.FieldRef(n, None, span), None, span) for n in piece.names]
    items.append(A.SelectItem(start, "window_start", span))
    items.append(A.SelectItem(end, "window_end", span))
    wtime: A.Expr = A.Binary("-", end, A.DurationLit(1, span), span)
    items.append(A.SelectItem(A.Cast(wtime, TIMESTAMP_LTZ, span) if spec.ltz else wtime,
                              "window_time", span))
    steps.append(A.MapStep(tuple(items), span))
    piece.steps.extend(steps)
    piece.window = None
    piece.names = list(piece.names) + list(WINDOW_TVF_COLUMNS)
