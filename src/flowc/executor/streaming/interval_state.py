"""A DataStream interval join head in columnar micro-batches: ``arrow/joins.py``'s
vectorised interval join with its buffers carried across batches as the row
IntervalJoinOperator's snapshot (``runtime/joins.py``), both ways.

The row operator buffers each side per key and timestamp (``left`` / ``right``: key ->
{timestamp: [[record, joined]]}, buckets in creation order) with one cleanup timer per
bucket (``ts + max(upper, 0)`` left, ``ts + max(-lower, 0)`` right) that removes it at
the first watermark rise reaching it after its creation. A micro-batch here: the
buffered records come first (before every record of the batch, in bucket creation order,
at the batch's starting watermark; never late), the batch's records of both inputs
follow in the channels' merged order (``merge.merge_order``, each channel's watermark
continued from the last batch) with the watermark in force for each; pairs of two
buffered records were emitted before and are left out; a pair is emitted when its later
record arrives if the earlier one's bucket is alive then (the rule of ``joins.
IntervalJoin.pairs``), in the row operator's order, and the input watermark's rises are
placed after the outputs of the records before them. After the batch the buckets still
alive at its last watermark are the state: their records (with whether each joined) and
their timers, in registration order (restored timers keep theirs, new buckets follow by
creation).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pyarrow as pa

from flowc.errors import ExecutionError
from flowc.executor.arrow import convert
from flowc.executor.arrow.convert import Chunk
from flowc.executor.arrow.joins import IntervalJoin, _generations, _key_columns, key_codes
from flowc.executor.runtime.core import LONG_MIN, TimerService
from flowc.executor.runtime.joins import _LEFT, _RIGHT
from flowc.executor.streaming.two_inputs import last_watermark, merge_inputs

_NS = (_LEFT, _RIGHT)
_NEW = 1 << 40  # timer ranks of buckets made in the batch: after every restored one


class Buffered:
    """One side's buffered records: in bucket creation order, each with whether it
    joined and its bucket's timer rank (registration order)."""

    def __init__(self, chunk: Chunk, joined: np.ndarray, rank: np.ndarray) -> None:
        self.chunk, self.joined, self.rank = chunk, joined, rank


class StreamIntervalJoin:
    """The columnar interval join of one subtask across micro-batches."""

    def __init__(self, join: IntervalJoin, schemas: tuple[pa.Schema, pa.Schema]) -> None:
        self.join = join
        self.schemas = schemas
        self.wm = LONG_MIN
        self.received = 0  # records of the last batch
        none = np.zeros(0, np.int64)
        self.state = [Buffered(convert.empty(s), np.zeros(0, bool), none) for s in schemas]

    # -- one micro-batch ----------------------------------------------------------------

    def run(self, channels: list[tuple[int, list[tuple[bytes, Any, Any]]]],
            start: tuple[list[int], int]) -> Chunk:
        """``channels`` in channel order: (side, payloads in arrival order); ``start``: the
        channels' watermarks and the input watermark before the batch."""
        m = merge_inputs(channels, self.schemas, start)
        self.received, seen, marks = m.total, m.seen, m.marks
        w0 = int(start[1])
        sides = []  # per side: records, merged place, watermark, restored?, joined, rank
        for side in (0, 1):
            st = self.state[side]
            new, pos = m.sides[side]
            n_old = st.chunk.num_rows
            records = convert.concat([st.chunk, new], self.schemas[side])
            sides.append((records,
                          np.concatenate([np.arange(-n_old, 0, dtype=np.int64), pos]),
                          np.concatenate([np.full(n_old, w0, np.int64), seen[pos]]),
                          np.arange(records.num_rows) < n_old,
                          np.concatenate([st.joined, np.zeros(len(pos), bool)]),
                          np.concatenate([st.rank, np.zeros(len(pos), np.int64)])))
        self.wm = last_watermark(marks, w0)
        return self._pairs(sides, marks)

    def _pairs(self, sides: list[Any], marks: tuple[np.ndarray, np.ndarray]) -> Chunk:
        j = self.join
        (lc, lpos, lwm, lold, ljoined, lrank), (rc, rpos, rwm, rold, rjoined, rrank) = sides
        kept, stamps = [], []
        for c, wm, old in ((lc, lwm, lold), (rc, rwm, rold)):
            if c.ts.null_count:
                raise ExecutionError("Long.MIN_VALUE timestamp: Elements used in interval "
                                     "stream joins need to have timestamps meaningful "
                                     "timestamps.")
            ts = c.ts.to_numpy(zero_copy_only=False).astype(np.int64)
            late = ~old & (wm != LONG_MIN) & (ts < wm)
            j.dropped += int(late.sum())
            kept.append(np.flatnonzero(~late))
            stamps.append(ts)
        lcode, rcode = key_codes(_key_columns(lc, j.keys[0]), _key_columns(rc, j.keys[1]))
        (lrows, rrows), (lts, rts) = kept, stamps
        li, ri = j._band(lcode[lrows], lts[lrows], rcode[rrows], rts[rrows])
        li, ri = lrows[li], rrows[ri]
        fresh = ~(lold[li] & rold[ri])  # two buffered records joined in an earlier batch
        li, ri = li[fresh], ri[fresh]
        lclean = lts + max(j.upper, 0)
        rclean = rts + max(-j.lower, 0)
        lgen = _generations(lcode, lts, lpos, lwm, lclean, lrows)
        rgen = _generations(rcode, rts, rpos, rwm, rclean, rrows)
        left_later = lpos[li] > rpos[ri]
        later_wm = np.where(left_later, lwm[li], rwm[ri])
        earlier_wm = np.where(left_later, rwm[ri], lwm[li])
        earlier_clean = np.where(left_later, rclean[ri], lclean[li])
        alive = (later_wm < earlier_clean) | (later_wm == earlier_wm)
        li, ri, left_later = li[alive], ri[alive], left_later[alive]
        later = np.where(left_later, lpos[li], rpos[ri])
        bucket = np.where(left_later, rgen[ri], lgen[li])
        earlier = np.where(left_later, rpos[ri], lpos[li])
        order = np.lexsort((earlier, bucket, later))
        li, ri, later = li[order], ri[order], later[order]
        ljoined[li] = True
        rjoined[ri] = True
        # The state after the batch: buckets alive at its last watermark.
        self.state = [self._kept(c, rows, pos, wm, gen, clean, joined, rank)
                      for c, rows, pos, wm, gen, clean, joined, rank in (
                          (lc, lrows, lpos, lwm, lgen, lclean, ljoined, lrank),
                          (rc, rrows, rpos, rwm, rgen, rclean, rjoined, rrank))]
        out = j.pairing.make(lc, rc, li, ri, np.maximum(lts[li], rts[ri]))
        if out is None:
            e = convert.empty(j.pairing.out_schema)
            out = Chunk(e.batch, e.ts)
        # A rise comes after the outputs of the records before it.
        at = np.searchsorted(later, marks[0], side="left").astype(np.int64)
        return Chunk(out.batch, out.ts, (at, np.asarray(marks[1], np.int64)))

    def _kept(self, c: Chunk, rows: np.ndarray, pos: np.ndarray, wm: np.ndarray,
              gen: np.ndarray, clean: np.ndarray, joined: np.ndarray, rank: np.ndarray
              ) -> Buffered:
        """The records of ``rows`` whose bucket is alive at the batch's end: by bucket
        (generation) then arrival; a bucket's timer rank is its first record's (a
        restored bucket's) or after every restored one, by creation."""
        first = np.searchsorted(pos, gen[rows])  # ``pos`` ascends: the bucket's first
        alive = (self.wm < clean[rows]) | (self.wm == wm[first])
        bucket_rank = np.where(gen[rows] < 0, rank[first], _NEW + gen[rows])
        rows, bucket_rank = rows[alive], bucket_rank[alive]
        at = np.lexsort((pos[rows], gen[rows]))
        order, new_rank = rows[at], bucket_rank[at]
        return Buffered(c.take(pa.array(order)) if len(order) else convert.empty(
            c.batch.schema), joined[order], new_rank)


def interval_to_row(j: StreamIntervalJoin, op: Any) -> None:
    """Put ``j``'s buffers into the opened row IntervalJoinOperator ``op``."""
    op.left, op.right = {}, {}
    op.timers = TimerService()
    timers: list[tuple[int, int, Any, str]] = []
    for side, (st, buf) in enumerate(zip(j.state, (op.left, op.right))):
        key_fn = op.keys[side]
        hi = j.join.upper if side == 0 else -j.join.lower
        for value, ts, joined, rank in zip(st.chunk.rows(), st.chunk.timestamps(),
                                           st.joined.tolist(), st.rank.tolist()):
            key = key_fn(value)
            buckets = buf.setdefault(key, {})
            if ts not in buckets:
                buckets[ts] = []
                timers.append((ts + hi if hi > 0 else ts, rank, key, _NS[side]))
            buckets[ts].append([value, joined])
    for ts, _, key, ns in sorted(timers, key=lambda t: t[:2]):
        op.timers.register(ts, key, ns)


def interval_from_row(op: Any, j: StreamIntervalJoin) -> None:
    """Put the row IntervalJoinOperator ``op``'s buffers (restored) into ``j``."""
    ranks: dict[tuple[Any, Any, str], int] = {}
    heap, live = op.timers._heap, op.timers._live
    for t, _, key, ns in sorted(heap, key=lambda e: e[:2]):
        if (t, key, ns) in live:
            ranks.setdefault((t, key, ns), len(ranks))
    state = []
    for side, buf in enumerate((op.left, op.right)):
        hi = op.upper if side == 0 else -op.lower
        values, stamps, joined, rank = [], [], [], []
        for key, buckets in buf.items():
            for ts, entries in buckets.items():
                r = ranks.get((ts + hi if hi > 0 else ts, key, _NS[side]), len(ranks))
                for value, flag in entries:
                    values.append(value)
                    stamps.append(ts)
                    joined.append(bool(flag))
                    rank.append(r)
        # per key the row dict's order: the buckets' creation order
        chunk = convert.from_rows(values, stamps, j.schemas[side])
        state.append(Buffered(chunk, np.array(joined, bool), np.array(rank, np.int64)))
    j.state = state
    j.wm = op.watermark
