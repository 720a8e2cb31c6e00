"""A runtime operator (``executor/runtime``, the row executors' one operator runtime) as a
member of a columnar chain: the keyed operators with no vector form - STREAMING sessions,
process functions, reduce / process window functions, count and trigger windows, rolling
reduces with user functions - run row by row on the records taken from each chunk, fed
the chunk's watermarks at their places, and their outputs return to columns (the node's
declared schema) with the watermarks they forwarded at the places they forwarded them. One
such member therefore does not turn the job, or the rest of its chain, row-wise.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pyarrow as pa

from flowc.executor.arrow import convert
from flowc.executor.arrow.convert import Chunk
from flowc.executor.runtime.core import TaskInfo
from flowc.executor.runtime.factory import create_operator
from flowc.operators import (
    AggregationOp,
    CountWindowOp,
    KeyedProcessOp,
    ProcessOp,
    ReduceOp,
    SortOp,
    TriggerWindowOp,
    WindowOp,
)
from flowc.rowkind import same_kind

# One-input operator specs that run here (the rest have a columnar form or two inputs).
KINDS = (WindowOp, CountWindowOp, TriggerWindowOp, ReduceOp, AggregationOp, KeyedProcessOp,
         ProcessOp, SortOp)


class _Output:
    """What the operator emitted since the last drain: records and watermark places."""

    def __init__(self) -> None:
        self.values: list[Any] = []
        self.ts: list[Any] = []
        self.mark_pos: list[int] = []
        self.mark_val: list[int] = []

    def out(self, value: Any, ts: Any) -> None:
        self.values.append(value)
        self.ts.append(ts)

    def wm(self, value: int) -> None:
        self.mark_pos.append(len(self.values))
        self.mark_val.append(value)

    def drain(self, schema: pa.Schema, streaming: bool) -> Chunk:
        c = convert.from_rows(self.values, self.ts, schema)
        marks = (np.asarray(self.mark_pos, np.int64), np.asarray(self.mark_val, np.int64)) \
            if streaming else None
        self.__init__()  # type: ignore[misc]
        return Chunk(c.batch, c.ts, marks)


class RowOperator:
    """One subtask's runtime operator inside the chain; ``add`` returns its main output
    and leaves the side output of ``side_tag`` in ``late``."""

    def __init__(self, spec: Any, key: Any, info: TaskInfo, out_schema: pa.Schema,
                 side_schema: pa.Schema | None, side_tag: Any,
                 tagged: dict[Any, pa.Schema] | None = None) -> None:
        self.op = create_operator(spec, info, (key,) if key is not None else ())
        self.streaming = not info.batch
        self.out_schema = out_schema
        self.side_schema = side_schema
        self.side_tag = side_tag
        self.main, self.side = _Output(), _Output()
        self.op.out = self.main.out
        self.op.side = self._side
        self.op.out_wm = self._wm
        self.late: Chunk | None = None
        # Other side outputs with consumers: their schemas, what was emitted, the chunks.
        self.tagged = tagged or {}
        self.tagged_buf = {tag: _Output() for tag in self.tagged}
        self.tagged_out: dict[Any, Chunk] = {}

    @property
    def dropped(self) -> int:
        return self.op.late_records_dropped

    def _side(self, tag: Any, value: Any, ts: Any) -> None:
        if tag == self.side_tag:  # a tag without a consumer goes nowhere, as in Flink
            self.side.out(value, ts)
        elif tag in self.tagged_buf:
            self.tagged_buf[tag].out(value, ts)

    def _wm(self, value: int) -> None:
        self.main.wm(value)
        self.side.wm(value)  # watermarks reach every output
        for buf in self.tagged_buf.values():
            buf.wm(value)

    def open(self) -> None:
        self.op.open()

    def close(self) -> None:
        self.op.close()

    def add(self, c: Chunk, poll: bool = False) -> Chunk:
        """``c``'s records and watermarks through the operator; ``poll``: then its
        processing-time timers due now fire (a streaming micro-batch's start, after the
        records its chain predecessor's timers produced)."""
        pos, val = c.marks if c.marks is not None else ((), ())
        k, n = 0, len(pos)
        wm, process = self.op.on_watermark, self.op.process
        for i, (value, ts) in enumerate(zip(c.rows(), c.timestamps())):
            while k < n and pos[k] <= i:
                wm(int(val[k]))
                k += 1
            process(value, ts)
        while k < n:
            wm(int(val[k]))
            k += 1
        if poll:
            self.op.poll_processing_time()
        return self._drain()

    def fire(self) -> Chunk | None:
        """End of input (BATCH: everything still held fires)."""
        self.op.finish()
        out = self._drain()
        return out if out.num_rows or self.late is not None or self.tagged_out else None

    def _drain(self) -> Chunk:
        if self.side_schema is not None and (self.side.values or self.side.mark_pos):
            self.late = self.side.drain(self.side_schema, self.streaming)
        for tag, buf in self.tagged_buf.items():
            if buf.values or buf.mark_pos:
                self.tagged_out[tag] = buf.drain(self.tagged[tag], self.streaming)
        return self.main.drain(self.out_schema, self.streaming)


class RollingRows(RowOperator):
    """A rolling ``aggregate`` over an updating input (``rolling.py``'s plan with no vector
    form): the front end's RollingStart, the runtime ReduceOp with RollingMerge and
    RollingChanges, row by row, on records whose key fields come first (``rolling``'s
    start member put them there to route by)."""

    def __init__(self, plan: Any, key: Any, info: TaskInfo, out_schema: pa.Schema) -> None:
        super().__init__(plan.merge, key, info, out_schema, None, None)
        self.start = plan.fn
        self.n = len(plan.fn.key_positions)
        changes, out = plan.changes.flat_map, self.main.out

        def emit(value: Any, ts: Any) -> None:
            for row in changes(value):
                out(row, ts)
        self.op.out = emit

    def add(self, c: Chunk) -> Chunk:
        n, start = self.n, self.start
        rows = [start(same_kind(r, r[n:])) for r in c.rows()]
        return super().add(_Rows(c, rows))


class _Rows:
    """A chunk's watermarks and timestamps with other records (``RowOperator.add``)."""

    def __init__(self, c: Chunk, rows: list[Any]) -> None:
        self.marks = c.marks
        self._rows = rows
        self._c = c

    def rows(self) -> list[Any]:
        return self._rows

    def timestamps(self) -> list[Any]:
        return self._c.timestamps()
