"""Bounded STREAMING windows with allowed lateness (``latespill.LateSpillingStreamWindow``):
past a tiny ``flowc.executor.state-memory`` the rows of windows not fired yet spill as runs
sorted by window end and come back when the watermark reaches them - the same on-time
results, late firings, late side output and watermarks as the in-memory ``StreamWindow``
(double sums bit for bit, first / last, count distinct, nulls), held bytes bounded. End to
end on Spark == the reference executor."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.executor.test_columnar_spill_stream_windows import AGGS, ROWS, _bits, _feed
from tests.executor.test_columnar_windows import MARKS, _chunks, _stream_member

from flowc.executor import run_job_graph, run_reference
from flowc.executor.arrow import convert, spill
from flowc.executor.arrow.chain import ChainProgram
from flowc.executor.arrow.latespill import LateSpillingStreamWindow
from flowc.executor.arrow.stream_windows import StreamWindow
from flowc.operators import CollectSink
from flowc.parser import compile_source


def _member(window: str, lateness: str, aggs: list[str]) -> Any:
    return _stream_member(
        "source s (k string, n int, x double, ts timestamp) from csv 'x.csv' "
        "watermark ts - 1s;\n"
        f"let r = s | key by k | window {window} allowed lateness {lateness} "
        f"late into late_r | aggregate {', '.join(aggs)};\n"
        "r | print; late_r | print;\n", "window")


@settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
@given(rows=ROWS, marks=MARKS, cuts=st.lists(st.integers(0, 100), max_size=6),
       window=st.sampled_from(["tumbling 5s", "sliding 10s every 5s", "tumbling 2s",
                               "cumulating 6s every 2s"]),
       lateness=st.sampled_from(["1s", "3s", "20s"]),
       aggs=st.lists(st.sampled_from(AGGS), min_size=1, max_size=4, unique=True),
       limit=st.sampled_from([1, 400, 1 << 30]), batch_rows=st.integers(1, 4))
def test_spilled_late_window_equals_in_memory(rows: list[Any], marks: list[int],
                                              cuts: list[int], window: str, lateness: str,
                                              aggs: list[str], limit: int,
                                              batch_rows: int) -> None:
    m = _member(window, lateness, aggs)
    schema = convert.arrow_schema(m.in_schema)
    out = convert.arrow_schema(m.out_schema)
    chunks = _chunks(rows, marks, cuts, schema)
    expected = _feed(StreamWindow(m.spec, m.key, m.in_schema, out), chunks, schema)
    old = spill.BATCH_ROWS
    spill.BATCH_ROWS = batch_rows  # tiny IPC batches: cursors read a run in many steps
    try:
        w = LateSpillingStreamWindow(m.spec, m.key, m.in_schema, out, limit=limit)
        final: list[Any] = []
        actual = _feed(w, chunks, schema, final)
        directory = w.state.directory
        assert bool(final) == bool(w.state.runs)
    finally:
        spill.BATCH_ROWS = old
    assert _bits(actual) == _bits(expected)
    assert directory is None or not os.path.exists(directory)


def test_late_window_spills_and_holds_the_limit() -> None:
    """Watermarks far behind the records (nothing fires until the end) and 3 s of
    lateness: in memory the rows grow with the input; spilled, the held bytes stay near
    the limit, and the output is the same (10,000 records in 100 chunks)."""
    m = _member("tumbling 1s", "3s", ["count(*) as c", "sum(x) as sx", "first(n) as fn"])
    schema = convert.arrow_schema(m.in_schema)
    out = convert.arrow_schema(m.out_schema)
    rows = [(f"k{i % 50}", i % 7, i / 10, i * 1000) for i in range(10_000)]
    chunks = _chunks(rows, [-5_000], list(range(100, 10_000, 100)), schema)
    plain = StreamWindow(m.spec, m.key, m.in_schema, out)
    expected = _feed(plain, chunks, schema)
    limit = 64 << 10
    w = LateSpillingStreamWindow(m.spec, m.key, m.in_schema, out, limit=limit)
    for c in chunks[:-1]:
        w.add(c)
    mem = StreamWindow(m.spec, m.key, m.in_schema, out)
    for c in chunks[:-1]:
        mem.add(c)
    grown = sum(t.nbytes for t in mem.state.rows)
    assert len(w.state.runs) >= 5 and w.state.spilled_bytes > limit
    assert w.state.peak <= limit + chunks[0].batch.nbytes * 2
    assert grown > 4 * limit
    w2 = LateSpillingStreamWindow(m.spec, m.key, m.in_schema, out, limit=limit)
    final: list[Any] = []
    assert _bits(_feed(w2, chunks, schema, final)) == _bits(expected)
    assert len(final) > 2  # the final watermark fired range by range


def test_bounded_chain_spills_late_windows() -> None:
    """A ChainProgram given a state memory spills a window with allowed lateness; the
    unbounded executor's (no limit) keeps it in memory."""
    m = _member("tumbling 5s", "2s", ["count(*) as c"])
    kinds = []
    for limit in (None, 1024):
        p = ChainProgram([m], 0, 1, 128, "t", lambda *_: None, True, limit)
        kinds.append(type(p.windows[m.nid]).__name__)
    assert kinds == ["StreamWindow", "LateSpillingStreamWindow"]


@pytest.mark.spark
def test_spilling_late_window_job_equals_reference(spark: Any, tmp_path: Path) -> None:
    """Out-of-order records (late ones among them), 2 s of lateness, a late side output
    and a 1 kB state memory on Spark: == the reference executor."""
    lines = ["k,n,x,ts"] + [f"u{i % 37},{i % 11},{(i % 13) / 10},{i * 97 % 60_000}"
                            for i in range(3000)]
    (tmp_path / "d.csv").write_text("\n".join(lines) + "\n")
    text = (f"set parallelism = 2;\nset flowc.executor.state_memory = '1k';\n"
            "set flowc.watermarks = 'per-record';\n"
            f"source s (k string, n int, x double, ts timestamp) from csv '{tmp_path}/d.csv' "
            "watermark ts - 5s;\n"
            "let result = s | key by k | window tumbling 4s allowed lateness 2s "
            "late into late_r\n"
            "  | aggregate count(*) as c, count(distinct n) as dn, first(n) as f, "
            "sum(x) as sx;\n"
            "let late = late_r | map k, n;\n")

    def job(executor: str) -> Any:
        script = compile_source(text, str(tmp_path / "job.flow"),
                                options={"mode": "streaming", "flowc.executor": executor})
        script.streams["result"].stream.sink_to(CollectSink("result"))
        script.streams["late"].stream.sink_to(CollectSink("late"))
        return script.env.get_job_graph()
    actual = run_job_graph(job("columnar")).collected
    expected = run_reference(job("row")).collected
    assert expected["result"] and expected["late"]
    assert _bits(actual["result"]) == _bits(expected["result"])
    assert actual["late"] == expected["late"]
