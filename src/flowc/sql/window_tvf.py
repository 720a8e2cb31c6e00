"""Window table functions' arguments (``TUMBLE(TABLE t, DESCRIPTOR(ts), INTERVAL ...)``,
positional or by name) and the .flow window they stand for; the query translator
(``query.py``) and GROUP BY's legacy window functions (``aggregate.py``) share them."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from sqlglot import exp

from flowc.errors import FlowNameError, FlowSyntaxError, Span, UnsupportedError, did_you_mean
from flowc.parser import ast as A
from flowc.sql.exprs import interval_millis
from flowc.sql.proctime import is_proctime_column
from flowc.sql.spans import SpanMap

if TYPE_CHECKING:
    from flowc.sql.query import Catalog

# GROUP BY TUMBLE(ts, ...) and the like; TUMBLE_START(...) too
LEGACY = {"tumble": "tumbling", "hop": "sliding", "session": "session"}
TVF_KINDS = {**LEGACY, "cumulate": "cumulative"}  # CUMULATE has no GROUP BY form
TVF_PARAMS = {"tumble": ("DATA", "TIMECOL", "SIZE", "OFFSET"),
              "hop": ("DATA", "TIMECOL", "SLIDE", "SIZE", "OFFSET"),
              "session": ("DATA", "TIMECOL", "GAP"),
              "cumulate": ("DATA", "TIMECOL", "STEP", "SIZE", "OFFSET")}


def tvf_arguments(spans: SpanMap, fn: str, args: list[exp.Expression],
                  span: Span) -> list[exp.Expression]:
    """A window TVF's arguments in order; Flink also takes them by name
    (``TUMBLE(DATA => TABLE t, TIMECOL => DESCRIPTOR(ts), SIZE => INTERVAL ...)``)."""
    named = [a for a in args if isinstance(a, exp.Kwarg)]
    if not named:
        return args
    if len(named) != len(args):
        raise FlowSyntaxError(f"{fn.upper()} arguments are either all named or all "
                              "positional", spans(args[0]))
    params = TVF_PARAMS[fn]
    given: dict[str, exp.Expression] = {}
    for a in named:
        name = a.this.name.upper()
        if name not in params:
            r = spans.range(a.expression)
            found = list(re.finditer(rf"\b{re.escape(name)}\b", spans.chunk.text[
                :r[0] if r else None], re.I))
            at = spans.chunk.span(found[-1].start(), found[-1].end() - 1) \
                if found else spans(a)
            raise FlowNameError(f"{fn.upper()} has no parameter '{name}'", at,
                                hint=did_you_mean(name, params) or
                                f"its parameters are {', '.join(params)}")
        if name in given:
            raise FlowSyntaxError(f"parameter '{name}' is given twice", spans(a))
        given[name] = a.expression
    missing = [p for p in params if p not in given and p != "OFFSET"]
    if missing:
        raise FlowSyntaxError(f"{fn.upper()} needs {' and '.join(missing)}", span,
                              hint=f"write {fn.upper()}(" + ", ".join(
                                  f"{p} => ..." for p in params if p != "OFFSET") + ")")
    return [given[p] for p in params if p in given]


def window_spec(spans: SpanMap, catalog: Catalog, fn: str, tcol: exp.Expression,
                sizes: list[exp.Expression], span: Span, stream: str | None) -> A.WindowSpec:
    tspan = spans(tcol)
    if not isinstance(tcol, exp.Column):
        raise FlowSyntaxError("the time attribute must be a column", tspan)
    rowtime = catalog.rowtime_of(stream) if stream else None
    processing = is_proctime_column(catalog.table(stream) if stream else None, tcol.name)
    if rowtime is not None and tcol.name != rowtime and not processing:
        raise UnsupportedError(f"windows use the event time of '{stream}', its WATERMARK "
                               f"column '{rowtime}', not '{tcol.name}'", tspan,
                               hint=f"write DESCRIPTOR({rowtime})")
    ms: list[int] = []
    for s in sizes:
        if not isinstance(s, exp.Interval):
            raise FlowSyntaxError("window sizes are intervals, as in INTERVAL '5' SECOND",
                                  spans(s))
        ms.append(interval_millis(s, spans(s)))
    kind = TVF_KINDS[fn]
    schema = catalog.schema_of(stream) if stream else None
    field = schema.field(tcol.name) if schema is not None else None
    ltz = field is not None and field.type.flavor == "ltz" and not processing
    want = {"tumbling": (1, 2), "sliding": (2, 3), "cumulative": (2, 3),
            "session": (1, 1)}[kind]
    if not want[0] <= len(ms) <= want[1]:
        raise FlowSyntaxError(f"{fn.upper()} takes {want[0]}{'' if want[0] == want[1] else f' or {want[1]}'} "
                              f"interval{'s' if want[1] > 1 else ''}", span)
    if kind == "tumbling":
        return A.WindowSpec(kind, ms[0], 0, ms[1] if len(ms) > 1 else 0, span, processing,
                            ltz)
    if kind in ("sliding", "cumulative"):  # HOP / CUMULATE: the slide / step first
        return A.WindowSpec(kind, ms[1], ms[0], ms[2] if len(ms) > 2 else 0, span, processing,
                            ltz)
    return A.WindowSpec(kind, ms[0], 0, 0, span, processing, ltz)
