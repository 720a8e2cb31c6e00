"""Event-time session windows (fixed gap) over Arrow, any allowed lateness, with exactly
the row WindowOperator's results, firing order and late records (``runtime/windows.py``:
Flink's MergingWindowSet, EventTimeTrigger and the cleanup timers). STREAMING, and BATCH
sessions whose aggregates depend on the merge order (the watermark then only rises to
Long.MAX_VALUE at end of input).

Per key the operator holds disjoint session windows, fired or not, until their cleanup
time ``end - 1 + lateness``. A record at ``ts`` brings the window ``[ts, ts + gap)``; it
merges with every held window it intersects (``start <= other.end and end >= other.start``):

- a record whose window intersects none and whose cleanup time the watermark has reached
  is late: to the late side output, or dropped and counted;
- a merge creates the covering window, registers its end timer (``end - 1``) if the
  watermark is before it and deletes the absorbed windows' end and cleanup timers;
- the record joins its window; if the watermark has passed the window's end the window
  fires at once with everything it holds (a late firing, at the record), otherwise its end
  timer is registered; then its cleanup timer;
- a watermark rise fires the due timers in timer order (timestamp, then registration, as
  ``TimerService``): an end timer fires its window, a cleanup timer forgets it (with
  lateness 0 both are one timer).

So the windowing is decided per record over a few integers (key id, timestamp, the
watermark in force) - a loop over the chunk's records and marks with a heap of timers -,
and the aggregates are computed vectorised. Each window is a session id (sid); a merge
makes a new sid whose children are the absorbed sids, so a sid's rows are its subtree's
rows (all older than the sid) and its own rows, which only grow. A firing is (sid, bound):
the sid's subtree rows and its own rows before ``bound``. The firings of a chunk are
aggregated together by one ``group_by`` over those rows, in the accumulator's order (the
row operator merges the absorbed windows' accumulators in window start order, then adds
records: the children depth first, then the own rows, which is what first / last see).
Double sums and averages are not associative: a merged accumulator is ``((c0 + c1) + c2)
+ x ...``, so per firing the children's final sums (fixed once absorbed, kept per sid)
and the own values are added one at a time in that order (``_float_results``). The rows
of held windows are the state; a cleaned window's subtree is forgotten.
"""

from __future__ import annotations

import heapq
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from flowc.executor.arrow import convert
from flowc.executor.arrow.convert import Chunk
from flowc.executor.arrow.joins import _expand
from flowc.executor.arrow.running import _sequential_cumsum, group_ids
from flowc.executor.arrow.stream_windows import marks_and_times
from flowc.executor.arrow.windows import (
    WINDOW,
    Assigned,
    evaluate,
    float_extremes,
    float_sums,
)
from flowc.types import Schema

LONG_MIN = -(1 << 63)
LONG_MAX = (1 << 63) - 1
_NONE = np.zeros(0, np.int64)


class StreamSessionWindow:
    """One subtask's session window aggregate; ``add`` returns the results with the
    watermarks (STREAMING) and leaves the late records in ``late``; ``fire`` at end of
    input fires everything (BATCH)."""

    def __init__(self, spec: Any, key: Any, in_schema: Schema, out_schema: pa.Schema,
                 streaming: bool = True) -> None:
        self.assigned = Assigned(spec, key)
        self.gap = int(spec.assigner.gap)
        self.lateness = int(spec.allowed_lateness)
        self.side_output = spec.late_tag is not None
        self.streaming = streaming
        self.out_schema = out_schema
        empty = self.assigned.table(convert.empty(convert.arrow_schema(in_schema)))
        self.doubles = float_sums(empty, self.assigned.agg.kinds)
        self.extremes = float_extremes(empty.schema, self.assigned.agg.kinds)
        self.wm = LONG_MIN
        self.dropped = 0
        self.late: Chunk | None = None
        self.key_ids: dict[tuple[Any, ...], int] = {}
        self.next_key = 0
        # key id -> {(start, end): sid}: the MergingWindowSet, fired windows included
        # until their cleanup.
        self.windows: dict[int, dict[tuple[int, int], int]] = {}
        # Timers as TimerService holds them: a heap of (ts, seq, key id, start, end) and
        # the registered ones (deleted ones stay in the heap and are skipped).
        self.timers: list[tuple[int, int, int, int, int]] = []
        self.pending: set[tuple[int, int, int, int]] = set()
        self.seq = 0
        self.sids = 0
        self.children: dict[int, list[int]] = {}  # merged sid -> absorbed sids, by start
        self.extent: dict[int, tuple[int, int]] = {}
        # Per double sum / avg (floating min / max): an absorbed sid's final (sum, count of
        # values) ((min / max, count)).
        self.finals: dict[int, dict[int, tuple[float, int]]] = {
            i: {} for i in (*self.doubles, *self.extremes)}
        self.held: list[pa.Table] = []  # rows of held windows: keys, a<i>, sid, rid
        self.seen = 0  # row ids handed out
        self.events: list[tuple[int, int, int]] = []  # firings: (sid, bound, mark index)
        self.cleaned: list[int] = []

    def _cleanup(self, end: int) -> int:
        t = end - 1 + self.lateness  # Flink: Long.MAX_VALUE when the Java sum overflows
        return t if t < LONG_MAX else LONG_MAX

    def _register(self, ts: int, key: int, start: int, end: int) -> None:
        ident = (ts, key, start, end)
        if ident not in self.pending:
            self.pending.add(ident)
            self.seq += 1
            heapq.heappush(self.timers, (ts, self.seq, key, start, end))

    def _new(self, start: int, end: int) -> int:
        sid = self.sids
        self.sids += 1
        self.extent[sid] = (start, end)
        return sid

    def _advance(self, wm: int, mark: int, bound: int) -> None:
        """Fire the timers the watermark ``wm`` (mark ``mark``, after the rows before
        ``bound``) reaches."""
        timers, pending = self.timers, self.pending
        while timers and timers[0][0] <= wm:
            ts, _, key, start, end = heapq.heappop(timers)
            ident = (ts, key, start, end)
            if ident not in pending:
                continue
            pending.remove(ident)
            held = self.windows.get(key)
            sid = held.get((start, end)) if held is not None else None
            if sid is None:
                continue
            if ts == end - 1:
                self.events.append((sid, bound, mark))
            if ts == self._cleanup(end):
                del held[(start, end)]  # type: ignore[index]
                if not held:
                    del self.windows[key]
                pending.discard((end - 1, key, start, end))
                self.cleaned.append(sid)

    def _key_ids(self, table: pa.Table) -> np.ndarray:
        """Each row's key id, stable while the key holds windows (the row operator's dict
        of keys)."""
        if not self.assigned.keys:  # keyless: one key
            return np.full(table.num_rows, self._key_id(()), dtype=np.int64)
        gid = group_ids(table, self.assigned.keys)
        groups = int(gid.max()) + 1 if len(gid) else 0
        first = np.full(groups, len(gid), dtype=np.int64)
        np.minimum.at(first, gid, np.arange(len(gid), dtype=np.int64))
        rows = table.select(self.assigned.keys).take(pa.array(first)).to_pylist()
        ids = np.array([self._key_id(tuple(r.values())) for r in rows], dtype=np.int64)
        return ids[gid] if len(gid) else _NONE

    def _key_id(self, key: tuple[Any, ...]) -> int:
        got = self.key_ids.get(key)
        if got is None:
            got = self.key_ids[key] = self.next_key
            self.next_key += 1
        return got

    def add(self, c: Chunk) -> Chunk | None:
        n = c.num_rows
        mpos, mval, ts = marks_and_times(c)
        table = self.assigned.table(c) if n else None
        keys = self._key_ids(table) if table is not None else _NONE
        lo = self.wm
        running = np.maximum.accumulate(np.maximum(mval, lo)) if len(mval) else mval
        rise = mval > np.concatenate([[lo], running[:-1]]) if len(mval) else mval > 0
        sid_of = np.full(n, -1, dtype=np.int64)
        wm, j, m, seen = self.wm, 0, len(mpos), self.seen
        mp, rv = mpos.tolist(), running.tolist()
        for i, (t, k) in enumerate(zip(ts.tolist(), keys.tolist())):
            while j < m and mp[j] <= i:
                if rv[j] > wm:
                    wm = rv[j]
                    self._advance(wm, j, seen + i)
                j += 1
            sid_of[i] = self._place(k, t, wm, seen + i, j)
        while j < m:
            if rv[j] > wm:
                wm = rv[j]
                self._advance(wm, j, seen + n)
            j += 1
        self.wm = wm
        late = np.flatnonzero(sid_of < 0)
        if self.side_output and self.streaming:  # the late records, with the watermarks that rose
            taken = c.take(late)
            at = np.searchsorted(late, mpos[rise], side="left")
            self.late = Chunk(taken.batch, taken.ts, (at, running[rise]))
        else:
            self.dropped += len(late)
        if table is not None:
            kept = np.flatnonzero(sid_of >= 0)
            self.held.append(table.take(pa.array(kept)).append_column(
                "sid", pa.array(sid_of[kept])).append_column(
                "rid", pa.array(seen + kept)))
        self.seen += n
        if not self.streaming:
            return None
        return self._output(mpos, running, rise)

    def fire(self) -> Chunk | None:
        """End of input. STREAMING: nothing left (the sources' final Long.MAX_VALUE fired
        it all); BATCH: the watermark jumps to Long.MAX_VALUE."""
        if self.streaming:
            return None
        self.wm = LONG_MAX
        self._advance(LONG_MAX, 0, self.seen)
        out = self._output(_NONE, _NONE, np.zeros(0, bool))
        return Chunk(out.batch, out.ts) if out.num_rows else None

    def _place(self, key: int, start: int, wm: int, rid: int, mark: int) -> int:
        """The sid of the window the record at ``start`` (row id ``rid``, before mark
        ``mark``) joins, -1 if it is late."""
        end = start + self.gap
        held = self.windows.get(key)
        hit = sorted(w for w in held if start <= w[1] and end >= w[0]) if held else []
        if not hit:
            if self._cleanup(end) <= wm:
                return -1
            sid = self._new(start, end)
            self.windows.setdefault(key, {})[(start, end)] = sid
            actual = (start, end)
        elif len(hit) == 1 and hit[0][0] <= start and end <= hit[0][1]:
            actual = hit[0]  # inside a held window: no merge
            sid = held[actual]  # type: ignore[index]
        else:
            assert held is not None
            actual = (min(start, hit[0][0]), max(end, hit[-1][1]))
            sid = self._new(*actual)
            if actual[1] - 1 > wm:  # the trigger's onMerge
                self._register(actual[1] - 1, key, *actual)
            absorbed = [held.pop(w) for w in hit]
            for w in hit:
                self.pending.discard((w[1] - 1, key, *w))
                self.pending.discard((self._cleanup(w[1]), key, *w))
            self.children[sid] = absorbed
            held[actual] = sid
        if actual[1] - 1 <= wm:  # EventTimeTrigger.onElement: a late firing
            self.events.append((sid, rid + 1, mark))
        else:
            self._register(actual[1] - 1, key, *actual)
        cleanup = self._cleanup(actual[1])
        if cleanup < LONG_MAX:
            self._register(cleanup, key, *actual)
        return sid

    def _output(self, mpos: np.ndarray, running: np.ndarray, rise: np.ndarray) -> Chunk:
        """The firings' results in order, each before the mark it preceded, and the
        rising marks after what they fired; then the cleaned windows are forgotten."""
        val = running[rise]
        events, self.events = self.events, []
        result = self._results(events) if events else None
        self._forget()
        if result is None:
            e = convert.empty(self.out_schema)
            return Chunk(e.batch, e.ts, (np.zeros(len(val), np.int64), val))
        marks = np.array([mk for _, _, mk in events], dtype=np.int64)
        # A rising mark comes after the results fired before it.
        at = np.searchsorted(marks, np.flatnonzero(rise), side="right")
        return Chunk(result.batch, result.ts, (at.astype(np.int64), val))

    def _rows(self) -> pa.Table:
        if len(self.held) > 1:
            self.held = [pa.concat_tables(self.held)]
        return self.held[0]

    def _results(self, events: list[tuple[int, int, int]]) -> Chunk:
        rows = self._rows()
        sid = rows.column("sid").to_numpy()
        rid = rows.column("rid").to_numpy()
        order = np.lexsort((rid, sid))  # by sid, each in arrival order
        s_sorted, r_sorted = sid[order], rid[order]
        tops = np.array([s for s, _, _ in events], dtype=np.int64)
        bounds = np.array([b for _, b, _ in events], dtype=np.int64)
        # Each firing's own rows: its sid's rows before its bound, a range of ``order``.
        lo = np.searchsorted(s_sorted, tops, "left")
        hi = _below(s_sorted, r_sorted, tops, bounds)
        merged = np.array([t in self.children for t in tops.tolist()], dtype=bool)
        plain = np.flatnonzero(~merged)
        ev, at = _expand(lo[plain], hi[plain] - lo[plain])
        e_parts, i_parts = [plain[ev]], [at]
        for e in np.flatnonzero(merged).tolist():
            # Depth first: the absorbed windows (start order), then the sid's own rows.
            stack: list[tuple[int, bool]] = [(int(tops[e]), False)]
            while stack:
                x, rows_of_x = stack.pop()
                if not rows_of_x:
                    stack.append((x, True))
                    stack.extend((c, False) for c in reversed(self.children.get(x, ())))
                    continue
                if x == tops[e]:
                    first, last = int(lo[e]), int(hi[e])
                else:
                    first = int(np.searchsorted(s_sorted, x, "left"))
                    last = int(np.searchsorted(s_sorted, x, "right"))
                i_parts.append(np.arange(first, last, dtype=np.int64))
                e_parts.append(np.full(last - first, e, dtype=np.int64))
        e_of = np.concatenate(e_parts)
        by_event = np.argsort(e_of, kind="stable")  # each firing's rows in their order
        e_of, take = e_of[by_event], order[np.concatenate(i_parts)[by_event]]
        span = np.array([self.extent[s] for s in tops.tolist()], dtype=np.int64).reshape(-1, 2)
        done = rows.take(pa.array(take)).drop_columns(["sid", "rid"])
        done = done.append_column("ev", pa.array(e_of)).append_column(
            "ws", pa.array(span[e_of, 0])).append_column(
            "we", pa.array(span[e_of, 1])).append_column("row", pa.array(e_of))
        keys = self.assigned.keys
        result = evaluate(done, ["ev", *keys, "ws", "we"], keys, self.assigned.agg.kinds,
                          self.out_schema, order=[("row_min", "ascending")])
        assert result is not None
        if self.doubles:
            result = self._float_results(result, tops, rows, order, lo, hi, merged)
        if self.extremes and merged.any():
            result = self._extreme_results(result, tops, rows, order, lo, hi, merged)
        return result

    def _extreme_results(self, result: Chunk, tops: np.ndarray, rows: pa.Table,
                         order: np.ndarray, lo: np.ndarray, hi: np.ndarray,
                         merged: np.ndarray) -> Chunk:
        """Floating min / max of merged windows as the row operator merges them (its
        ``merge`` compares like its ``add``, so a NaN or a zero's sign depends on which
        accumulator comes first): the absorbed windows' results (start order), then the
        own values. A window that merged nothing is its rows' result already."""
        sid = rows.column("sid").to_numpy()[order]
        batch = result.batch
        for i in self.extremes:
            a = pc.cast(rows.column(f"a{i}"), pa.float64()).combine_chunks().take(
                pa.array(order))
            fold = _ExtremeFold(pc.fill_null(a, 0.0).to_numpy(zero_copy_only=False),
                                pc.is_valid(a).to_numpy(zero_copy_only=False),
                                self.assigned.agg.kinds[i] == "min")
            at = len(self.assigned.keys) + len(WINDOW) + i
            field = self.out_schema.field(at)
            values = batch.column(at).to_pylist()
            for e in np.flatnonzero(merged).tolist():
                head = [self._final(c, self.finals[i], fold, sid)  # type: ignore[arg-type]
                        for c in self.children[int(tops[e])]]
                value, count = fold(head, int(lo[e]), int(hi[e]))
                values[e] = value if count else None
            batch = batch.set_column(at, field, pa.array(values, field.type))
        return Chunk(batch, result.ts)

    def _float_results(self, result: Chunk, tops: np.ndarray, rows: pa.Table,
                       order: np.ndarray, lo: np.ndarray, hi: np.ndarray,
                       merged: np.ndarray) -> Chunk:
        """Double sums / averages added as the row operator adds them: per firing, the
        absorbed windows' final sums (start order), then the own values one at a time."""
        sid = rows.column("sid").to_numpy()[order]
        batch = result.batch
        plain = np.flatnonzero(~merged)
        for i in self.doubles:
            a = pc.cast(rows.column(f"a{i}"), pa.float64()).combine_chunks().take(
                pa.array(order))
            avg = self.assigned.agg.kinds[i] == "avg"
            # -0.0 is the identity of a sum (x + -0.0 is x, bit for bit); an avg adds
            # from 0.
            fold = _Fold(pc.fill_null(a, -0.0).to_numpy(zero_copy_only=False),
                         pc.is_valid(a).to_numpy(zero_copy_only=False), 0.0 if avg else -0.0)
            total = np.zeros(len(tops), np.float64)
            count = np.zeros(len(tops), np.int64)
            total[plain], count[plain] = fold.ranges(lo[plain], hi[plain])
            finals = self.finals[i]
            for e in np.flatnonzero(merged).tolist():
                head = [self._final(c, finals, fold, sid) for c in self.children[int(tops[e])]]
                total[e], count[e] = fold(head, int(lo[e]), int(hi[e]))
            with np.errstate(invalid="ignore", divide="ignore"):
                value = total / np.maximum(count, 1) if avg else total
            at = len(self.assigned.keys) + len(WINDOW) + i
            field = self.out_schema.field(at)
            batch = batch.set_column(at, field, pc.cast(pa.array(value, pa.float64(),
                                                                 mask=count == 0),
                                                        field.type, safe=False))
        return Chunk(batch, result.ts)

    def _final(self, top: int, finals: dict[int, tuple[float, int]], fold: _Fold,
               sid: np.ndarray) -> tuple[float, int]:
        """An absorbed sid's final (sum, count); its subtree's missing ones first, in sid
        order (children are older than their parent)."""
        todo, stack = [], [top]
        while stack:
            y = stack.pop()
            if y not in finals:
                todo.append(y)
                stack.extend(self.children.get(y, ()))
        for y in sorted(todo):
            lo = int(np.searchsorted(sid, y, "left"))
            hi = int(np.searchsorted(sid, y, "right"))
            finals[y] = fold([finals[c] for c in self.children.get(y, ())], lo, hi)
        return finals[top]

    def _forget(self) -> None:
        """Drop the key ids of keys without windows and the cleaned windows' subtrees:
        rows, tree, sums."""
        # A key without held windows needs no id (a later record gets a new one).
        self.key_ids = {k: i for k, i in self.key_ids.items() if i in self.windows}
        if not self.cleaned:
            return
        gone: list[int] = []
        stack, self.cleaned = list(self.cleaned), []
        while stack:
            x = stack.pop()
            gone.append(x)
            stack.extend(self.children.pop(x, ()))
        for x in gone:
            del self.extent[x]
            for finals in self.finals.values():
                finals.pop(x, None)
        rows = self._rows()
        keep = ~np.isin(rows.column("sid").to_numpy(), np.array(gone, dtype=np.int64))
        self.held = [rows.filter(pa.array(keep))]


class _Fold:
    """One double aggregate's values (rows sorted by sid, nulls as -0.0): ``head`` (the
    absorbed windows' (sum, count)) then the values ``lo:hi``, added left to right (numpy's
    cumsum is sequential) from ``start``."""

    def __init__(self, x: np.ndarray, valid: np.ndarray, start: float) -> None:
        self.x, self.valid, self.start = x, valid, start

    def ranges(self, lo: np.ndarray, hi: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Per range ``lo:hi`` of values (no head), its (sum, count): one grouped
        sequential cumulative sum over the ranges, each led by ``start``."""
        n = hi - lo
        owner, at = _expand(lo, n)
        lead = np.cumsum(n + 1) - (n + 1)  # where each range's start value goes
        x = np.empty(len(owner) + len(n), np.float64)
        gid = np.empty(len(x), np.int64)
        x[lead], gid[lead] = self.start, np.arange(len(n), dtype=np.int64)
        body = np.ones(len(x), bool)
        body[lead] = False
        x[body], gid[body] = self.x[at], owner
        totals = _sequential_cumsum(x, gid)[lead + n]
        valid = np.zeros(len(n), np.int64)
        np.add.at(valid, owner, self.valid[at].astype(np.int64))
        return totals, valid

    def __call__(self, head: list[tuple[float, int]], lo: int, hi: int) -> tuple[float, int]:
        seq = np.concatenate([[self.start], [v for v, _ in head], self.x[lo:hi]])
        count = sum(c for _, c in head) + int(self.valid[lo:hi].sum())
        return float(np.cumsum(seq)[-1]), count


class _ExtremeFold:
    """One floating min / max's values (rows sorted by sid, ``valid`` marks non-nulls):
    ``head`` (the absorbed windows' (result, count)) then the values ``lo:hi``, folded as
    the row code's ``v if v < acc else acc`` from the first: NaN if that is NaN, else the
    extreme of the rest, a zero extreme being the first zero."""

    def __init__(self, x: np.ndarray, valid: np.ndarray, smallest: bool) -> None:
        self.x, self.valid, self.smallest = x, valid, smallest

    def __call__(self, head: list[tuple[float, int]], lo: int, hi: int) -> tuple[float, int]:
        seq = np.concatenate([np.array([v for v, c in head if c], np.float64),
                              self.x[lo:hi][self.valid[lo:hi]]])
        if not len(seq):
            return 0.0, 0
        if np.isnan(seq[0]):
            return float(seq[0]), len(seq)
        ext = np.nanmin(seq) if self.smallest else np.nanmax(seq)
        if ext == 0:
            ext = seq[np.flatnonzero(seq == 0)[0]]
        return float(ext), len(seq)


def _below(sid: np.ndarray, rid: np.ndarray, tops: np.ndarray, bounds: np.ndarray
           ) -> np.ndarray:
    """Per query (top, bound), the number of rows (``sid``, ``rid`` sorted by both) before
    it: rows of smaller sids, and of ``top`` with a row id below ``bound`` (one sort of the
    rows and queries together, a query before an equal row)."""
    n, q = len(sid), len(tops)
    flag = np.concatenate([np.ones(n, np.int8), np.zeros(q, np.int8)])
    merged = np.lexsort((flag, np.concatenate([rid, bounds]), np.concatenate([sid, tops])))
    is_row = flag[merged] == 1
    rows_before = np.cumsum(is_row) - is_row  # rows strictly before each sorted place
    out = np.empty(q, np.int64)
    out[merged[~is_row] - n] = rows_before[~is_row]
    return out
