"""Merging a subtask's input channels deterministically, and Flink's watermark valve.

A channel is the ordered element sequence one producer subtask sent to one consumer subtask
over one edge: records ``(value, ts)`` and watermarks ``(Watermark, wm)``. Channels are
ordered by (input edge in the consumer's in-edge order, producer subtask).

Merge rule (STREAMING): round-robin interleave by position: element 0 of every channel in
channel order, then element 1 of every channel, ... (exhausted channels are skipped). The
input watermark is the min over the channels' watermarks (each only rises); it is passed
on only when it rises. A two-input operator sees the min over both inputs' channels.
BATCH: channels are concatenated in channel order and carry no watermarks.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from itertools import zip_longest
from typing import Any

from flowc.executor.runtime.core import LONG_MIN, Watermark

_PAD = object()


def merge_channels(channels: Sequence[Sequence[tuple[Any, Any]]], inputs: Sequence[int],
                   batch: bool, wms: list[int] | None = None) -> Iterator[tuple[int, Any, Any]]:
    """Yield ``(input number, value, ts)`` for records and ``(0, Watermark, wm)`` for
    combined watermarks; ``inputs[c]`` is channel ``c``'s input number (1 or 2). ``wms``:
    the channels' watermarks so far (a streaming micro-batch continues the previous one's),
    updated in place."""
    if batch:
        for c, ch in enumerate(channels):
            n = inputs[c]
            for v, ts in ch:
                if v is not Watermark:
                    yield n, v, ts
        return
    if wms is None:
        wms = [LONG_MIN] * len(channels)
    combined = min(wms, default=LONG_MIN)
    for row in zip_longest(*channels, fillvalue=_PAD):
        for c, el in enumerate(row):
            if el is _PAD:
                continue
            v, ts = el  # type: ignore[misc]
            if v is Watermark:
                if ts > wms[c]:
                    wms[c] = ts
                    m = min(wms)
                    if m > combined:
                        combined = m
                        yield 0, Watermark, m
            else:
                yield inputs[c], v, ts
