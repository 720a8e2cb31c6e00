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
