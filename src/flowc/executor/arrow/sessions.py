"""BATCH event-time session windows (fixed gap) over Arrow.

The row WindowOperator merges each record's window ``[ts, ts + gap)`` into the key's
session windows as it arrives (Flink's MergingWindowSet) and, at end of input, fires the
sessions in timer order: by ``end - 1``, then by when the session's final window was first
registered. Without watermarks the sessions are exactly the key's timestamps split where
two neighbours are more than ``gap`` apart (windows intersect when ``start <= other.end``),
so here they are computed by one sort. The registration order is the arrival of the record
after which the arrived records of the session first formed one window with the final
extent (connected, holding its least and greatest timestamps): the least such arrival is
found for all sessions at once by a vectorised binary search.

Only aggregates whose result does not depend on the merge order run here (counts, count
distinct, min, max of other than floats, sums and averages of integers): Flink merges session accumulators in
window order, not arrival order, so sessions with first / last or double sums follow the
row operator's merges (``stream_sessions.py``, watermark Long.MAX_VALUE at end of input).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pyarrow as pa

from flowc.executor.arrow.convert import Chunk
from flowc.executor.arrow.running import group_ids
from flowc.executor.arrow.windows import Assigned, evaluate, vector_aggregate
from flowc.executor.runtime.core import require_timestamp
from flowc.types import Schema
from flowc.windowing import EventTimeSessionWindows

_ORDER_FREE = {"count_star", "count", "count_distinct", "min", "max"}


def supported(spec: Any, key: Any, in_schema: Schema | None, streaming: bool = False) -> bool:
    """A fixed-gap session ``aggregate`` with vector forms: every aggregate kind, sums and
    averages of integers or doubles (``session_window`` picks the implementation)."""
    if not isinstance(spec.assigner, EventTimeSessionWindows):
        return False
    agg = vector_aggregate(spec, key)
    if agg is None or in_schema is None:
        return False
    from flowc.executor.arrow.kernels import compile_expr

    if not all(a is None or compile_expr(a) is not None for a in agg.args):
        return False
    kinds = _ORDER_FREE | {"first", "last", "sum", "avg"}
    return all(k in kinds for k in agg.kinds)


def order_free(spec: Any, key: Any, in_schema: Schema) -> bool:
    """Whether no aggregate depends on the merge order: counts, count distinct, min, max
    (not of floats: NaN and zeros), integer sums / averages (double sums of merged
    partials round differently)."""
    from flowc.executor.arrow import convert
    from flowc.executor.arrow.kernels import as_array, compile_expr

    agg = vector_aggregate(spec, key)
    assert agg is not None
    empty = convert.empty(convert.arrow_schema(in_schema)).batch
    for kind, a in zip(agg.kinds, agg.args):
        typ = None if a is None else as_array(compile_expr(a)(empty), 0).type
        if kind in ("min", "max") and typ is not None and pa.types.is_floating(typ):
            return False  # a NaN or a zero's sign depends on which value came first
        if kind in _ORDER_FREE:
            continue
        if kind not in ("sum", "avg") or typ is None:
            return False
        if not pa.types.is_integer(typ):
            return False
    return True


def session_window(spec: Any, key: Any, in_schema: Schema, out_schema: pa.Schema,
                   streaming: bool, limit: int | None = None) -> Any:
    """The session member: BATCH order-free aggregates by one sort (``SessionWindow``;
    with a ``limit``, spilled past it: ``sessionspill.SpillingSessionWindow``);
    STREAMING, and BATCH first / last and double sums, by the row operator's merging
    rules (``stream_sessions.py``)."""
    from flowc.executor.arrow.stream_sessions import StreamSessionWindow

    if not streaming and order_free(spec, key, in_schema):
        if limit is not None:
            from flowc.executor.arrow.sessionspill import SpillingSessionWindow

            return SpillingSessionWindow(spec, key, in_schema, out_schema, limit=limit)
        return SessionWindow(spec, key, in_schema, out_schema)
    return StreamSessionWindow(spec, key, in_schema, out_schema, streaming)


class SessionWindow:
    """One subtask's BATCH session window aggregate."""

    streaming = False
    dropped = 0
    late: Chunk | None = None

    def __init__(self, spec: Any, key: Any, in_schema: Schema, out_schema: pa.Schema) -> None:
        self.assigned = Assigned(spec, key)
        self.gap = int(spec.assigner.gap)
        self.out_schema = out_schema
        self.parts: list[pa.Table] = []
        self.ts: list[np.ndarray] = []

    def add(self, c: Chunk) -> None:
        if c.ts.null_count:
            require_timestamp(None, "an event-time window")
        if c.num_rows:
            self.parts.append(self.assigned.table(c))
            self.ts.append(c.ts.to_numpy(zero_copy_only=False).astype(np.int64))
        return None

    def fire(self) -> Chunk | None:
        if not self.parts:
            return None
        table = pa.concat_tables(self.parts)
        ts = np.concatenate(self.ts)
        self.parts, self.ts = [], []
        keys = self.assigned.keys
        return evaluate(self.sessions(table, ts, np.arange(len(ts), dtype=np.int64)),
                        keys + ["ws", "we"], keys, self.assigned.agg.kinds, self.out_schema)

    def sessions(self, table: pa.Table, ts: np.ndarray, arrival: np.ndarray) -> pa.Table:
        """``table``'s rows (every record of their keys, arriving at the increasing
        ``arrival`` numbers) with their session's start ``ws``, end ``we`` and
        registration ``row`` (the arrival after which it first was one window)."""
        n = len(ts)
        gid = group_ids(table, self.assigned.keys)
        order = np.lexsort((arrival, ts, gid))  # by key, timestamp, arrival
        g, t = gid[order], ts[order]
        new = np.ones(n, dtype=bool)
        new[1:] = (g[1:] != g[:-1]) | (t[1:] - t[:-1] > self.gap)
        sid_sorted = np.cumsum(new) - 1
        sid = np.empty(n, dtype=np.int64)
        sid[order] = sid_sorted
        starts = t[new]
        ends = np.maximum.reduceat(t, np.flatnonzero(new)) + self.gap
        first = _registration(sid_sorted, t, arrival[order], len(starts), self.gap)
        return table.append_column("ws", pa.array(starts[sid])).append_column(
            "we", pa.array(ends[sid])).append_column("row", pa.array(first[sid]))


def _registration(sid: np.ndarray, t: np.ndarray, arrival: np.ndarray, sessions: int,
                  gap: int) -> np.ndarray:
    """Per session, the least arrival after which its arrived records form one window of
    the final extent. ``sid``, ``t``, ``arrival``: the records sorted by (session, ts)."""
    t_min = np.full(sessions, np.iinfo(np.int64).max, dtype=np.int64)
    t_max = np.full(sessions, np.iinfo(np.int64).min, dtype=np.int64)
    np.minimum.at(t_min, sid, t)
    np.maximum.at(t_max, sid, t)
    lo = np.full(sessions, np.iinfo(np.int64).max, dtype=np.int64)
    hi = np.zeros(sessions, dtype=np.int64)
    np.minimum.at(lo, sid, arrival)
    np.maximum.at(hi, sid, arrival)  # everything arrived: one window
    while True:
        open_ = lo < hi
        if not open_.any():
            return hi
        mid = (lo + hi) // 2
        ok = _one_window(sid, t, arrival, mid, t_min, t_max, gap, sessions)
        hi = np.where(open_ & ok, mid, hi)
        lo = np.where(open_ & ~ok, mid + 1, lo)


def _one_window(sid: np.ndarray, t: np.ndarray, arrival: np.ndarray, upto: np.ndarray,
                t_min: np.ndarray, t_max: np.ndarray, gap: int, sessions: int) -> np.ndarray:
    """Per session: do its records arrived by ``upto[session]`` form one window holding
    its least and greatest timestamps?"""
    seen = arrival <= upto[sid]
    s, ts = sid[seen], t[seen]
    has_min = np.zeros(sessions, dtype=bool)
    has_max = np.zeros(sessions, dtype=bool)
    has_min[s[ts == t_min[s]]] = True
    has_max[s[ts == t_max[s]]] = True
    split = np.zeros(sessions, dtype=bool)
    if len(s) > 1:
        same = s[1:] == s[:-1]
        split[s[1:][same & (ts[1:] - ts[:-1] > gap)]] = True
    return has_min & has_max & ~split
