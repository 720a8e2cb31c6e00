"""Flink SQL's interval join: the table runtime's RowTimeIntervalJoin (TimeIntervalJoin),
which SQL's interval joins (inner, LEFT, RIGHT, FULL) run instead of the DataStream
IntervalJoinOperator (joins.py). The two differ on rows behind the watermark: the DataStream
operator drops them, this one

- joins a row with the other side's rows still cached, whatever its lateness;
- caches it only while the other side's operator time (the watermark) is before the last
  time a row of the other side could join it; otherwise an outer row that joined nothing is
  emitted null-padded at once;
- expires a cached row when the watermark passes that last time (a cleanup timer per key
  and side, at the earliest cached row's time + the window + 1 ms;
  ``table.exec.interval-join.min-cleanup-interval`` is 0 by default), padding an outer row
  that never joined; rows of the other side past their time are also dropped eagerly while
  a row is joined against them, and the point up to which a side was cleaned is one value
  per operator, as in Flink.

SQL's inner interval joins run it too (``spec.table``), in STREAMING. Rows with a null key
join nothing (SQL's ``=``). Bounds: ``right.ts - left.ts`` in
``[lower, upper]`` (IntervalJoinOp's, exclusive ones already shifted by 1 ms); Flink's
``leftRelativeSize`` is ``upper``, its ``rightRelativeSize`` is ``-lower``."""

from __future__ import annotations

from typing import Any

from flowc.executor.runtime.core import LONG_MAX, LONG_MIN
from flowc.executor.runtime.joins import IntervalJoinOperator

_CLEANUP = "CLEANUP"
Cache = dict[int, list[list[Any]]]  # time -> [row, joined] in arrival order


class TimeIntervalJoinOperator(IntervalJoinOperator):
    def open(self) -> None:
        super().open()
        self.left_rel = self.upper  # how far after a left row a right row may be
        self.right_rel = -self.lower  # how far before
        self.left_cache: dict[Any, Cache] = {}
        self.right_cache: dict[Any, Cache] = {}
        # the cleanup timer of each key's left / right cache (Flink's rightTimerState /
        # leftTimerState: named after the stream whose time fires them)
        self.left_timer: dict[Any, int] = {}
        self.right_timer: dict[Any, int] = {}
        # one per operator, not per key (Flink's fields, from 0; BATCH: nothing expires)
        self.left_expiration = LONG_MIN if self.info.batch else 0
        self.right_expiration = self.left_expiration

    def _operator_time(self) -> int:
        wm = self.timers.current_watermark
        if self.info.batch and wm < LONG_MAX:
            # BATCH: no watermark before the end, so no late row; every row is cached (Flink
            # plans a regular join there: all pairs), also those before 1970
            return LONG_MIN
        return wm if wm > 0 else 0

    def _expiration(self, operator_time: int, relative: int) -> int:
        return operator_time - relative - 1 if operator_time < LONG_MAX else LONG_MAX

    def _element(self, key: Any, value: Any, ts: int | None, is_left: bool) -> None:
        if ts is None:
            super()._element(key, value, ts, is_left)  # Flink's error for a missing time
            return
        self.backend.current_key = key  # type: ignore[union-attr]
        now = self._operator_time()
        joinable = not (isinstance(key, tuple) and None in key)
        if is_left:
            lower, upper = ts - self.right_rel, ts + self.left_rel
            other, other_pad = self.right_cache.get(key, {}), self.spec.pad[1]
            scan = self.right_expiration < upper  # else every cached row is past it
            if scan:
                self.right_expiration = self._expiration(now, self.right_rel)
            expiration = self.right_expiration
        else:
            lower, upper = ts - self.left_rel, ts + self.right_rel
            other, other_pad = self.left_cache.get(key, {}), self.spec.pad[0]
            scan = self.left_expiration < upper
            if scan:
                self.left_expiration = self._expiration(now, self.left_rel)
            expiration = self.left_expiration
        joined = scan and self._join_cached(value, ts, is_left, other, other_pad, lower,
                                            upper, expiration, joinable)
        if now < upper:
            cache = (self.left_cache if is_left else self.right_cache).setdefault(key, {})
            cache.setdefault(ts, []).append([value, joined])
            timers = self.left_timer if is_left else self.right_timer
            if key not in timers:
                self._register(key, ts, is_left)
        elif not joined and self.spec.pad[0 if is_left else 1] is not None:
            self._pad(value, ts, is_left)

    def _join_cached(self, value: Any, ts: int, is_left: bool, other: Cache,
                     other_pad: int | None, lower: int, upper: int, expiration: int,
                     joinable: bool) -> bool:
        joined = False
        for t in list(other):
            rows = other[t]
            if lower <= t <= upper and joinable:
                for entry in rows:
                    joined = True
                    entry[1] = True
                    if is_left:
                        self._collect(value, entry[0], ts, t)
                    else:
                        self._collect(entry[0], value, t, ts)
            if t <= expiration:  # eager clean-up while joining
                if other_pad is not None:
                    for row, was_joined in rows:
                        if not was_joined:
                            self._pad(row, t, not is_left)
                del other[t]
        return joined

    def _pad(self, row: Any, t: int, is_left: bool) -> None:
        pad = self.spec.pad[0 if is_left else 1]
        assert pad is not None
        nulls = (None,) * pad
        if is_left:
            self._collect(row, nulls, t, t)
        else:
            self._collect(nulls, row, t, t)

    def _register(self, key: Any, row_time: int, is_left: bool) -> None:
        at = row_time + (self.left_rel if is_left else self.right_rel) + 1
        (self.left_timer if is_left else self.right_timer)[key] = at
        self.timers.register(at, key, _CLEANUP)

    def on_timer(self, ts: int, key: Any, namespace: Any) -> None:
        self.backend.current_key = key  # type: ignore[union-attr]
        now = self._operator_time()
        if self.right_timer.get(key) == ts:
            self.right_expiration = self._expiration(now, self.right_rel)
            self._remove_expired(key, self.right_expiration, False)
        if self.left_timer.get(key) == ts:
            self.left_expiration = self._expiration(now, self.left_rel)
            self._remove_expired(key, self.left_expiration, True)

    def _remove_expired(self, key: Any, expiration: int, left: bool) -> None:
        caches = self.left_cache if left else self.right_cache
        cache = caches.get(key, {})
        pad = self.spec.pad[0 if left else 1]
        earliest = -1
        for t in list(cache):
            if t <= expiration:
                if pad is not None:
                    for row, joined in cache[t]:
                        if not joined:
                            self._pad(row, t, left)
                del cache[t]
            elif t < earliest or earliest < 0:
                earliest = t
        timers = self.left_timer if left else self.right_timer
        if earliest > 0:
            self._register(key, earliest, left)
        else:
            timers.pop(key, None)
            caches.pop(key, None)
