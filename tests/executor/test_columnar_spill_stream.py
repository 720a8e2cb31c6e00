"""A STREAMING consumer's received partition is bounded (``spill.Received.channels`` and
``merge.merge_chunks``): its channels, spilled past ``flowc.executor.state-memory``, are
merged a range of element positions at a time with exactly the one-shot merge's records,
watermarks in force and watermark rises, and memory holds a range, not the partition."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from flowc.executor import run_job_graph, run_reference
from flowc.executor.arrow import convert, merge, spill
from flowc.operators import CollectSink
from flowc.parser import compile_source

PAYLOADS = 120
SCHEMA = pa.schema([pa.field("_0", pa.int64())])


@st.composite
def _channels(draw: Any) -> list[list[tuple[int, list[int], list[int]]]]:
    """Channels of payloads (records, watermark positions, watermark values)."""
    out = []
    for _ in range(draw(st.integers(0, 4))):
        payloads = []
        for _ in range(draw(st.integers(0, 5))):
            n = draw(st.integers(0, 6))
            positions = sorted(draw(st.lists(st.integers(0, n), max_size=3)))
            values = [draw(st.integers(-5, 30)) for _ in positions]
            payloads.append((n, positions, values))
        out.append(payloads)
    return out


def _encoded(channels: list[Any]) -> list[list[tuple[bytes, list[int], list[int]]]]:
    """Each payload's records numbered uniquely (value = timestamp = a running number)."""
    out, k = [], 0
    for payloads in channels:
        out.append([])
        for n, positions, values in payloads:
            vals = list(range(k, k + n))
            k += n
            chunk = convert.Chunk(pa.record_batch([pa.array(vals, pa.int64())],
                                                  schema=SCHEMA), pa.array(vals, pa.int64()))
            out[-1].append((convert.to_ipc(chunk), positions, values))
    return out


def _flat(chunks: list[convert.Chunk]) -> tuple[list[Any], list[Any], list[Any]]:
    """Records, watermark in force per record, and the rises as (records before, value)
    over the whole sequence of chunks."""
    rows: list[Any] = []
    seen: list[Any] = []
    marks: list[Any] = []
    for c in chunks:
        if c.marks is not None:
            marks.extend((len(rows) + int(p), int(v)) for p, v in zip(*c.marks))
        rows.extend(c.batch.column(0).to_pylist())
        seen.extend(c.wm_at.to_pylist())
    return rows, seen, marks


@settings(max_examples=200, deadline=None, suppress_health_check=list(HealthCheck))
@given(channels=_channels(), span=st.integers(1, 9), limit=st.sampled_from([1, 200, 1 << 30]))
def test_ranged_merge_equals_one_shot_merge(channels: list[Any], span: int,
                                            limit: int) -> None:
    encoded = _encoded(channels)
    whole = merge.merge_streaming(encoded, SCHEMA)
    inbox = spill.Received(limit)
    cids = list(range(len(encoded)))
    items = [(c, seq, data, pos, val) for c, payloads in enumerate(encoded)
             for seq, (data, pos, val) in enumerate(payloads)]
    for item in reversed(items):  # arrival order is not the channel order
        inbox.add(item)
    directory = inbox.directory
    try:
        ranged = list(merge.merge_chunks(inbox.channels(cids), SCHEMA, span=span))
    finally:
        inbox.close()
    assert _flat(ranged) == _flat([whole])
    if limit == 1 and any(n for payloads in channels for n, _, _ in payloads):
        assert inbox.spilled_bytes > 0
    assert directory is None or not os.path.exists(directory)


def test_ranged_merge_holds_a_range() -> None:
    """4 channels of 120 payloads of 2000 records (960k records, ~15 MB as IPC): with a
    1-byte state memory and a 1000-position span the merge never holds more than a range
    plus a payload per channel (Arrow bytes sampled per chunk) and no Python bytes of the
    received payloads (tracemalloc)."""
    import tracemalloc

    channels = [[(2000, [0, 1000], [i * 10, i * 10 + 5]) for i in range(PAYLOADS)]
                for _ in range(4)]
    encoded = _encoded(channels)
    total = sum(len(d) for payloads in encoded for d, _, _ in payloads)
    inbox = spill.Received(1)
    for c, payloads in enumerate(encoded):
        for seq, (data, pos, val) in enumerate(payloads):
            inbox.add((c, seq, data, pos, val))
    del encoded
    assert inbox.spilled_bytes == total
    base = pa.total_allocated_bytes()
    peak_arrow = 0
    rows = 0
    tracemalloc.start()
    try:
        for chunk in merge.merge_chunks(inbox.channels([0, 1, 2, 3]), SCHEMA, span=1000):
            assert chunk.num_rows <= 4 * 1000
            rows += chunk.num_rows
            peak_arrow = max(peak_arrow, pa.total_allocated_bytes() - base)
        _, peak_python = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
        inbox.close()
    assert rows == 4 * PAYLOADS * 2000
    assert peak_arrow < total / 8, (peak_arrow, total)
    assert peak_python < total / 8, (peak_python, total)


def _job(text: str, tmp_path: Path, executor: str, mode: str) -> Any:
    script = compile_source(text, str(tmp_path / "job.flow"),
                            options={"mode": mode, "flowc.executor": executor})
    script.streams["result"].stream.sink_to(CollectSink("result"))
    return script.env.get_job_graph()


@pytest.mark.spark
def test_spilled_streaming_partitions_equal_reference(spark: Any, tmp_path: Path) -> None:
    """STREAMING with a 1 kB state memory: every received partition of the two shuffles
    is spilled and merged back in channel order; the result is the reference's, late
    drops included."""
    lines = ["k,n,ts"] + [f"u{i % 13},{i % 7},{i * 31 % 20_000}" for i in range(2000)]
    (tmp_path / "d.csv").write_text("\n".join(lines) + "\n")
    text = (f"set parallelism = 2;\nset flowc.executor.state_memory = '1k';\n"
            f"source s (k string, n int, ts timestamp) from csv '{tmp_path}/d.csv' "
            "watermark ts - 1s;\n"
            "let result = s | key by k | window tumbling 2s | aggregate count(*) as c, "
            "sum(n) as sn | key by c | window tumbling 4s | aggregate count(*) as cc;\n")
    actual = run_job_graph(_job(text, tmp_path, "columnar", "streaming"))
    expected = run_reference(_job(text, tmp_path, "row", "streaming"))
    assert actual.collected["result"] == expected.collected["result"]
    assert actual.late_records_dropped == expected.late_records_dropped
