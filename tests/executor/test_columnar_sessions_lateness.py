"""Session windows with allowed lateness and double sums / averages, keyed and keyless
(``executor/arrow/stream_sessions.py``), against the runtime WindowOperator: random
out-of-order records with rising watermarks among them, cut into random chunks; late
records that merge into and re-fire fired sessions, sessions bridged after firing, cleanup
at end + lateness; doubles chosen so that the order of additions shows (0.1 + 0.2, 1e16,
-0.0, NaN, infinities): the same results bit for bit, watermarks, late records and dropped
count, in the same order. BATCH sessions with first / last and double sums (the runtime
operator fed everything, then end of input). End to end on Spark == the reference
executor."""

from __future__ import annotations

import math
import struct
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from tests.executor.columnar_jobs import collect_job
from tests.executor.session_runs import columnar_sessions, runtime_sessions
from tests.executor.test_columnar_windows import MARKS, _chunks, _stream_member

from flowc.executor import run_job_graph, run_reference
from flowc.executor.arrow import convert
from flowc.executor.arrow.plan import plan_members
from flowc.executor.arrow.sessions import SessionWindow, session_window
from flowc.executor.arrow.stream_sessions import StreamSessionWindow
from flowc.executor.runtime.core import TaskInfo
from flowc.executor.runtime.factory import create_operator
from flowc.parser import compile_source

DOUBLES = st.one_of(st.none(), st.sampled_from(
    [0.1, 0.2, 0.3, 1e16, -1e16, 1.0, -0.0, 0.0, math.nan, math.inf, -math.inf]))
ROWS = st.lists(st.tuples(st.sampled_from(["a", "b", None]),
                          st.one_of(st.none(), st.integers(-5, 5)), DOUBLES,
                          st.integers(0, 30_000)), min_size=1, max_size=80)
AGGS = ["sum(x) as sx", "avg(x) as ax", "count(*) as c", "first(x) as fx", "last(n) as ln",
        "min(n) as mn", "max(n) as mx", "count(distinct n) as dn", "sum(n) as sn", "avg(n) as an",
        "sum(x * 3.0) as s3"]


def _bits(v: Any) -> Any:
    """Values compared bit for bit (-0.0 unequal to 0.0), every NaN as one (Java's
    ``doubleToLongBits``: a NaN's sign and payload from ``inf + -inf`` depend on the
    order of operands the machine code uses)."""
    if isinstance(v, float):
        return ("f", struct.pack(">d", math.nan if math.isnan(v) else v))
    if isinstance(v, (tuple, list)):
        return tuple(_bits(x) for x in v)
    if isinstance(v, dict):
        return {k: _bits(x) for k, x in v.items()}
    return v


def _text(gap: str, lateness: str, aggs: list[str], side: bool, keyed: bool) -> str:
    late = " late into late_r" if side else ""
    allowed = f" allowed lateness {lateness}" if lateness else ""
    tail = "r | print; late_r | print;\n" if side else "r | print;\n"
    key = "key by k | " if keyed else ""
    return ("source s (k string, n int, x double, ts timestamp) from csv 'x.csv' "
            "watermark ts - 1s;\n"
            f"let r = s | {key}window session gap {gap}{allowed}{late} "
            f"| aggregate {', '.join(aggs)};\n" + tail)


@settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))
@given(rows=ROWS, marks=MARKS, cuts=st.lists(st.integers(0, 100), max_size=5),
       gap=st.sampled_from(["1s", "3s", "7s"]), side=st.booleans(), keyed=st.booleans(),
       lateness=st.sampled_from(["", "0s", "1s", "4s", "20s"]),
       aggs=st.lists(st.sampled_from(AGGS), min_size=1, max_size=3, unique=True))
# A fired session [5s, 8s) re-fires for a late record, then a late record bridges it with
# the fired [10s, 13s): the merged window fires at once; double sums of merged partials.
@example(rows=[("a", 1, 0.1, 5_000), ("a", 2, 1e16, 10_000), ("a", 3, 0.2, 20_000),
               ("a", 4, 0.3, 6_000), ("a", 5, -1e16, 8_500), ("a", 6, 0.1, 4_000)],
         marks=[0, 30_000], cuts=[4], gap="3s", side=True, keyed=True, lateness="20s",
         aggs=["sum(x) as sx", "avg(x) as ax", "first(x) as fx"])
def test_sessions_with_lateness_equal_runtime_operator(
        rows: list[Any], marks: list[int], cuts: list[int], gap: str, side: bool,
        keyed: bool, lateness: str, aggs: list[str]) -> None:
    m = _stream_member(_text(gap, lateness, aggs, side, keyed), "session")
    chunks = _chunks(rows, marks, cuts, convert.arrow_schema(m.in_schema))
    expected = runtime_sessions(m, chunks)
    actual = columnar_sessions(m, chunks)
    assert _bits(actual[0]) == _bits(expected[0])
    assert _bits(actual[1]) == _bits(expected[1])
    assert actual[2] == expected[2]


def test_held_rows_are_cleaned_at_end_plus_lateness() -> None:
    """A session's rows stay until the watermark reaches end - 1 + lateness, then go."""
    m = _stream_member(_text("1s", "5s", ["sum(x) as sx"], False, True), "session")
    schema = convert.arrow_schema(m.in_schema)
    w = StreamSessionWindow(m.spec, m.key, m.in_schema, convert.arrow_schema(m.out_schema))
    rows = [("a", 1, 0.5, 1_000)]
    (first,) = _chunks(rows, [0], [], schema)
    w.add(first)
    for wm, held in ((1_999, 1), (6_998, 1), (6_999, 0)):
        e = convert.empty(schema)
        w.add(convert.Chunk(e.batch, e.ts, ([0], [wm])))
        assert sum(t.num_rows for t in w.held) == held, wm


def _batch_reference(m: Any, rows: list[Any]) -> list[Any]:
    op = create_operator(m.spec, TaskInfo("w", 0, 1, 128, True), (m.key,))
    out: list[Any] = []
    op.out = lambda v, ts: out.append((tuple(v), ts))
    op.open()
    for r in rows:
        op.process(r, r[3])
    op.finish()
    return out


@settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
@given(rows=ROWS, cuts=st.lists(st.integers(0, 100), max_size=4),
       gap=st.sampled_from(["1s", "3s", "7s"]), keyed=st.booleans(),
       aggs=st.lists(st.sampled_from(AGGS), min_size=1, max_size=3, unique=True))
def test_batch_sessions_equal_runtime_operator(rows: list[Any], cuts: list[int], gap: str,
                                                keyed: bool, aggs: list[str]) -> None:
    """BATCH: order-free aggregates by one sort, the rest by the merging rules."""
    m = _stream_member(_text(gap, "", aggs, False, keyed), "session", mode="batch")
    schema = convert.arrow_schema(m.in_schema)
    w = session_window(m.spec, m.key, m.in_schema, convert.arrow_schema(m.out_schema), False)
    ordered = {"sum(x) as sx", "avg(x) as ax", "first(x) as fx", "last(n) as ln",
               "sum(x * 3.0) as s3"}
    assert isinstance(w, SessionWindow) == (not ordered & set(aggs))
    for c in _chunks(rows, [0], cuts, schema):
        assert w.add(convert.Chunk(c.batch, c.ts)) is None
    fired = w.fire()
    actual = [] if fired is None else list(zip(map(tuple, fired.rows()), fired.timestamps()))
    assert _bits(actual) == _bits(_batch_reference(m, rows))


@pytest.mark.spark
@pytest.mark.parametrize("mode", ["streaming", "batch"])
def test_session_job_with_lateness_equals_reference(spark: Any, tmp_path: Path,
                                                    mode: str) -> None:
    lines = ["k,x,ts"] + [f"u{i % 7},{(i % 9) / 10 + (1e15 if i % 13 == 0 else 0)},"
                          f"{(i * 7919) % 40_000}" for i in range(600)]
    (tmp_path / "d.csv").write_text("\n".join(lines) + "\n")
    text = (f"set parallelism = 2;\nset flowc.watermarks = 'per-record';\n"
            f"source s (k string, x double, ts timestamp) from csv '{tmp_path}/d.csv' "
            "watermark ts - 2s;\n"
            "let r = s | key by k | window session gap 1500ms allowed lateness 3s "
            "late into late_r | aggregate count(*) as c, sum(x) as sx, avg(x) as ax, "
            "first(x) as f, last(x) as l;\n"
            "let g = s | window session gap 300ms allowed lateness 1s "
            "| aggregate count(*) as c, sum(x) as sx;\n")

    def job(executor: str) -> Any:
        return collect_job(text, tmp_path, executor, mode,
                           sinks={"r": "r", "late_r": "late", "g": "g"})
    columnar = job("columnar")
    members = plan_members(columnar)
    assert isinstance(members, dict)
    assert [m.kind for ms in members.values() for m in ms].count("session") == 2
    actual, expected = run_job_graph(columnar), run_reference(job("row"))
    assert expected.collected["r"] and expected.collected["g"]
    if mode == "streaming":
        assert expected.collected["late"]
    assert _bits(actual.collected) == _bits(expected.collected)


def test_unbounded_jobs_vectorise_sessions_too(tmp_path: Path) -> None:
    """The unbounded executor converts a vectorised session's state to and from the row
    operator's snapshot (``streaming/session_state.py``): sessions are vectorised in
    bounded and unbounded jobs alike."""
    def kinds(monitor: str) -> list[str]:
        script = compile_source(
            f"source s (k string, x double, ts timestamp) from csv '{tmp_path}/' {monitor}"
            "watermark ts - 1s;\n"
            "s | key by k | window session gap 1s allowed lateness 2s "
            "| aggregate count(*) as c, sum(x) as sx | print;\n", str(tmp_path / "j.flow"),
            options={"mode": "streaming"})
        members = plan_members(script.env.get_job_graph())
        assert isinstance(members, dict), members
        return [m.kind for ms in members.values() for m in ms]
    assert "session" in kinds("")
    assert "session" in kinds("monitor every 1s ") and "row_op" not in kinds("monitor every 1s ")
