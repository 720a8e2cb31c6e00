"""A retracting MIN / MAX (GroupAggregate over an updating input) costs O(log n) per update
in the key's number of distinct values: counted in comparisons of the values, which a scan
of the multiset per update made grow quadratically with the rows."""

from __future__ import annotations

import pickle
from typing import Any

import pytest

from flowc.operators import CodeFn
from flowc.parser.changes import ExtremeCounts, RetractAggregate, RollingMerge, RollingStart
from flowc.rowkind import UpdateBefore


class Counted:
    """A value that counts the comparisons made with it."""

    compares = 0

    def __init__(self, v: int) -> None:
        self.v = v

    def __lt__(self, other: Counted) -> bool:
        Counted.compares += 1
        return self.v < other.v

    def __gt__(self, other: Counted) -> bool:
        Counted.compares += 1
        return self.v > other.v

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Counted) and self.v == other.v

    def __hash__(self) -> int:
        return hash(self.v)


def _compares(kind: str, n: int) -> tuple[int, list[Any]]:
    """Insert n distinct values into one key, then retract them, smallest first for min
    (the result changes on every retraction), largest first for max; the comparisons
    made and the results after each retraction."""
    agg = RetractAggregate((kind,), (CodeFn(lambda r: r[1], "r[1]", ("r",)),))
    start, merge = RollingStart((0,), agg, True), RollingMerge(1, agg)
    Counted.compares = 0
    values = [Counted(i) for i in range(n)]
    order = values[::7] + [v for i, v in enumerate(values) if i % 7]  # not sorted
    state = start(("k", order[0]))
    for v in order[1:]:
        state = merge(state, start(("k", v)))
    results = []
    for v in (values if kind == "min" else values[::-1])[:-1]:
        state = merge(state, start(UpdateBefore(("k", v))))
        results.append(state[1][2][0].v)
    return Counted.compares, results


@pytest.mark.parametrize("kind", ["min", "max"])
def test_min_max_retraction_is_logarithmic_per_update(kind: str) -> None:
    small, small_results = _compares(kind, 1000)
    big, big_results = _compares(kind, 4000)
    if kind == "min":
        assert big_results == list(range(1, 4000))
    else:
        assert big_results == list(range(3998, -1, -1))
    # 8000 updates: a scan per update made ~16M comparisons (16x the 2000 updates'), a
    # heap makes O(n log n): about 4.5x
    assert big < 8000 * 40
    assert big < 6 * small


def test_stale_heap_entries_are_dropped_and_the_state_pickles() -> None:
    counts = ExtremeCounts(largest=True)
    for round_ in range(50):
        for v in range(100):
            counts.add(v, 1)
        for v in range(100):
            counts.add(v, -1)
        assert counts.extreme() is None
        assert len(counts.heap) <= 2 * len(counts.counts) + 32 + 100, round_
    counts.add(3, 2)
    counts.add(9, 1)
    counts.add(9, -1)
    back = pickle.loads(pickle.dumps(counts))
    assert back.extreme() == 3 and back.counts == {3: 2}
