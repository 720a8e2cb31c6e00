"""STREAMING channel merge over Arrow chunks, exactly ``runtime.channels``' rule.

A consumer subtask's channels are ordered (input edge, producer subtask); each channel is a
sequence of elements - records and watermarks - in the order its producer sent them. The
merged order interleaves the channels by position (element 0 of every channel in channel
order, then element 1, ...). The input watermark is the minimum over the channels of each
channel's latest watermark, and only rises. Here every channel's elements get their
positions, the records are put in merged order, and each record carries the input
watermark in force when it is processed (``Chunk.wm_at``): what the row executors compute
one element at a time, and the combined watermark's rises among the records
(``Chunk.marks``), which the head forwards.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa

from flowc.executor.arrow import convert
from flowc.executor.arrow.convert import Chunk
from flowc.executor.runtime.channels import WatermarkValve
from flowc.executor.runtime.core import Watermark

LONG_MIN = -(1 << 63)
SPAN = 1 << 16  # element positions per channel merged at a time (merge_chunks)


def merge_streaming(channels: list[list[tuple[bytes, list[int], list[int]]]],
                    schema: pa.Schema, start: tuple[list[int], int] | None = None) -> Chunk:
    """``channels`` in channel order, each a list of (ipc records, watermark positions,
    watermark values) payloads in arrival order; ``start``: each channel's watermark and
    the input watermark before them (a streaming micro-batch continuing the last one's;
    default all Long.MIN_VALUE)."""
    chunks: list[Chunk] = []
    metas: list[list[tuple[int, Any, Any]]] = []
    for payloads in channels:
        metas.append([])
        for data, positions, values in payloads:
            chunks.append(convert.from_ipc(data, schema))
            metas[-1].append((chunks[-1].num_rows, positions, values))
    records = convert.concat(chunks, schema)
    rec_order, seen, marks = merge_order(metas, start)
    merged = records.take(pa.array(rec_order)) if len(rec_order) else records
    return Chunk(merged.batch, merged.ts, marks, pa.array(seen, pa.int64()))


def merge_order(channels: list[list[tuple[int, Any, Any]]],
                start: tuple[list[int], int] | None = None) -> tuple[
        np.ndarray, np.ndarray, tuple[np.ndarray, np.ndarray]]:
    """The merged order of the records of ``channels`` (each a list of (records,
    watermark positions, watermark values) payloads in arrival order): the indices of the
    records, numbered in channel then arrival order, in merged order, the input
    watermark in force when each is processed, and the combined watermark's rises as
    (records before it, value) marks."""
    rec_pos: list[np.ndarray] = []  # per channel: element position of each record
    rec_chan: list[np.ndarray] = []
    wm_pos: list[np.ndarray] = []
    wm_val: list[np.ndarray] = []
    wm_chan: list[np.ndarray] = []
    for c, payloads in enumerate(channels):
        base = 0
        for n, positions, values in payloads:
            r, w, v = _elements(n, positions, values, base)
            rec_pos.append(r)
            rec_chan.append(np.full(n, c, dtype=np.int64))
            wm_pos.append(w)
            wm_val.append(v)
            wm_chan.append(np.full(len(w), c, dtype=np.int64))
            base += n + len(w)
    return _Merger(len(channels), start).order(_cat(rec_pos), _cat(rec_chan), _cat(wm_pos),
                                        _cat(wm_val), _cat(wm_chan))


def _elements(n: int, positions: Any, values: Any, base: int) -> tuple[
        np.ndarray, np.ndarray, np.ndarray]:
    """A payload's record and watermark element positions in its channel (from ``base``)
    and its watermark values."""
    pos = np.asarray(positions, dtype=np.int64)
    # Record r is preceded by the watermarks at positions <= r.
    before = np.searchsorted(pos, np.arange(n, dtype=np.int64), side="right")
    return (base + np.arange(n, dtype=np.int64) + before,
            base + pos + np.arange(len(pos), dtype=np.int64),
            np.asarray(values, dtype=np.int64))


class _Merger:
    """The channel rule over consecutive ranges of element positions: each channel's
    latest watermark and the combined watermark carry from one range to the next."""

    def __init__(self, n_chan: int, start: tuple[list[int], int] | None = None) -> None:
        self.n_chan = n_chan
        self.latest = np.full(n_chan, LONG_MIN, dtype=np.int64)
        self.combined = LONG_MIN
        if start is not None:  # a micro-batch continuing the last one's watermarks
            self.latest = np.asarray(start[0], dtype=np.int64).copy()
            self.combined = int(start[1])

    def order(self, r_pos: np.ndarray, r_chan: np.ndarray, w_pos: np.ndarray,
              w_val: np.ndarray, w_chan: np.ndarray) -> tuple[
            np.ndarray, np.ndarray, tuple[np.ndarray, np.ndarray]]:
        """``merge_order``'s result for the elements of one range (records numbered in
        the order given), after the ranges before it."""
        n_chan = self.n_chan
        # Merged order: by (position, channel); records and watermarks together.
        keys = np.concatenate([r_pos * n_chan + r_chan, w_pos * n_chan + w_chan])
        order = np.argsort(keys, kind="stable")
        is_wm = order >= len(r_pos)
        # Each channel's latest watermark at every merged element, then the minimum.
        current = np.repeat(self.latest[:, None], len(order), axis=1)
        wm_index = order[is_wm] - len(r_pos)
        where = np.flatnonzero(is_wm)
        for c in range(n_chan):
            mine = w_chan[wm_index] == c
            row = current[c]
            row[where[mine]] = w_val[wm_index[mine]]
            if len(row):  # a channel's watermark never falls below its latest
                row[0] = max(row[0], self.latest[c])
            np.maximum.accumulate(row, out=row)
        if len(order):
            combined = np.maximum.accumulate(np.maximum(current.min(axis=0), self.combined))
        else:
            combined = np.zeros(0, np.int64)
        # A record sees the watermark of the elements before it (a record does not move it).
        rec_order = order[~is_wm]
        at = np.flatnonzero(~is_wm)
        seen = np.where(at > 0, combined[np.maximum(at - 1, 0)], self.combined)
        # The combined watermark's rises, placed among the merged records: what the head
        # operator receives (and forwards) between them.
        prev = np.concatenate([[self.combined], combined[:-1]])
        rises = np.flatnonzero(is_wm & (combined > prev))
        before = np.cumsum(~is_wm) - ~is_wm  # records before each merged element
        marks = (before[rises].astype(np.int64), combined[rises])
        if len(order):
            self.latest = current[:, -1].copy()
            self.combined = int(combined[-1])
        return rec_order, seen, marks


# Kinds of a channel's marks in a status-carrying payload (``merge_order_valve``).
WM, IDLE, ACTIVE = 0, 1, 2


def merge_order_valve(channels: list[list[tuple[int, Any, Any, Any]]],
                      valve: WatermarkValve) -> tuple[
        np.ndarray, np.ndarray, tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """``merge_order`` with watermark statuses, Flink's ``StatusWatermarkValve`` as the row
    path applies it (``runtime.channels.merge_with_valve``): each channel a list of
    (records, mark positions, mark values, mark kinds) payloads in arrival order, a mark
    a watermark (``WM``, its value) or a status (``IDLE`` / ``ACTIVE``, value ignored).
    The marks go through ``valve`` (updated in place: it carries from batch to batch) one
    by one - they are few, the records are vectorised. Returns the records' merged order,
    the watermark in force at each (the valve's last output) and the valve's outputs as
    (records before it, kind, value) marks."""
    rec_pos: list[np.ndarray] = []
    rec_chan: list[np.ndarray] = []
    mk_pos: list[np.ndarray] = []
    mk_chan: list[np.ndarray] = []
    mk_val: list[np.ndarray] = []
    mk_kind: list[np.ndarray] = []
    n_chan = len(channels)
    for c, payloads in enumerate(channels):
        base = 0
        for n, positions, values, kinds in payloads:
            r, w, v = _elements(n, positions, values, base)
            rec_pos.append(r)
            rec_chan.append(np.full(n, c, dtype=np.int64))
            mk_pos.append(w)
            mk_chan.append(np.full(len(w), c, dtype=np.int64))
            mk_val.append(v)
            mk_kind.append(np.asarray(kinds, dtype=np.int64).reshape(len(w)))
            base += n + len(w)
    r_pos, r_chan, w_pos, w_chan = _cat(rec_pos), _cat(rec_chan), _cat(mk_pos), _cat(mk_chan)
    w_val, w_kind = _cat(mk_val), _cat(mk_kind)
    keys = np.concatenate([r_pos * n_chan + r_chan, w_pos * n_chan + w_chan])
    order = np.argsort(keys, kind="stable")
    is_mark = order >= len(r_pos)
    mark_at = np.flatnonzero(is_mark)  # merged index of each mark, in merged order
    mark_idx = order[is_mark] - len(r_pos)
    before = np.cumsum(~is_mark) - ~is_mark  # records before each merged element
    initial = valve.last
    last_after = np.empty(len(mark_at), dtype=np.int64)  # the valve's watermark after each
    out_before: list[int] = []
    out_kind: list[int] = []
    out_val: list[int] = []
    for k, (at, m) in enumerate(zip(mark_at.tolist(), mark_idx.tolist())):
        c, kind = int(w_chan[m]), int(w_kind[m])
        outputs = valve.watermark(c, int(w_val[m])) if kind == WM else \
            valve.status(c, kind == IDLE)
        for what, x in outputs:
            out_before.append(int(before[at]))
            if what is Watermark:
                out_kind.append(WM)
                out_val.append(int(x))
            else:
                out_kind.append(IDLE if x else ACTIVE)
                out_val.append(0)
        last_after[k] = valve.last
    rec_order = order[~is_mark]
    at = np.flatnonzero(~is_mark)
    k = np.searchsorted(mark_at, at) - 1  # the last mark before each record
    seen = np.where(k >= 0, last_after[np.maximum(k, 0)] if len(last_after) else initial,
                    initial).astype(np.int64)
    return rec_order, seen, (np.asarray(out_before, np.int64), np.asarray(out_kind, np.int64),
                             np.asarray(out_val, np.int64))


def merge_streaming_valve(channels: list[list[tuple[bytes, Any, Any, Any]]],
                          schema: pa.Schema, valve: WatermarkValve) -> tuple[
        Chunk, tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """``merge_streaming`` with watermark statuses (``merge_order_valve``): each channel's
    payloads (ipc records or None, mark positions, values, kinds). The chunk carries the records in
    merged order, ``wm_at`` and the valve's watermark outputs as its marks; the second
    result is every valve output (watermarks and statuses, in order) as (records before
    it, kind, value)."""
    chunks: list[Chunk] = []
    metas: list[list[tuple[int, Any, Any, Any]]] = []
    for payloads in channels:
        metas.append([])
        for data, positions, values, kinds in payloads:
            if data is None:  # a status-only payload
                metas[-1].append((0, positions, values, kinds))
                continue
            chunks.append(convert.from_ipc(data, schema))
            metas[-1].append((chunks[-1].num_rows, positions, values, kinds))
    records = convert.concat(chunks, schema)
    rec_order, seen, outs = merge_order_valve(metas, valve)
    merged = records.take(pa.array(rec_order)) if len(rec_order) else records
    wm = outs[1] == WM
    return Chunk(merged.batch, merged.ts, (outs[0][wm], outs[2][wm]),
                 pa.array(seen, pa.int64())), outs


class _Channel:
    """One channel's payloads read one at a time; ``pending`` holds the read elements not
    yet merged: (records, their element positions, watermark positions, values)."""

    def __init__(self, payloads: Iterator[tuple[bytes, Any, Any]], schema: pa.Schema) -> None:
        self.payloads = payloads
        self.schema = schema
        self.base = 0  # element position of the next payload's first element
        self.pending: list[tuple[Chunk, np.ndarray, np.ndarray, np.ndarray]] = []
        self.done = False

    def read_to(self, hi: int) -> None:
        """Read payloads until one has an element at or past ``hi``, or to the end."""
        while not self.done and self.base < hi:
            item = next(self.payloads, None)
            if item is None:
                self.done = True
                return
            data, positions, values = item
            c = convert.from_ipc(data, self.schema)
            r, w, v = _elements(c.num_rows, positions, values, self.base)
            self.base += c.num_rows + len(w)
            self.pending.append((c, r, w, v))

    def take_below(self, hi: int) -> tuple[list[Chunk], np.ndarray, np.ndarray, np.ndarray]:
        """The pending elements at positions below ``hi`` (records, their positions,
        watermark positions, values); the rest stays pending."""
        chunks, rs, ws, vs = [], [], [], []
        rest = []
        for c, r, w, v in self.pending:
            nr = int(np.searchsorted(r, hi))
            nw = int(np.searchsorted(w, hi))
            if nr:
                chunks.append(_slice(c, 0, nr))
            rs.append(r[:nr])
            ws.append(w[:nw])
            vs.append(v[:nw])
            if nr < len(r) or nw < len(w):
                rest.append((_slice(c, nr, len(r) - nr),
                             r[nr:], w[nw:], v[nw:]))
        self.pending = rest
        return chunks, _cat(rs), _cat(ws), _cat(vs)


def _slice(c: Chunk, start: int, n: int) -> Chunk:
    return c if start == 0 and n == c.num_rows else \
        Chunk(c.batch.slice(start, n), c.ts.slice(start, n))


def merge_chunks(channels: list[Iterator[tuple[bytes, Any, Any]]], schema: pa.Schema,
                 span: int = SPAN) -> Iterator[Chunk]:
    """``merge_streaming``'s records, watermarks and ``wm_at`` as consecutive chunks, one
    per range of ``span`` element positions, reading each channel's payloads (iterators
    of (ipc records, watermark positions, values) in arrival order, in channel order)
    only as far as the range needs: memory holds a range and a payload per channel, not
    the partition."""
    sent = False
    for r in merged_ranges([(it, schema) for it in channels], span):
        records = convert.concat([c for cs in r.chunks for c in cs], schema)
        merged = records.take(pa.array(r.order)) if len(r.order) else records
        sent = True
        yield Chunk(merged.batch, merged.ts, r.marks, pa.array(r.seen, pa.int64()))
    if not sent:
        e = convert.empty(schema)
        yield Chunk(e.batch, e.ts, (np.zeros(0, np.int64), np.zeros(0, np.int64)),
                    pa.array([], pa.int64()))


@dataclass(frozen=True)
class Range:
    """One range of element positions of a ranged merge: per channel its records' chunks
    (records numbered in channel, then arrival order), the numbers in merged order, the
    input watermark in force at each merged record, the combined watermark's rises."""

    chunks: list[list[Chunk]]
    order: np.ndarray
    seen: np.ndarray
    marks: tuple[np.ndarray, np.ndarray]


def merged_ranges(channels: list[tuple[Iterator[tuple[bytes, Any, Any]], pa.Schema]],
                  span: int = SPAN) -> Iterator[Range]:
    """The channel rule over consecutive ranges of ``span`` element positions; each
    channel (payloads in arrival order, its schema: a join's sides differ) read only as
    far as the range needs. Ranges without elements are skipped."""
    chans = [_Channel(it, schema) for it, schema in channels]
    merger = _Merger(len(chans))
    lo = 0
    while True:
        hi = lo + span
        for ch in chans:
            ch.read_to(hi)
        parts = [ch.take_below(hi) for ch in chans]
        lo = hi
        r_pos = _cat([p[1] for p in parts])
        r_chan = _cat([np.full(len(p[1]), c, np.int64) for c, p in enumerate(parts)])
        w_pos = _cat([p[2] for p in parts])
        w_val = _cat([p[3] for p in parts])
        w_chan = _cat([np.full(len(p[2]), c, np.int64) for c, p in enumerate(parts)])
        if len(r_pos) or len(w_pos):
            rec_order, seen, marks = merger.order(r_pos, r_chan, w_pos, w_val, w_chan)
            yield Range([p[0] for p in parts], rec_order, seen, marks)
        if all(ch.done and not ch.pending for ch in chans):
            break


def _cat(parts: list[np.ndarray]) -> np.ndarray:
    return np.concatenate(parts) if parts else np.zeros(0, dtype=np.int64)


def marks_of(chunk: Chunk) -> tuple[list[int], list[int]]:
    if chunk.marks is None:
        return [], []
    return [int(x) for x in chunk.marks[0]], [int(x) for x in chunk.marks[1]]


def empty_marked(schema: pa.Schema, value: int) -> Any:
    """A payload-less chunk carrying one watermark."""
    e = convert.empty(schema)
    return Chunk(e.batch, e.ts, (np.zeros(1, np.int64), np.asarray([value], np.int64)))
