"""The STREAMING columnar window aggregate's state (``arrow/stream_windows.StreamWindow``)
as the row WindowOperator's (``runtime/windows.py``) and back, for the streaming
executor's snapshots (``columnar.py``).

Without allowed lateness (the only form converted) a window subtask's state is its open
(key, window) groups. The row operator holds each as an accumulator tuple (the front end's
``RowAggregate``: count an int, sum / min / max / first / last the value or None, avg
(sum, count), count distinct a ``DistinctSet``) under ``(key, TimeWindow)``, with one
event-time timer at ``end - 1`` (lateness 0: the cleanup timer is the same one), in
first-seen order. The columnar state holds them as one partial-aggregate row per group
(``windows.partial``'s columns) and count distinct's (group, value) rows, ordered by the
group's first row number. First-seen order maps to the row numbers both ways, so the
groups fire in the same (end, first seen) order on either path.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from flowc.errors import ExecutionError
from flowc.executor.arrow import convert
from flowc.executor.arrow.stream_windows import StreamWindow
from flowc.executor.arrow.windows import distinct_values, merge_partials, partial, with_window
from flowc.executor.runtime.core import TimerService
from flowc.parser.aggregates import DistinctSet
from flowc.types import Schema
from flowc.windowing import TimeWindow


def _empty_rows(w: StreamWindow, in_schema: Schema) -> pa.Table:
    """The window's (record, window) rows for no records: the partials' column types."""
    table = w.assigned.table(convert.empty(convert.arrow_schema(in_schema)))
    none = np.zeros(0, np.int64)
    return with_window(table, none, w.assigned.assigner.size, none)


def _columns(names: list[str], i: int) -> list[str]:
    return [n for n in names if n.startswith(f"a{i}_")]


def _fake_row(w: StreamWindow, width: int, fields: tuple[Any, ...]) -> list[Any]:
    row: list[Any] = [None] * width
    for i, v in zip(w.assigned.key_index, fields, strict=True):
        row[i] = v
    return row


def window_to_row(w: StreamWindow, op: Any, in_schema: Schema) -> None:
    """Put ``w``'s groups into the opened row WindowOperator ``op`` (its state, timers and
    watermark); ``in_schema``: the window's input (the row key is computed from it)."""
    width = len(in_schema)
    st = w.state
    st.fire(w.out_schema, remove=False)  # folds the buffered rows into the partials
    op.state = {}
    op.timers = TimerService()  # event-time only: a window's timers are its groups'
    op.watermark = w.wm
    op.timers.current_watermark = w.wm
    if not st.partials:
        return
    table = st.partials[0] if len(st.partials) == 1 else merge_partials(
        pa.concat_tables(st.partials), st.groups, st.kinds)
    table = table.take(pc.sort_indices(table, sort_keys=[("we", "ascending"),
                                                         ("row_min", "ascending")]))
    names = table.column_names
    distinct: dict[int, dict[tuple[Any, ...], list[Any]]] = {}
    for i, parts in st.distinct.items():
        values: dict[tuple[Any, ...], list[Any]] = {}
        for r in pa.concat_tables(parts).to_pylist() if parts else []:
            values.setdefault(tuple(r[g] for g in st.groups), []).append(r[f"a{i}"])
        distinct[i] = values
    for r in table.to_pylist():
        group = tuple(r[g] for g in st.groups)
        key = op.key_fn(_fake_row(w, width, tuple(r[k] for k in st.keys)))
        acc: list[Any] = []
        for i, kind in enumerate(st.kinds):
            cols = _columns(names, i)
            if kind == "count_distinct":
                d = DistinctSet()
                for v in distinct[i].get(group, ()):
                    d = d.add(v)
                acc.append(d)
            elif kind == "avg":
                total, count = r[f"a{i}_sum"], r[f"a{i}_count"] or 0
                acc.append((0 if total is None or not count else total, count))
            elif kind in ("count", "count_star"):
                acc.append(r[cols[0]] or 0)
            else:
                acc.append(r[cols[0]])
        window = TimeWindow(r["ws"], r["we"])
        op.state[(key, window)] = tuple(acc)
        op.timers.register(window.end - 1, key, window)


def window_from_row(op: Any, w: StreamWindow, in_schema: Schema) -> None:
    """Put the row WindowOperator ``op``'s groups (restored from a snapshot) into ``w``."""
    st = w.state
    width = len(in_schema)
    empty = _empty_rows(w, in_schema)
    template = partial(empty, st.groups, st.kinds)
    names = template.column_names
    groups = sorted(op.state.items(), key=lambda kv: kv[0][1].end)  # stable: first seen
    rows: list[dict[str, Any]] = []
    distinct: dict[int, list[dict[str, Any]]] = {i: [] for i in st.distinct}
    n = len(st.keys)
    for number, ((key, window), acc) in enumerate(groups):
        fields = _key_fields(op, w, width, key, n)
        row: dict[str, Any] = {k: v for k, v in zip(st.keys, fields)}
        row.update(ws=window.start, we=window.end, row_min=number)
        for i, kind in enumerate(st.kinds):
            a = acc[i]
            if kind == "count_distinct":
                for v in a:
                    distinct[i].append({**{k: row[k] for k in st.groups}, f"a{i}": v})
            elif kind == "avg":
                row[f"a{i}_sum"], row[f"a{i}_count"] = (a[0] if a[1] else None), a[1]
            else:
                row[_columns(names, i)[0]] = a
        rows.append(row)
    st.rows, st.buffered = [], 0
    st.partials = [pa.Table.from_pylist(rows, schema=template.schema)] if rows else []
    for i in st.distinct:
        schema = distinct_values(empty, st.groups, i).schema
        st.distinct[i] = [pa.Table.from_pylist(distinct[i], schema=schema)] \
            if distinct[i] else []
    w.seen = len(groups)  # this batch's rows come after every restored group
    w.wm = op.watermark


def _key_fields(op: Any, w: StreamWindow, width: int, key: Any, n: int) -> tuple[Any, ...]:
    """The key fields whose row gives ``key`` (a tuple of fields, or one field's value)."""
    candidates = [(key,)]
    if isinstance(key, tuple) and len(key) == n:
        candidates.insert(0, tuple(key))
    for fields in candidates:
        if len(fields) == n and op.key_fn(_fake_row(w, width, fields)) == key:
            return fields
    raise ExecutionError(f"cannot restore the window state of key {key!r} columnar")
