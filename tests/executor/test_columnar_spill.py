"""Spilled window state (``executor/arrow/spill.py``) gives exactly the unspilled result:
a tiny ``flowc.executor.state-memory`` forces a spill at every compaction, tiny IPC batches
force many merge ranges; the directory is gone afterwards. End to end on Spark too."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from tests.executor.test_columnar_windows import ROWS, _window_member

from flowc.errors import ConfigError
from flowc.executor import run_job_graph, run_reference
from flowc.executor.arrow import convert, spill, windows
from flowc.operators import CollectSink
from flowc.parser import compile_source


@settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
@given(rows=ROWS, window=st.sampled_from(["tumbling 5s", "sliding 10s every 5s"]),
       aggs=st.lists(st.sampled_from(["count(*) as c", "count(distinct n) as dn",
                                      "count(distinct k) as dk", "sum(x) as sx",
                                      "min(n) as mn", "max(k) as mk", "avg(n) as an",
                                      "first(x) as fx", "last(n) as ln", "count(x) as cx"]),
                     min_size=1, max_size=4, unique=True),
       chunk=st.integers(1, 7), compact=st.integers(1, 9), batch_rows=st.integers(1, 5),
       limit=st.sampled_from([1, 300, 1 << 30]))
# Folding the last buffered rows at end of input spills (state past the limit only then).
@example(rows=[("a", None, None, 0), ("a", None, None, 5000), ("b", 0, None, 0),
               ("\u00fc", None, None, 0)], window="tumbling 5s",
         aggs=["count(*) as c", "count(distinct n) as dn", "count(distinct k) as dk",
               "sum(x) as sx"], chunk=1, compact=5, batch_rows=1, limit=300)
def test_spilled_state_equals_unspilled(rows: list[Any], window: str, aggs: list[str],
                                        chunk: int, compact: int, batch_rows: int,
                                        limit: int) -> None:
    m = _window_member(window, ", ".join(aggs))
    schema = convert.arrow_schema(m.in_schema)
    out = convert.arrow_schema(m.out_schema)

    def feed(w: Any) -> None:
        for i in range(0, len(rows), chunk):
            part = rows[i:i + chunk]
            w.add(convert.from_rows(part, [r[3] for r in part], schema))

    old = windows.COMPACT_ROWS, spill.BATCH_ROWS
    windows.COMPACT_ROWS, spill.BATCH_ROWS = compact, batch_rows
    try:
        plain = windows.BatchWindow(m.spec, m.key, m.in_schema, out)
        feed(plain)
        fired = plain.fire()
        expected = [] if fired is None else list(zip(fired.rows(), fired.timestamps()))
        w = spill.SpillingWindow(m.spec, m.key, m.in_schema, out, limit=limit)
        feed(w)
        directory = w.directory
        actual = [r for c in w.fired() for r in zip(c.rows(), c.timestamps())]
    finally:
        windows.COMPACT_ROWS, spill.BATCH_ROWS = old
    assert actual == expected
    if limit == 1 and len(rows) > compact:
        assert w.runs, "a 1-byte limit spills"
    assert directory is None or not os.path.exists(directory)


def test_state_memory_option() -> None:
    assert spill.state_memory({}) == spill.DEFAULT
    assert spill.state_memory({spill.OPTION: "'64m'"}) == 64 << 20
    assert spill.state_memory({spill.OPTION: "2g"}) == 2 << 30
    assert spill.state_memory({spill.OPTION: "4096"}) == 4096
    assert spill.state_memory({spill.SCRIPT_OPTION: "1k"}) == 1024
    for bad in ("lots", "0", "12q", "-1m"):
        with pytest.raises(ConfigError, match="flowc.executor.state-memory must be a "
                                              "positive size"):
            spill.state_memory({spill.OPTION: bad})
    with pytest.raises(ConfigError, match=r"flowc.executor.state_memory must be a positive "
                                          r"size such as 256m, 2g or 65536 \(bytes\), not "
                                          r"'lots'"):
        spill.state_memory({spill.SCRIPT_OPTION: "lots"})


@pytest.mark.spark
def test_spilling_job_equals_reference(spark: Any, tmp_path: Path) -> None:
    lines = ["k,n,ts"] + [f"u{i % 37},{i % 11},{i * 97 % 60_000}" for i in range(3000)]
    (tmp_path / "d.csv").write_text("\n".join(lines) + "\n")
    text = (f"set parallelism = 2;\nset flowc.executor.state_memory = '1k';\n"
            f"source s (k string, n int, ts timestamp) from csv '{tmp_path}/d.csv' "
            "watermark ts - 1s;\n"
            "let result = s | key by k | window sliding 4s every 1s\n"
            "  | aggregate count(*) as c, count(distinct n) as dn, first(n) as f;\n")

    def job(executor: str) -> Any:
        script = compile_source(text, str(tmp_path / "job.flow"),
                                options={"mode": "batch", "flowc.executor": executor})
        script.streams["result"].stream.sink_to(CollectSink("result"))
        return script.env.get_job_graph()
    actual = run_job_graph(job("columnar"))  # every chunk folded and spilled
    assert actual.collected["result"] == run_reference(job("row")).collected["result"]


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(items=st.lists(st.tuples(st.integers(0, 3), st.binary(min_size=0, max_size=40)),
                      max_size=30),
       limit=st.sampled_from([1, 50, 1 << 30]))
def test_received_partition_spills_and_keeps_channel_order(items: list[Any],
                                                           limit: int) -> None:
    """A consumer's received items come back in (channel, sequence) order whether their
    bytes stayed in memory or went to the spill file, and the file is removed."""
    sent = [(cid, seq, data, [seq], [cid]) for seq, (cid, data) in enumerate(items)]
    inbox = spill.Received(limit)
    for item in reversed(sent):  # arrival order is not the channel order
        inbox.add(item)
    directory = inbox.directory
    total = sum(len(d) for _, d in items)
    if total > limit:
        assert inbox.spilled_bytes > 0 and directory is not None
    assert list(inbox.ordered()) == sorted(sent, key=lambda x: (x[0], x[1]))
    assert directory is None or not os.path.exists(directory)


@pytest.mark.spark
def test_spilled_received_partitions_equal_reference(spark: Any, tmp_path: Path) -> None:
    """A 1 kB state memory spills every received partition of the shuffles (and the
    window state): the job's result is the reference executor's."""
    lines = ["k,n,ts"] + [f"u{i % 13},{i % 7},{i * 31 % 20_000}" for i in range(2000)]
    (tmp_path / "d.csv").write_text("\n".join(lines) + "\n")
    text = (f"set parallelism = 2;\nset flowc.executor.state_memory = '1k';\n"
            f"source s (k string, n int, ts timestamp) from csv '{tmp_path}/d.csv' "
            "watermark ts - 1s;\n"
            "let result = s | key by k | window tumbling 2s | aggregate count(*) as c, "
            "sum(n) as sn | key by c | window tumbling 4s | aggregate count(*) as cc;\n")

    def job(executor: str) -> Any:
        script = compile_source(text, str(tmp_path / "job.flow"),
                                options={"mode": "batch", "flowc.executor": executor})
        script.streams["result"].stream.sink_to(CollectSink("result"))
        return script.env.get_job_graph()
    actual = run_job_graph(job("columnar"))
    assert actual.collected["result"] == run_reference(job("row")).collected["result"]
