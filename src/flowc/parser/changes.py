"""Run-time functions of a rolling ``aggregate`` (Flink SQL's GroupAggregate): the
changelog it emits and the retraction-aware accumulators it needs on an updating input.

The plan stays the DataStream program ``map(RollingStart) -> key_by -> reduce(RollingMerge)
-> flat_map(RollingChanges)``. The reduce's value of a key is ``(key..., state)`` with
``state = (acc, count, result, prev_count, prev_result)``: the accumulators, the number of
rows the key holds (inserts minus retractions), the result row of the aggregates and the
count and result before the last record. From these
``RollingChanges`` emits Flink's GroupAggFunction changelog:

- a key's first row (count was 0): ``+I``;
- a retraction that empties the key: ``-D`` of the previous row;
- an update that leaves the row as it was: nothing (Flink without state TTL);
- otherwise ``-U`` previous, ``+U`` new.

A retraction for a key holding nothing is dropped, as Flink drops it.

With ``table.exec.state.ttl`` (``ttl`` ms) the state also carries the processing time of its
last write (the runtime clock, flowc.executor.runtime.clock, read as each record reaches the
aggregate): a key not written for ``ttl`` ms is expired, as Flink's GroupAggFunction state (OnCreateAndWrite, NeverReturnExpired): its
next row starts it again (``+I`` with a count from 1: the old row is never retracted), a
retraction for it is dropped.

On an insert-only input the accumulators are those of windows (``RowAggregate``); on an
updating input they are :class:`RetractAggregate`'s: sums and averages keep a count of
values, ``min`` / ``max`` / ``count(distinct)`` a multiset (value -> count), so every
retracted row can be taken out again. The multisets of ``min`` / ``max`` keep their values
in a heap besides (:class:`ExtremeCounts`): an update costs O(log n) in the key's number of
distinct values, not a scan of them.
"""

from __future__ import annotations

import heapq
from typing import Any

from flowc.api.functions import FlatMapFunction
from flowc.decimals import average, plus, sum_result
from flowc.executor.runtime.clock import processing_clock
from flowc.executor.runtime.state import ValueStateDescriptor
from flowc.executor.runtime.ttl import StateTtlConfig
from flowc.parser.runtime import wrap64
from flowc.rowkind import Delete, UpdateAfter, UpdateBefore, is_retract


def value_state(name: str, ttl_ms: int | None) -> ValueStateDescriptor:
    """A keyed value state of an updating operator (Top-N, regular join); with
    ``table.exec.state.ttl`` it expires ``ttl_ms`` after its last write, as Flink's SQL
    operators' state (OnCreateAndWrite, NeverReturnExpired, processing time)."""
    descriptor = ValueStateDescriptor(name)
    if ttl_ms:
        from flowc.windowing import Duration

        descriptor.enable_time_to_live(StateTtlConfig.new_builder(
            Duration.of_millis(ttl_ms)).build())
    return descriptor


RETRACTABLE = ("count_star", "count", "count_distinct", "sum", "avg", "min", "max")


class _Largest:
    """A value in reverse order, so that a min-heap keeps the largest on top."""

    __slots__ = ("v",)

    def __init__(self, v: Any) -> None:
        self.v = v

    def __lt__(self, other: _Largest) -> bool:
        return bool(other.v < self.v)


class ExtremeCounts:
    """The multiset (value -> count) of a retracting ``min`` / ``max`` and its smallest or
    largest value in O(log n) per change: a heap of the values with lazy deletion (a value
    whose count dropped to 0 leaves the heap when it reaches the top; the heap is rebuilt
    when stale entries outnumber live ones, so it stays O(distinct values))."""

    __slots__ = ("counts", "heap", "largest")

    def __init__(self, largest: bool) -> None:
        self.counts: dict[Any, int] = {}
        self.heap: list[Any] = []
        self.largest = largest

    def add(self, v: Any, c: int) -> None:
        counts = self.counts
        had = v in counts
        n = counts.get(v, 0) + c
        if n:
            counts[v] = n
            if not had:
                heapq.heappush(self.heap, _Largest(v) if self.largest else v)
        elif had:
            del counts[v]
            if len(self.heap) > 2 * len(counts) + 32:
                self.heap = [_Largest(x) for x in counts] if self.largest else list(counts)
                heapq.heapify(self.heap)

    def extreme(self) -> Any:
        """The smallest (largest) value held, None when empty."""
        heap, counts = self.heap, self.counts
        while heap:
            top = heap[0].v if self.largest else heap[0]
            if top in counts:
                return top
            heapq.heappop(heap)
        return None


class RetractAggregate:
    """Accumulators that take retractions. A row's accumulator is a delta (its values
    counted +1 for an insert / update-after, -1 for a retraction); ``merge`` adds a delta
    to the key's accumulator. Multisets are dicts changed in place: the reduce's state owns
    them (a delta is made per record and merged once)."""

    def __init__(self, kinds: tuple[str, ...], args: tuple[Any, ...],
                 monotone: tuple[bool, ...] = ()) -> None:
        self.kinds = kinds
        self.args = args
        # min / max that ignore retractions (flowc.parser.aggregates.AggSpec.monotone)
        self.monotone = monotone or (False,) * len(kinds)

    def __repr__(self) -> str:
        return f"RetractAggregate(kinds={self.kinds!r})"

    def delta(self, row: Any, sign: int) -> tuple[Any, ...]:
        out: list[Any] = []
        for kind, f, monotone in zip(self.kinds, self.args, self.monotone):
            if kind == "count_star":
                out.append(sign)
                continue
            v = None if monotone and sign < 0 else f(row)
            if kind == "count":
                out.append(0 if v is None else sign)
            elif kind in ("sum", "avg"):
                out.append((0, 0) if v is None else (v * sign, sign))
            elif kind == "count_distinct":  # a multiset
                out.append({} if v is None else {v: sign})
            else:  # min, max: a multiset with its extreme at hand
                counts = ExtremeCounts(kind == "max")
                if v is not None:
                    counts.add(v, sign)
                out.append(counts)
        return tuple(out)

    def merge(self, a: tuple[Any, ...], b: tuple[Any, ...]) -> tuple[Any, ...]:
        out: list[Any] = []
        for kind, x, y in zip(self.kinds, a, b):
            if kind in ("count_star", "count"):
                out.append(x + y)
            elif kind in ("sum", "avg"):
                s = plus(x[0], y[0])
                out.append((wrap64(s) if isinstance(s, int) else s, x[1] + y[1]))
            elif kind in ("min", "max"):
                for v, c in y.counts.items():
                    x.add(v, c)
                out.append(x)
            else:
                for v, c in y.items():
                    n = x.get(v, 0) + c
                    if n:
                        x[v] = n
                    else:
                        del x[v]
                out.append(x)
        return tuple(out)

    def get_result(self, acc: tuple[Any, ...]) -> tuple[Any, ...]:
        out: list[Any] = []
        for kind, a in zip(self.kinds, acc):
            if kind in ("count_star", "count"):
                out.append(a)
            elif kind == "sum":
                out.append(sum_result(a[0]) if a[1] else None)
            elif kind == "avg":
                out.append(average(a[0], a[1]) if a[1] else None)
            elif kind == "count_distinct":
                out.append(len(a))
            else:  # min, max
                out.append(a.extreme())
        return tuple(out)


class RollingStart:
    """Step 1 (a map): a row -> ``(key..., (acc, ±1, result, 0, None))``. ``retracting``:
    the input is updating (``agg`` is a RetractAggregate; -U / -D rows count -1). The
    result is computed here, once per row: the reduce emits a key's first row as it is,
    and later merges may change its multisets in place."""

    def __init__(self, key_positions: tuple[int, ...], agg: Any, retracting: bool,
                 ttl: int | None = None) -> None:
        self.key_positions = key_positions
        self.agg = agg
        self.retracting = retracting
        self.ttl = ttl

    def __call__(self, row: Any) -> tuple[Any, ...]:
        keys = tuple(row[i] for i in self.key_positions)
        agg = self.agg
        if self.retracting:
            sign = -1 if is_retract(row) else 1
            acc = agg.delta(row, sign)
        else:
            sign, acc = 1, agg.add(row, agg.create_accumulator())
        written = processing_clock().now_ms() if self.ttl else None
        return keys + ((acc, sign, agg.get_result(acc), 0, None, written),)


class RollingMerge:
    """Step 2 (a keyed reduce): the key's state ``a`` after one more row's delta ``b``."""

    def __init__(self, key_count: int, agg: Any, ttl: int | None = None) -> None:
        self.key_count = key_count
        self.agg = agg
        self.ttl = ttl

    def __call__(self, a: tuple[Any, ...], b: tuple[Any, ...]) -> tuple[Any, ...]:
        n = self.key_count
        acc, count, result, written = a[n][0], a[n][1], a[n][2], a[n][5]
        delta, sign = b[n][0], b[n][1]
        # the record's time: when it reached the aggregate (RollingStart, one reading per
        # record in order; the reduce may run after the map has read a whole batch)
        now = b[n][5]
        if self.ttl and now is not None and written is not None and written + self.ttl <= now:
            count = 0  # expired (TtlUtils.expired): the key holds nothing any more
        if count <= 0:
            if sign < 0:  # nothing to retract (Flink drops it); the key stays empty
                return a[:n] + ((acc, 0, result, 0, result, written),)
            # an emptied key starts again from nothing (Flink clears its state)
            return a[:n] + ((delta, sign, b[n][2], 0, None, now),)
        new = self.agg.merge(acc, delta)  # may change ``acc`` in place: result is taken
        return a[:n] + ((new, count + sign, self.agg.get_result(new), count, result, now),)


class RollingChanges(FlatMapFunction):
    """Step 3 (a flat map): the changelog rows for one reduce output (see the module doc).
    ``batch``: BATCH mode, where the reduce emits each key's final value once: ``+I``."""

    def __init__(self, key_count: int, agg: Any, batch: bool) -> None:
        self.key_count = key_count
        self.agg = agg
        self.batch = batch

    @property
    def emits_updates(self) -> bool:
        """The planner's changelog mode (StreamGraph.changelog_modes): BATCH emits final
        rows only (insert-only)."""
        return not self.batch

    def flat_map(self, value: tuple[Any, ...]) -> list[tuple[Any, ...]]:
        n = self.key_count
        acc, count, result, prev_count, prev = value[n][:5]
        if count <= 0 and (prev_count <= 0 or self.batch):
            return []
        keys = value[:n]
        if count <= 0:
            return [Delete(keys + prev)]
        row = keys + result
        if prev_count <= 0 or self.batch:
            return [row]
        old = keys + prev
        if old == row:
            return []
        return [UpdateBefore(old), UpdateAfter(row)]
