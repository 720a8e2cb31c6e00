"""Differential: random .flow programs with updating streams (a rolling ``aggregate``, a
Top-N) and consumers of their changelog (declarative and UDF maps, filters) on the columnar
executor equal the reference executor, record for record and kind for kind (+I / -U / +U
/ -D: the batches carry them in ``_kind``), in both modes; the rolling aggregate
itself runs vectorised (``arrow/rolling.py``), over a changelog (retractions) as the row
code inside the chain."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, example, given, settings
from hypothesis import strategies as st
from tests.executor.columnar_jobs import collect_job, write_csv
from tests.executor.rolling_chain import rolling_vertex, run_rolling

from flowc.executor import run_job_graph, run_reference
from flowc.executor.arrow.plan import plan_members
from flowc.parser import compile_source

cells = st.tuples(
    st.sampled_from(["u1", "u2", "U3", "ü4"]),                # user
    st.sampled_from(["1", "2", "-7", "", "40"]),              # n int (empty = null)
    st.sampled_from(["0.5", "0.1", "", "-1.25", "1e16"]),     # x double
    st.integers(0, 40_000),                                   # ts millis
)
programs = st.fixed_dictionaries({
    "mode": st.sampled_from(["batch", "streaming"]),
    "rows": st.lists(cells, min_size=1, max_size=60),
    "p": st.integers(1, 3),
    "pre": st.sampled_from(["", "| filter n is not null or user = 'u1'",
                            "| map user, bump(n) as n, x, ts"]),
    "key": st.sampled_from(["user", "n", "user, n"]),
    "aggs": st.lists(st.sampled_from([
        "count(*) as c", "count(x) as cx", "sum(n) as sn", "sum(x) as sx",
        "min(user) as mu", "max(x) as mx", "avg(n) as an", "avg(x) as ax",
        "min(ts) as mt", "first(x) as fx", "last(user) as lu"]), min_size=1, max_size=4, unique=True),
    "post": st.sampled_from(["", "| filter c > 1", "| map c * 2 as c2, sx",
                             "| map bump(c) as b, sx", "| filter sx > 1.0 or c = 1",
                             # retracting consumers: a rolling aggregate of the changelog
                             "| key by c | aggregate count(*) as k2, sum(sx) as s2",
                             "| map c % 2 as odd, sx | key by odd | aggregate max(sx) as m2"]),
})


def _script(prog: dict[str, Any], data: Path) -> str:
    aggs = list(dict.fromkeys(["count(*) as c", "sum(x) as sx"] + prog["aggs"]))
    return (f"set parallelism = {prog['p']};\n"
            "import udf tests.executor.columnar_udfs.bump(int) -> int;\n"
            "source s (user string, n int, x double, ts timestamp) "
            f"from csv '{data}' watermark ts - 1s;\n"
            f"let result = s {prog['pre']} | filter {prog['key'].replace(',', ' is not null and')}"
            " is not null\n"
            f"  | key by {prog['key']} | aggregate {', '.join(aggs)} {prog['post']};\n")


def _run(text: str, where: Path, mode: str) -> tuple[Any, Any]:
    return (run_reference(collect_job(text, where, "row", mode)),
            run_job_graph(collect_job(text, where, "columnar", mode)))


def _records(result: Any) -> dict[str, list[str]]:
    # repr: the kind (a RowKind's repr starts with it) and every float bit count
    return {name: [repr(r) for r in rows] for name, rows in result.collected.items()}


@pytest.mark.spark
@settings(max_examples=int(os.environ.get("FLOWC_DIFF_EXAMPLES", "15")), deadline=None,
          suppress_health_check=list(HealthCheck),
          phases=[Phase.explicit, Phase.reuse, Phase.generate])
@given(programs)
@example(prog={"mode": "streaming", "rows": [("u1", "1", "0.1", 0)] * 12 + [
    ("u2", "", "", 5), ("u1", "2", "-1.25", 7)], "p": 2, "pre": "", "key": "user",
    "aggs": ["max(x) as mx", "avg(x) as ax"], "post": "| filter c > 1"})
def test_rolling_aggregates_match_reference(spark: Any, tmp_path_factory: Any,
                                            prog: dict[str, Any]) -> None:
    where = tmp_path_factory.mktemp("colchanges")
    text = _script(prog, write_csv(where / "data.csv", "user,n,x,ts", prog["rows"]))
    expected, actual = _run(text, where, prog["mode"])
    assert _records(actual) == _records(expected), text
    assert [(v.name, v.records_in, v.records_out) for v in actual.vertices] == \
        [(v.name, v.records_in, v.records_out) for v in expected.vertices]


@pytest.mark.spark
@settings(max_examples=int(os.environ.get("FLOWC_DIFF_EXAMPLES", "8")), deadline=None,
          suppress_health_check=list(HealthCheck))
@given(rows=st.lists(cells, min_size=1, max_size=40), p=st.integers(1, 3),
       top=st.sampled_from(["top 2 by x desc as rank", "top 1 by ts desc", "top 2 by n"]),
       post=st.sampled_from(["", "| filter x > 0.2", "| map user, bump(n) as b"]))
def test_top_n_changelog_matches_reference(spark: Any, tmp_path_factory: Any,
                                           rows: list[Any], p: int, top: str,
                                           post: str) -> None:
    """Top-N (a runtime operator inside the chain) emits kinds the batches carry on."""
    where = tmp_path_factory.mktemp("coltopn")
    write_csv(where / "data.csv", "user,n,x,ts", rows)
    text = (f"set parallelism = {p};\n"
            "import udf tests.executor.columnar_udfs.bump(int) -> int;\n"
            "source s (user string, n int, x double, ts timestamp) "
            f"from csv '{where / 'data.csv'}' watermark ts - 1s;\n"
            f"let result = s | key by user | {top} {post};\n")
    expected, actual = _run(text, where, "streaming")
    assert _records(actual) == _records(expected), text


def test_rolling_aggregate_plans_columnar_and_names_what_does_not() -> None:
    def plan(text: str, mode: str = "streaming") -> Any:
        script = compile_source("source s (user string, n int, x double, ts timestamp) "
                                "from csv 'x.csv' watermark ts - 1s;\n" + text, "t.flow",
                                options={"mode": mode})
        return plan_members(script.env.get_job_graph())

    for mode in ("batch", "streaming"):
        members = plan("s | key by user | aggregate count(*) as c, sum(x) as sx "
                       "| filter c > 1 | print;", mode)
        assert isinstance(members, dict), members
        kinds = [m.kind for ms in members.values() for m in ms]
        assert "rolling_start" in kinds and "rolling" in kinds, kinds
    # A retracting aggregate (over the changelog) runs the row code inside the chain.
    members = plan("s | key by user | aggregate count(*) as c | key by c "
                   "| aggregate count(*) as cc | print;")
    assert isinstance(members, dict), members
    assert [m.kind for ms in members.values() for m in ms].count("rolling") == 2
    # count distinct of a double too (``test_columnar_rolling_distinct_doubles.py``)
    members = plan("s | key by user | aggregate count(distinct x) as d | print;")
    assert isinstance(members, dict), members
    assert "rolling" in [m.kind for ms in members.values() for m in ms]


@settings(max_examples=80, deadline=None, suppress_health_check=list(HealthCheck))
@given(rows=st.lists(cells, min_size=1, max_size=40),
       cuts=st.lists(st.integers(0, 40), max_size=5),
       mode=st.sampled_from(["batch", "streaming"]),
       aggs=st.lists(st.sampled_from(["count(x) as cx", "sum(x) as sx", "avg(n) as an",
                                      "min(user) as mu", "first(x) as fx",
                                      "last(n) as ln"]), min_size=1, max_size=3,
                     unique=True))
def test_rolling_state_carries_across_chunks(rows: list[Any], cuts: list[int], mode: str,
                                             aggs: list[str]) -> None:
    """The rolling member fed the records in one chunk or cut into several (its state
    row per key carried between them) emits the same changelog, kinds and timestamps."""
    script = compile_source(
        "source s (user string, n int, x double, ts timestamp) from csv 'x.csv' "
        f"watermark ts - 1s;\ns | key by user | aggregate {', '.join(aggs)} | print;\n",
        "t.flow", options={"mode": mode})
    start, vertex = rolling_vertex(script.env.get_job_graph())
    values = [(u, None if n == "" else int(n), None if x == "" else float(x), ts)
              for u, n, x, ts in rows]

    def run(bounds: list[int]) -> list[str]:
        return [f"{r!r}@{t}" for r, t in run_rolling(start, vertex, values, bounds,
                                                     mode == "streaming")]

    n = len(values)
    whole = run([0, n])
    assert len([r for r in whole if r.startswith("(")]) == len({r[0] for r in rows})  # +I
    assert run(sorted({0, n, *(c % (n + 1) for c in cuts)})) == whole
