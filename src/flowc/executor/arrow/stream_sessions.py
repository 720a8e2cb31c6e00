"""STREAMING event-time session windows (fixed gap, no allowed lateness) over Arrow, with
exactly the row WindowOperator's results, firing order and late records
(``runtime/windows.py``: Flink's MergingWindowSet and EventTimeTrigger).

Per key the operator holds disjoint session windows. A record at ``ts`` brings the window
``[ts, ts + gap)``; it merges with every live window it intersects (``start <=
other.end and end >= other.start``). Without allowed lateness:

- a record whose window intersects no live window and is late itself (``ts + gap - 1 <=
  watermark``) is late: to the late side output, or dropped and counted;
- otherwise it joins the merged window, which is never late (a live window's end is past
  the watermark), and a window created (alone or by a merge) registers its timer at ``end
  - 1``; the windows it absorbed lose theirs;
- a watermark rise fires every live window whose timer it reaches, in timer order
  (timestamp, then registration: the window's creation), and forgets it.

So the windowing is decided per record over a few integers (key id, timestamp, the
watermark in force) - a loop over the chunk's records and marks with a heap of timers, as
cheap as a dict lookup per record -, and the aggregates are computed vectorised: a
record's rows carry the session id it joined, merged sessions are a union-find, and the
sessions fired in a chunk are aggregated together by one ``group_by`` over the rows of
their roots, ordered by firing, placed at the watermark that fired them (after its
earlier marks, before its record). The rows of live sessions are the state.

The aggregates: those whose result does not depend on the merge order, and first / last,
whose accumulator is the concatenation of the absorbed windows' (in window start order,
the runtime's ``merge`` of the state windows) followed by the records added since: a
session's items (row ids and absorbed sessions) are kept and its rows sorted in that
order before the ``group_by`` (``sessions.supported``). Double sums (additions of merged
partial sums) and allowed lateness (late firings, merges of fired windows) stay on the
runtime operator.
"""

from __future__ import annotations

import heapq
from typing import Any

import numpy as np
import pyarrow as pa

from flowc.executor.arrow import convert
from flowc.executor.arrow.convert import Chunk
from flowc.executor.arrow.running import group_ids
from flowc.executor.arrow.stream_windows import marks_and_times
from flowc.executor.arrow.windows import Assigned, evaluate
from flowc.types import Schema

LONG_MIN = -(1 << 63)
_NONE = np.zeros(0, np.int64)


def streaming_supported(spec: Any, key: Any = None) -> bool:
    """STREAMING sessions run here without allowed lateness, keyed by fields (a keyless
    window keeps the runtime operator)."""
    return int(spec.allowed_lateness) == 0 and bool(Assigned(spec, key).keys)


class StreamSessionWindow:
    """One subtask's STREAMING session window aggregate; ``add`` returns the results with
    the watermarks and leaves the late records in ``late``."""

    streaming = True

    def __init__(self, spec: Any, key: Any, in_schema: Schema, out_schema: pa.Schema) -> None:
        self.assigned = Assigned(spec, key)
        self.gap = int(spec.assigner.gap)
        self.side_output = spec.late_tag is not None
        self.out_schema = out_schema
        self.wm = LONG_MIN
        self.dropped = 0
        self.late: Chunk | None = None
        self.key_ids: dict[tuple[Any, ...], int] = {}
        self.live: dict[int, list[list[int]]] = {}  # key id -> [start, end, sid] windows
        self.timers: list[tuple[int, int, int, int]] = []  # (end - 1, seq, sid, key id)
        self.alive: set[int] = set()  # sids of live windows
        # Per sid with rows held: the sid it was merged into (itself: a root), and its
        # window; a fired session's sids are forgotten, so these hold live sessions only.
        self.parent: dict[int, int] = {}
        self.extent: dict[int, tuple[int, int]] = {}
        self.sids = 0  # sids handed out (creation order, the timers' sequence)
        self.next_key = 0
        self.held: list[pa.Table] = []  # rows of live sessions: keys, a<i>, sid, rid
        # first / last: a session's accumulator is its absorbed windows' (in start order,
        # ``merge``'s concatenation) and then its own records: per sid its items, a row
        # id (>= 0) or an absorbed sid (-1 - sid).
        self.ordered = any(k in ("first", "last") for k in self.assigned.agg.kinds)
        self.items: dict[int, list[int]] = {}
        self.seen = 0  # row ids handed out

    def fire(self) -> None:
        """End of input: nothing left (the sources' final Long.MAX_VALUE fired it all)."""
        return None

    def _new(self, start: int, end: int, key: int) -> int:
        sid = self.sids
        self.sids += 1
        self.parent[sid] = sid
        self.extent[sid] = (start, end)
        self.alive.add(sid)
        # Registration order is creation order: sid doubles as the timer's sequence.
        heapq.heappush(self.timers, (end - 1, sid, sid, key))
        return sid

    def _advance(self, wm: int, mark: int, fired: list[tuple[int, int]]) -> None:
        timers = self.timers
        while timers and timers[0][0] <= wm:
            _, _, sid, key = heapq.heappop(timers)
            if sid not in self.alive:  # merged away: its timer was deleted
                continue
            self.alive.discard(sid)
            windows = self.live[key]
            windows[:] = [w for w in windows if w[2] != sid]
            if not windows:
                del self.live[key]
            fired.append((sid, mark))

    def _key_ids(self, table: pa.Table) -> np.ndarray:
        """Each row's key id, stable across chunks (the row operator's dict of keys)."""
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

    def add(self, c: Chunk) -> Chunk:
        n = c.num_rows
        mpos, mval, ts = marks_and_times(c)
        table = self.assigned.table(c) if n else None
        keys = self._key_ids(table) if table is not None else _NONE
        lo = self.wm
        running = np.maximum.accumulate(np.maximum(mval, lo)) if len(mval) else mval
        rise = mval > np.concatenate([[lo], running[:-1]]) if len(mval) else mval > 0
        sid_of = np.full(n, -1, dtype=np.int64)
        fired: list[tuple[int, int]] = []  # (sid, index of the mark that fired it)
        gap, wm, j, m = self.gap, self.wm, 0, len(mpos)
        mp, rv = mpos.tolist(), running.tolist()
        for i, (t, k) in enumerate(zip(ts.tolist(), keys.tolist())):
            while j < m and mp[j] <= i:
                if rv[j] > wm:
                    wm = rv[j]
                    self._advance(wm, j, fired)
                j += 1
            sid_of[i] = self._place(k, t, t + gap, wm, self.seen + i)
        while j < m:
            if rv[j] > wm:
                wm = rv[j]
                self._advance(wm, j, fired)
            j += 1
        self.wm = wm
        late = np.flatnonzero(sid_of < 0)
        if self.side_output:  # the late records, with the watermarks that rose
            taken = c.take(late)
            at = np.searchsorted(late, mpos[rise], side="left")
            self.late = Chunk(taken.batch, taken.ts, (at, running[rise]))
        else:
            self.dropped += len(late)
        if table is not None:
            kept = np.flatnonzero(sid_of >= 0)
            self.held.append(table.take(pa.array(kept)).append_column(
                "sid", pa.array(sid_of[kept])).append_column(
                "rid", pa.array(self.seen + kept)))
        self.seen += n
        # A key without live windows needs no id (a later record gets a new one).
        self.key_ids = {k: i for k, i in self.key_ids.items() if i in self.live}
        return self._output(fired, mpos, running, rise)

    def _place(self, key: int, start: int, end: int, wm: int, rid: int) -> int:
        """The sid of the window the record at ``start`` (row id ``rid``) joins, -1 if
        it is late."""
        windows = self.live.get(key)
        hit = [w for w in windows if start <= w[1] and end >= w[0]] if windows else []
        if not hit:
            if end - 1 <= wm:
                return -1
            sid = self._new(start, end, key)
            self.live.setdefault(key, []).append([start, end, sid])
            if self.ordered:
                self.items[sid] = [rid]
            return sid
        if len(hit) == 1 and hit[0][0] <= start and end <= hit[0][1]:
            sid = hit[0][2]  # inside a live window: no merge
            if self.ordered:
                self.items[sid].append(rid)
            return sid
        lo = min(start, *(w[0] for w in hit))
        hi = max(end, *(w[1] for w in hit))
        sid = self._new(lo, hi, key)
        gone = {w[2] for w in hit}
        for old in gone:  # absorbed: their rows now count for the merged window
            self.parent[old] = sid
            del self.extent[old]
            self.alive.discard(old)
        if self.ordered:  # the absorbed windows' accumulators in start order, then rid
            self.items[sid] = [-1 - w[2] for w in sorted(hit)] + [rid]
        assert windows is not None
        windows[:] = [w for w in windows if w[2] not in gone] + [[lo, hi, sid]]
        return sid

    def _sequence(self, sids: list[int]) -> dict[int, int]:
        """The place of each row of the sessions ``sids`` in its accumulator's order (the
        items expanded depth first, with a stack); their items are forgotten."""
        place: dict[int, int] = {}
        for sid in sids:
            stack = [-1 - sid]
            while stack:
                item = stack.pop()
                if item >= 0:
                    place[item] = len(place)
                else:
                    stack.extend(reversed(self.items.pop(-1 - item)))
        return place

    def _output(self, fired: list[tuple[int, int]], mpos: np.ndarray, running: np.ndarray,
                rise: np.ndarray) -> Chunk:
        """The fired sessions' results in firing order, each at the mark that fired it,
        and the rising marks after what they fired."""
        val = running[rise]
        result = None
        if fired:
            sids = np.array([s for s, _ in fired], dtype=np.int64)
            rank_of = dict(zip(sids.tolist(), range(len(sids))))
            rows = pa.concat_tables(self.held) if len(self.held) > 1 else self.held[0]
            own = rows.column("sid").to_numpy()
            root = self._roots(own)
            uniq, inverse = np.unique(root, return_inverse=True)
            rank = np.array([rank_of.get(x, -1) for x in uniq.tolist()],
                            dtype=np.int64)[inverse.reshape(-1)]
            mine = rank >= 0
            for sid in np.unique(own[mine]).tolist():  # fired: their sids are done
                del self.parent[sid]
            span = np.array([self.extent.pop(x) if rank_of.get(x, -1) >= 0 else (0, 0)
                             for x in uniq.tolist()], dtype=np.int64).reshape(-1, 2)
            wstart, wend = span[inverse.reshape(-1), 0], span[inverse.reshape(-1), 1]
            done = rows.filter(pa.array(mine)).drop_columns(["sid"])
            r, rk, ws, we = root[mine], rank[mine], wstart[mine], wend[mine]
            if self.ordered:  # rows in accumulator order: Arrow's first / last follow it
                place = self._sequence(sids.tolist())
                at = np.array([place[x] for x in done.column("rid").to_pylist()],
                              dtype=np.int64)
                order = np.argsort(at, kind="stable")
                done = done.take(pa.array(order))
                r, rk, ws, we = r[order], rk[order], ws[order], we[order]
            done = done.drop_columns(["rid"])
            done = done.append_column("sid", pa.array(r)).append_column(
                "ws", pa.array(ws)).append_column(
                "we", pa.array(we)).append_column("row", pa.array(rk))
            result = evaluate(done, ["sid", *self.assigned.keys, "ws", "we"],
                              self.assigned.keys, self.assigned.agg.kinds, self.out_schema,
                              order=[("row_min", "ascending")])
            self.held = [rows.filter(pa.array(~mine))]
        if result is None:
            e = convert.empty(self.out_schema)
            return Chunk(e.batch, e.ts, (np.zeros(len(val), np.int64), val))
        marks = np.array([mk for _, mk in fired], dtype=np.int64)
        # A rising mark comes after the results it (and the marks before it) fired.
        at = np.searchsorted(marks, np.flatnonzero(rise), side="right")
        return Chunk(result.batch, result.ts, (at.astype(np.int64), val))

    def _roots(self, sid: np.ndarray) -> np.ndarray:
        """The root (live session) of each sid: the union-find followed for all at once."""
        ids = np.fromiter(self.parent.keys(), np.int64, len(self.parent))
        up = np.fromiter(self.parent.values(), np.int64, len(self.parent))
        order = np.argsort(ids)
        ids, up = ids[order], up[order]
        while True:
            nxt = up[np.searchsorted(ids, sid)]
            if np.array_equal(nxt, sid):
                return sid
            sid = nxt
