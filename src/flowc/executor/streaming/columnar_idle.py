"""Watermark statuses (idleness) in columnar micro-batches, as ``task.py``'s row path has
them: a watermark generator with an idleness timeout counts its records and marks its
output IDLE at the end of a micro-batch without any for longer than the timeout (the
batch's timestamp), ACTIVE again before its next record; a status goes down the chain
(not into a sink or another generator: Flink's TimestampsAndWatermarksOperator ignores
upstream statuses) and out on the edges as a status-only payload, and the consumer's
channel merge applies Flink's StatusWatermarkValve (``merge.merge_streaming_valve``).
The generator's counters are the row operator's ``idleness`` attribute ([records this
batch, timestamp of the last batch with a record, idle]), so its snapshot entry is the row
path's."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from flowc.executor.arrow import merge
from flowc.executor.arrow.convert import Chunk
from flowc.executor.runtime.core import LONG_MAX
from flowc.executor.streaming.plan import VertexPlan
from flowc.executor.streaming.task import _generator

# A status's routes: (slot, its targets, channel id), the row path's ``_status_out``.
Routes = list[tuple[int, list[int], int]]


def idle_generators(plan: VertexPlan) -> list[int]:
    """The vertex's members with a watermark generator that has an idleness timeout."""
    out = []
    for m in plan.members:
        gen = _generator(m)
        if gen is not None and gen.strategy.idleness is not None:
            out.append(m.nid)
    return out


def status_routes(plan: VertexPlan, nid: int, idx: int) -> Routes:
    """The edges a status that member ``nid`` sends reaches (``task.SubtaskRun``'s
    ``_status_out``): its own untagged edges and, through every chained member that
    forwards statuses (not sinks or generators), theirs."""
    members = {m.nid: m for m in plan.members}
    routes: Routes = []
    # Depth first as the row path emits: each chained target's routes (in order), then
    # the member's own edges.
    stack: list[tuple[bool, int]] = [(False, nid)]
    while stack:
        own, at = stack.pop()
        m = members[at]
        if own:
            routes += [(e.slot, list(e.targets[idx]), (e.order << 16) | idx)
                       for e in m.edges if e.tag is None]
            continue
        stack.append((True, at))
        stack += [(False, t) for t, _ in reversed(m.chained) if forwards(members[t])]
    return routes


def forwards(m: Any) -> bool:
    """Whether a status arriving at member ``m`` goes on (a generator and a sink drop it)."""
    return m.kind != "sink" and _generator(m) is None


def counted(op: Any, step: Callable[[Chunk], Chunk | None],
            active: Callable[[], None]) -> Callable[[Chunk], Chunk | None]:
    """A generator's step counting its records; a record on an idle output makes it
    active again first (Flink's WatermarksWithIdleness; ``task.SubtaskRun._counted``)."""
    def run(c: Chunk) -> Chunk | None:
        if c.num_rows:
            entry = op.idleness
            entry[0] += c.num_rows
            if entry[2]:
                entry[2] = False
                active()
        return step(c)
    return run


def goes_idle(op: Any, timeout: int, watermark: int, batch_timestamp_ms: int) -> bool:
    """``task.SubtaskRun.end_batch`` for one generator: whether it goes idle now."""
    entry = op.idleness
    count, last, idle = entry
    entry[0] = 0
    if watermark == LONG_MAX:  # its input ended (a bounded source): not idle
        return False
    if count or last is None:
        entry[1] = batch_timestamp_ms
    elif not idle and batch_timestamp_ms - last > timeout:
        entry[2] = True
        return True
    return False


def status_payload(cid: int, seq: int, idle: bool) -> tuple[Any, ...]:
    """An edge payload carrying one status and no records."""
    return (cid, seq, None, [0], [0], [merge.IDLE if idle else merge.ACTIVE])


def pieces(merged: Chunk, outs: tuple[np.ndarray, np.ndarray, np.ndarray]
           ) -> list[Chunk | bool]:
    """The merged chunk cut at the valve's status outputs: chunks (records, their
    ``wm_at`` and the watermark outputs among them) and statuses (True: IDLE) in order."""
    before, kinds, values = outs
    out: list[Chunk | bool] = []
    start, k0 = 0, 0
    for k in [*np.flatnonzero(kinds != merge.WM).tolist(), len(kinds)]:
        end = int(before[k]) if k < len(kinds) else merged.num_rows
        wm = np.arange(k0, k)
        wm = wm[kinds[k0:k] == merge.WM]
        if end > start or len(wm):
            out.append(Chunk(merged.batch.slice(start, end - start),
                             merged.ts.slice(start, end - start),
                             (before[wm] - start, values[wm]),
                             merged.wm_at.slice(start, end - start)))
        if k < len(kinds):
            out.append(bool(kinds[k] == merge.IDLE))
        start, k0 = end, k + 1
    return out
