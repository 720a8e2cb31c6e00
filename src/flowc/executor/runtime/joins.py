"""Flink's IntervalJoinOperator: both sides buffered per key and timestamp; an element joins
the other side's buffered elements with ``left.ts + lower <= right.ts <= left.ts + upper``
(exclusive bounds shift by one millisecond); buffers are cleaned up by watermark timers.
Elements with ``ts < watermark`` are late and dropped (counted).

An outer side (SQL's LEFT / RIGHT / FULL interval joins, ``spec.pad``) remembers which of
its elements joined: one that joined nothing is emitted with the other side null-padded
when its buffer expires (the watermark passed the last time it could join), as Flink's
time-interval join pads them."""

from __future__ import annotations

from typing import Any

from flowc.api.functions import ProcessJoinFunction
from flowc.errors import ExecutionError
from flowc.executor.runtime.core import LONG_MIN, Operator, method_of, results

_LEFT = "CLEANUP_LEFT"
_RIGHT = "CLEANUP_RIGHT"


class JoinContext:
    def __init__(self, op: IntervalJoinOperator) -> None:
        self._op = op
        self.left_ts = 0
        self.right_ts = 0
        self.ts = 0

    def get_left_timestamp(self) -> int:
        return self.left_ts

    def get_right_timestamp(self) -> int:
        return self.right_ts

    def get_timestamp(self) -> int:
        return self.ts

    timestamp = get_timestamp

    def output(self, tag: Any, value: Any) -> None:
        self._op.side(tag, value, self.ts)


class IntervalJoinOperator(Operator):
    keyed = True
    two_input = True

    def open(self) -> None:
        spec = self.spec
        self.lower = spec.lower if spec.lower_inclusive else spec.lower + 1
        self.upper = spec.upper if spec.upper_inclusive else spec.upper - 1
        self.fn = method_of(spec.fn, ProcessJoinFunction, "process_element")
        self.ctx = JoinContext(self)
        # key -> {timestamp: [values]}, insertion ordered (Flink's heap MapState is a
        # HashMap; flowc iterates buckets in insertion order).
        self.left: dict[Any, dict[int, list[Any]]] = {}
        self.right: dict[Any, dict[int, list[Any]]] = {}
        self.open_function(spec.fn)

    def process1(self, value: Any, ts: int | None) -> None:
        self._element(self.keys[0](value), value, ts, True)

    def process2(self, value: Any, ts: int | None) -> None:
        self._element(self.keys[1](value), value, ts, False)

    def _element(self, key: Any, value: Any, ts: int | None, is_left: bool) -> None:
        if ts is None:
            raise ExecutionError("Long.MIN_VALUE timestamp: Elements used in interval stream "
                                 "joins need to have timestamps meaningful timestamps.")
        self.backend.current_key = key  # type: ignore[union-attr]
        wm = self.timers.current_watermark
        if wm != LONG_MIN and ts < wm:
            self.late_records_dropped += 1
            return
        ours, other = (self.left, self.right) if is_left else (self.right, self.left)
        lo, hi = (self.lower, self.upper) if is_left else (-self.upper, -self.lower)
        entry = [value, False]  # the element and whether it has joined (outer sides)
        ours.setdefault(key, {}).setdefault(ts, []).append(entry)
        # an outer join keeps the rows of null keys (SQL row keys): they join nothing
        joinable = self.spec.pad == (None, None) or not (isinstance(key, tuple) and
                                                         None in key)
        for bts, bucket in list(other.get(key, {}).items()) if joinable else ():
            if bts < ts + lo or bts > ts + hi:
                continue
            for o in list(bucket):
                entry[1] = o[1] = True
                if is_left:
                    self._collect(value, o[0], ts, bts)
                else:
                    self._collect(o[0], value, bts, ts)
        if is_left:
            self.timers.register(ts + hi if hi > 0 else ts, key, _LEFT)
        else:
            self.timers.register(ts + hi if hi > 0 else ts, key, _RIGHT)

    def _collect(self, left: Any, right: Any, lts: int, rts: int) -> None:
        c = self.ctx
        c.left_ts, c.right_ts = lts, rts
        c.ts = max(lts, rts)
        for r in results(self.fn(left, right, c)):
            self.out(r, c.ts)

    def on_timer(self, ts: int, key: Any, namespace: Any) -> None:
        if namespace == _LEFT:
            t = ts if self.upper <= 0 else ts - self.upper
            buf = self.left.get(key)
        else:
            t = ts + self.lower if self.lower <= 0 else ts
            buf = self.right.get(key)
        if buf is not None:
            expired = buf.pop(t, None)
            pad = self.spec.pad[0 if namespace == _LEFT else 1]
            if expired and pad is not None:
                nulls = (None,) * pad
                for value, joined in expired:
                    if not joined:
                        pair = (value, nulls) if namespace == _LEFT else (nulls, value)
                        self._collect(pair[0], pair[1], t, t)
            if not buf:
                (self.left if namespace == _LEFT else self.right).pop(key, None)
