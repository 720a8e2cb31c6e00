"""The runtime's one processing-time clock: what processing-time timers and windows, state
TTL and PyFlink's FileSink (date-time buckets, time-based rolling) read as "now".

Flink's processing time is the TaskManager's wall clock. flowc's bounded jobs use the wall
clock too (epoch milliseconds); an unbounded job on Spark Structured Streaming uses the
micro-batch's timestamp (``FixedClock``: Spark's ``batchTimestampMs`` from the offsets
log, so a replayed batch sees the same time; docs/executor.md, "Processing time"). Tests
inject a deterministic clock (``using_clock(ManualClock(...))``); the Spark executor
carries the driver's clock to its tasks (spark/codegen.py), so an injected clock reaches
both executors. A clock is picklable and each task works on its own copy.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator
from typing import Protocol


class Clock(Protocol):
    def now_ms(self) -> int:
        """Processing time now, in epoch milliseconds."""
        ...


class SystemClock:
    """The wall clock (``System.currentTimeMillis()`` in Flink)."""

    def now_ms(self) -> int:
        return time.time_ns() // 1_000_000

    def __repr__(self) -> str:
        return "SystemClock()"


class ManualClock:
    """A deterministic clock for tests: starts at ``start`` and advances by ``step``
    milliseconds after every reading (``step=0``: only ``advance`` moves it)."""

    def __init__(self, start: int = 0, step: int = 0) -> None:
        self.now = start
        self.step = step

    def now_ms(self) -> int:
        now = self.now
        self.now += self.step
        return now

    def advance(self, ms: int) -> None:
        self.now += ms

    def __repr__(self) -> str:
        return f"ManualClock(now={self.now}, step={self.step})"


class FixedClock:
    """Processing time that stands still: one streaming micro-batch's timestamp."""

    def __init__(self, now: int) -> None:
        self.now = now

    def now_ms(self) -> int:
        return self.now

    def __repr__(self) -> str:
        return f"FixedClock({self.now})"


SYSTEM_CLOCK = SystemClock()
# The clock of the running job; replaced only by using_clock (tests, Spark task start).
_current: list[Clock] = [SYSTEM_CLOCK]


def processing_clock() -> Clock:
    return _current[-1]


@contextlib.contextmanager
def using_clock(clock: Clock) -> Iterator[Clock]:
    """Run the enclosed code (a job, or one task) with ``clock`` as processing time."""
    _current.append(clock)
    try:
        yield clock
    finally:
        _current.remove(clock)
