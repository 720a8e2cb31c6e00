"""STREAMING window aggregates over Arrow, exactly the row WindowOperator's results
(``runtime/windows.py``) for tumbling and sliding windows, any allowed lateness, with or
without a late side output.

A chunk arrives with the input watermark's rises among its records (``Chunk.marks``, from
the channel merge); the watermark in force at each record is the running maximum of the
marks before it. Per (record, window) pair, with ``last = end - 1`` and ``cleanup = last +
lateness``:

- ``cleanup <= watermark``: the window is late, the pair is skipped; a record all of whose
  pairs are skipped is late (``ts + lateness <= watermark``): to the late side output, or
  dropped and counted;
- ``last <= watermark < cleanup``: added, and the window fires at once with everything
  it holds so far (a *late firing*, at the record's place);
- otherwise added; the group fires when the watermark first reaches ``last``, at that
  watermark's place, in the timer order (end, then first seen) - and with lateness 0 is
  then forgotten; with lateness it is forgotten when the watermark reaches ``cleanup``.

Outputs (results and late records) carry the input's watermarks at the places the row
operator forwards them: after the firings they cause.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from flowc.executor.arrow import convert
from flowc.executor.arrow.convert import Chunk
from flowc.executor.arrow.windows import (
    Assigned,
    WindowState,
    decimal_avg_result,
    decimal_sum_result,
    with_window,
)
from flowc.executor.runtime.core import require_timestamp
from flowc.types import Schema

LONG_MIN = -(1 << 63)
LONG_MAX = (1 << 63) - 1
_NONE = np.zeros(0, np.int64)


def _plus(a: np.ndarray, b: int) -> np.ndarray:
    """``a + b`` for ``b >= 0``, Long.MAX_VALUE where Java's sum would overflow (Flink's
    cleanup time rule)."""
    return np.where(a > LONG_MAX - b, LONG_MAX, a + b)


def marks_and_times(c: Chunk) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A STREAMING window's input chunk as int64 arrays: its watermark marks' positions and
    values, and its records' timestamps (every record needs one)."""
    mpos, mval = c.marks if c.marks is not None else (_NONE, _NONE)
    if c.num_rows and c.ts.null_count:
        require_timestamp(None, "an event-time window")
    ts = c.ts.to_numpy(zero_copy_only=False).astype(np.int64) if c.num_rows else _NONE
    return np.asarray(mpos, np.int64), np.asarray(mval, np.int64), ts


class StreamWindow:
    """One subtask's STREAMING window aggregate; ``add`` returns the results (with the
    watermarks) and leaves the late records with their watermarks in ``late``."""

    streaming = True

    def __init__(self, spec: Any, key: Any, in_schema: Schema, out_schema: pa.Schema) -> None:
        self.assigned = Assigned(spec, key)
        self.lateness = int(spec.allowed_lateness)
        self.side_output = spec.late_tag is not None
        # Late firings need the rows themselves (the running aggregate at each record).
        self.state = WindowState(self.assigned.keys, self.assigned.agg.kinds,
                                 compact=self.lateness == 0)
        self.out_schema = out_schema
        self.seen = 0
        self.wm = LONG_MIN
        self.dropped = 0
        self.late: Chunk | None = None

    def fire(self) -> None:
        """End of input: nothing left (the sources' final Long.MAX_VALUE fired it all)."""
        return None

    def add(self, c: Chunk) -> Chunk:
        n = c.num_rows
        mpos, mval, ts = marks_and_times(c)
        # The watermark in force at each record: the marks at or before its place.
        running = np.maximum.accumulate(np.maximum(mval, self.wm)) if len(mval) else mval
        before = np.searchsorted(mpos, np.arange(n, dtype=np.int64), side="right")
        wm_rec = np.where(before > 0, running[np.maximum(before - 1, 0)] if len(running)
                          else self.wm, self.wm)
        start, end, repeat = self.assigned.windows(ts)
        pair_rec = np.arange(n, dtype=np.int64) if repeat is None else repeat
        last = end - 1
        wm_pair = wm_rec[pair_rec]
        accepted = _plus(last, self.lateness) > wm_pair
        on_time = accepted & (last > wm_pair)
        late_fire = accepted & ~on_time
        taken = np.zeros(n, dtype=bool)
        taken[pair_rec[accepted]] = True
        late = np.flatnonzero(~taken & (_plus(ts, self.lateness) <= wm_rec))
        lo = self.wm
        rise = mval > np.concatenate([[lo], running[:-1]]) if len(mval) else mval > 0
        if self.side_output:  # the late records, with the watermarks that rose
            taken_late = c.take(late)
            at = np.searchsorted(late, mpos[rise], side="left")
            self.late = Chunk(taken_late.batch, taken_late.ts, (at, running[rise]))
        else:
            self.dropped += len(late)
        table = self.table(c) if n else None
        rows = self.seen + pair_rec
        self.seen += n

        def pairs(mask: np.ndarray) -> pa.Table:
            assert table is not None
            return with_window(table.take(pa.array(pair_rec[mask])), start[mask], end[mask],
                               rows[mask])
        if n:
            self.state.append(pairs(on_time))
        hi = int(running[-1]) if len(running) else lo
        fired = self.state.fire(self.out_schema, lo, hi, remove=self.lateness == 0) \
            if hi > lo else None
        late_out = None
        if n and late_fire.any():
            self.state.append(pairs(late_fire))
            late_out = self._late_firings(rows[late_fire])
        if self.lateness and hi > lo and hi != LONG_MIN:
            self.state.drop(hi - self.lateness if hi - self.lateness >= LONG_MIN else LONG_MIN)
        self.wm = hi
        return self._ordered(fired, late_out, pair_rec[late_fire], mpos, running, rise)

    def table(self, c: Chunk) -> pa.Table:
        """The records' key fields and aggregate arguments (``Assigned.table``); kept as
        rows (allowed lateness), integer sums and averages in longs, so that a group
        restored from a row snapshot's accumulator (``streaming/window_state.py``) holds
        its sum in one row."""
        table = self.assigned.table(c)
        if self.state.compact:
            return table
        for i, kind in enumerate(self.assigned.agg.kinds):
            name = f"a{i}"
            typ = table.schema.field(name).type
            if kind in ("sum", "avg") and (pa.types.is_integer(typ) or pa.types.is_decimal(typ)):
                at = table.schema.get_field_index(name)
                wide = pa.decimal256(76, typ.scale) if pa.types.is_decimal(typ) else pa.int64()
                table = table.set_column(at, name, pc.cast(table.column(name), wide))
        return table

    def _late_firings(self, late_rows: np.ndarray) -> Chunk | None:
        """For each late-firing pair (its row number; pairs in order), its group's result
        over the group's rows up to and including it: group-wise running aggregates
        (``running.running``) over the state's rows in row order, read at each pair."""
        from flowc.executor.arrow.running import COUNTED, group_ids, running

        raw = self.state.raw()
        assert raw is not None
        total = raw.num_rows
        gid = group_ids(raw, self.state.groups)
        order = np.lexsort((raw.column("row").to_numpy(), gid))
        rows = raw.take(pa.array(order))
        values: dict[str, Any] = {}
        for i, kind in enumerate(self.state.kinds):
            a = rows.column(f"a{i}").combine_chunks()
            if kind in ("sum", "avg") and not pa.types.is_integer(a.type) \
                    and not pa.types.is_decimal(a.type):
                a = pc.cast(a, pa.float64())
            values[f"v{i}"] = a
            if kind in COUNTED:
                values[f"w{i}"] = pa.array(np.ones(total, np.int64)) if kind == "count_star" \
                    else pc.cast(pc.is_valid(a), pa.int64())
        run = running(pa.table(values), gid[order], self.state.kinds)
        # The late pairs were appended last: the raw table's last rows, in order.
        where = np.empty(total, dtype=np.int64)
        where[order] = np.arange(total, dtype=np.int64)
        at = pa.array(where[total - len(late_rows):])
        out = [rows.column(k).take(at) for k in self.state.keys + ["ws", "we"]]
        for i, kind in enumerate(self.state.kinds):
            field = self.out_schema.field(len(out))  # this aggregate's output field
            if kind in ("sum", "avg") and pa.types.is_decimal(run[f"v{i}"].type):
                out.append(decimal_sum_result(run[f"v{i}"].take(at), field) if kind == "sum"
                           else decimal_avg_result(run[f"v{i}"].take(at),
                                                   run[f"w{i}"].take(at), field))
            elif kind in ("count_star", "count"):
                out.append(run[f"w{i}"].take(at))
            elif kind == "count_distinct":
                out.append(run[f"n{i}"].take(at))
            elif kind == "avg":
                total_i = pc.cast(run[f"v{i}"].take(at), pa.float64(), safe=False)
                total_i = pc.add(total_i, 0.0)  # the row code's sum starts at 0: no -0.0
                count = pc.cast(run[f"w{i}"].take(at), pa.float64())
                out.append(pc.if_else(pc.equal(count, 0.0), pa.scalar(None, pa.float64()),
                                      pc.divide(total_i, count)))
            else:
                out.append(run[f"v{i}"].take(at))
        arrays = [pc.cast(x, f.type, safe=False) for x, f in zip(out, self.out_schema)]
        arrays = [x.combine_chunks() if isinstance(x, pa.ChunkedArray) else x for x in arrays]
        ends = arrays[len(self.state.keys) + 1]
        return Chunk(pa.RecordBatch.from_arrays(arrays, schema=self.out_schema),
                     pc.subtract(pc.cast(ends, pa.int64()), 1))

    def _ordered(self, fired: Chunk | None, late_out: Chunk | None, late_rec: np.ndarray,
                 mpos: np.ndarray, running: np.ndarray, rise: np.ndarray) -> Chunk:
        """On-time results at the watermark that fired them, late firings at their
        records, each watermark that rose after what it fired."""
        parts: list[Chunk] = []
        keys: list[np.ndarray] = []
        # Sort key: place * (2M + 2) + (mark index for an on-time result, M + 1 for a late
        # firing), so results at one place follow their marks and precede its record.
        m = len(mpos)
        stride = 2 * m + 2
        if fired is not None:
            last = fired.ts.to_numpy(zero_copy_only=False)
            mark = np.searchsorted(running, last, side="left")  # the first mark reaching it
            parts.append(fired)
            keys.append(mpos[mark] * stride + mark)
        if late_out is not None:
            parts.append(late_out)
            keys.append(late_rec * stride + m + 1)
        pos, val = mpos[rise], running[rise]
        if not parts:
            e = convert.empty(self.out_schema)
            return Chunk(e.batch, e.ts, (np.zeros(len(pos), np.int64), val))
        both = parts[0] if len(parts) == 1 else convert.concat(parts, self.out_schema)
        k = np.concatenate(keys)
        order = np.argsort(k, kind="stable")
        out = both.take(pa.array(order))
        at = np.searchsorted(k[order], pos * stride + np.flatnonzero(rise), side="right")
        return Chunk(out.batch, out.ts, (at.astype(np.int64), val))
