"""Flink's (Keyed)CoBroadcastWithKeyedOperator / CoBroadcastWithNonKeyedOperator: input 1
is the (keyed) main stream, input 2 the broadcast stream, which every subtask receives in
full. Broadcast state is a map per descriptor name, one copy per subtask; the main side
reads it (``ReadOnlyBroadcastState``), the broadcast side writes it."""

from __future__ import annotations

from typing import Any

from flowc.api.functions import BroadcastProcessFunction, KeyedBroadcastProcessFunction
from flowc.errors import ExecutionError
from flowc.executor.runtime.core import method_of
from flowc.executor.runtime.operators import (
    KeyedOperator,
    ProcessContext,
    emit_results,
    fire_user_timer,
)
from flowc.executor.runtime.state import BroadcastState, ReadOnlyBroadcastState
from flowc.windowing import TimeDomain


class BroadcastContext(ProcessContext):
    """``ctx`` of both methods; ``get_broadcast_state`` is read-only on the main side."""

    def __init__(self, op: Any, keyed: bool, writable: bool) -> None:
        super().__init__(op, keyed)
        self._writable = writable

    def get_broadcast_state(self, descriptor: Any) -> ReadOnlyBroadcastState:
        name = getattr(descriptor, "name", None)
        states = self._op.broadcast_states
        if name not in states:
            raise ExecutionError(f"The requested state does not exist. Check for typos in your "
                                 f"state descriptor, or specify the state descriptor in the "
                                 f"datastream.broadcast(...) call if you forgot to register "
                                 f"it. (state '{name}')")
        cls = BroadcastState if self._writable else ReadOnlyBroadcastState
        return cls(states[name])


class BroadcastProcessOperator(KeyedOperator):
    two_input = True
    keyed = False

    def open(self) -> None:
        fn = self.spec.fn
        if self.keyed:
            super().open()
        self.f1 = method_of(fn, BroadcastProcessFunction, "process_element")
        self.f2 = method_of(fn, BroadcastProcessFunction, "process_broadcast_element")
        self.timer_fn = fn.on_timer if isinstance(fn, KeyedBroadcastProcessFunction) else None
        self.broadcast_states: dict[str, dict[Any, Any]] = {
            d.name: {} for d in self.spec.descriptors}
        self.read_ctx = BroadcastContext(self, self.keyed, writable=False)
        self.write_ctx = BroadcastContext(self, False, writable=True)
        self.open_function(fn)

    def process1(self, value: Any, ts: int | None) -> None:
        if self.timers._pt_heap:
            self.poll_processing_time()
        if self.keyed:
            self.backend.current_key = self.key_fn(value)  # type: ignore[union-attr]
        self.read_ctx._ts = ts
        emit_results(self, self.f1(value, self.read_ctx), ts)

    def process2(self, value: Any, ts: int | None) -> None:
        if self.timers._pt_heap:
            self.poll_processing_time()
        self.write_ctx._ts = ts
        emit_results(self, self.f2(value, self.write_ctx), ts)

    def on_timer(self, ts: int, key: Any, namespace: Any) -> None:
        fire_user_timer(self, ts, key, TimeDomain.EVENT_TIME, self.read_ctx)

    def on_processing_time(self, ts: int, key: Any, namespace: Any) -> None:
        fire_user_timer(self, ts, key, TimeDomain.PROCESSING_TIME, self.read_ctx)


class KeyedBroadcastProcessOperator(BroadcastProcessOperator):
    keyed = True
