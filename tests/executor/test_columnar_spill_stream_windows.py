"""Bounded STREAMING window state (``spill.SpillingStreamWindow``): past a tiny
``flowc.executor.state-memory`` the folded state spills as runs sorted by window end and
each watermark rise fires the groups it reaches from every run's prefix and memory - the
same results, late records and watermarks as the in-memory ``StreamWindow`` (double sums
bit for bit, first / last, count distinct), with the held bytes bounded. End to end: a
STREAMING job over files with a small state memory on Spark == the reference executor."""

from __future__ import annotations

import math
import os
import struct
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.executor.test_columnar_windows import MARKS, _chunks, _run, _stream_member

from flowc.executor import run_job_graph, run_reference
from flowc.executor.arrow import convert, spill
from flowc.executor.arrow.chain import ChainProgram
from flowc.executor.arrow.stream_windows import StreamWindow
from flowc.executor.runtime.core import LONG_MAX
from flowc.operators import CollectSink
from flowc.parser import compile_source

ROWS = st.lists(st.tuples(st.sampled_from(["a", "b", None, "ü"]),
                          st.one_of(st.none(), st.integers(-5, 5)),
                          st.one_of(st.none(), st.sampled_from(
                              [0.1, 0.2, 0.3, 1e16, -1e16, 1.0, -0.0, math.inf])),
                          st.integers(0, 30_000)), min_size=1, max_size=80)
AGGS = ["count(*) as c", "count(distinct n) as dn", "sum(x) as sx", "avg(x) as ax",
        "first(x) as fx", "last(n) as ln", "min(n) as mn", "max(k) as mk", "sum(n) as sn"]


def _bits(v: Any) -> Any:
    if isinstance(v, float):  # bit for bit, every NaN as one (``doubleToLongBits``)
        return struct.pack(">d", math.nan if math.isnan(v) else v)
    if isinstance(v, (tuple, list)):
        return tuple(_bits(x) for x in v)
    return v


def _member(window: str, aggs: list[str]) -> Any:
    return _stream_member(
        "source s (k string, n int, x double, ts timestamp) from csv 'x.csv' "
        "watermark ts - 1s;\n"
        f"let r = s | key by k | window {window} late into late_r "
        f"| aggregate {', '.join(aggs)};\n"
        "r | print; late_r | print;\n", "window")


def _feed(w: Any, chunks: list[Any], schema: Any,
          final_chunks: list[Any] | None = None) -> tuple[list[Any], list[Any]]:
    """Everything ``w`` outputs for ``chunks`` and the final watermark, and its late
    records; with ``final_chunks``, also (and into it) what ``w.fired()`` gives."""
    late: list[Any] = []

    def step(c: Any) -> Any:
        result = w.add(c)
        late.extend(_run(lambda x: x, [w.late]))
        return result
    end = convert.empty(schema)
    final = convert.Chunk(end.batch, end.ts, ([0], [LONG_MAX]))
    out = _run(step, [*chunks, final])
    if final_chunks is not None:  # a spilled window fires the final watermark at the end
        for c in w.fired():
            final_chunks.append(c)
            out += _run(lambda x: x, [c])
            late.extend(_run(lambda x: x, [w.late]))
            w.late = None
    return out, late


@settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
@given(rows=ROWS, marks=MARKS, cuts=st.lists(st.integers(0, 100), max_size=6),
       window=st.sampled_from(["tumbling 5s", "sliding 10s every 5s", "tumbling 2s"]),
       aggs=st.lists(st.sampled_from(AGGS), min_size=1, max_size=4, unique=True),
       limit=st.sampled_from([1, 400, 1 << 30]), batch_rows=st.integers(1, 4))
def test_spilled_streaming_window_equals_in_memory(rows: list[Any], marks: list[int],
                                                   cuts: list[int], window: str,
                                                   aggs: list[str], limit: int,
                                                   batch_rows: int) -> None:
    m = _member(window, aggs)
    schema = convert.arrow_schema(m.in_schema)
    out = convert.arrow_schema(m.out_schema)
    chunks = _chunks(rows, marks, cuts, schema)
    expected = _feed(StreamWindow(m.spec, m.key, m.in_schema, out), chunks, schema)
    old = spill.BATCH_ROWS
    spill.BATCH_ROWS = batch_rows  # tiny IPC batches: cursors read a run in many steps
    try:
        w = spill.SpillingStreamWindow(m.spec, m.key, m.in_schema, out, limit=limit)
        final: list[Any] = []
        actual = _feed(w, chunks, schema, final)
        directory = w.state.directory
        # Spilled: the final watermark fires at the end, range by range, then goes on.
        assert bool(final) == bool(w.state.runs)
    finally:
        spill.BATCH_ROWS = old
    assert _bits(actual) == _bits(expected)
    assert directory is None or not os.path.exists(directory)


def test_streaming_window_spills_and_holds_the_limit() -> None:
    """Without a watermark rise nothing fires until the end: in memory the state grows
    with the input; spilled, the held bytes stay near the limit, and the output is the
    same (10,000 one-record windows cut into 100 chunks)."""
    m = _member("tumbling 1s", ["count(*) as c", "sum(x) as sx", "first(n) as fn"])
    schema = convert.arrow_schema(m.in_schema)
    out = convert.arrow_schema(m.out_schema)
    rows = [(f"k{i % 50}", i % 7, i / 10, i * 1000) for i in range(10_000)]
    chunks = _chunks(rows, [-5_000], list(range(100, 10_000, 100)), schema)
    plain = StreamWindow(m.spec, m.key, m.in_schema, out)
    expected = _feed(plain, chunks[:-1], schema)
    grown = plain.state.partials[0].nbytes if plain.state.partials else 0
    limit = 64 << 10
    w = spill.SpillingStreamWindow(m.spec, m.key, m.in_schema, out, limit=limit)
    held = []
    for c in chunks[:-1]:
        w.add(c)
        held.append(w.state.state_bytes() + sum(t.nbytes for t in w.state.rows))
    assert len(w.state.runs) >= 5 and w.state.spilled_bytes > limit
    assert max(held) <= limit + chunks[0].batch.nbytes * 2
    assert w.state.peak <= limit + chunks[0].batch.nbytes * 2
    w2 = spill.SpillingStreamWindow(m.spec, m.key, m.in_schema, out, limit=limit)
    assert _bits(_feed(w2, chunks[:-1], schema, [])) == _bits(expected)
    # The in-memory window held every group to the end (its partials only grow).
    assert grown == 0 or grown > limit


def test_unbounded_executor_keeps_streaming_windows_in_memory() -> None:
    """Only a ChainProgram given a state memory spills STREAMING windows (the unbounded
    executor snapshots window state from memory)."""
    m = _member("tumbling 5s", ["count(*) as c"])
    kinds = []
    for limit in (None, 1024):
        p = ChainProgram([m], 0, 1, 128, "t", lambda *_: None, True, limit)
        kinds.append(type(p.windows[m.nid]).__name__)
    assert kinds == ["StreamWindow", "SpillingStreamWindow"]


@pytest.mark.spark
def test_spilling_streaming_job_equals_reference(spark: Any, tmp_path: Path) -> None:
    lines = ["k,n,x,ts"] + [f"u{i % 37},{i % 11},{(i % 13) / 10},{i * 97 % 60_000}"
                            for i in range(3000)]
    (tmp_path / "d.csv").write_text("\n".join(lines) + "\n")
    text = (f"set parallelism = 2;\nset flowc.executor.state_memory = '1k';\n"
            f"source s (k string, n int, x double, ts timestamp) from csv '{tmp_path}/d.csv' "
            "watermark ts - 30s;\n"
            "let result = s | key by k | window sliding 4s every 1s\n"
            "  | aggregate count(*) as c, count(distinct n) as dn, first(n) as f, "
            "sum(x) as sx;\n")

    def job(executor: str) -> Any:
        script = compile_source(text, str(tmp_path / "job.flow"),
                                options={"mode": "streaming", "flowc.executor": executor})
        script.streams["result"].stream.sink_to(CollectSink("result"))
        return script.env.get_job_graph()
    actual = run_job_graph(job("columnar"))
    expected = run_reference(job("row")).collected["result"]
    assert expected and _bits(actual.collected["result"]) == _bits(expected)
