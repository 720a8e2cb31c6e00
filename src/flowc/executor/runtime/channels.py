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


class WatermarkStatus:
    """Marks a watermark-status element in a channel: ``(WatermarkStatus, idle)`` in place
    of ``(record, timestamp)`` (Flink's ``WatermarkStatus`` IDLE / ACTIVE). Only the
    streaming executor sends them (source idleness, ``with_idleness``)."""


class WatermarkValve:
    """Flink's ``StatusWatermarkValve`` over a subtask's channels, its state picklable for
    a micro-batch snapshot: the output watermark is the min over the *aligned* active
    channels; an idle channel stops holding it back; when every channel is idle the valve
    goes idle (flushing the max watermark if the last active channel held the min); a
    channel that becomes active again is aligned once its watermark catches up."""

    def __init__(self, n: int) -> None:
        self.wms = [LONG_MIN] * n
        self.idle = [False] * n
        self.aligned = [True] * n
        self.last = LONG_MIN  # the last output watermark
        self.out_idle = False  # the last output status

    def state(self) -> dict[str, Any]:
        return {"wms": list(self.wms), "idle": list(self.idle), "aligned": list(self.aligned),
                "last": self.last, "out_idle": self.out_idle}

    def restore(self, state: dict[str, Any]) -> None:
        if len(state["wms"]) == len(self.wms):
            self.wms, self.idle = list(state["wms"]), list(state["idle"])
            self.aligned, self.last = list(state["aligned"]), state["last"]
            self.out_idle = state["out_idle"]

    def watermark(self, c: int, wm: int) -> Iterator[tuple[Any, Any]]:
        """Channel ``c`` sent watermark ``wm``: what the valve outputs."""
        if self.out_idle or self.idle[c] or wm <= self.wms[c]:
            return
        self.wms[c] = wm
        if not self.aligned[c] and wm >= self.last:
            self.aligned[c] = True
        yield from self._new_min()

    def status(self, c: int, idle: bool) -> Iterator[tuple[Any, Any]]:
        """Channel ``c`` sent a status (``idle`` True: IDLE)."""
        if idle and not self.idle[c]:
            self.idle[c] = True
            self.aligned[c] = False
            if all(self.idle):
                if self.wms[c] == self.last:  # flush: no channel will advance any more
                    top = max(self.wms)
                    if top > self.last:
                        self.last = top
                        yield Watermark, top
                self.out_idle = True
                yield WatermarkStatus, True
            elif self.wms[c] == self.last:
                yield from self._new_min()
        elif not idle and self.idle[c]:
            self.idle[c] = False
            if self.wms[c] >= self.last:
                self.aligned[c] = True
            if self.out_idle:
                self.out_idle = False
                yield WatermarkStatus, False

    def _new_min(self) -> Iterator[tuple[Any, Any]]:
        live = [w for w, a, i in zip(self.wms, self.aligned, self.idle) if a and not i]
        if live and min(live) > self.last:
            self.last = min(live)
            yield Watermark, self.last


def merge_with_valve(channels: Sequence[Sequence[tuple[Any, Any]]], inputs: Sequence[int],
                     valve: WatermarkValve) -> Iterator[tuple[int, Any, Any]]:
    """``merge_channels``' STREAMING rule (round robin by position) with the watermark
    statuses of ``WatermarkValve``: yields ``(input number, value, ts)`` for records,
    ``(0, Watermark, wm)`` and ``(0, WatermarkStatus, idle)`` for the valve's output."""
    for row in zip_longest(*channels, fillvalue=_PAD):
        for c, el in enumerate(row):
            if el is _PAD:
                continue
            v, ts = el  # type: ignore[misc]
            if v is Watermark:
                for kind, x in valve.watermark(c, ts):
                    yield 0, kind, x
            elif v is WatermarkStatus:
                for kind, x in valve.status(c, ts):
                    yield 0, kind, x
            else:
                yield inputs[c], v, ts
