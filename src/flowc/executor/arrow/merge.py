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

from typing import Any

import numpy as np
import pyarrow as pa

from flowc.executor.arrow import convert
from flowc.executor.arrow.convert import Chunk

LONG_MIN = -(1 << 63)


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
            pos = np.asarray(positions, dtype=np.int64)
            # Record r is preceded by the watermarks at positions <= r.
            before = np.searchsorted(pos, np.arange(n, dtype=np.int64), side="right")
            rec_pos.append(base + np.arange(n, dtype=np.int64) + before)
            rec_chan.append(np.full(n, c, dtype=np.int64))
            wm_pos.append(base + pos + np.arange(len(pos), dtype=np.int64))
            wm_val.append(np.asarray(values, dtype=np.int64))
            wm_chan.append(np.full(len(pos), c, dtype=np.int64))
            base += n + len(pos)
    r_pos, r_chan = _cat(rec_pos), _cat(rec_chan)
    w_pos, w_val, w_chan = _cat(wm_pos), _cat(wm_val), _cat(wm_chan)
    n_chan = len(channels)
    # Merged order: by (position, channel); records and watermarks together.
    keys = np.concatenate([r_pos * n_chan + r_chan, w_pos * n_chan + w_chan])
    order = np.argsort(keys, kind="stable")
    is_wm = order >= len(r_pos)
    # Each channel's latest watermark at every merged element, then the minimum over them.
    current = np.full((n_chan, len(order)), LONG_MIN, dtype=np.int64)
    initial, last = start if start is not None else ([LONG_MIN] * n_chan, LONG_MIN)
    wm_index = order[is_wm] - len(r_pos)
    where = np.flatnonzero(is_wm)
    for c in range(n_chan):
        mine = w_chan[wm_index] == c
        row = current[c]
        row[where[mine]] = w_val[wm_index[mine]]
        if len(row):
            row[0] = max(row[0], initial[c])
        np.maximum.accumulate(row, out=row)
    combined = np.maximum.accumulate(np.maximum(current.min(axis=0), last)) if n_chan else \
        np.zeros(0, np.int64)
    # A record sees the watermark of the elements before it (a record does not move it).
    rec_order = order[~is_wm]
    at = np.flatnonzero(~is_wm)
    seen = np.where(at > 0, combined[np.maximum(at - 1, 0)], last)
    # The combined watermark's rises, placed among the merged records: what the head
    # operator receives (and forwards) between them.
    prev = np.concatenate([[last], combined[:-1]])
    rises = np.flatnonzero(is_wm & (combined > prev))
    before = np.cumsum(~is_wm) - ~is_wm  # records before each merged element
    marks = (before[rises].astype(np.int64), combined[rises])
    return rec_order, seen, marks


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
