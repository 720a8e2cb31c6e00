"""A window join head in columnar micro-batches: ``arrow/joins.py``'s vectorised window
join with its windows carried across batches as the row operator's snapshot - Flink's
window join is a tagged union (``(1, left)`` / ``(2, right)``) into a WindowOperator
(``runtime/windows.py``) whose CoGroup function pairs a window's elements -, both ways.

The row operator holds per (key, window) the tagged elements in arrival order and one
timer at ``end - 1`` (the cleanup timer is the same one: no allowed lateness), registered
when the window got its first element. A micro-batch here: the held windows' elements
come first (at the batch's starting watermark), the batch's (record, window) pairs of both
inputs follow in the channels' merged order, a pair whose window is late at its record's
watermark (``end - 1 <=`` it) is not added and a record none of whose windows takes it is
dropped and counted (``WindowJoin._pairs``); a window fires at the first watermark rise
reaching ``end - 1``: each left element paired with each right element in arrival order,
at ``end - 1``, windows of one rise in timer order (timestamp, then registration - a
held window's restored rank, then new ones by their first pair), before the rise. The
windows not fired by the batch's last watermark are the state.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pyarrow as pa

from flowc.executor.arrow import convert
from flowc.executor.arrow.convert import Chunk
from flowc.executor.arrow.joins import WindowJoin, _expand, _group_ids, _key_columns, key_codes
from flowc.executor.arrow.windows import assign_windows
from flowc.executor.runtime.core import LONG_MIN, TimerService, require_timestamp
from flowc.executor.streaming.two_inputs import last_watermark, merge_inputs
from flowc.windowing import TimeWindow

_NEW = 1 << 40  # timer ranks of windows made in the batch: after every restored one


class Held:
    """One side's held (record, window) pairs: records, window starts, arrival numbers
    (negative: before the batch; across both sides) and their window's timer rank."""

    def __init__(self, chunk: Chunk, start: np.ndarray, arrival: np.ndarray,
                 rank: np.ndarray) -> None:
        self.chunk, self.start, self.arrival, self.rank = chunk, start, arrival, rank


class StreamWindowJoin:
    """The columnar window join of one subtask across micro-batches."""

    def __init__(self, join: WindowJoin, schemas: tuple[pa.Schema, pa.Schema]) -> None:
        self.join = join
        self.schemas = schemas
        self.size = int(join.assigner.size)
        self.wm = LONG_MIN
        self.received = 0
        none = np.zeros(0, np.int64)
        self.state = [Held(convert.empty(s), none, none, none) for s in schemas]

    def run(self, channels: list[tuple[int, list[tuple[bytes, Any, Any]]]],
            start: tuple[list[int], int]) -> Chunk:
        """``channels`` in channel order: (side, payloads in arrival order); ``start``: the
        channels' watermarks and the input watermark before the batch."""
        m = merge_inputs(channels, self.schemas, start)
        self.received, seen, marks = m.total, m.seen, m.marks
        self.wm = last_watermark(marks, int(start[1]))
        sides = []  # per side: records, window start, arrival, rank (held pairs first)
        for side in (0, 1):
            held = self.state[side]
            new, pos = m.sides[side]
            if new.ts.null_count:
                require_timestamp(None, "an event-time window")
            ts = new.ts.to_numpy(zero_copy_only=False).astype(np.int64)
            starts, rep = assign_windows(self.join.assigner, ts)
            rows = np.arange(len(ts), dtype=np.int64) if rep is None else rep.astype(np.int64)
            # the assigner lists a record's windows latest first: registration order
            nth = np.arange(len(rows)) - np.searchsorted(rows, rows, side="left")
            keep = starts + self.size - 1 > seen[pos[rows]]
            self.join.dropped += len(ts) - len(np.unique(rows[keep]))
            rows, starts, nth = rows[keep], starts[keep], nth[keep]
            n_old = held.chunk.num_rows
            records = convert.concat([held.chunk, new.take(pa.array(rows))
                                      if len(rows) else convert.empty(self.schemas[side])],
                                     self.schemas[side])
            sides.append((records, np.concatenate([held.start, starts]),
                          np.concatenate([held.arrival, pos[rows]]),
                          np.concatenate([held.rank, _NEW + (pos[rows] << 8) + nth]),
                          n_old))
        return self._fire(sides, marks)

    def _fire(self, sides: list[Any], marks: tuple[np.ndarray, np.ndarray]) -> Chunk:
        j = self.join
        (lc, lstart, larr, lrank, _), (rc, rstart, rarr, rrank, _) = sides
        lcode, rcode = key_codes(_key_columns(lc, j.keys[0]), _key_columns(rc, j.keys[1]))
        nl = len(lstart)
        start = np.concatenate([lstart, rstart])
        if len(start) == 0:
            e = convert.empty(j.pairing.out_schema)
            return Chunk(e.batch, e.ts, (np.zeros(len(marks[0]), np.int64),
                                         np.asarray(marks[1], np.int64)))
        gid, groups = _group_ids(np.concatenate([lcode, rcode]), start,
                                 getattr(j.assigner, "slide", None) or j.assigner.size)
        lg, rg = gid[:nl], gid[nl:]
        rank = np.full(groups, np.iinfo(np.int64).max, np.int64)
        np.minimum.at(rank, gid, np.concatenate([lrank, rrank]))
        end = np.zeros(groups, np.int64)
        end[gid] = start + self.size
        # the rise that fires each window (len(marks): none in this batch)
        fire = np.searchsorted(np.asarray(marks[1], np.int64), end - 1, side="left")
        fired = fire < len(marks[1])
        # firing order: by rise, then timer (end - 1, registration)
        order = np.lexsort((rank, end, fire))
        seq = np.empty(groups, np.int64)
        seq[order] = np.arange(groups, dtype=np.int64)
        both = np.zeros(groups, bool)
        both[lg] = True
        both &= np.bincount(rg, minlength=groups) > 0
        lk = np.flatnonzero(fired[lg] & both[lg])
        rk = np.flatnonzero(fired[rg] & both[rg])
        lo = lk[np.lexsort((larr[lk], seq[lg[lk]]))]
        ro = rk[np.lexsort((rarr[rk], rg[rk]))]
        counts = np.bincount(rg[ro], minlength=groups)
        begin = np.cumsum(counts) - counts
        owner, ri = _expand(begin[lg[lo]], counts[lg[lo]])
        li, ri = lo[owner], ro[ri]
        out = j.pairing.make(lc, rc, li, ri, end[lg[li]] - 1)
        if out is None:
            e = convert.empty(j.pairing.out_schema)
            out = Chunk(e.batch, e.ts)
        # a rise comes after the windows it fired
        at = np.searchsorted(fire[lg[li]], np.arange(len(marks[1])), side="right")
        self.state = [self._held(c, g, st, arr, rk_, fired)
                      for c, g, st, arr, rk_ in ((lc, lg, lstart, larr, rank),
                                                 (rc, rg, rstart, rarr, rank))]
        return Chunk(out.batch, out.ts, (at.astype(np.int64), np.asarray(marks[1], np.int64)))

    @staticmethod
    def _held(c: Chunk, g: np.ndarray, start: np.ndarray, arrival: np.ndarray,
              rank: np.ndarray, fired: np.ndarray) -> Held:
        keep = np.flatnonzero(~fired[g])
        keep = keep[np.argsort(arrival[keep], kind="stable")]
        return Held(c.take(pa.array(keep)) if len(keep) else convert.empty(c.batch.schema),
                    start[keep], arrival[keep], rank[g[keep]])


def window_join_to_row(j: StreamWindowJoin, op: Any) -> None:
    """Put ``j``'s held windows into the opened row WindowOperator ``op``."""
    op.state = {}
    op.timers = TimerService()
    elements: list[tuple[int, int, Any, TimeWindow, Any]] = []  # (arrival, rank, key, ...)
    for side, held in enumerate(j.state):
        for value, s, arr, rank in zip(held.chunk.rows(), held.start.tolist(),
                                       held.arrival.tolist(), held.rank.tolist()):
            tagged = (side + 1, value)
            elements.append((arr, rank, op.key_fn(tagged), TimeWindow(s, s + j.size), tagged))
    elements.sort(key=lambda e: e[0])
    timers = {}
    for _, rank, key, window, tagged in elements:
        op.state.setdefault((key, window), []).append(tagged)
        timers.setdefault((key, window), rank)
    for (key, window), _ in sorted(timers.items(), key=lambda kv: (kv[0][1].end, kv[1])):
        op.timers.register(window.end - 1, key, window)


def window_join_from_row(op: Any, j: StreamWindowJoin) -> None:
    """Put the row WindowOperator ``op``'s windows (restored) into ``j``."""
    ranks: dict[tuple[Any, Any], int] = {}
    for t, _, key, window in sorted(op.timers._heap, key=lambda e: e[:2]):
        if (t, key, window) in op.timers._live:
            ranks.setdefault((key, window), len(ranks))
    per_side: list[list[list[Any]]] = [[[], [], [], [], []], [[], [], [], [], []]]
    n = sum(len(v) for v in op.state.values())
    arrival = -n
    for (key, window), tagged in op.state.items():
        rank = ranks.get((key, window), len(ranks))
        for tag, value in tagged:
            cols = per_side[tag - 1]
            cols[0].append(value)
            cols[1].append(window.end - 1)  # any timestamp in the window: unused
            cols[2].append(window.start)
            cols[3].append(arrival)
            cols[4].append(rank)
            arrival += 1
    j.state = [Held(convert.from_rows(v, t, j.schemas[side]), np.array(s, np.int64),
                    np.array(a, np.int64), np.array(r, np.int64))
               for side, (v, t, s, a, r) in enumerate(per_side)]
    j.wm = op.watermark
