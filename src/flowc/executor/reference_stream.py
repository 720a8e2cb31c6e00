"""Channels the reference executor streams through: each subtask consumes its input while
its producers are still running, so no operator's whole output is ever held.

A :class:`Channel` is a queue one producer subtask appends to and one consumer subtask takes
from, ``done`` once the producer finished. :func:`stream_merge` merges a subtask's channels
by exactly the rule of :func:`flowc.executor.runtime.channels.merge_channels` (round-robin
by position in STREAMING with the watermark valve, concatenation in BATCH), but yields
:data:`BLOCKED` where the next element is not produced yet: the scheduler then runs other
subtasks (their producers) and resumes the merge. Element ``k`` of a channel is taken in
row ``k`` whatever the timing, so results do not depend on the scheduling.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator, Sequence
from typing import Any

from flowc.executor.runtime.core import LONG_MIN, Watermark

BLOCKED = object()


# The end of a micro-batch in a channel (``(BATCH_END, batch)``), in the reference
# executor's micro-batch model only (``reference_batches``).
BATCH_END = object()
# After the records a producer's processing-time timers emitted at the start of a
# micro-batch (``(TIMERS, batch)``): a chained consumer fires its own timers there.
TIMERS = object()
# A consumer's micro-batch starts (``(0, BATCH_START, batch)`` from ``batch_merge``, before
# anything of the batch): its clock moves to the batch's time, so the records its chain
# predecessor's timers emitted see the batch's processing time, as on the streaming paths.
BATCH_START = object()


class Channel:
    """One producer subtask -> one consumer subtask over one edge; ``ends``: the
    micro-batch ends the producer appended (the micro-batch model)."""

    __slots__ = ("items", "done", "append", "ends")

    def __init__(self) -> None:
        self.items: deque[tuple[Any, Any]] = deque()
        self.done = False
        self.append = self.items.append
        self.ends = 0

    def end_batch(self, batch: int) -> None:
        self.items.append((BATCH_END, batch))
        self.ends += 1

    def timers_fired(self, batch: int) -> None:
        self.items.append((TIMERS, batch))


def stream_merge(channels: Sequence[Channel], inputs: Sequence[int],
                 batch: bool) -> Iterator[Any]:
    """``(input number, value, ts)`` for records, ``(0, Watermark, wm)`` for combined
    watermarks, and :data:`BLOCKED` while a channel has nothing yet but is not done."""
    if batch:
        for c, ch in enumerate(channels):
            n, items = inputs[c], ch.items
            while True:
                if items:
                    v, ts = items.popleft()
                    if v is not Watermark:
                        yield n, v, ts
                elif ch.done:
                    break
                else:
                    yield BLOCKED
        return
    wms = [LONG_MIN] * len(channels)
    combined = LONG_MIN
    live = list(range(len(channels)))
    while live:  # one round-robin row per pass; an exhausted channel leaves the rows
        still: list[int] = []
        for c in live:
            ch = channels[c]
            while not ch.items and not ch.done:
                yield BLOCKED
            if not ch.items:
                continue
            still.append(c)
            v, ts = ch.items.popleft()
            if v is Watermark:
                if ts > wms[c]:
                    wms[c] = ts
                    m = min(wms)
                    if m > combined:
                        combined = m
                        yield 0, Watermark, m
            else:
                yield inputs[c], v, ts
        live = still


def batch_merge(channels: Sequence[Channel], inputs: Sequence[int],
                timers: str | None = None) -> Iterator[Any]:
    """The micro-batch model's merge, as the streaming executor's consumer subtask merges a
    micro-batch (``streaming.task.SubtaskRun.run_input``): once every channel holds its
    whole batch *b* (up to its end marker, or it is done), the batch's elements are merged
    by ``merge_with_valve`` (round robin by position, restarting with each batch; the
    channels' watermarks carry over in one valve), then ``(0, BATCH_END, b)``.
    ``timers``: processing time is modelled: ``(0, BATCH_START, b)`` first, then ``(0,
    TIMERS, b)`` when the consumer fires its processing-time timers: ``head`` (a vertex
    head) before the batch's elements, ``chained`` (its one channel from its chain
    predecessor) after the elements before the predecessor's ``TIMERS`` mark; None:
    neither (processing time not modelled)."""
    from flowc.executor.runtime.channels import WatermarkValve, merge_with_valve

    valve = WatermarkValve(len(channels))
    batch = 0
    while True:
        for ch in channels:
            while ch.ends <= batch and not ch.done:
                yield BLOCKED
        if all(ch.done and not ch.items for ch in channels):
            return
        lists: list[list[tuple[Any, Any]]] = []
        first: list[tuple[Any, Any]] = []  # chained: the predecessor's timers' records
        for ch in channels:
            taken: list[tuple[Any, Any]] = []
            while ch.items:
                el = ch.items.popleft()
                if el[0] is BATCH_END:
                    break
                if el[0] is TIMERS:
                    if timers == "chained":
                        first, taken = taken, []
                    continue
                taken.append(el)
            lists.append(taken)
        if timers is not None:
            yield 0, BATCH_START, batch
        if timers == "chained":
            yield from merge_with_valve([first], inputs, valve)
        if timers is not None:
            yield 0, TIMERS, batch
        yield from merge_with_valve(lists, inputs, valve)
        yield 0, BATCH_END, batch
        batch += 1
