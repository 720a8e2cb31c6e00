"""``count(distinct ...)`` accumulators: linear in the number of distinct values (a frozenset
copied per record made one key with n values cost O(n^2)), and still immutable values: an
older accumulator never sees what was added to a newer one."""

from __future__ import annotations

import pickle
import time
from collections.abc import Callable

from pyspark import cloudpickle

from flowc.operators import CodeFn
from flowc.parser.aggregates import AggSpec, DistinctSet, RowAggregate
from flowc.parser.changes import RollingMerge, RollingStart
from flowc.types import INT


def _agg() -> RowAggregate:
    return RowAggregate([AggSpec("count_distinct", CodeFn(lambda r: r[0], "r[0]", ("r",)), "n", INT)])


def _rolling(n: int) -> int:
    agg = _agg()
    start, merge = RollingStart((), agg, False), RollingMerge(0, agg)
    state = start((0,))
    for i in range(1, n):
        state = merge(state, start((i,)))
    return agg.get_result(state[0][0])[0]


def _windowed(n: int) -> int:
    agg = _agg()
    acc = agg.create_accumulator()
    for i in range(n):
        acc = agg.add((i,), acc)
    return agg.get_result(acc)[0]


def _cpu(f: Callable[[int], int], n: int) -> float:
    best = float("inf")
    for _ in range(3):
        t = time.process_time()
        assert f(n) == n
        best = min(best, time.process_time() - t)
    return best


def test_growth_is_linear() -> None:
    # 4x the distinct values of one key is 4x the work (quadratic: 16x). A ratio,
    # not an absolute time; generous for a loaded machine.
    for f in (_rolling, _windowed):
        small, large = _cpu(f, 40_000), _cpu(f, 160_000)
        assert large < 8 * max(small, 1e-3), (f.__name__, small, large)


def test_versions_are_immutable() -> None:
    e = DistinctSet()
    a = e.add("x")
    b = a.add("y")
    c = a.add("z")  # extends an older version: a branch
    assert (len(e), len(a), len(b), len(c)) == (0, 1, 2, 2)
    assert "y" in b and "y" not in a and "y" not in c and "z" in c and "z" not in b
    assert b.add("x") is b
    assert a.union(c) == c and len(b.union(c)) == 3 and len(a) == 1
    assert len(DistinctSet()) == 0 and "x" not in e


def test_pickles_only_its_own_version() -> None:
    a = DistinctSet().add(1).add(2)
    a.add(3)
    for dumps in (pickle.dumps, cloudpickle.dumps):
        back = pickle.loads(dumps(a))
        assert list(back) == [1, 2] and 3 not in back and len(back.add(3)) == 3


def test_null_and_equal_values() -> None:
    agg = _agg()
    acc = agg.create_accumulator()
    for v in (None, 1, 1.0, "1", None, "1"):
        acc = agg.add((v,), acc)
    assert agg.get_result(acc) == (2,)  # 1 == 1.0 as in a Python set; nulls not counted
