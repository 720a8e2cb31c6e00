"""The rolling ``aggregate`` with ``count(distinct)`` runs vectorised (``arrow/rolling.py``:
the (key, value) pairs seen so far, new-distinct flags, a running count) and emits exactly
the row operator's changelog (+I, then -U / +U per change, nothing when unchanged; BATCH:
each key's final row): fed in one chunk or cut into several, against the reference
executor, and on Spark."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.executor.columnar_jobs import collect_job, write_csv
from tests.executor.rolling_chain import rolling_vertex, run_rolling

from flowc.executor import run_job_graph, run_reference
from flowc.executor.arrow.plan import plan_members
from flowc.operators import CollectSink
from flowc.parser import compile_source

cells = st.tuples(
    st.sampled_from(["u1", "u2", "U3", "", "ü4"]),            # user (empty = null)
    st.sampled_from(["1", "2", "-7", "", "40"]),              # n int (empty = null)
    st.sampled_from(["0.5", "", "-1.25"]),                    # x double
    st.integers(0, 6) .map(lambda t: t * 1000),               # ts: few distinct values
)
AGGS = ["count(distinct n) as dn", "count(distinct user) as du", "count(distinct ts) as dt",
        "count(*) as c", "sum(x) as sx", "min(n) as mn", "last(user) as lu"]
HEAD = "source s (user string, n int, x double, ts timestamp) from csv '{data}' " \
       "watermark ts - 1s;\n"


def _text(data: Path, key: str, aggs: list[str], p: int = 1, post: str = "") -> str:
    return (f"set parallelism = {p};\n" + HEAD.format(data=data) +
            f"let result = s | filter {key.replace(',', ' is not null and')} is not null\n"
            f"  | key by {key} | aggregate {', '.join(aggs)} {post};\n")


def _write(where: Path, rows: list[Any]) -> Path:
    return write_csv(where / "data.csv", "user,n,x,ts", rows)


def _reference(text: str, where: Path, mode: str) -> list[str]:
    script = compile_source(text, str(where / "job.flow"), options={"mode": mode})
    script.streams["result"].stream.sink_to(CollectSink("result"))
    result = run_reference(script.env.get_job_graph())
    return [repr(r) for r in result.collected["result"]]


def _chunked(text: str, where: Path, mode: str, rows: list[Any], key: str,
             cuts: list[int]) -> list[str]:
    """The columnar members of the rolling aggregate fed the rows in the given chunks."""
    script = compile_source(text, str(where / "job.flow"), options={"mode": mode})
    script.streams["result"].stream.sink_to(CollectSink("result"))
    start, vertex = rolling_vertex(script.env.get_job_graph())
    values = [(u or None, None if n == "" else int(n), None if x == "" else float(x), ts)
              for u, n, x, ts in rows]
    at = {"user": 0, "n": 1}
    # the filter of null keys runs before the shuffle, outside these members
    values = [v for v in values if all(v[at[k.strip()]] is not None
                                       for k in key.split(","))]
    n = len(values)
    bounds = sorted({0, n, *(c % (n + 1) for c in cuts)})
    return [repr(r) for r, _ in run_rolling(start, vertex, values, bounds,
                                            mode == "streaming")]


@settings(max_examples=120, deadline=None, suppress_health_check=list(HealthCheck))
@given(rows=st.lists(cells, min_size=1, max_size=40),
       cuts=st.lists(st.integers(0, 40), max_size=5),
       mode=st.sampled_from(["batch", "streaming"]),
       key=st.sampled_from(["user", "n", "user, n"]),
       aggs=st.lists(st.sampled_from(AGGS[1:]), max_size=3, unique=True))
def test_rolling_count_distinct_equals_reference(tmp_path_factory: Any, rows: list[Any],
                                                 cuts: list[int], mode: str, key: str,
                                                 aggs: list[str]) -> None:
    where = tmp_path_factory.mktemp("rolldistinct")
    text = _text(_write(where, rows), key, [AGGS[0]] + aggs)
    want = _reference(text, where, mode)
    assert _chunked(text, where, mode, rows, key, []) == want, text
    assert _chunked(text, where, mode, rows, key, cuts) == want, text


def test_plans_columnar_over_every_type() -> None:
    def plan(aggs: str) -> Any:
        script = compile_source(HEAD.format(data="x.csv") +
                                f"s | key by user | aggregate {aggs} | print;\n", "t.flow",
                                options={"mode": "streaming"})
        return plan_members(script.env.get_job_graph())
    members = plan("count(distinct n) as dn, count(distinct user) as du")
    assert isinstance(members, dict), members
    assert "rolling" in [m.kind for ms in members.values() for m in ms]
    # doubles too (``test_columnar_rolling_distinct_doubles.py``: NaN, -0.0)
    members = plan("count(distinct x) as dx")
    assert isinstance(members, dict), members
    assert "rolling" in [m.kind for ms in members.values() for m in ms]


@pytest.mark.spark
@settings(max_examples=int(os.environ.get("FLOWC_DIFF_EXAMPLES", "6")), deadline=None,
          suppress_health_check=list(HealthCheck))
@given(rows=st.lists(cells, min_size=1, max_size=60), p=st.integers(1, 3),
       mode=st.sampled_from(["batch", "streaming"]),
       key=st.sampled_from(["user", "user, n"]),
       post=st.sampled_from(["", "| filter dn > 1", "| key by dn | aggregate count(*) as k"]))
def test_on_spark_equals_reference(spark: Any, tmp_path_factory: Any, rows: list[Any], p: int,
                                   mode: str, key: str, post: str) -> None:
    where = tmp_path_factory.mktemp("rolldistinctspark")
    text = _text(_write(where, rows), key, AGGS[:4], p, post)
    want = _reference(text, where, mode)
    got = run_job_graph(collect_job(text, where, "columnar", mode))
    assert [repr(r) for r in got.collected["result"]] == want, text
