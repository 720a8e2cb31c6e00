"""The two inputs of a columnar join head in one micro-batch, shared by the interval
join (``interval_state.py``) and the window join (``window_join_state.py``): each side's
records in the channels' merged order with their merged places, and the watermark in
force for each place."""

from __future__ import annotations

from typing import Any

import numpy as np
import pyarrow as pa

from flowc.executor.arrow import convert
from flowc.executor.arrow.convert import Chunk
from flowc.executor.arrow.merge import merge_order


class Merged:
    """A batch's two inputs merged: per side the records (merged order) and their places,
    ``seen``: the watermark in force at each place, ``marks``: the input watermark's
    rises, ``total``: the records received."""

    def __init__(self, sides: list[tuple[Chunk, np.ndarray]], seen: np.ndarray,
                 marks: tuple[np.ndarray, np.ndarray], total: int) -> None:
        self.sides, self.seen, self.marks, self.total = sides, seen, marks, total


def merge_inputs(channels: list[tuple[int, list[tuple[bytes, Any, Any]]]],
                 schemas: tuple[pa.Schema, pa.Schema],
                 start: tuple[list[int], int]) -> Merged:
    """``channels`` in channel order: (side, payloads in arrival order); ``start``: the
    channels' watermarks and the input watermark before the batch."""
    chunks: list[list[Chunk]] = [[], []]
    numbers: list[list[np.ndarray]] = [[], []]
    metas: list[list[tuple[int, Any, Any]]] = []
    total = 0
    for side, payloads in channels:
        metas.append([])
        for data, positions, values in payloads:
            c = convert.from_ipc(data, schemas[side])
            chunks[side].append(c)
            numbers[side].append(np.arange(total, total + c.num_rows, dtype=np.int64))
            metas[-1].append((c.num_rows, positions, values))
            total += c.num_rows
    order, seen, marks = merge_order(metas, start)
    place = np.empty(total, dtype=np.int64)
    place[order] = np.arange(total, dtype=np.int64)
    sides = []
    for side in (0, 1):
        new = convert.concat(chunks[side], schemas[side])
        pos = place[np.concatenate(numbers[side])] if numbers[side] else \
            np.zeros(0, np.int64)
        by = np.argsort(pos, kind="stable")
        sides.append((new.take(pa.array(by)) if new.num_rows else new, pos[by]))
    return Merged(sides, seen, marks, total)


def last_watermark(marks: tuple[np.ndarray, np.ndarray], w0: int) -> int:
    """The input watermark after the batch: its last rise, else the one before it."""
    return max(int(marks[1][-1]) if len(marks[1]) else w0, w0)
