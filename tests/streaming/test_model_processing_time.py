"""The reference executor's micro-batch model with processing time and idleness
(``MicroBatches(files, timestamps)``: each batch's timestamp from the offsets log, as the
streaming executor runs it): with Hypothesis over random files, parallelism, processing-time
windows and idleness timeouts, a job streamed in micro-batches (in this process, each batch
at its timestamp: ``test_streaming_columnar.Driver``; row by row, and columnar where the
job allows, switching paths between batches) prints exactly what the model prints for the
same batches and timestamps - the same lines in the same order, the same late records."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from flowc.errors import UnsupportedError
from flowc.executor import run_reference
from flowc.executor.reference_batches import MicroBatches

from .columnar_paths import RowDriver, model_lines, printed

PROC = """set parallelism = {p};
source clicks (k string, v int, ts timestamp)
  from csv '{src}' monitor every 100ms
  watermark ts - 1s
  with (parallelism = {sp});
clicks | filter v < 90
  | key by k | window tumbling {size} on processing time
  | aggregate count(*) as n, sum(v) as s, max(ts) as hi
  | map k, n, s, hi
  | print 'proc';
clicks | key by k | window tumbling 2s | aggregate count(*) as n | print 'event';
"""
IDLE = """set parallelism = {p};
source clicks (k string, v int, ts timestamp)
  from csv '{src}' monitor every 100ms
  watermark ts - 500ms idle after {idle}ms
  with (parallelism = {sp});
clicks | key by k | window tumbling 2s | aggregate count(*) as n, sum(v) as s
  | print 'win';
clicks | rebalance | map k, v * 2 as v, ts | key by k | window tumbling 3s
  | aggregate max(v) as m | print 'win2';
"""


def _land(work: Path, batches: list[list[tuple[str, int, int]]]) -> list[list[str]]:
    """One csv file per batch (the streaming executor runs a batch only when a file
    landed; a file may hold no record)."""
    out = []
    for b, rows in enumerate(batches):
        path = work / "in" / f"f{b:03d}.csv"
        path.write_text("k,v,ts\n" + "".join(f"{k},{v},{ts}\n" for k, v, ts in rows))
        out.append([str(path)])
    return out


def _batches() -> Any:
    def batch(b: int) -> Any:
        row = st.tuples(st.sampled_from(["a", "b", "c"]), st.integers(0, 99),
                        st.integers(max(0, 1500 * b - 2000), 1500 * b + 1500))
        return st.lists(row, max_size=5)
    return st.integers(2, 6).flatmap(lambda k: st.tuples(*(batch(b) for b in range(k)))) \
        .map(list)


def cases() -> Any:
    return st.fixed_dictionaries({
        "job": st.sampled_from(["proc", "idle"]),
        "batches": _batches(),
        "p": st.integers(1, 2),
        "sp": st.integers(1, 2),
        "size": st.sampled_from(["1s", "2s", "500ms"]),
        "idle": st.sampled_from([300, 1000, 2000]),
    })


def _run(case: dict[str, Any]) -> None:
    root = Path(tempfile.mkdtemp(prefix="flowc-model-"))
    try:
        text = (PROC if case["job"] == "proc" else IDLE).format(
            p=case["p"], sp="{sp}", src="{src}", size=case["size"], idle=case["idle"])
        d = RowDriver(text, root, sp=case["sp"])
        files = _land(root, case["batches"])
        model = model_lines(d.jg, files, timed=True)
        paths = {"row": lambda b: False}
        if not isinstance(d.chains, str):
            paths.update({"col": lambda b: True, "mixed": lambda b: b % 2 == 1})
        for name, pick in paths.items():
            results = [d.batch(root / name, b, fs, pick(b)) for b, fs in enumerate(files)]
            assert printed(d, results) == model.printed, name
            late = sum(s["late"] for r in results for s in r["stats"].values())
            assert late == model.late_records_dropped, name
    finally:
        shutil.rmtree(root, ignore_errors=True)


@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
@given(cases())
def test_the_model_prints_what_the_streamed_batches_print(case: dict[str, Any]) -> None:
    _run(case)


def test_processing_time_windows_fire_at_the_batch_after_their_end(tmp_path: Path) -> None:
    """Batches at 1000, 1700, 2400 and 3100 ms: the window [1000, 2000) of batches 0 and 1
    fires at the start of batch 2 (2400 >= 1999), before its input; [2000, 3000) at 3100.
    Without timestamps the model runs on the wall clock: nothing fires."""
    text = PROC.format(p=1, sp="{sp}", src="{src}", size="1s", idle=0)
    d = RowDriver(text, tmp_path)
    files = _land(tmp_path, [[("a", 1, 0)], [("a", 2, 10), ("b", 3, 20)], [("a", 4, 30)],
                             []])
    model = model_lines(d.jg, files, timed=True)
    proc = [line for line in model.printed if line.startswith("proc")]
    assert proc == ["proc> +I[a, 2, 3, 1970-01-01T00:00:00.010]",
                    "proc> +I[b, 1, 3, 1970-01-01T00:00:00.020]",
                    "proc> +I[a, 1, 4, 1970-01-01T00:00:00.030]"]
    results = [d.batch(tmp_path / "row", b, fs, False) for b, fs in enumerate(files)]
    assert printed(d, results) == model.printed
    assert [line for line in model_lines(d.jg, files).printed if line.startswith("proc")] == []


def test_an_idle_source_subtask_stops_holding_the_watermark_back(tmp_path: Path) -> None:
    """Two source subtasks; file n goes to subtask n % 2, and subtask 1's files are empty:
    with a timeout shorter than a batch (700 ms) it goes idle and the windows fire on
    subtask 0's watermark alone; with a long one it holds the watermark back: nothing
    fires."""
    rows: list[list[tuple[str, int, int]]] = [[("a", 1, 100)], [], [("a", 2, 5000)], [],
                                              [("a", 3, 9000)], []]
    fired = {}
    for idle in (300, 10_000):
        text = IDLE.format(p=1, sp="{sp}", src="{src}", idle=idle)
        work = tmp_path / str(idle)
        work.mkdir()
        d = RowDriver(text, work, sp=2)
        files = _land(work, rows)
        model = model_lines(d.jg, files, timed=True)
        results = [d.batch(work / "row", b, fs, False) for b, fs in enumerate(files)]
        assert printed(d, results) == model.printed
        fired[idle] = [line for line in model.printed if line.startswith("win>")]
    assert fired[300] == ["win> +I[a, 1970-01-01T00:00, 1970-01-01T00:00:02, 1, 1]",
                          "win> +I[a, 1970-01-01T00:00:04, 1970-01-01T00:00:06, 1, 2]"]
    assert fired[10_000] == []


def test_timestamps_must_be_one_a_batch_and_not_decreasing(tmp_path: Path) -> None:
    text = PROC.format(p=1, sp="{sp}", src="{src}", size="1s", idle=0)
    d = RowDriver(text, tmp_path)
    files = _land(tmp_path, [[("a", 1, 0)], [("a", 2, 10)]])
    source = d.plan.sources[0].node
    for times in ([1000], [2000, 1000]):
        with pytest.raises(UnsupportedError, match="micro-batch timestamps"):
            run_reference(d.jg, micro_batches=MicroBatches({source: files}, times))
