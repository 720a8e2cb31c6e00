"""Shared by the BATCH join spilling tests (test_columnar_spill_joins.py for window and
interval joins, test_columnar_regular_join_spill.py for regular joins): how a random
sequence of records is cut into a join's input parts, small spill-run batches, and the
measure of the Arrow memory a ``SpillingJoin`` holds while it adds and fires."""

from __future__ import annotations

import os
from collections.abc import Callable, Collection, Iterable, Iterator, Sequence
from contextlib import contextmanager

import pyarrow as pa

from flowc.executor.arrow import convert, spill
from flowc.executor.arrow.joinspill import JoinPart, SpillingJoin


def side_runs(sides: Sequence[int], cuts: Collection[int]) -> Iterator[tuple[int, int]]:
    """The ``[lo, hi)`` index ranges of ``sides`` as a task reads its inputs: runs of one
    side, each also cut before an index in ``cuts``."""
    lo = 0
    for i in range(1, len(sides) + 1):
        if i == len(sides) or sides[i] != sides[lo] or i in cuts:
            yield lo, i
            lo = i


@contextmanager
def run_batch_rows(rows: int) -> Iterator[None]:
    """Spill runs written in batches of ``rows`` records (small: ranges end mid-file)."""
    old = spill.BATCH_ROWS
    spill.BATCH_ROWS = rows
    try:
        yield
    finally:
        spill.BATCH_ROWS = old


def add_all(sj: SpillingJoin, parts: Iterable[JoinPart]) -> int:
    """Adds ``parts`` to ``sj``; the Arrow bytes they held (records and timestamps)."""
    total = 0
    for p in parts:
        total += p.chunk.batch.nbytes + p.chunk.ts.nbytes
        sj.add(p)
    return total


def spilled_peak(sj: SpillingJoin, parts: Iterable[JoinPart],
                 seen: Callable[[convert.Chunk], None]) -> tuple[int, str]:
    """Adds ``parts`` to ``sj`` (whose limit makes it spill), then fires it, handing each
    output chunk to ``seen``: the most Arrow bytes allocated meanwhile above what was
    before (sampled per part and per output chunk), and the runs' directory (there, with
    runs, once all was added)."""
    base = pa.total_allocated_bytes()
    peak = 0
    for p in parts:
        sj.add(p)
        del p
        peak = max(peak, pa.total_allocated_bytes() - base)
    directory = sj.directory
    assert sj.runs and directory is not None and os.path.isdir(directory)
    for out in sj.fired():
        seen(out)
        peak = max(peak, pa.total_allocated_bytes() - base)
        del out
    return peak, directory
