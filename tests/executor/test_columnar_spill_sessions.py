"""Bounded BATCH session windows (``sessionspill.SpillingSessionWindow``): past a tiny
``flowc.executor.state-memory`` the records spill as runs sorted by a hash of their key,
each range of keys' sessions is computed as in memory and the results are merged back in
(end, registration) order - exactly ``SessionWindow``'s output, on random chunked inputs
with null keys and values, keyless and keyed; memory bounded; on Spark == the reference
executor."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.executor.test_columnar_windows import _stream_member

from flowc.executor import run_job_graph, run_reference
from flowc.executor.arrow import convert, spill
from flowc.executor.arrow.chain import ChainProgram
from flowc.executor.arrow.sessions import SessionWindow
from flowc.executor.arrow.sessionspill import SpillingSessionWindow
from flowc.operators import CollectSink
from flowc.parser import compile_source

ROWS = st.lists(st.tuples(st.sampled_from(["a", "b", None, "ü", "c"]),
                          st.one_of(st.none(), st.integers(-5, 5)),
                          st.integers(0, 40_000)), max_size=80)
AGGS = ["count(*) as c", "count(distinct n) as dn", "count(n) as cn", "min(n) as mn",
        "max(k) as mk", "sum(n) as sn", "avg(n) as an"]


def _member(gap: str, aggs: list[str], keyed: bool) -> Any:
    key = "key by k | " if keyed else ""
    return _stream_member(
        "source s (k string, n int, ts timestamp) from csv 'x.csv' watermark ts - 1s;\n"
        f"let r = s | {key}window session gap {gap} | aggregate {', '.join(aggs)};\n"
        "r | print;\n", "session", "batch")


def _chunks(rows: list[Any], cuts: list[int], schema: Any) -> list[Any]:
    bounds = sorted({0, len(rows), *(c % (len(rows) + 1) for c in cuts)})
    return [convert.from_rows(rows[lo:hi], [r[2] for r in rows[lo:hi]], schema)
            for lo, hi in zip(bounds, bounds[1:])]


def _out(chunks: Any) -> list[Any]:
    return [r for c in chunks if c is not None for r in zip(c.rows(), c.timestamps())]


@settings(max_examples=200, deadline=None, suppress_health_check=list(HealthCheck))
@given(rows=ROWS, cuts=st.lists(st.integers(0, 100), max_size=8),
       gap=st.sampled_from(["1s", "3s", "10s"]), keyed=st.booleans(),
       aggs=st.lists(st.sampled_from(AGGS), min_size=1, max_size=4, unique=True),
       limit=st.sampled_from([1, 300, 1 << 30]), batch_rows=st.integers(1, 4))
def test_spilled_sessions_equal_in_memory(rows: list[Any], cuts: list[int], gap: str,
                                          keyed: bool, aggs: list[str], limit: int,
                                          batch_rows: int) -> None:
    m = _member(gap, aggs, keyed)
    schema = convert.arrow_schema(m.in_schema)
    out = convert.arrow_schema(m.out_schema)
    chunks = _chunks(rows, cuts, schema)
    plain = SessionWindow(m.spec, m.key, m.in_schema, out)
    for c in chunks:
        plain.add(c)
    expected = _out([plain.fire()])
    old = spill.BATCH_ROWS
    spill.BATCH_ROWS = batch_rows
    try:
        w = SpillingSessionWindow(m.spec, m.key, m.in_schema, out, limit=limit)
        for c in chunks:
            w.add(c)
        directory = w.directory
        actual = _out(w.fired())
    finally:
        spill.BATCH_ROWS = old
    assert actual == expected
    if limit == 1 and len(rows) > 1:
        assert w.spilled_bytes > 0
    assert directory is None or not os.path.exists(directory)


def test_spilled_sessions_hold_a_range() -> None:
    """300k records of 3000 keys (~5 MB of Arrow) through a 256 kB state memory: the
    Arrow bytes held while adding and firing stay a fraction of the input, and the
    output is the in-memory window's."""
    m = _member("2s", ["count(*) as c", "count(distinct n) as dn", "max(n) as mx"], True)
    schema = convert.arrow_schema(m.in_schema)
    out = convert.arrow_schema(m.out_schema)
    n, keys = 300_000, 3000
    names = np.array([f"k{i}" for i in range(keys)], dtype=object)

    def chunks() -> Any:
        r = np.random.default_rng(11)
        for i in range(0, n, 5000):
            ts = np.sort(r.integers(i * 10, i * 10 + 50_000, 5000))
            yield convert.Chunk(pa.record_batch(
                [pa.array(names[r.integers(0, keys, 5000)], pa.string()),
                 pa.array(r.integers(0, 50, 5000), pa.int32()),
                 pa.array(ts, pa.timestamp("ms"))], schema=schema), pa.array(ts, pa.int64()))
    plain = SessionWindow(m.spec, m.key, m.in_schema, out)
    total = 0
    for c in chunks():
        total += c.batch.nbytes
        plain.add(c)
    expected = plain.fire()
    assert expected is not None
    expected_rows = _out([expected])
    del expected, plain
    w = SpillingSessionWindow(m.spec, m.key, m.in_schema, out, limit=256 << 10)
    base = pa.total_allocated_bytes()
    peak = 0
    for c in chunks():
        w.add(c)
        del c
        peak = max(peak, pa.total_allocated_bytes() - base)
    assert w.runs
    got: list[Any] = []
    for o in w.fired():
        got.extend(_out([o]))
        del o
        peak = max(peak, pa.total_allocated_bytes() - base)
    assert got == expected_rows
    assert peak < total / 4, (peak, total)


def test_batch_chain_spills_sessions() -> None:
    m = _member("2s", ["count(*) as c"], True)
    p = ChainProgram([m], 0, 1, 128, "t", lambda *_: None, False, 1024)
    assert type(p.windows[m.nid]).__name__ == "SpillingSessionWindow"


@pytest.mark.spark
def test_spilling_session_job_equals_reference(spark: Any, tmp_path: Path) -> None:
    lines = ["k,n,ts"] + [f"u{i % 37},{i % 11},{i * 389 % 100_000}" for i in range(3000)]
    (tmp_path / "d.csv").write_text("\n".join(lines) + "\n")
    text = (f"set parallelism = 2;\nset flowc.executor.state_memory = '1k';\n"
            f"source s (k string, n int, ts timestamp) from csv '{tmp_path}/d.csv' "
            "watermark ts - 30s;\n"
            "let result = s | key by k | window session gap 2s\n"
            "  | aggregate count(*) as c, count(distinct n) as dn, max(n) as mx;\n")

    def job(executor: str) -> Any:
        script = compile_source(text, str(tmp_path / "job.flow"),
                                options={"mode": "batch", "flowc.executor": executor})
        script.streams["result"].stream.sink_to(CollectSink("result"))
        return script.env.get_job_graph()
    actual = run_job_graph(job("columnar")).collected["result"]
    expected = run_reference(job("row")).collected["result"]
    assert len(expected) > 100 and actual == expected
