"""The shipped examples/*.flow run (sources with watermark strategies, late data, joins)."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from flowc.executor import run_job_graph, run_reference
from flowc.parser import compile_file

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = sorted(p.stem for p in (ROOT / "examples").glob("*.flow"))


def _job(example: str, tmp_path: Path) -> Any:
    # A copy, so the examples' file sinks write into the temp dir.
    shutil.copytree(ROOT / "examples", tmp_path / "examples")
    return compile_file(str(tmp_path / "examples" / f"{example}.flow")).env.get_job_graph()


@pytest.mark.parametrize("example", EXAMPLES)
def test_example_runs_on_reference(example: str, tmp_path: Path) -> None:
    r = run_reference(_job(example, tmp_path))
    assert r.printed
    assert all(v.records_in > 0 for v in r.vertices)


@pytest.mark.spark
def test_clicks_example_spark_matches_reference(spark: Any, tmp_path: Path) -> None:
    jg = _job("clicks", tmp_path)
    expected = run_reference(jg)
    actual = run_job_graph(jg)
    # Both executors read the csv by the same split rule (one small file: one split, read by
    # subtask 0), so the same records reach the same subtasks: the very same output.
    assert actual.printed == expected.printed
    assert len(expected.printed) == 133
    assert [(v.records_in, v.records_out) for v in actual.vertices] == \
        [(v.records_in, v.records_out) for v in expected.vertices]


@pytest.mark.spark
def test_sessions_example_spark_matches_reference(spark: Any, tmp_path: Path) -> None:
    """STREAMING with late data: the same split rule on both executors gives the same
    watermarks, so the same records are late (side output file) and dropped."""
    jg = _job("sessions", tmp_path)
    out = tmp_path / "examples" / "out"
    expected = run_reference(jg)
    late_ref = [f.read_text() for f in sorted((out / "late_clicks.csv").glob("part-*"))]
    actual = run_job_graph(jg)
    late_spark = [f.read_text() for f in sorted((out / "late_clicks.csv").glob("part-*"))]
    assert actual.printed == expected.printed
    assert actual.late_records_dropped == expected.late_records_dropped
    assert [line for text in late_spark for line in text.splitlines()[1:]] == \
        [line for text in late_ref for line in text.splitlines()[1:]]
    assert len("".join(late_ref).splitlines()) > 1


@pytest.mark.spark
def test_hints_example_spark_matches_reference(spark: Any, tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    """Datagen source (p=2), every partitioner, chaining hints, blackhole sinks."""
    from flowc.executor.spark.runner import PRINTED_KEPT

    jg = _job("hints", tmp_path)
    expected = run_reference(jg)
    capsys.readouterr()
    actual = run_job_graph(jg)
    # Print sinks have parallelism 1 and their inputs merge by the fixed channel rule: the
    # very same lines in the same order (all on stdout; the result keeps the first ones).
    assert capsys.readouterr().out.splitlines() == expected.printed
    assert len(expected.printed) > PRINTED_KEPT
    assert actual.printed == expected.printed[:PRINTED_KEPT]
    metrics = [(v.name, v.records_in, v.records_out, v.records_written)
               for v in expected.vertices]
    assert [(v.name, v.records_in, v.records_out, v.records_written)
            for v in actual.vertices] == metrics
    assert metrics[0][1] == 10_000  # the generator's rows
    # The blackhole sinks consumed their inputs.
    assert all(w for name, _, _, w in metrics if "Sink" in name and w is not None)


@pytest.mark.spark
def test_join_example_spark_matches_reference(spark: Any, tmp_path: Path) -> None:
    """Interval join to a print sink and window join to a json file sink."""
    jg = _job("join", tmp_path)
    out = tmp_path / "examples" / "out" / "clicked_vs_shown.json"
    expected = run_reference(jg)
    ref_rows = sorted(line for f in out.glob("part-*") for line in f.read_text().splitlines())
    actual = run_job_graph(jg)
    spark_rows = sorted(line for f in out.glob("part-*")
                        for line in f.read_text().splitlines())
    assert sorted(actual.printed) == sorted(expected.printed)
    assert actual.printed and ref_rows
    assert spark_rows == ref_rows  # both writers: compact json, one object per line
    assert ref_rows[0].startswith('{"user_id":"user_')
    assert [(v.records_in, v.records_out, v.records_written) for v in actual.vertices] == \
        [(v.records_in, v.records_out, v.records_written) for v in expected.vertices]
