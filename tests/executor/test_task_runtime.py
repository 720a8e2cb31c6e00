"""Spark task-level runtime details: garbage collection around a task's chain."""

from __future__ import annotations

import gc
from typing import Any

import pytest

from flowc.executor import run_job_graph
from flowc.executor.spark import tasks

from .helpers import collect, env_for


def test_gc_relaxed_while_the_chain_runs_and_restored_after() -> None:
    saved = gc.get_threshold()
    seen = []

    def chain() -> Any:
        seen.append(gc.get_threshold())
        yield 1
        seen.append(gc.get_threshold())
        yield 2

    assert list(tasks.gc_relaxed(chain())) == [1, 2]
    assert seen == [tasks.TASK_GC_THRESHOLD] * 2
    assert gc.get_threshold() == saved


def test_gc_restored_when_the_chain_fails_or_is_abandoned() -> None:
    saved = gc.get_threshold()

    def failing() -> Any:
        yield 1
        raise ValueError("boom")

    with pytest.raises(ValueError):
        list(tasks.gc_relaxed(failing()))
    assert gc.get_threshold() == saved
    it = tasks.gc_relaxed(iter(range(10)))
    next(it)
    assert gc.get_threshold() == tasks.TASK_GC_THRESHOLD
    it.close()  # Spark stops reading a task's output early (take, a failed consumer)
    assert gc.get_threshold() == saved


def _threshold(_: Any) -> int:
    return gc.get_threshold()[0]


@pytest.mark.spark
def test_spark_tasks_run_their_chain_with_relaxed_gc(spark: Any) -> None:
    env = env_for(2)
    collect(env.from_sequence(1, 4).map(_threshold))
    r = run_job_graph(env.get_job_graph())
    assert r["out"] == [tasks.TASK_GC_THRESHOLD[0]] * 4


def _source_failure(tmp_path: Any, fmt: str, data: bytes) -> tuple[str, str]:
    """The error of a file source chained to a filter and a map, on Spark and on the
    reference executor."""
    from flowc.errors import ExecutionError
    from flowc.executor import run_reference
    from flowc.parser import compile_source

    path = tmp_path / f"in.{fmt}"
    path.write_bytes(data)
    script = compile_source(
        f"source s (u string, n int) from {fmt} '{path}'"
        f"{' options (header = false)' if fmt == 'csv' else ''};\n"
        "s\n  | filter n > 0\n  | map u, n + 1 as m\n  | print;\n", "j.flow")
    jg = script.env.get_job_graph()
    messages = []
    for run in (run_job_graph, run_reference):
        with pytest.raises(ExecutionError) as info:
            run(jg)
        assert info.value.span is not None and info.value.span.line == 1
        messages.append(info.value.message)
    return messages[0], messages[1]


@pytest.mark.spark
def test_a_bad_row_is_blamed_on_the_source_not_the_chained_filter(spark: Any,
                                                                  tmp_path: Any) -> None:
    on_spark, reference = _source_failure(tmp_path, "csv", b"a,1\nb,x\n")
    assert on_spark == reference
    assert on_spark.startswith("operator 'Source: s' (defined at j.flow:1) failed: bad row in ")


@pytest.mark.spark
def test_an_unreadable_file_is_blamed_on_the_source(spark: Any, tmp_path: Any) -> None:
    on_spark, reference = _source_failure(tmp_path, "parquet", b"not parquet at all")
    assert on_spark == reference
    assert on_spark.startswith("operator 'Source: s' (defined at j.flow:1) failed: cannot read ")


@pytest.mark.spark
def test_a_null_key_blames_the_keyed_operator_with_a_hint(spark: Any, tmp_path: Any) -> None:
    from flowc.errors import ExecutionError
    from flowc.executor import run_reference
    from flowc.parser import compile_source

    path = tmp_path / "in.csv"
    path.write_text("a,2024-01-01 00:00:01\n,2024-01-01 00:00:02\n")
    script = compile_source(
        f"source s (u string, ts timestamp) from csv '{path}' options (header = false)\n"
        "  watermark ts - 1s;\n"
        "s\n  | map u, ts\n  | key by u\n  | window tumbling 5s\n"
        "  | aggregate count(*) as n\n  | print;\n", "j.flow")
    jg = script.env.get_job_graph()
    for run in (run_job_graph, run_reference):
        with pytest.raises(ExecutionError) as info:
            run(jg)
        e = info.value
        assert e.message == ("operator 'TumblingEventTimeWindows' (defined at j.flow:7) failed: "
                             "Assigned key must not be null! (key by u: a record from 'Map' "
                             "has a null key)")
        assert e.hint == "drop those records before the key by, e.g. `| filter u is not null`"
