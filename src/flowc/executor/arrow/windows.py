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
    """Whether this WindowOp runs here: BATCH, tumbling or sliding, ``aggregate`` items
    with vector forms and a key made of fields."""
    if not batch or spec.late_tag is not None:
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


class BatchWindow:
    def __init__(self, spec: Any, key: Any, in_schema: Schema, out_schema: pa.Schema) -> None:
        self.assigner = spec.assigner
        self.agg: VAggregate = vector_of(spec.aggregate_fn)
        self.keys = [k.index for k in vector_of(key.fn)]
        self.args = [None if a is None else compile_expr(a) for a in self.agg.args]
        self.out_schema = out_schema
        self.parts: list[pa.RecordBatch] = []

    def add(self, c: Chunk) -> None:
        """Keep only what the aggregates need: key columns, argument values, timestamps."""
        if c.ts.null_count:
            require_timestamp(None, "an event-time window")
        n = c.num_rows
        cols = [c.batch.column(i) for i in self.keys]
        cols += [pa.nulls(n, pa.bool_()) if k is None else as_array(k(c.batch), n)
                 for k in self.args]
        cols.append(c.ts)
        names = [f"k{i}" for i in range(len(self.keys))] + \
            [f"a{i}" for i in range(len(self.args))] + ["ts"]
        self.parts.append(pa.RecordBatch.from_arrays(cols, names=names))
        return None

    def fire(self) -> Chunk | None:
        if not self.parts:
            return None
        table = pa.Table.from_batches(self.parts).combine_chunks()
        self.parts = []
        ts = table.column("ts").to_numpy()
        start, repeat = self._windows(ts)
        if repeat is not None:
            table = table.take(pa.array(repeat))
        size = self.assigner.size
        table = table.append_column("ws", pa.array(start)).append_column(
            "we", pa.array(start + size)).append_column(
            "row", pa.array(np.arange(table.num_rows, dtype=np.int64)))
        keys = [f"k{i}" for i in range(len(self.keys))] + ["ws", "we"]
        # pyarrow's group order is unspecified: the first row of each group orders them.
        aggs: list[tuple[Any, ...]] = [("row", "min")]
        for i, kind in enumerate(self.agg.kinds):
            col = f"a{i}"
            if kind == "count_star":
                aggs.append((col, "count", _COUNT_ALL))
            elif kind == "count":
                aggs.append((col, "count", _COUNT_VALID))
            elif kind == "count_distinct":
                aggs.append((col, "count_distinct", _COUNT_VALID))
            elif kind == "avg":
                aggs.append((col, "sum", _SKIP))
                aggs.append((col, "count", _COUNT_VALID))
            else:
                aggs.append((col, kind, _SKIP))
        grouped = table.group_by(keys, use_threads=False).aggregate(aggs)
        grouped = grouped.take(pc.sort_indices(grouped, sort_keys=[
            ("we", "ascending"), ("row_min", "ascending")]))
        out = [grouped.column(k) for k in keys]
        for i, kind in enumerate(self.agg.kinds):
            col = f"a{i}"
            if kind == "avg":
                total = pc.cast(grouped.column(f"{col}_sum"), pa.float64(), safe=False)
                count = pc.cast(grouped.column(f"{col}_count"), pa.float64())
                out.append(pc.if_else(pc.equal(count, 0.0), pa.scalar(None, pa.float64()),
                                      pc.divide(total, count)))
            else:
                name = {"count_star": "count", "count": "count"}.get(kind, kind)
                out.append(grouped.column(f"{col}_{name}"))
        arrays = [pc.cast(a, f.type, safe=False).combine_chunks()
                  if isinstance(a, pa.ChunkedArray) else pc.cast(a, f.type, safe=False)
                  for a, f in zip(out, self.out_schema)]
        batch = pa.RecordBatch.from_arrays(arrays, schema=self.out_schema)
        ends = grouped.column("we").combine_chunks()
        return Chunk(batch, pc.subtract(ends, 1))

    def _windows(self, ts: np.ndarray) -> tuple[np.ndarray, np.ndarray | None]:
        """Window starts, and for sliding windows the row of each (row, window) pair."""
        a = self.assigner
        if isinstance(a, TumblingEventTimeWindows):
            return ts - np.mod(ts - a.offset, a.size), None
        last = ts - np.mod(ts - a.offset, a.slide)
        counts = (a.size - (ts - last) + a.slide - 1) // a.slide
        counts = np.maximum(counts, 0)
        rows = np.repeat(np.arange(len(ts)), counts)
        first = np.repeat(np.cumsum(counts) - counts, counts)
        j = np.arange(len(rows)) - first
        return last[rows] - j * a.slide, rows
