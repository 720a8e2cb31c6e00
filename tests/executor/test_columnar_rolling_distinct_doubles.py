"""The rolling ``count(distinct)`` of a double runs vectorised with the row code's set
semantics (``arrow/rolling.py``): ``-0.0`` and ``0.0`` are one value, every NaN is a new
one (a Python dict tells NaNs apart by object), nulls do not count; fed in one chunk or
cut into several, both modes, against the reference executor, and on Spark."""

from __future__ import annotations

import os
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from tests.executor.columnar_jobs import collect_job
from tests.executor.test_columnar_rolling_distinct import _chunked, _reference, _text, _write

from flowc.executor import run_job_graph

cells = st.tuples(
    st.sampled_from(["u1", "u2", "", "ü4"]),                             # user
    st.sampled_from(["1", "2", ""]),                                     # n
    st.sampled_from(["0.5", "", "-0.0", "0.0", "NaN", "inf", "-inf", "1e300", "0.1"]),  # x
    st.integers(0, 6).map(lambda t: t * 1000),                           # ts
)
# No double results here (a NaN result's -U / +U: test_columnar_nan_extremes.py).
AGGS = ["count(distinct x) as dx", "count(distinct x * 2.0) as d2", "count(*) as c",
        "count(distinct n) as dn", "min(n) as mn"]


@settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
@given(rows=st.lists(cells, min_size=1, max_size=40),
       cuts=st.lists(st.integers(0, 40), max_size=5),
       mode=st.sampled_from(["batch", "streaming"]),
       key=st.sampled_from(["user", "n", "user, n"]),
       aggs=st.lists(st.sampled_from(AGGS[1:]), max_size=2, unique=True))
@example(rows=[("u1", "1", "NaN", 0), ("u1", "1", "NaN", 0), ("u1", "1", "-0.0", 0),
               ("u1", "1", "0.0", 0), ("u1", "1", "", 0), ("u1", "1", "NaN", 0)],
         cuts=[3], mode="streaming", key="user", aggs=[])
def test_rolling_count_distinct_of_doubles_equals_reference(
        tmp_path_factory: Any, rows: list[Any], cuts: list[int], mode: str, key: str,
        aggs: list[str]) -> None:
    where = tmp_path_factory.mktemp("rolldistinctdouble")
    text = _text(_write(where, rows), key, [AGGS[0]] + aggs)
    want = _reference(text, where, mode)
    assert _chunked(text, where, mode, rows, key, []) == want, text
    assert _chunked(text, where, mode, rows, key, cuts) == want, text


@pytest.mark.spark
@settings(max_examples=int(os.environ.get("FLOWC_DIFF_EXAMPLES", "4")), deadline=None,
          suppress_health_check=list(HealthCheck))
@given(rows=st.lists(cells, min_size=1, max_size=60), p=st.integers(1, 3),
       mode=st.sampled_from(["batch", "streaming"]))
def test_on_spark_equals_reference(spark: Any, tmp_path_factory: Any, rows: list[Any], p: int,
                                   mode: str) -> None:
    where = tmp_path_factory.mktemp("rolldistinctdoublespark")
    text = _text(_write(where, rows), "user", AGGS[:3], p)
    want = _reference(text, where, mode)
    got = run_job_graph(collect_job(text, where, "columnar", mode))
    assert [repr(r) for r in got.collected["result"]] == want, text
