"""Bounded STREAMING window and interval joins (``joinspill.streaming_parts`` feeding a
``SpillingJoin``): the subtask's channels are merged a range of element positions at a
time, and the join's buffered input spills past a tiny ``flowc.executor.state-memory`` -
with exactly the in-memory join's output (``joins.gather`` + ``run``: all input at once),
order, timestamps and late-record count included; memory holds a range, not the input.
End to end on Spark == the reference executor."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.executor.test_columnar_joins_ops import OUT, SIDE, Concat, Rows

from flowc.api.connected import CoGroupWindowFunction
from flowc.executor import run_job_graph, run_reference
from flowc.executor.arrow import convert, joins, spill
from flowc.executor.arrow.joinspill import SpillingJoin, streaming_parts
from flowc.operators import CodeFn, CollectSink, IntervalJoinOp, WindowOp
from flowc.parser import compile_source
from flowc.vector import VJoinRows
from flowc.windowing import SlidingEventTimeWindows, TumblingEventTimeWindows

SCHEMA = convert.arrow_schema(SIDE)
LONG_MAX = (1 << 63) - 1

# One channel: its side and a list of payloads, each records (key, ts) and watermarks
# (position among the payload's records, value).
payload = st.tuples(
    st.lists(st.tuples(st.sampled_from(["a", "b", None, "c"]), st.integers(0, 30)),
             max_size=8),
    st.lists(st.tuples(st.integers(0, 8), st.integers(-2, 32)), max_size=2))
channel = st.tuples(st.integers(0, 1), st.lists(payload, max_size=5))


def _join(kind: str, lower: int, width: int, python: bool) -> Any:
    if kind == "interval":
        spec: Any = IntervalJoinOp(lower, lower + width, Rows() if python else Concat())
        plan = joins.JoinPlan("interval_join", spec, (0, 1), (SIDE, SIDE), ([0], [0]),
                              not python, spec.fn)
    else:
        assigner = SlidingEventTimeWindows(9, 3) if kind == "sliding" \
            else TumblingEventTimeWindows(5)
        fn: Any = (lambda a, b: (a[0], a[1] * 10, f"{b[0]}!", b[1])) if python else \
            CodeFn(lambda a, b: a + b, "a + b", ("a", "b"), vector=VJoinRows())
        spec = WindowOp(assigner, window_fn=CoGroupWindowFunction(fn))
        plan = joins.JoinPlan("window_join", spec, (0, 1), (SIDE, SIDE), ([0], [0]),
                              not python)
    return joins.compile_join(plan, convert.arrow_schema(OUT), True)


def _payloads(chans: list[Any]) -> list[tuple[int, list[tuple[bytes, Any, Any]]]]:
    """Each channel's payloads as the shuffle carries them; every channel ends with
    Long.MAX_VALUE (its producer's end of input). Records are numbered to tell apart."""
    out = []
    n = 0
    for side, pays in chans:
        items = []
        for recs, marks in pays:
            c = convert.from_rows([(k, n + i) for i, (k, _) in enumerate(recs)],
                                  [t for _, t in recs], SCHEMA)
            n += len(recs)
            marks = sorted((min(p, len(recs)), v) for p, v in marks)
            items.append((convert.to_ipc(c), [p for p, _ in marks], [v for _, v in marks]))
        items.append((convert.to_ipc(convert.empty(SCHEMA)), [0], [LONG_MAX]))
        out.append((side, items))
    return out


def _rows(chunks: Any) -> list[Any]:
    return [r for c in chunks if c is not None for r in zip(c.rows(), c.timestamps())]


@settings(max_examples=250, deadline=None, suppress_health_check=list(HealthCheck))
@given(chans=st.lists(channel, min_size=1, max_size=4),
       kind=st.sampled_from(["tumbling", "sliding", "interval"]), lower=st.integers(-6, 3),
       width=st.integers(0, 6), python=st.booleans(), span=st.sampled_from([1, 3, 1 << 16]),
       limit=st.sampled_from([1, 300, 1 << 30]), batch_rows=st.integers(1, 4))
def test_spilled_streaming_join_equals_in_memory(chans: list[Any], kind: str, lower: int,
                                                 width: int, python: bool, span: int,
                                                 limit: int, batch_rows: int) -> None:
    if {s for s, _ in chans} != {0, 1}:
        chans = chans + [(1 - chans[0][0], [])]
    channels = _payloads(chans)
    whole = _join(kind, lower, width, python)
    expected = _rows([whole.run(joins.gather(
        [(s, SCHEMA, items) for s, items in channels], True))])
    join = _join(kind, lower, width, python)
    sj = SpillingJoin(join, (SCHEMA, SCHEMA), limit)
    old = spill.BATCH_ROWS
    spill.BATCH_ROWS = batch_rows
    try:
        for part in streaming_parts([(s, SCHEMA, iter(items)) for s, items in channels],
                                    span):
            sj.add(part)
        actual = _rows(sj.fired())
    finally:
        spill.BATCH_ROWS = old
    assert actual == expected
    assert join.dropped == whole.dropped
    if limit == 1 and sum(len(r) for _, ps in chans for r, _ in ps) > 2:
        assert sj.spilled_bytes > 0
    assert sj.directory is None


@pytest.mark.parametrize("kind", ["tumbling", "interval"])
def test_spilled_streaming_join_holds_a_range(kind: str) -> None:
    """200k records of 2000 keys in 4 channels (two a side), a watermark every 1000
    records, 5% of them late, merged in ranges of 4096 positions through a 256 kB state
    memory: the Arrow bytes held while feeding and firing stay a fraction of the input,
    and every pair of the in-memory join comes out."""
    n, keys = 200_000, 2000
    rng = np.random.default_rng(3)
    names = np.array([f"k{i}" for i in range(keys)], dtype=object)
    channels = []
    for c in range(4):
        ts = np.sort(rng.integers(0, 200_000, n // 4)) - 3000 * (rng.random(n // 4) < 0.05)
        key = names[rng.integers(0, keys, n // 4)]
        items = []
        for i in range(0, n // 4, 1000):
            batch = pa.record_batch([pa.array(key[i:i + 1000], pa.string()),
                                     pa.array(np.arange(i, i + 1000) + c * n, pa.int32())],
                                    schema=SCHEMA)
            chunk = convert.Chunk(batch, pa.array(ts[i:i + 1000], pa.int64()))
            items.append((convert.to_ipc(chunk), [1000], [int(ts[i:i + 1000].max()) - 500]))
        items.append((convert.to_ipc(convert.empty(SCHEMA)), [0], [LONG_MAX]))
        channels.append((c % 2, items))
    total = sum(len(d) for _, items in channels for d, _, _ in items)
    whole = _join(kind, -1000, 3000, False)
    if kind == "tumbling":
        whole.assigner = TumblingEventTimeWindows(5000)
    expected = whole.run(joins.gather([(s, SCHEMA, items) for s, items in channels], True))
    assert expected is not None
    expected_rows, expected_dropped = expected.num_rows, whole.dropped
    del expected
    join = _join(kind, -1000, 3000, False)
    if kind == "tumbling":
        join.assigner = TumblingEventTimeWindows(5000)
    sj = SpillingJoin(join, (SCHEMA, SCHEMA), 256 << 10)
    base = pa.total_allocated_bytes()
    peak = 0
    for part in streaming_parts([(s, SCHEMA, iter(items)) for s, items in channels], 4096):
        sj.add(part)
        del part
        peak = max(peak, pa.total_allocated_bytes() - base)
    directory = sj.directory
    assert sj.runs and directory is not None and os.path.isdir(directory)
    pairs = 0
    for out in sj.fired():
        pairs += out.num_rows
        peak = max(peak, pa.total_allocated_bytes() - base)
        del out
    assert pairs == expected_rows > n / 4
    assert join.dropped == expected_dropped > 0
    assert peak < total / 4, (peak, total)
    assert not os.path.exists(directory)


def _job(text: str, tmp_path: Path, executor: str) -> Any:
    script = compile_source(text, str(tmp_path / "job.flow"),
                            options={"mode": "streaming", "flowc.executor": executor})
    script.streams["result"].stream.sink_to(CollectSink("result"))
    return script.env.get_job_graph()


@pytest.mark.spark
@pytest.mark.parametrize("join", ["join b on k window sliding 4s every 2s",
                                  "interval join b on a.k = b.k between -1s and 2s"])
def test_spilled_streaming_join_job_equals_reference(spark: Any, tmp_path: Path,
                                                     join: str) -> None:
    """A 1 kB state memory: every STREAMING join subtask spills (late records among the
    input); the result is the reference executor's, list for list."""
    for name, mul in (("a", 31), ("b", 17)):
        lines = ["k,n,ts"] + [f"u{i % 11},{i % 7},{i * mul % 16_000}" for i in range(800)]
        (tmp_path / f"{name}.csv").write_text("\n".join(lines) + "\n")
    text = (f"set parallelism = 2;\nset flowc.executor.state_memory = '1k';\n"
            "set flowc.watermarks = 'per-record';\n"
            f"source a (k string, n int, ts timestamp) from csv '{tmp_path}/a.csv' "
            "watermark ts - 1s;\n"
            f"source b (k string, n int, ts timestamp) from csv '{tmp_path}/b.csv' "
            "watermark ts - 1s;\n"
            f"let result = a | {join} | map k, n, b_n, ts;\n")
    actual = run_job_graph(_job(text, tmp_path, "columnar"))
    expected = run_reference(_job(text, tmp_path, "row"))
    assert len(expected.collected["result"]) > 100
    assert actual.collected["result"] == expected.collected["result"]
