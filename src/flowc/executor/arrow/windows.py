"""BATCH window aggregates over Arrow: ``key by ... | window ... | aggregate ...``.

Exactly the row WindowOperator's BATCH rule (``runtime/windows.py``): no watermarks, every
(key, window) fires once at end of input, ordered by window end and, within one end, by
when the group was first seen. Windows are assigned as Flink assigns them (tumbling: one;
sliding: latest first), the rows are repeated once per window, and pyarrow's hash
aggregation (single-threaded, so first/last see the input order) computes the
accumulators; sorting by (end, first row of the group) gives the firing order.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from flowc.executor.arrow.convert import Chunk
from flowc.executor.arrow.kernels import as_array, compile_expr
from flowc.executor.runtime.core import require_timestamp
from flowc.types import Schema
from flowc.vector import VAggregate, VCol, vector_of
from flowc.windowing import SlidingEventTimeWindows, TumblingEventTimeWindows

_COUNT_ALL = pc.CountOptions(mode="all")
_COUNT_VALID = pc.CountOptions(mode="only_valid")
_SKIP = pc.ScalarAggregateOptions(skip_nulls=True, min_count=1)


def supported(spec: Any, key: Any, batch: bool) -> bool:
    """Whether this WindowOp runs here: tumbling or sliding (in STREAMING without allowed
    lateness), no late side output, ``aggregate`` items with vector forms and a key made of
    fields."""
    if spec.late_tag is not None or (not batch and int(spec.allowed_lateness) != 0):
        return False
    if not isinstance(spec.assigner, (TumblingEventTimeWindows, SlidingEventTimeWindows)):
        return False
    if spec.reduce_fn is not None or spec.aggregate_fn is None or spec.window_fn is None:
        return False
    agg, row = vector_of(spec.aggregate_fn), vector_of(spec.window_fn)
    keys = vector_of(getattr(key, "fn", None))
    if not isinstance(agg, VAggregate) or row is None or not isinstance(keys, tuple):
        return False
    if row.key_count != len(keys) or not all(isinstance(k, VCol) for k in keys):
        return False
    return all(a is None or compile_expr(a) is not None for a in agg.args)


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


class BatchWindow:
    """One subtask's BATCH window aggregate. Rows are buffered with their windows and, every
    ``COMPACT_ROWS``, folded into partial aggregates per (key, window): counts, sums,
    min / max, first / last (partials stay in input order, so first / last merge in order),
    avg as sum and count, count distinct as the distinct (key, window, value) rows, and the
    group's first row number (its first-seen order). ``fire`` merges the partials."""

    def __init__(self, spec: Any, key: Any, in_schema: Schema, out_schema: pa.Schema,
                 streaming: bool = False) -> None:
        self.streaming = streaming
        self.dropped = 0  # STREAMING: late records dropped
        self.assigner = spec.assigner
        self.agg: VAggregate = vector_of(spec.aggregate_fn)
        self.keys = [f"k{i}" for i in range(len(vector_of(key.fn)))]
        self.key_index = [k.index for k in vector_of(key.fn)]
        self.args = [None if a is None else compile_expr(a) for a in self.agg.args]
        self.out_schema = out_schema
        self.rows: list[pa.Table] = []
        self.buffered = 0
        self.seen = 0  # rows so far (row numbers order the groups)
        self.partials: list[pa.Table] = []
        self.distinct: dict[int, list[pa.Table]] = {
            i: [] for i, k in enumerate(self.agg.kinds) if k == "count_distinct"}

    def add(self, c: Chunk) -> None:
        """Keep what the aggregates need (keys, argument values), one row per window."""
        if c.ts.null_count:
            require_timestamp(None, "an event-time window")
        n = c.num_rows
        if n == 0:
            return None
        cols = [c.batch.column(i) for i in self.key_index]
        cols += [pa.nulls(n, pa.bool_()) if k is None else as_array(k(c.batch), n)
                 for k in self.args]
        names = self.keys + [f"a{i}" for i in range(len(self.args))]
        table = pa.Table.from_arrays(cols, names=names)
        ts = c.ts.to_numpy(zero_copy_only=False)
        start, repeat = self._windows(ts)
        rows = np.arange(self.seen, self.seen + n, dtype=np.int64)
        if repeat is not None:
            table = table.take(pa.array(repeat))
            rows = rows[repeat]
        if self.streaming:
            # A window is late once the watermark reached its cleanup time (end - 1, no
            # allowed lateness): the record is not added to it. A record none of whose
            # windows took it is late (its timestamp <= its last window's end - 1 <= the
            # watermark): dropped and counted, as the row WindowOperator does.
            wm = c.wm_at.to_numpy(zero_copy_only=False)
            per_row = wm if repeat is None else wm[repeat]
            keep = (start + self.assigner.size - 1) > per_row
            taken = np.zeros(n, dtype=bool)
            taken[(np.arange(n) if repeat is None else repeat)[keep]] = True
            self.dropped += int(n - taken.sum())
            table = table.filter(pa.array(keep))
            start, rows = start[keep], rows[keep]
        self.seen += n
        table = table.append_column("ws", pa.array(start)).append_column(
            "we", pa.array(start + self.assigner.size)).append_column("row", pa.array(rows))
        self.rows.append(table)
        self.buffered += table.num_rows
        if self.buffered >= COMPACT_ROWS:
            self._compact()
        return None

    def _compact(self) -> None:
        if not self.rows:
            return
        table = pa.concat_tables(self.rows)
        self.rows, self.buffered = [], 0
        groups = self.keys + ["ws", "we"]
        aggs: list[tuple[Any, ...]] = [("row", "min")]
        for i, kind in enumerate(self.agg.kinds):
            if kind == "avg":
                aggs += [(f"a{i}", "sum", _SKIP), (f"a{i}", "count", _COUNT_VALID)]
            elif kind != "count_distinct":
                aggs.append((f"a{i}",) + _PARTIAL[kind][0])
        self.partials.append(table.group_by(groups, use_threads=False).aggregate(aggs))
        for i in self.distinct:
            values = table.group_by(groups + [f"a{i}"], use_threads=False).aggregate([])
            self.distinct[i].append(values.filter(pc.is_valid(values.column(f"a{i}"))))
        if len(self.partials) > 8:  # keep the partials themselves few
            self.partials = [self._merge()]
            for i, parts in self.distinct.items():
                self.distinct[i] = [pa.concat_tables(parts).group_by(
                    groups + [f"a{i}"], use_threads=False).aggregate([])]

    def _merge(self) -> pa.Table:
        """The partials folded into one partial table (same columns)."""
        table = pa.concat_tables(self.partials)
        aggs: list[tuple[Any, ...]] = [("row_min", "min")]
        names = ["row_min"]
        for i, kind in enumerate(self.agg.kinds):
            if kind == "avg":
                aggs += [(f"a{i}_sum", "sum", _SKIP), (f"a{i}_count", "sum", _SKIP)]
                names += [f"a{i}_sum", f"a{i}_count"]
            elif kind != "count_distinct":
                col = f"a{i}_{_PARTIAL[kind][0][0]}"
                aggs.append((col,) + _PARTIAL[kind][1])
                names.append(col)
        merged = table.group_by(self.keys + ["ws", "we"], use_threads=False).aggregate(aggs)
        for name, agg in zip(names, aggs):
            merged = merged.rename_columns([name if c == f"{name}_{agg[1]}" else c
                                            for c in merged.column_names])
        return merged

    def fire(self) -> Chunk | None:
        self._compact()
        if not self.partials:
            return None
        grouped = self._merge() if len(self.partials) > 1 else self.partials[0]
        self.partials = []
        grouped = grouped.take(pc.sort_indices(grouped, sort_keys=[
            ("we", "ascending"), ("row_min", "ascending")]))
        out = [grouped.column(k) for k in self.keys + ["ws", "we"]]
        counts = self._distinct_counts(grouped)
        for i, kind in enumerate(self.agg.kinds):
            if kind == "avg":
                total = pc.cast(grouped.column(f"a{i}_sum"), pa.float64(), safe=False)
                count = pc.cast(grouped.column(f"a{i}_count"), pa.float64())
                out.append(pc.if_else(pc.equal(count, 0.0), pa.scalar(None, pa.float64()),
                                      pc.divide(total, count)))
            elif kind == "count_distinct":
                out.append(counts[i])
            else:
                out.append(grouped.column(f"a{i}_{_PARTIAL[kind][0][0]}"))
        arrays = [pc.cast(a, f.type, safe=False) for a, f in zip(out, self.out_schema)]
        arrays = [a.combine_chunks() if isinstance(a, pa.ChunkedArray) else a for a in arrays]
        batch = pa.RecordBatch.from_arrays(arrays, schema=self.out_schema)
        ends = grouped.column("we").combine_chunks()
        return Chunk(batch, pc.subtract(ends, 1))

    def _distinct_counts(self, grouped: pa.Table) -> dict[int, pa.Array]:
        """Per count-distinct aggregate, the number of distinct non-null values of each group
        of ``grouped`` (in its order). Groups are matched by position in a group_by over
        the groups and their distinct rows together (a join would not match null keys)."""
        out: dict[int, pa.Array] = {}
        groups = self.keys + ["ws", "we"]
        n = grouped.num_rows
        for i, parts in self.distinct.items():
            values = pa.concat_tables(parts).group_by(groups + [f"a{i}"],
                                                      use_threads=False).aggregate([])
            head = grouped.select(groups).append_column("pos", pa.array(
                np.arange(n, dtype=np.int64))).append_column("one", pa.nulls(n, pa.int64()))
            tail = values.select(groups).append_column(
                "pos", pa.nulls(values.num_rows, pa.int64())).append_column(
                "one", pa.array(np.ones(values.num_rows, dtype=np.int64)))
            both = pa.concat_tables([head, tail]).group_by(groups, use_threads=False).aggregate(
                [("pos", "min"), ("one", "sum", pc.ScalarAggregateOptions(min_count=0))])
            order = pc.sort_indices(both.column("pos_min"))
            out[i] = both.column("one_sum").take(order)
        return out

    def _windows(self, ts: np.ndarray) -> tuple[np.ndarray, np.ndarray | None]:
        return assign_windows(self.assigner, ts)


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
