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

On an insert-only input the accumulators are those of windows (``RowAggregate``); on an
updating input they are :class:`RetractAggregate`'s: sums and averages keep a count of
values, ``min`` / ``max`` / ``count(distinct)`` a multiset (value -> count), so every
retracted row can be taken out again.
"""

from __future__ import annotations

from typing import Any

from flowc.api.functions import FlatMapFunction
from flowc.decimals import average, plus, sum_result
from flowc.parser.runtime import wrap64
from flowc.rowkind import Delete, UpdateAfter, UpdateBefore, is_retract

RETRACTABLE = ("count_star", "count", "count_distinct", "sum", "avg", "min", "max")


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
            if monotone and sign < 0:
                out.append({})
                continue
            v = f(row)
            if kind == "count":
                out.append(0 if v is None else sign)
            elif kind in ("sum", "avg"):
                out.append((0, 0) if v is None else (v * sign, sign))
            else:  # min, max, count_distinct: a multiset
                out.append({} if v is None else {v: sign})
        return tuple(out)

    def merge(self, a: tuple[Any, ...], b: tuple[Any, ...]) -> tuple[Any, ...]:
        out: list[Any] = []
        for kind, x, y in zip(self.kinds, a, b):
            if kind in ("count_star", "count"):
                out.append(x + y)
            elif kind in ("sum", "avg"):
                s = plus(x[0], y[0])
                out.append((wrap64(s) if isinstance(s, int) else s, x[1] + y[1]))
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
            elif kind == "min":
                out.append(min(a) if a else None)
            else:
                out.append(max(a) if a else None)
        return tuple(out)


class RollingStart:
    """Step 1 (a map): a row -> ``(key..., (acc, ±1, result, 0, None))``. ``retracting``:
    the input is updating (``agg`` is a RetractAggregate; -U / -D rows count -1). The
    result is computed here, once per row: the reduce emits a key's first row as it is,
    and later merges may change its multisets in place."""

    def __init__(self, key_positions: tuple[int, ...], agg: Any, retracting: bool) -> None:
        self.key_positions = key_positions
        self.agg = agg
        self.retracting = retracting

    def __call__(self, row: Any) -> tuple[Any, ...]:
        keys = tuple(row[i] for i in self.key_positions)
        agg = self.agg
        if self.retracting:
            sign = -1 if is_retract(row) else 1
            acc = agg.delta(row, sign)
        else:
            sign, acc = 1, agg.add(row, agg.create_accumulator())
        return keys + ((acc, sign, agg.get_result(acc), 0, None),)


class RollingMerge:
    """Step 2 (a keyed reduce): the key's state ``a`` after one more row's delta ``b``."""

    def __init__(self, key_count: int, agg: Any) -> None:
        self.key_count = key_count
        self.agg = agg

    def __call__(self, a: tuple[Any, ...], b: tuple[Any, ...]) -> tuple[Any, ...]:
        n = self.key_count
        acc, count, result = a[n][0], a[n][1], a[n][2]
        delta, sign = b[n][0], b[n][1]
        if count <= 0:
            if sign < 0:  # nothing to retract (Flink drops it); the key stays empty
                return a[:n] + ((acc, count, result, count, result),)
            # an emptied key starts again from nothing (Flink clears its state)
            return a[:n] + ((delta, sign, b[n][2], 0, None),)
        new = self.agg.merge(acc, delta)  # may change ``acc`` in place: result is taken
        return a[:n] + ((new, count + sign, self.agg.get_result(new), count, result),)


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
        acc, count, result, prev_count, prev = value[n]
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
