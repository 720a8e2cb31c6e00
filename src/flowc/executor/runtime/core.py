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
from flowc.executor.runtime.clock import processing_clock
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
    """Timers of one operator subtask, deduplicated per (timestamp, key, namespace) and fired
    in timestamp order (ties in registration order: Flink's heap leaves tie order
    unspecified; both flowc executors share this rule). Event-time timers fire as the
    watermark passes them (``advance``); processing-time timers as the executor's clock
    does (``advance_processing``: clock.py says what "now" is per executor)."""

    def __init__(self) -> None:
        self._heap: list[tuple[int, int, Any, Any]] = []
        self._live: set[tuple[int, Any, Any]] = set()
        self._seq = 0
        self.current_watermark = LONG_MIN
        self._pt_heap: list[tuple[int, int, Any, Any]] = []
        self._pt_live: set[tuple[int, Any, Any]] = set()
        # Flink quiesces the timer service at the end: registrations are then ignored.
        self.quiesced = False

    def __setstate__(self, state: dict[str, Any]) -> None:
        # A snapshot written before processing-time timers existed has none.
        self.__dict__.update({"_pt_heap": [], "_pt_live": set(), "quiesced": False}, **state)

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
        _fire_due(self._heap, self._live, wm, fire)

    # -- processing time ------------------------------------------------------------

    def register_processing(self, ts: int, key: Any, namespace: Any) -> None:
        ident = (ts, key, namespace)
        if self.quiesced or ident in self._pt_live:
            return
        self._pt_live.add(ident)
        self._seq += 1
        heapq.heappush(self._pt_heap, (ts, self._seq, key, namespace))

    def delete_processing(self, ts: int, key: Any, namespace: Any) -> None:
        self._pt_live.discard((ts, key, namespace))

    def processing_due(self, now: int) -> bool:
        """Whether a processing-time timer may be due at ``now`` (cheap: the heap's top)."""
        heap = self._pt_heap
        return bool(heap) and heap[0][0] <= now

    def advance_processing(self, now: int, fire: Callable[[int, Any, Any], None]) -> None:
        """Fire the processing-time timers due at ``now``; one registered while firing,
        also due, fires in the same call (Flink fires a timer in the past at once)."""
        _fire_due(self._pt_heap, self._pt_live, now, fire)

    def fire_all_processing(self, fire: Callable[[int, Any, Any], None]) -> None:
        """BATCH end of input (Flink's BatchExecutionInternalTimeService): quiesce, then
        fire every processing-time timer in timestamp order; registrations meanwhile are
        ignored."""
        self.quiesced = True
        _fire_due(self._pt_heap, self._pt_live, LONG_MAX, fire)

    def quiesce_processing(self) -> None:
        """STREAMING end of input: Flink quiesces the processing-time service, so timers
        not yet due never fire."""
        self.quiesced = True
        self._pt_heap.clear()
        self._pt_live.clear()

    def processing_count(self) -> int:
        return len(self._pt_live)

    def __len__(self) -> int:
        return len(self._live)


def _fire_due(heap: list[tuple[int, int, Any, Any]], live: set[tuple[int, Any, Any]],
              upto: int, fire: Callable[[int, Any, Any], None]) -> None:
    while heap and heap[0][0] <= upto:
        ts, _, key, ns = heapq.heappop(heap)
        ident = (ts, key, ns)
        if ident not in live:
            continue
        live.remove(ident)
        fire(ts, key, ns)


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

    # -- processing time ---------------------------------------------------------

    def processing_time(self) -> int:
        """Processing time now: the executor's clock (clock.py)."""
        return processing_clock().now_ms()

    def poll_processing_time(self) -> None:
        """STREAMING: fire the processing-time timers the clock has reached (Flink fires them
        asynchronously from the mailbox; flowc between elements: the operators that can hold
        them call this before each element, the streaming executor at each micro-batch's
        start). BATCH never fires them before the end of input."""
        timers = self.timers
        if timers._pt_heap and not self.info.batch:
            now = processing_clock().now_ms()
            if timers.processing_due(now):
                timers.advance_processing(now, self.on_processing_time)

    def on_processing_time(self, ts: int, key: Any, namespace: Any) -> None:
        pass

    def finish(self) -> None:
        """End of input. BATCH: this is the one final watermark (fire everything), then every
        processing-time timer (Flink's BatchExecutionInternalTimeService fires a key's
        event-time timers, then its processing-time ones); STREAMING: the sources' final
        ``LONG_MAX`` watermark has fired the event-time timers, and Flink quiesces the
        processing-time service - timers due by now fire, later ones never."""
        if self.info.batch:
            self.watermark = LONG_MAX
            pending = self.timers.processing_count()
            # Flink ignores processing-time timers registered from the end-of-input firing.
            self.timers.quiesced = True
            self.timers.advance(LONG_MAX, self.on_timer)
            if pending:
                self.timers.fire_all_processing(self.on_processing_time)
        elif self.timers.processing_count():
            self.poll_processing_time()
            self.timers.quiesce_processing()

    def set_key(self, key: Any) -> None:
        assert self.backend is not None
        self.backend.current_key = key


def require_timestamp(ts: int | None, what: str) -> int:
    if ts is None:
        raise ExecutionError(
            f"Record has no timestamp: {what} needs event-time timestamps. Did you forget to "
            "call 'assign_timestamps_and_watermarks(...)'?")
    return ts
