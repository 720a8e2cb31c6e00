"""Elements, timers and the operator base class shared by both executors.

A record travels as ``(value, timestamp)``; ``timestamp`` is ``None`` when the record has
none (Flink's ``StreamRecord`` without timestamp). A watermark is an ``int``. Operators push
their results through three callbacks set by whoever wires them (the reference executor's
collectors or the Spark executor's generated chain code):
``out(value, ts)``, ``side(tag, value, ts)`` and ``out_wm(watermark)``.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from flowc.api.functions import Function
from flowc.errors import ExecutionError, UnsupportedError
from flowc.executor.runtime.state import KeyedStateBackend, RuntimeContext
from flowc.windowing import LONG_MAX, LONG_MIN

__all__ = ["LONG_MAX", "LONG_MIN", "Operator", "TaskInfo", "TimerService", "Watermark"]


class Watermark:
    """Marks a watermark element in a channel: ``(channel, Watermark, value)`` in place of
    ``(channel, record, timestamp)``. The class itself is the marker (pickles by reference,
    so identity survives Spark's serialization)."""


class Partial:
    """Marks a map-side combined window partial ``(key, start, end, acc, n)`` in place of a
    record's timestamp (BATCH only; see ``spark.combine``)."""


@dataclass(frozen=True)
class TaskInfo:
    name: str
    subtask: int
    parallelism: int
    max_parallelism: int
    batch: bool


def _noop_out(value: Any, ts: int | None) -> None:
    pass


def _noop_side(tag: Any, value: Any, ts: int | None) -> None:
    pass


def _noop_wm(wm: int) -> None:
    pass


def method_of(fn: Any, cls: type, name: str) -> Callable[..., Any]:
    """The user's function as a callable: ``fn.<name>`` for PyFlink function objects, the
    callable itself otherwise."""
    if isinstance(fn, cls):
        return getattr(fn, name)
    if callable(fn):
        return fn  # type: ignore[no-any-return]
    raise UnsupportedError(f"{type(fn).__name__} is neither callable nor a {cls.__name__}")


def unwrap(fn: Any) -> Any:
    """The plain function behind a KeySelector / CodeFn (their ``__call__`` only forwards:
    calling the function itself saves a Python call per record)."""
    from flowc.operators import CodeFn
    from flowc.transformations import KeySelector

    while isinstance(fn, (KeySelector, CodeFn)):
        fn = fn.fn
    return fn


def results(r: Any) -> Iterable[Any]:
    """What a process-style function produced: an iterable (often a generator) or None."""
    return () if r is None else r


class TimerService:
    """Event-time timers of one operator subtask: deduplicated per (timestamp, key,
    namespace), fired in timestamp order; ties fire in registration order (Flink's heap
    leaves tie order unspecified; both flowc executors share this rule)."""

    def __init__(self) -> None:
        self._heap: list[tuple[int, int, Any, Any]] = []
        self._live: set[tuple[int, Any, Any]] = set()
        self._seq = 0
        self.current_watermark = LONG_MIN

    def register(self, ts: int, key: Any, namespace: Any) -> None:
        ident = (ts, key, namespace)
        if ident in self._live:
            return
        self._live.add(ident)
        self._seq += 1
        heapq.heappush(self._heap, (ts, self._seq, key, namespace))

    def delete(self, ts: int, key: Any, namespace: Any) -> None:
        self._live.discard((ts, key, namespace))

    def advance(self, wm: int, fire: Callable[[int, Any, Any], None]) -> None:
        # Flink sets the watermark before firing, so timers see the new value; a timer
        # registered while firing at or below ``wm`` fires in the same advance.
        self.current_watermark = wm
        heap = self._heap
        while heap and heap[0][0] <= wm:
            ts, _, key, ns = heapq.heappop(heap)
            ident = (ts, key, ns)
            if ident not in self._live:
                continue
            self._live.remove(ident)
            fire(ts, key, ns)

    def __len__(self) -> int:
        return len(self._live)


class Operator:
    """One operator subtask. Subclasses implement ``process`` (one input) or
    ``process1``/``process2`` (two inputs) and may override ``on_watermark``/``finish``."""

    keyed = False
    two_input = False

    def __init__(self, spec: Any, info: TaskInfo, keys: tuple[Any, ...] = ()) -> None:
        self.spec = spec
        self.info = info
        self.keys = keys
        self.out: Callable[[Any, int | None], None] = _noop_out
        self.side: Callable[[Any, Any, int | None], None] = _noop_side
        self.out_wm: Callable[[int], None] = _noop_wm
        self.watermark = LONG_MIN
        self.backend = KeyedStateBackend() if self.keyed else None
        self.timers = TimerService()
        self._functions: list[Any] = []
        self.late_records_dropped = 0
        # Records folded into combined partials beyond the one element that carried them.
        self.extra_records = 0

    # -- lifecycle -------------------------------------------------------------

    def runtime_context(self) -> RuntimeContext:
        i = self.info
        return RuntimeContext(i.name, i.subtask, i.parallelism, i.max_parallelism, self.backend)

    def open_function(self, fn: Any) -> None:
        if isinstance(fn, Function):
            fn.open(self.runtime_context())
            self._functions.append(fn)

    def open(self) -> None:
        """Open the user functions (called once per subtask before any element)."""

    def close(self) -> None:
        for fn in self._functions:
            fn.close()

    # -- elements --------------------------------------------------------------

    def process(self, value: Any, ts: int | None) -> None:
        raise NotImplementedError

    def process1(self, value: Any, ts: int | None) -> None:
        raise NotImplementedError

    def process2(self, value: Any, ts: int | None) -> None:
        raise NotImplementedError

    def on_watermark(self, wm: int) -> None:
        """Advance the (already combined) input watermark: fire timers, then forward."""
        if wm <= self.watermark:
            return
        self.watermark = wm
        if len(self.timers):
            self.timers.advance(wm, self.on_timer)
        else:
            self.timers.current_watermark = wm
        self.out_wm(wm)

    def on_timer(self, ts: int, key: Any, namespace: Any) -> None:
        pass

    def finish(self) -> None:
        """End of input. BATCH: this is the one final watermark (fire everything); STREAMING:
        the sources' final ``LONG_MAX`` watermark has already done that."""
        if self.info.batch:
            self.watermark = LONG_MAX
            self.timers.advance(LONG_MAX, self.on_timer)

    def set_key(self, key: Any) -> None:
        assert self.backend is not None
        self.backend.current_key = key


def require_timestamp(ts: int | None, what: str) -> int:
    if ts is None:
        raise ExecutionError(
            f"Record has no timestamp: {what} needs event-time timestamps. Did you forget to "
            "call 'assign_timestamps_and_watermarks(...)'?")
    return ts
