"""Vectorised STREAMING session windows (``executor/arrow/stream_sessions.py``) against the
runtime WindowOperator: random out-of-order records (null keys included) with rising
watermarks among them, cut into random chunks, random gaps and order-free aggregates,
first / last (the runtime's merge order), with or without a late side output: the same
results, watermarks, late records and
dropped count, in the same order. End to end: a STREAMING .flow job on Spark == the
reference executor."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from tests.executor.columnar_jobs import collect_job
from tests.executor.session_runs import columnar_sessions, runtime_sessions
from tests.executor.test_columnar_windows import MARKS, ROWS, _chunks, _stream_member

from flowc.executor import run_job_graph, run_reference
from flowc.executor.arrow import convert
from flowc.executor.arrow.plan import plan_members
from flowc.parser import compile_source

AGGS = ["count(*) as c", "count(distinct n) as dn", "count(n) as cn", "min(x) as mx",
        "max(k) as mk", "sum(n) as sn", "avg(n) as an", "first(x) as fx", "last(n) as ln",
        "first(n) as fn", "last(x) as lx"]


def _member(gap: str, aggs: list[str], side: bool) -> Any:
    late = " late into late_r" if side else ""
    tail = "r | print; late_r | print;\n" if side else "r | print;\n"
    return _stream_member(
        "source s (k string, n int, x double, ts timestamp) from csv 'x.csv' "
        "watermark ts - 1s;\n"
        f"let r = s | key by k | window session gap {gap}{late} "
        f"| aggregate {', '.join(aggs)};\n" + tail, "session")


@settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))
@given(rows=ROWS, marks=MARKS, cuts=st.lists(st.integers(0, 100), max_size=5),
       gap=st.sampled_from(["1s", "3s", "7s"]), side=st.booleans(),
       aggs=st.lists(st.sampled_from(AGGS), min_size=1, max_size=3, unique=True))
# A late-alone record kept by a live session it touches; a merge of two sessions.
@example(rows=[("a", 1, None, 10_000), ("a", 2, None, 4_000), ("a", 3, None, 12_000)],
         marks=[9_500, 9_600], cuts=[], gap="3s", side=True, aggs=["count(*) as c"])
# A bridging record merges [5s, 8s) (second) with [10s, 13s) (first): the accumulator is
# the earlier-starting window's, then the other's, then the bridge - not arrival order.
@example(rows=[("a", 1, 0.5, 10_000), ("a", 2, -2.0, 5_000), ("a", 3, 1e3, 8_000)],
         marks=[0, 1], cuts=[2], gap="3s", side=False,
         aggs=["first(x) as fx", "last(n) as ln"])
def test_streaming_sessions_equal_runtime_operator(rows: list[Any], marks: list[int],
                                                   cuts: list[int], gap: str, side: bool,
                                                   aggs: list[str]) -> None:
    m = _member(gap, aggs, side)
    schema = convert.arrow_schema(m.in_schema)
    chunks = _chunks(rows, marks, cuts, schema)
    expected = runtime_sessions(m, chunks)
    actual = columnar_sessions(m, chunks)
    assert actual[0] == expected[0]
    assert actual[1:] == expected[1:]


def test_streaming_sessions_plan() -> None:
    """Order-free aggregates, first / last, double sums and averages, allowed lateness,
    keyed or keyless: a STREAMING session runs vectorised (``stream_sessions.py``)."""
    assert _member("2s", ["count(*) as c", "first(n) as f"], True).kind == "session"
    for window, agg, key in (("session gap 2s allowed lateness 1s", "count(*) as c", "k"),
                             ("session gap 2s", "sum(x) as s", "k"),
                             ("session gap 2s", "avg(x) as a", "k"),
                             ("session gap 2s allowed lateness 3s", "sum(x) as s", "")):
        keyed = f"key by {key} | " if key else ""
        script = compile_source(
            "source s (k string, n int, x double, ts timestamp) from csv 'x.csv' "
            f"watermark ts - 1s;\ns | {keyed}window {window} | aggregate {agg} | print;\n",
            "t.flow", options={"mode": "streaming"})
        members = plan_members(script.env.get_job_graph())
        assert isinstance(members, dict)
        assert "session" in {m.kind for ms in members.values() for m in ms}, (window, agg)


@pytest.mark.spark
def test_streaming_session_job_equals_reference(spark: Any, tmp_path: Path) -> None:
    lines = ["k,n,ts"] + [f"u{i % 7},{i % 5},{(i * 7919) % 40_000}" for i in range(600)]
    (tmp_path / "d.csv").write_text("\n".join(lines) + "\n")
    text = (f"set parallelism = 2;\nset flowc.watermarks = 'per-record';\n"
            f"source s (k string, n int, ts timestamp) from csv '{tmp_path}/d.csv' "
            "watermark ts - 2s;\n"
            "let r = s | key by k | window session gap 1500ms late into late_r "
            "| aggregate count(*) as c, count(distinct n) as dn, max(n) as mx, first(n) as f, "
            "last(n) as l;\n")

    def job(executor: str) -> Any:
        return collect_job(text, tmp_path, executor, "streaming",
                           sinks={"r": "r", "late_r": "late"})
    columnar = job("columnar")
    kinds = {m.kind for ms in plan_members(columnar).values() for m in ms}  # type: ignore[union-attr]
    assert "session" in kinds
    actual, expected = run_job_graph(columnar), run_reference(job("row"))
    assert expected.collected["late"] and expected.collected["r"]
    assert actual.collected == expected.collected
