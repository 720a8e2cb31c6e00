"""Window aggregates over Arrow: ``key by ... | window ... | aggregate ...``.

``WindowState`` holds one subtask's (key, window) state as Arrow tables: rows of (key
fields, aggregate arguments, window start ``ws`` / end ``we``, row number ``row``), one per
(record, window) pair, folded every ``COMPACT_ROWS`` into partial aggregates per group
(pyarrow's single-threaded hash aggregation, so first / last see the input order). It
hands out the final results of any set of groups, ordered by (end, first row), and
``results`` computes them for arbitrary groupings (STREAMING's late firings, see
``stream_windows.py``).

``BatchWindow`` is exactly the row WindowOperator's BATCH rule (``runtime/windows.py``): no
watermarks, every (key, window) fires once at end of input, ordered by window end and,
within one end, by when the group was first seen. Windows are assigned as Flink assigns
them (tumbling: one; sliding: latest first; cumulating: earliest end first, all sharing
their epoch's start, so a window is its (start, end) pair).
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from flowc import decimals
from flowc.executor.arrow.convert import Chunk
from flowc.executor.arrow.kernels import as_array, compile_expr
from flowc.executor.arrow.running import _last_of_groups, _sequential_cumsum, group_ids
from flowc.executor.runtime.core import require_timestamp
from flowc.types import Schema
from flowc.vector import VAggregate, VCol, vector_of
from flowc.windowing import (
    CumulativeEventTimeWindows,
    SlidingEventTimeWindows,
    TumblingEventTimeWindows,
)

_COUNT_ALL = pc.CountOptions(mode="all")
_COUNT_VALID = pc.CountOptions(mode="only_valid")
_SKIP = pc.ScalarAggregateOptions(skip_nulls=True, min_count=1)
WINDOW = ["ws", "we"]


def supported(spec: Any, key: Any, batch: bool) -> bool:
    """Whether this WindowOp runs here: tumbling or sliding, ``aggregate`` items with vector
    forms and a key made of fields (STREAMING: any allowed lateness and late side output)."""
    if not isinstance(spec.assigner, (TumblingEventTimeWindows, SlidingEventTimeWindows,
                                      CumulativeEventTimeWindows)):
        return False
    agg = vector_aggregate(spec, key)
    return agg is not None and all(a is None or compile_expr(a) is not None for a in agg.args)


# DECIMAL arguments of every kind are exact here: counts, min / max (pyarrow's kernels),
# sums and averages (added in decimal256(_DECIMAL_SUM, s): exact for 10^38 values of 38
# digits; running: ``running._running_decimal_sum``), first / last (``_pick``).
_DECIMAL_SUM = 76


def vector_aggregate(spec: Any, key: Any) -> VAggregate | None:
    """A window ``aggregate``'s vector form, if its items have one and its key is made of
    fields; else None."""
    if spec.reduce_fn is not None or spec.aggregate_fn is None or spec.window_fn is None:
        return None
    agg, row = vector_of(spec.aggregate_fn), vector_of(spec.window_fn)
    keys = vector_of(getattr(key, "fn", None))
    if not isinstance(agg, VAggregate) or row is None or not isinstance(keys, tuple):
        return None
    if row.key_count != len(keys) or not all(isinstance(k, VCol) for k in keys):
        return None
    return agg


# Buffered rows (after window assignment) compacted into per-group partial aggregates:
# a window's state then grows with its groups (and distinct values), not with its rows.
COMPACT_ROWS = 1 << 18

# Partial aggregate per kind: (pyarrow aggregation over rows, over partials).
_PARTIAL = {
    "count_star": (("count", _COUNT_ALL), ("sum", _SKIP)),
    "count": (("count", _COUNT_VALID), ("sum", _SKIP)),
    "sum": (("sum", _SKIP), ("sum", _SKIP)),
    "min": (("min", _SKIP), ("min", _SKIP)),
    "max": (("max", _SKIP), ("max", _SKIP)),
    "first": (("first", _SKIP), ("first", _SKIP)),
    "last": (("last", _SKIP), ("last", _SKIP)),
}


class Assigned:
    """What a window member needs from each record: its key fields and aggregate arguments
    as a table (``k0..``, ``a0..``), and each (record, window) pair's window start."""

    def __init__(self, spec: Any, key: Any) -> None:
        self.assigner = spec.assigner
        self.agg: VAggregate = vector_of(spec.aggregate_fn)
        self.keys = [f"k{i}" for i in range(len(vector_of(key.fn)))]
        self.key_index = [k.index for k in vector_of(key.fn)]
        self.args = [None if a is None else compile_expr(a) for a in self.agg.args]

    def table(self, c: Chunk) -> pa.Table:
        n = c.num_rows
        cols = [c.batch.column(i) for i in self.key_index]
        cols += [pa.nulls(n, pa.bool_()) if k is None else as_array(k(c.batch), n)
                 for k in self.args]
        names = self.keys + [f"a{i}" for i in range(len(self.args))]
        return pa.Table.from_arrays(cols, names=names)

    def windows(self, ts: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
        return window_bounds(self.assigner, ts)


def assign_windows(a: Any, ts: np.ndarray) -> tuple[np.ndarray, np.ndarray | None]:
    """Window starts, and for sliding windows the row of each (row, window) pair (a row's
    windows latest first, as Flink's assigner lists them)."""
    if isinstance(a, TumblingEventTimeWindows):
        return ts - np.mod(ts - a.offset, a.size), None
    last = ts - np.mod(ts - a.offset, a.slide)
    counts = (a.size - (ts - last) + a.slide - 1) // a.slide
    counts = np.maximum(counts, 0)
    rows = np.repeat(np.arange(len(ts)), counts)
    first = np.repeat(np.cumsum(counts) - counts, counts)
    j = np.arange(len(rows)) - first
    return last[rows] - j * a.slide, rows


def window_bounds(a: Any, ts: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """Starts and ends of each (row, window) pair, and the row of each pair (None: one
    window per row)."""
    if not isinstance(a, CumulativeEventTimeWindows):
        start, rows = assign_windows(a, ts)
        return start, start + a.size, rows
    # CumulativeWindowAssigner: the epoch's start; ends from the step after ts to its end
    epoch = ts - np.mod(ts - a.offset, a.max_size)
    first = ts - np.mod(ts - a.offset, a.step) + a.step
    counts = (epoch + a.max_size - first) // a.step + 1
    rows = np.repeat(np.arange(len(ts)), counts)
    j = np.arange(len(rows)) - np.repeat(np.cumsum(counts) - counts, counts)
    return epoch[rows], first[rows] + j * a.step, rows


def with_window(table: pa.Table, start: np.ndarray, end: np.ndarray,
                rows: np.ndarray) -> pa.Table:
    return table.append_column("ws", pa.array(start)).append_column(
        "we", pa.array(end)).append_column("row", pa.array(rows))


def float_sums(table: pa.Table, kinds: tuple[str, ...]) -> list[int]:
    """The aggregates of ``table``'s rows that add doubles (sum, avg): pyarrow's sums and
    merged partials round differently from the row code's one-by-one adding."""
    return [i for i, k in enumerate(kinds) if k in ("sum", "avg")
            and pa.types.is_floating(table.schema.field(f"a{i}").type)]


def exact_sums(target: pa.Table, sources: list[pa.Table], groups: list[str],
               kinds: tuple[str, ...], idx: list[int]) -> pa.Table:
    """``target`` (one row per group) with each double sum ``a{i}_sum`` of ``idx`` being
    the values of ``sources`` (tables with ``groups`` and ``a{i}`` or ``a{i}_sum``, in
    record order) added one at a time in that order, as the row code adds them: a sum from
    its first value, an avg from 0. Groups are matched by a group_by (nulls match)."""
    m = target.num_rows
    keys = pa.concat_tables([target.select(groups)] + [s.select(groups) for s in sources],
                            promote_options="permissive")
    gid = group_ids(keys, groups)
    last = _last_of_groups(gid)
    for i in idx:
        name = f"a{i}_sum"
        vals = [pc.cast(s.column(f"a{i}" if f"a{i}" in s.column_names else name),
                        pa.float64()) for s in sources]
        v = pa.chunked_array([pa.nulls(m, pa.float64())] + [c for a in vals for c in (
            a.chunks if isinstance(a, pa.ChunkedArray) else [a])], pa.float64())
        valid = pc.is_valid(v).to_numpy(zero_copy_only=False)
        x = pc.fill_null(v, -0.0).to_numpy(zero_copy_only=False).copy()
        x[:m] = 0.0 if kinds[i] == "avg" else -0.0  # -0.0 + x is x, bit for bit
        total = _sequential_cumsum(x, gid)[last]
        seen = np.zeros(len(last), dtype=bool)
        seen[gid[valid]] = True
        head = gid[:m]
        col = pa.array(total[head], pa.float64(), mask=~seen[head])
        at = target.column_names.index(name)
        target = target.set_column(at, name, pc.cast(col, target.schema.field(at).type))
    return target


def float_extremes(schema: pa.Schema, kinds: tuple[str, ...]) -> list[int]:
    """The min / max aggregates over floating-point values (``a{i}`` columns of
    ``schema``): their results follow the row code's comparisons, not pyarrow's."""
    return [i for i, k in enumerate(kinds) if k in ("min", "max")
            and pa.types.is_floating(schema.field(f"a{i}").type)]


# The row code's min / max (``acc = v if v < acc else acc`` from the first non-null value,
# Flink's MinAggFunction / MaxAggFunction on Java doubles) keeps a NaN met first forever and
# skips a later one, and keeps the first of equal values (``0.0`` before ``-0.0``).
# pyarrow's min / max skip NaN and pick either zero, so a floating min / max keeps three
# partial columns, each merged in record order: ``e{i}_ext`` pyarrow's NaN-skipping
# extreme, ``e{i}_head`` the first value, ``e{i}_zero`` the first zero; ``a{i}_min`` /
# ``a{i}_max`` is the row code's result of them (``_resolve_extreme``).
EXTREME_PARTS = ("ext", "head", "zero")


def _resolve_extreme(table: pa.Table, i: int, kind: str) -> pa.Table:
    ext, head, zero = (table.column(f"e{i}_{p}") for p in EXTREME_PARTS)
    nan_first = pc.fill_null(pc.is_nan(head), False)
    at_zero = pc.fill_null(pc.equal(ext, 0.0), False)
    value = pc.if_else(nan_first, head, pc.if_else(at_zero, zero, ext))
    name = f"a{i}_{kind}"
    if name in table.column_names:
        return table.set_column(table.column_names.index(name), name, value)
    return table.append_column(name, value)


def restore_extremes(cols: dict[str, list[Any]], schema: pa.Schema,
                     kinds: tuple[str, ...]) -> pa.Table:
    """A partials table from columns holding each floating min / max as its result only
    (a row accumulator restored from a snapshot): that one value's three partials."""
    for i, kind in enumerate(kinds):
        if f"e{i}_ext" not in schema.names or f"e{i}_ext" in cols:
            continue
        values = cols[f"a{i}_{kind}"]
        cols[f"e{i}_ext"] = list(values)
        cols[f"e{i}_head"] = list(values)
        cols[f"e{i}_zero"] = [v if v == 0 else None for v in values]
    return pa.Table.from_pydict(cols, schema=schema)


def _decimal(table: pa.Table, name: str) -> bool:
    return pa.types.is_decimal(table.schema.field(name).type)


def _pick(table: pa.Table, i: int, kind: str) -> tuple[pa.Table, tuple[Any, ...]]:
    """A DECIMAL first / last (pyarrow has no decimal first / last kernel): the table with
    ``q{i}``, each row's position where its value is not null, and the aggregation of its
    first / last position (``_picked`` takes the value)."""
    n = table.num_rows
    valid = pc.is_valid(table.column(f"a{i}" if f"a{i}" in table.column_names
                                     else f"a{i}_{kind}")).to_numpy(zero_copy_only=False)
    at = pa.array(np.arange(n, dtype=np.int64), mask=~valid)
    return table.append_column(f"q{i}", at), (f"q{i}", "min" if kind == "first" else "max",
                                              _SKIP)


def _picked(grouped: pa.Table, table: pa.Table, i: int, kind: str, src: str) -> pa.Table:
    """``grouped``'s ``q{i}_min`` / ``_max`` positions of ``table`` replaced by the values
    of ``table``'s column ``src`` there, as ``a{i}_first`` / ``a{i}_last``."""
    q = f"q{i}_{'min' if kind == 'first' else 'max'}"
    at = grouped.column_names.index(q)
    return grouped.set_column(at, f"a{i}_{kind}", table.column(src).take(grouped.column(q)))


def partial(table: pa.Table, groups: list[str], kinds: tuple[str, ...],
            exact: bool = True) -> pa.Table:
    """Rows -> one partial row per group: ``row_min`` and each aggregate's partials
    (``exact``: double sums added in row order, see ``exact_sums``)."""
    aggs: list[tuple[Any, ...]] = [("row", "min")]
    extremes = float_extremes(table.schema, kinds)
    picks = [i for i, k in enumerate(kinds) if k in ("first", "last")
             and _decimal(table, f"a{i}")]
    for i, kind in enumerate(kinds):
        if kind in ("sum", "avg") and _decimal(table, f"a{i}"):
            v = table.column(f"a{i}")
            table = table.set_column(table.column_names.index(f"a{i}"), f"a{i}", pc.cast(
                v, pa.decimal256(_DECIMAL_SUM, v.type.scale)))
        if i in picks:
            table, agg = _pick(table, i, kind)
            aggs.append(agg)
        elif kind == "avg":
            aggs += [(f"a{i}", "sum", _SKIP), (f"a{i}", "count", _COUNT_VALID)]
        elif i in extremes:
            v = table.column(f"a{i}")
            zeros = pc.if_else(pc.equal(v, 0.0), v, pa.scalar(None, v.type))
            table = table.append_column(f"z{i}", zeros)
            aggs += [(f"a{i}", kind, _SKIP), (f"a{i}", "first", _SKIP),
                     (f"z{i}", "first", _SKIP)]
        elif kind != "count_distinct":
            aggs.append((f"a{i}",) + _PARTIAL[kind][0])
    grouped = table.group_by(groups, use_threads=False).aggregate(aggs)
    for i in picks:
        grouped = _picked(grouped, table, i, kinds[i], f"a{i}")
    for i in extremes:
        names = {f"a{i}_{kinds[i]}": f"e{i}_ext", f"a{i}_first": f"e{i}_head",
                 f"z{i}_first": f"e{i}_zero"}
        grouped = _resolve_extreme(grouped.rename_columns(
            [names.get(c, c) for c in grouped.column_names]), i, kinds[i])
    idx = float_sums(table, kinds) if exact else []
    return exact_sums(grouped, [table], groups, kinds, idx) if idx else grouped


def merge_partials(table: pa.Table, groups: list[str], kinds: tuple[str, ...]) -> pa.Table:
    """Partials folded into one partial row per group (same columns)."""
    aggs: list[tuple[Any, ...]] = [("row_min", "min")]
    names = ["row_min"]
    extremes = [i for i in range(len(kinds)) if f"e{i}_ext" in table.column_names]
    picks = [i for i, k in enumerate(kinds) if k in ("first", "last")
             and _decimal(table, f"a{i}_{k}")]
    for i, kind in enumerate(kinds):
        if i in picks:
            table, agg = _pick(table, i, kind)
            aggs.append(agg)
            names.append(f"q{i}")
        elif kind == "avg":
            aggs += [(f"a{i}_sum", "sum", _SKIP), (f"a{i}_count", "sum", _SKIP)]
            names += [f"a{i}_sum", f"a{i}_count"]
        elif i in extremes:  # the parts in record order; the result again from them
            aggs += [(f"e{i}_ext", kind, _SKIP), (f"e{i}_head", "first", _SKIP),
                     (f"e{i}_zero", "first", _SKIP)]
            names += [f"e{i}_{p}" for p in EXTREME_PARTS]
        elif kind != "count_distinct":
            col = f"a{i}_{_PARTIAL[kind][0][0]}"
            aggs.append((col,) + _PARTIAL[kind][1])
            names.append(col)
    merged = table.group_by(groups, use_threads=False).aggregate(aggs)
    for name, agg in zip(names, aggs):
        if name.startswith("q"):
            continue  # a position: ``_picked`` below
        merged = merged.rename_columns([name if c == f"{name}_{agg[1]}" else c
                                        for c in merged.column_names])
    for i in picks:
        merged = _picked(merged, table, i, kinds[i], f"a{i}_{kinds[i]}")
    for i in extremes:
        merged = _resolve_extreme(merged, i, kinds[i])
    return merged


def distinct_values(table: pa.Table, groups: list[str], i: int) -> pa.Table:
    values = table.group_by(groups + [f"a{i}"], use_threads=False).aggregate([])
    return values.filter(pc.is_valid(values.column(f"a{i}")))


def results(grouped: pa.Table, distinct: dict[int, pa.Table], groups: list[str],
            keys: list[str], kinds: tuple[str, ...], out_schema: pa.Schema) -> Chunk:
    """The output records of the partial groups ``grouped`` in its order: key fields,
    window start and end, the aggregates; timestamps ``end - 1``. ``distinct``: per count
    distinct aggregate, the (group, value) rows."""
    out = [grouped.column(k) for k in keys + WINDOW]
    counts = _distinct_counts(grouped, distinct, groups)
    for i, kind in enumerate(kinds):
        if kind in ("sum", "avg") and _decimal(grouped, f"a{i}_sum"):
            field = out_schema.field(len(keys) + len(WINDOW) + i)
            out.append(decimal_sum(grouped, i, field) if kind == "sum" else
                       decimal_avg(grouped, i, field))
        elif kind == "avg":
            total = pc.cast(grouped.column(f"a{i}_sum"), pa.float64(), safe=False)
            count = pc.cast(grouped.column(f"a{i}_count"), pa.float64())
            out.append(pc.if_else(pc.equal(count, 0.0), pa.scalar(None, pa.float64()),
                                  pc.divide(total, count)))
        elif kind == "count_distinct":
            out.append(counts[i])
        else:
            out.append(grouped.column(f"a{i}_{_PARTIAL[kind][0][0]}"))
    arrays = [pc.cast(a, f.type, safe=False) for a, f in zip(out, out_schema)]
    arrays = [a.combine_chunks() if isinstance(a, pa.ChunkedArray) else a for a in arrays]
    batch = pa.RecordBatch.from_arrays(arrays, schema=out_schema)
    ends = grouped.column("we")
    ends = ends.combine_chunks() if isinstance(ends, pa.ChunkedArray) else ends
    return Chunk(batch, pc.subtract(ends, 1))


def decimal_sum(grouped: pa.Table, i: int, field: pa.Field) -> pa.Array:
    return decimal_sum_result(grouped.column(f"a{i}_sum"), field)


def decimal_sum_result(total: Any, field: pa.Field) -> pa.Array:
    """SUM of a DECIMAL (exact ``total``s) as the row code's ``sum_result``: NULL from
    10^38 on; a sum the output's DECIMAL(38, s) cannot hold below that fails as the row
    operator's record would, converted to the declared columns (``convert.from_rows``)."""
    if isinstance(total, pa.ChunkedArray):
        total = total.combine_chunks()
    big = pc.fill_null(pc.greater_equal(pc.abs(total), pa.scalar(
        Decimal(10) ** decimals.MAX_PRECISION, total.type)), False)
    total = pc.if_else(big, pa.scalar(None, total.type), total)
    limit = Decimal(10) ** (field.type.precision - field.type.scale)
    wide = pc.fill_null(pc.greater_equal(pc.abs(total), pa.scalar(limit, total.type)), False)
    if pc.any(wide).as_py():
        raise TypeError(f"field '{field.name}' of a record does not fit its declared type "
                        f"{field.type}: {total.filter(wide)[0].as_py()}")
    return pc.cast(total, field.type)


def decimal_avg(grouped: pa.Table, i: int, field: pa.Field) -> pa.Array:
    return decimal_avg_result(grouped.column(f"a{i}_sum"), grouped.column(f"a{i}_count"),
                              field)


def decimal_avg_result(totals: Any, counts: Any, field: pa.Field) -> pa.Array:
    """AVG of a DECIMAL: the row code's ``decimals.average`` (a HALF_UP quotient) of each
    exact sum and count - one division per value, as ``deckernels`` divides."""
    return pa.array([decimals.average(t, c) if c else None
                     for t, c in zip(totals.to_pylist(), counts.to_pylist())], field.type)


def evaluate(rows: pa.Table, groups: list[str], keys: list[str], kinds: tuple[str, ...],
             out_schema: pa.Schema, order: list[tuple[str, str]] | None = None) -> Chunk | None:
    """The results of ``rows`` grouped by ``groups``, ordered by ``order`` (default: end,
    then first row)."""
    if not rows.num_rows:
        return None
    grouped = partial(rows, groups, kinds)
    grouped = grouped.take(pc.sort_indices(grouped, sort_keys=order or [
        ("we", "ascending"), ("row_min", "ascending")]))
    distinct = {i: distinct_values(rows, groups, i)
                for i, k in enumerate(kinds) if k == "count_distinct"}
    return results(grouped, distinct, groups, keys, kinds, out_schema)


def _distinct_counts(grouped: pa.Table, distinct: dict[int, pa.Table],
                     groups: list[str]) -> dict[int, pa.Array]:
    """Per count-distinct aggregate, the number of distinct non-null values of each group
    of ``grouped`` (in its order). Groups are matched by position in a group_by over the
    groups and their distinct rows together (a join would not match null keys)."""
    out: dict[int, pa.Array] = {}
    n = grouped.num_rows
    for i, values in distinct.items():
        head = grouped.select(groups).append_column("pos", pa.array(
            np.arange(n, dtype=np.int64))).append_column("one", pa.nulls(n, pa.int64()))
        tail = values.select(groups).append_column(
            "pos", pa.nulls(values.num_rows, pa.int64())).append_column(
            "one", pa.array(np.ones(values.num_rows, dtype=np.int64)))
        both = pa.concat_tables([head, tail]).group_by(groups, use_threads=False).aggregate(
            [("pos", "min"), ("one", "sum", pc.ScalarAggregateOptions(min_count=0))])
        both = both.filter(pc.is_valid(both.column("pos_min")))
        order = pc.sort_indices(both.column("pos_min"))
        out[i] = both.column("one_sum").take(order)
    return out


def ends_in(table: pa.Table, lo: int | None, hi: int | None) -> pa.Array:
    """Whether each row's window has ``lo < end - 1 <= hi`` (None: unbounded)."""
    last = pc.subtract(table.column("we"), 1)
    mask = pa.array(np.ones(table.num_rows, dtype=bool))
    if lo is not None:
        mask = pc.and_(mask, pc.greater(last, lo))
    if hi is not None:
        mask = pc.and_(mask, pc.less_equal(last, hi))
    return mask


class WindowState:
    """One subtask's (key, window) groups: buffered rows, compacted into partials every
    ``COMPACT_ROWS`` (unless ``compact`` is off: STREAMING with allowed lateness needs
    the rows themselves for late firings), and count distinct's (group, value) rows."""

    def __init__(self, keys: list[str], kinds: tuple[str, ...], compact: bool = True) -> None:
        self.keys = keys
        self.groups = keys + WINDOW
        self.kinds = kinds
        self.compact = compact
        self.rows: list[pa.Table] = []
        self.buffered = 0
        self.partials: list[pa.Table] = []
        self.distinct: dict[int, list[pa.Table]] = {
            i: [] for i, k in enumerate(kinds) if k == "count_distinct"}

    def append(self, table: pa.Table) -> None:
        """Rows with ``ws``, ``we`` and ``row`` columns."""
        if not table.num_rows:
            return
        self.rows.append(table)
        self.buffered += table.num_rows
        if self.compact and self.buffered >= COMPACT_ROWS:
            self._compact()

    def raw(self) -> pa.Table | None:
        return pa.concat_tables(self.rows) if self.rows else None

    def _compact(self) -> None:
        if not self.rows:
            return
        table = pa.concat_tables(self.rows)
        self.rows, self.buffered = [], 0
        self._folded(table)
        idx = float_sums(table, self.kinds)
        if idx and self.partials:
            # Double sums go on from the state's sums, so the state is one partial.
            (prev,) = self.partials
            merged = merge_partials(pa.concat_tables(
                [prev, partial(table, self.groups, self.kinds, exact=False)]),
                self.groups, self.kinds)
            self.partials = [exact_sums(merged, [prev, table], self.groups, self.kinds, idx)]
        else:
            self.partials.append(partial(table, self.groups, self.kinds))
        for i in self.distinct:
            self.distinct[i].append(distinct_values(table, self.groups, i))
        if len(self.partials) > 8:  # keep the partials themselves few
            self.partials = [merge_partials(pa.concat_tables(self.partials), self.groups,
                                            self.kinds)]
            for i, parts in self.distinct.items():
                self.distinct[i] = [pa.concat_tables(parts).group_by(
                    self.groups + [f"a{i}"], use_threads=False).aggregate([])]

    def _folded(self, table: pa.Table) -> None:
        """Called with every table of rows folded into the partials."""

    def _merge(self, chosen: pa.Table) -> pa.Table:
        """Several partials' rows of the same groups, merged."""
        return merge_partials(chosen, self.groups, self.kinds)

    def fire(self, out_schema: pa.Schema, lo: int | None = None, hi: int | None = None,
             remove: bool = True) -> Chunk | None:
        """The results of the groups with ``lo < end - 1 <= hi``, ordered by (end, first
        row); ``remove``: and forget them."""
        if not self.compact:
            raw = self.raw()
            if raw is None:
                return None
            mask = ends_in(raw, lo, hi)
            if remove:
                rest = raw.filter(pc.invert(mask))
                self.rows = [rest] if rest.num_rows else []
                self.buffered = rest.num_rows
            return evaluate(raw.filter(mask), self.groups, self.keys, self.kinds, out_schema)
        self._compact()
        if not self.partials:
            return None
        merge = len(self.partials) > 1
        table = pa.concat_tables(self.partials)
        mask = ends_in(table, lo, hi)
        chosen = table.filter(mask)
        distinct = {i: pa.concat_tables(parts) for i, parts in self.distinct.items()}
        if remove:  # each partial keeps its own groups (one row per group in each)
            rests = [t.filter(pc.invert(ends_in(t, lo, hi))) for t in self.partials]
            self.partials = [t for t in rests if t.num_rows]
            self.distinct = {i: [t.filter(pc.invert(ends_in(t, lo, hi)))]
                             for i, t in distinct.items()}
        if not chosen.num_rows:
            return None
        grouped = self._merge(chosen) if merge else chosen
        grouped = grouped.take(pc.sort_indices(grouped, sort_keys=[
            ("we", "ascending"), ("row_min", "ascending")]))
        values = {i: t.filter(ends_in(t, lo, hi)).group_by(
            self.groups + [f"a{i}"], use_threads=False).aggregate([])
            for i, t in distinct.items()}
        return results(grouped, values, self.groups, self.keys, self.kinds, out_schema)

    def drop(self, upto: int) -> None:
        """Forget the groups with ``end - 1 <= upto`` (STREAMING: their cleanup time)."""
        keep = [t.filter(pc.invert(ends_in(t, None, upto))) for t in self.rows]
        self.rows = [t for t in keep if t.num_rows]
        self.buffered = sum(t.num_rows for t in self.rows)
        self.partials = [t.filter(pc.invert(ends_in(t, None, upto))) for t in self.partials]
        self.distinct = {i: [t.filter(pc.invert(ends_in(t, None, upto))) for t in parts]
                         for i, parts in self.distinct.items()}


class BatchWindow:
    """One subtask's BATCH window aggregate: every row goes into ``WindowState``; ``fire``
    at end of input gives every group's result."""

    streaming = False
    dropped = 0
    late: Chunk | None = None  # no watermarks in BATCH: nothing is late

    def __init__(self, spec: Any, key: Any, in_schema: Schema, out_schema: pa.Schema) -> None:
        self.assigned = Assigned(spec, key)
        self.state = WindowState(self.assigned.keys, self.assigned.agg.kinds)
        self.out_schema = out_schema
        self.seen = 0  # rows so far (row numbers order the groups)

    def add(self, c: Chunk) -> None:
        """Keep what the aggregates need (keys, argument values), one row per window."""
        if c.ts.null_count:
            require_timestamp(None, "an event-time window")
        n = c.num_rows
        if n == 0:
            return None
        table = self.assigned.table(c)
        start, end, repeat = self.assigned.windows(c.ts.to_numpy(zero_copy_only=False))
        rows = np.arange(self.seen, self.seen + n, dtype=np.int64)
        if repeat is not None:
            table = table.take(pa.array(repeat))
            rows = rows[repeat]
        self.seen += n
        self.state.append(with_window(table, start, end, rows))
        return None

    def fire(self) -> Chunk | None:
        return self.state.fire(self.out_schema)
