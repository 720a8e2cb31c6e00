"""Differential: random BATCH and STREAMING .flow programs on the columnar executor (Spark,
Arrow) equal
the reference executor, list for list.

Programs read csv files with nullable columns (and a bad row or not), run declarative and
Python (UDF) maps and filters in one chain, key by one or two fields, and aggregate in
tumbling or sliding windows with every aggregate kind; parallelism and max parallelism
vary. The job must actually run columnar (``flowc.executor = columnar`` fails otherwise).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, example, given, settings
from hypothesis import strategies as st
from tests.executor.columnar_jobs import (
    collect_job,
    run_both,
    timing,
    vertex_counts,
    write_csv,
)

from flowc.operators import CollectSink
from flowc.parser import compile_source

pytestmark = pytest.mark.spark

cells = st.tuples(
    st.sampled_from(["u1", "u2", "U3", "", "ü4"]),           # user (empty = null)
    st.sampled_from(["1", "2", "-7", "", "40"]),              # n int
    st.sampled_from(["0.5", "2", "", "-1.25", "1e3", "NaN", "-0.0", "0.0", "-inf"]),  # x
    st.integers(0, 40_000),                                   # ts millis
)
programs = st.fixed_dictionaries({
    "mode": st.sampled_from(["batch", "streaming"]),
    "delay": st.sampled_from(["0s", "1s", "4s"]),
    # STREAMING watermark timing: after every record, or the default (periodic).
    "timing": st.sampled_from([("flowc.watermarks", "'per-record'"), None]),
    "rows": st.lists(cells, min_size=1, max_size=60),
    "bad": st.booleans(),
    "p": st.integers(1, 3),
    "maxp": st.sampled_from([None, 7, 128]),
    "map": st.sampled_from(["user, n, x, ts", "lower(user) as user, n * 2 - 1 as n, x, ts",
                            "user, bump(n) as n, x, ts",
                            "user || '!' as user, coalesce(n, 0) as n, x / 2 as x, ts"]),
    "filter": st.sampled_from(["", "| filter n is not null or user = 'u1'",
                               "| filter x > 0.1 and not (user like 'U%')"]),
    "key": st.sampled_from(["user", "n", "user, n"]),
    "window": st.sampled_from(["tumbling 5s", "sliding 10s every 5s", "tumbling 7s"]),
    "aggs": st.lists(st.sampled_from([
        "count(*) as c", "count(x) as cx", "count(distinct n) as dn", "sum(n) as sn",
        "sum(x) as sx", "min(user) as mu", "max(x) as mx", "avg(n) as an", "avg(x) as ax",
        "first(x) as fx", "last(user) as lu", "min(ts) as mt", "min(x) as nx"]),
        min_size=1, max_size=4,
        unique=True),
})


def _shown(collected: dict[str, Any]) -> dict[str, str]:
    """Collected records by ``repr``: NaN equals NaN, -0.0 differs from 0.0."""
    return {name: repr(records) for name, records in collected.items()}


def _script(prog: dict[str, Any], data: Path) -> str:
    maxp = f"set max_parallelism = {prog['maxp']};\n" if prog["maxp"] else ""
    return (f"set parallelism = {prog['p']};\n{maxp}"
            "import udf tests.executor.columnar_udfs.bump(int) -> int;\n"
            "source s (user string, n int, x double, ts timestamp) "
            f"from csv '{data}' watermark ts - {prog['delay']};\n"
            f"let result = s | map {prog['map']} {prog['filter']}\n"
            f"  | key by {prog['key']} | window {prog['window']}\n"
            f"  | aggregate {', '.join(prog['aggs'])};\n")


@settings(max_examples=int(os.environ.get("FLOWC_DIFF_EXAMPLES", "30")), deadline=None, suppress_health_check=list(HealthCheck),
          phases=[Phase.explicit, Phase.reuse, Phase.generate])
@given(programs)
def test_columnar_matches_reference(spark: Any, tmp_path_factory: Any,
                                    prog: dict[str, Any]) -> None:
    where = tmp_path_factory.mktemp("coldiff")
    text = _script(prog, write_csv(where / "data.csv", "user,n,x,ts", prog["rows"],
                                   "u1,notanumber,1,5" if prog["bad"] else None))
    row_job, columnar_job = (collect_job(text, where, executor, prog["mode"],
                                         options=timing(prog))
                             for executor in ("row", "columnar"))
    runs = run_both(row_job, columnar_job)
    if runs is None:  # a bad row or a null key fails both executors alike
        return
    expected, actual = runs
    # repr: NaN is NaN, -0.0 is not 0.0
    assert repr(actual.collected["result"]) == repr(expected.collected["result"]), text
    assert vertex_counts(actual) == vertex_counts(expected)
    assert actual.late_records_dropped == expected.late_records_dropped


# The tests below run two Spark jobs per example: fewer examples by default (the suite's
# time budget); FLOWC_DIFF_EXAMPLES raises them all.
keyed = st.fixed_dictionaries({
    "mode": st.sampled_from(["batch", "streaming"]),
    "delay": st.sampled_from(["0s", "1s", "3s"]),
    "timing": st.sampled_from([("flowc.watermarks", "'per-record'"), None]),
    "rows": st.lists(cells, min_size=1, max_size=60),
    "p": st.integers(1, 3),
    "maxp": st.sampled_from([None, 7]),
    "key": st.sampled_from(["user", "n", "user, n"]),
    # Sessions run the runtime WindowOperator inside the columnar chain (``rowop.py``).
    "window": st.sampled_from(["tumbling 5s", "sliding 10s every 5s", "tumbling 3s",
                               "session gap 2s"]),
    "lateness": st.sampled_from(["", "allowed lateness 2s", "allowed lateness 6s"]),
    "late": st.booleans(),
    "aggs": st.lists(st.sampled_from([
        "count(*) as c", "count(distinct n) as dn", "sum(x) as sx", "min(user) as mu",
        "avg(n) as an", "first(x) as fx", "last(user) as lu"]), min_size=1, max_size=3,
        unique=True),
    # After the window: nothing, a UDF map, or a second window keyed on the first key field.
    "then": st.sampled_from(["", "window", "map"]),
    "window2": st.sampled_from(["tumbling 10s", "sliding 10s every 5s"]),
})


def _keyed_script(prog: dict[str, Any], data: Path) -> str:
    maxp = f"set max_parallelism = {prog['maxp']};\n" if prog["maxp"] else ""
    first = prog["key"].split(",")[0]
    late = " late into late_s" if prog["late"] else ""
    then = {
        "": "",
        "map": f"\n  | map {prog['key']}, window_end, bump(1) as b",
        "window": f"\n  | key by {first} | window {prog['window2']}\n"
                  f"  | aggregate count(*) as c2, min(window_start) as m2, max(window_end) as e2",
    }[prog["then"]]
    return (f"set parallelism = {prog['p']};\n{maxp}"
            "import udf tests.executor.columnar_udfs.bump(int) -> int;\n"
            "source s (user string, n int, x double, ts timestamp) "
            f"from csv '{data}' watermark ts - {prog['delay']};\n"
            f"let result = s | filter user is not null and n is not null\n"
            f"  | key by {prog['key']} | window {prog['window']} {prog['lateness']}{late}\n"
            f"  | aggregate {', '.join(prog['aggs'])}{then};\n")


@settings(max_examples=int(os.environ.get("FLOWC_DIFF_EXAMPLES", "12")), deadline=None,
          suppress_health_check=list(HealthCheck),
          phases=[Phase.explicit, Phase.reuse, Phase.generate])
@given(keyed)
def test_columnar_keyed_vertices_match_reference(spark: Any, tmp_path_factory: Any,
                                                 prog: dict[str, Any]) -> None:
    """Windows with allowed lateness and late side outputs, and vertices after a window
    (a second window, a UDF map): STREAMING forwards watermarks through keyed vertices."""
    where = tmp_path_factory.mktemp("colkeyed")
    text = _keyed_script(prog, write_csv(where / "data.csv", "user,n,x,ts", prog["rows"]))
    sinks = {"result": "result", **({"late_s": "late"} if prog["late"] else {})}
    runs = run_both(*(collect_job(text, where, executor, prog["mode"], options=timing(prog),
                                  sinks=sinks) for executor in ("row", "columnar")))
    assert runs is not None
    expected, actual = runs
    assert _shown(actual.collected) == _shown(expected.collected), text
    assert vertex_counts(actual) == vertex_counts(expected)
    assert actual.late_records_dropped == expected.late_records_dropped


session_programs = st.fixed_dictionaries({
    "rows": st.lists(st.tuples(cells.map(lambda c: c[0]), cells.map(lambda c: c[1]),
                               cells.map(lambda c: c[2]),
                               st.integers(0, 24).map(lambda v: v * 500)),  # ties
                     min_size=1, max_size=60),
    "p": st.integers(1, 3),
    "key": st.sampled_from(["user", "n", "user, n"]),
    "gap": st.sampled_from(["500ms", "1s", "3s"]),
    "aggs": st.lists(st.sampled_from([
        "count(*) as c", "count(x) as cx", "count(distinct n) as dn", "sum(n) as sn",
        "min(user) as mu", "max(x) as mx", "avg(n) as an", "min(ts) as mt"]),
        min_size=1, max_size=4, unique=True),
})


@settings(max_examples=int(os.environ.get("FLOWC_DIFF_EXAMPLES", "12")), deadline=None,
          suppress_health_check=list(HealthCheck),
          phases=[Phase.explicit, Phase.reuse, Phase.generate])
@given(session_programs)
# Key u1's session [0, 2000) is first seen before u2's but completed (registered) after it.
@example(prog={"rows": [("u1", "1", "", 0), ("u2", "1", "", 1000), ("u1", "1", "", 1000)],
               "p": 1, "key": "user", "gap": "1s", "aggs": ["count(*) as c"]})
def test_columnar_batch_sessions_match_reference(spark: Any, tmp_path_factory: Any,
                                                 prog: dict[str, Any]) -> None:
    """BATCH session windows: the sessions, their aggregates and the firing order (window
    end, then when the session's final window was registered) equal the row operator's."""
    where = tmp_path_factory.mktemp("colsessions")
    write_csv(where / "data.csv", "user,n,x,ts", prog["rows"])
    text = (f"set parallelism = {prog['p']};\n"
            "source s (user string, n int, x double, ts timestamp) "
            f"from csv '{where / 'data.csv'}' watermark ts - 1s;\n"
            f"let result = s | filter user is not null and n is not null\n"
            f"  | key by {prog['key']} | window session gap {prog['gap']}\n"
            f"  | aggregate {', '.join(prog['aggs'])};\n")
    runs = run_both(*(collect_job(text, where, executor) for executor in ("row", "columnar")))
    assert runs is not None
    expected, actual = runs
    assert _shown(actual.collected) == _shown(expected.collected), text
    assert vertex_counts(actual) == vertex_counts(expected)


def test_sessions_of_every_aggregate_and_lateness_run_columnar(tmp_path: Path) -> None:
    """Order-free aggregates, first / last and double sums (Flink's merge order,
    ``stream_sessions.py``), with or without allowed lateness, in both modes: columnar
    session members (``test_columnar_sessions_lateness.py`` checks their results)."""
    from flowc.executor.arrow.plan import plan_members

    def kinds(aggs: str, mode: str, lateness: str = "") -> list[str]:
        text = ("source s (user string, n int, x double, ts timestamp) from csv 'x.csv' "
                "watermark ts - 1s;\n"
                f"let r = s | key by user | window session gap 1s{lateness} "
                f"| aggregate {aggs};\n")
        script = compile_source(text, str(tmp_path / "job.flow"), options={"mode": mode})
        script.streams["r"].stream.sink_to(CollectSink("r"))
        members = plan_members(script.env.get_job_graph())
        assert isinstance(members, dict), members
        return [m.kind for ms in members.values() for m in ms]

    assert "session" in kinds("count(*) as c, sum(n) as s, avg(n) as a", "batch")
    assert "session" in kinds("count(*) as c, sum(n) as s, last(x) as l", "streaming")
    for aggs, mode in [("first(x) as f", "batch"), ("sum(x) as s", "batch"),
                       ("avg(x) as a", "batch"), ("sum(x) as s", "streaming")]:
        assert "session" in kinds(aggs, mode), (aggs, mode)
    assert "session" in kinds("count(*) as c", "streaming", " allowed lateness 1s")
