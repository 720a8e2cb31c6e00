"""The STREAMING columnar window aggregate's state (``arrow/stream_windows.StreamWindow``)
as the row WindowOperator's (``runtime/windows.py``) and back, for the streaming
executor's snapshots (``columnar.py``).

A window subtask's state is its (key, window) groups not yet cleaned up. The row operator
holds each as an accumulator tuple (the front end's ``RowAggregate``: count an int, sum /
min / max / first / last the value or None, avg (sum, count), count distinct a
``DistinctSet``) under ``(key, TimeWindow)``, in first-seen order, with its event-time
timers: ``end - 1`` while the window has not fired, and the cleanup timer ``end - 1 +
lateness`` (the same one without lateness; none when it overflows). The columnar state
holds, without allowed lateness, one partial-aggregate row per group (``windows.partial``'s
columns) and count distinct's (group, value) rows, ordered by the group's first row
number; with allowed lateness the records' rows themselves (late firings aggregate a
group's rows up to each late record). First-seen order maps to the row numbers both ways,
so the groups fire in the same (end, first seen) order on either path.

A group restored from a row accumulator into the rows form becomes as many rows as its
largest count (records, values, distinct values): rows whose aggregates over them give
the accumulator (a sum or a min in one row, count(x)'s values as neutral fillers, the
distinct values one a row), so late firings and on-time firings aggregate on from it.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from flowc.errors import ExecutionError
from flowc.executor.arrow import convert
from flowc.executor.arrow.stream_windows import StreamWindow
from flowc.executor.arrow.windows import (
    distinct_values,
    merge_partials,
    partial,
    restore_extremes,
    with_window,
)
from flowc.executor.runtime.core import LONG_MAX, TimerService
from flowc.parser.aggregates import DistinctSet
from flowc.types import Schema
from flowc.windowing import TimeWindow


def _empty_rows(w: StreamWindow, in_schema: Schema) -> pa.Table:
    """The window's (record, window) rows for no records: the partials' column types."""
    table = w.table(convert.empty(convert.arrow_schema(in_schema)))
    none = np.zeros(0, np.int64)
    return with_window(table, none, none, none)


def _columns(names: Any, i: int) -> list[str]:
    """Aggregate ``i``'s partial columns (``a{i}_count``, ...)."""
    return [n for n in names if n.startswith(f"a{i}_")]


_NO_VALUES = DistinctSet()  # count distinct's empty accumulator (never extended in place)


def fake_row(w: StreamWindow, width: int, fields: tuple[Any, ...]) -> list[Any]:
    row: list[Any] = [None] * width
    for i, v in zip(w.assigned.key_index, fields, strict=True):
        row[i] = v
    return row


def window_to_row(w: StreamWindow, op: Any, in_schema: Schema) -> None:
    """Put ``w``'s groups into the opened row WindowOperator ``op`` (its state, timers and
    watermark); ``in_schema``: the window's input (the row key is computed from it)."""
    width = len(in_schema)
    st = w.state
    op.state = {}
    op.timers = TimerService()  # event-time only: a window's timers are its groups'
    op.watermark = w.wm
    op.timers.current_watermark = w.wm
    if st.compact:
        st.fire(w.out_schema, remove=False)  # folds the buffered rows into the partials
        if not st.partials:
            return
        table = st.partials[0] if len(st.partials) == 1 else merge_partials(
            pa.concat_tables(st.partials), st.groups, st.kinds)
        # one timer a group: registered in (end, first seen) order, as they fire
        order = [("we", "ascending"), ("row_min", "ascending")]
        distinct = st.distinct
    else:
        raw = st.raw()
        if raw is None:
            return
        table = partial(raw, st.groups, st.kinds)
        # first-seen order; one record's windows as the assigner lists them (latest first)
        order = [("row_min", "ascending"), ("ws", "descending")]
        distinct = {i: [distinct_values(raw, st.groups, i)] for i in st.distinct}
    table = table.take(pc.sort_indices(table, sort_keys=order))
    cols = {name: table.column(name).to_pylist() for name in table.column_names}
    groups = list(zip(*(cols[g] for g in st.groups)))
    per_kind: list[Any] = []  # per aggregate: its accumulators, one per group
    for i, kind in enumerate(st.kinds):
        if kind == "count_distinct":
            values: dict[tuple[Any, ...], Any] = {}
            for part in distinct[i]:
                d = part.to_pydict()
                for g, v in zip(zip(*(d[c] for c in st.groups)), d[f"a{i}"]):
                    values[g] = values.get(g, _NO_VALUES).add(v)
            per_kind.append([values.get(g, _NO_VALUES) for g in groups])
        elif kind == "avg":
            per_kind.append([(0 if t is None or not c else t, c or 0) for t, c in
                             zip(cols[f"a{i}_sum"], cols[f"a{i}_count"])])
        elif kind in ("count", "count_star"):
            per_kind.append([c or 0 for c in cols[_columns(cols, i)[0]]])
        else:
            per_kind.append(cols[_columns(cols, i)[0]])
    keys = [op.key_fn(fake_row(w, width, fields))
            for fields in zip(*(cols[k] for k in st.keys))]
    state, register = op.state, op.timers.register
    lateness = w.lateness
    for key, ws, we, acc in zip(keys, cols["ws"], cols["we"], zip(*per_kind)):
        window = TimeWindow(ws, we)
        state[(key, window)] = acc
        if we - 1 > w.wm:  # not fired yet
            register(we - 1, key, window)
        if lateness and we - 1 + lateness < LONG_MAX:  # the cleanup timer
            register(we - 1 + lateness, key, window)


def window_from_row(op: Any, w: StreamWindow, in_schema: Schema) -> None:
    """Put the row WindowOperator ``op``'s groups (restored from a snapshot) into ``w``."""
    st = w.state
    width = len(in_schema)
    empty = _empty_rows(w, in_schema)
    n = len(st.keys)
    if not st.compact:
        _rows_from_row(op, w, width, empty)
        return
    template = partial(empty, st.groups, st.kinds)
    groups = sorted(op.state.items(), key=lambda kv: kv[0][1].end)  # stable: first seen
    fields = [key_fields(op, w, width, key, n) for (key, _), _ in groups]
    cols: dict[str, list[Any]] = {k: [f[j] for f in fields] for j, k in enumerate(st.keys)}
    cols["ws"] = [window.start for (_, window), _ in groups]
    cols["we"] = [window.end for (_, window), _ in groups]
    cols["row_min"] = list(range(len(groups)))
    distinct: dict[int, dict[str, list[Any]]] = {}
    for i, kind in enumerate(st.kinds):
        accs = [acc[i] for _, acc in groups]
        if kind == "count_distinct":
            sizes = [len(a) for a in accs]
            d = {g: [v for v, m in zip(cols[g], sizes) for _ in range(m)] for g in st.groups}
            d[f"a{i}"] = [v for a in accs for v in a]
            distinct[i] = d
        elif kind == "avg":
            cols[f"a{i}_sum"] = [a[0] if a[1] else None for a in accs]
            cols[f"a{i}_count"] = [a[1] for a in accs]
        else:
            cols[_columns(template.column_names, i)[0]] = accs
    st.rows, st.buffered = [], 0
    st.partials = [restore_extremes(cols, template.schema, st.kinds)] if groups else []
    for i, d in distinct.items():
        schema = distinct_values(empty, st.groups, i).schema
        st.distinct[i] = [pa.Table.from_pydict(d, schema=schema)] if d[f"a{i}"] else []
    w.seen = len(groups)  # this batch's rows come after every restored group
    w.wm = op.watermark


def _rows_from_row(op: Any, w: StreamWindow, width: int, empty: pa.Table) -> None:
    """The row operator's groups as the rows form (allowed lateness): per group in
    first-seen order, rows numbered on from the previous group's, that aggregate to its
    accumulator."""
    st = w.state
    n = len(st.keys)
    cols: dict[str, list[Any]] = {name: [] for name in empty.column_names}
    types = {name: empty.schema.field(name).type for name in empty.column_names}
    for (key, window), acc in op.state.items():
        fields = key_fields(op, w, width, key, n)
        per_kind = [as_rows(kind, a, types[f"a{i}"]) for i, (kind, a) in
                    enumerate(zip(st.kinds, acc))]
        size = max([len(v) for v in per_kind if v is not None] + [1])
        for j, k in enumerate(st.keys):
            cols[k] += [fields[j]] * size
        for i, values in enumerate(per_kind):
            cols[f"a{i}"] += [None] * size if values is None else \
                values + [None] * (size - len(values))
        cols["ws"] += [window.start] * size
        cols["we"] += [window.end] * size
        cols["row"] += list(range(len(cols["row"]), len(cols["row"]) + size))
    table = pa.Table.from_pydict(cols, schema=empty.schema)
    st.rows = [table] if table.num_rows else []
    st.buffered = table.num_rows
    st.partials = []
    st.distinct = {i: [] for i in st.distinct}
    w.seen = table.num_rows  # this batch's rows come after every restored group's
    w.wm = op.watermark


def as_rows(kind: str, acc: Any, t: pa.DataType) -> list[Any] | None:
    """One aggregate's accumulator as argument values of rows (None: any number of
    nulls): the aggregate over them (and over later rows after them) is the row code's."""
    if kind == "count_star":
        return [None] * acc
    if kind == "count":
        return [_filler(t)] * acc
    if kind == "count_distinct":
        return list(acc)
    if kind == "avg":
        total, count = acc
        if not count:
            return None
        return [total] + [_filler(t)] * (count - 1)
    return None if acc is None else [acc]  # sum, min, max, first, last


def _filler(t: pa.DataType) -> Any:
    """A value of type ``t`` that adds nothing to a sum (-0.0 for doubles: x + -0.0 is x,
    -0.0 included)."""
    if pa.types.is_floating(t):
        return -0.0
    if pa.types.is_string(t) or pa.types.is_large_string(t):
        return ""
    if pa.types.is_boolean(t):
        return False
    if pa.types.is_binary(t) or pa.types.is_large_binary(t):
        return b""
    if pa.types.is_decimal(t):
        return Decimal(0)  # (an int64 cast needs 19 integer digits)
    return pa.array([0], pa.int64()).cast(t)[0].as_py()


def key_fields(op: Any, w: StreamWindow, width: int, key: Any, n: int) -> tuple[Any, ...]:
    """The key fields whose row gives ``key`` (a tuple of fields, or one field's value)."""
    candidates = [(key,)]
    if isinstance(key, tuple) and len(key) == n:
        candidates.insert(0, tuple(key))
    for fields in candidates:
        if len(fields) == n and op.key_fn(fake_row(w, width, fields)) == key:
            return fields
    raise ExecutionError(f"cannot restore the window state of key {key!r} columnar")
