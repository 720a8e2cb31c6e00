"""Executors wire subtasks exactly as the ExecutionGraph does (flink-semantics §5)."""

from __future__ import annotations

from typing import Any

import pytest

from flowc.chaining import build_execution_graph
from flowc.executor import run_job_graph, run_reference
from flowc.executor.wiring import Wiring

from .helpers import collect, env_for


def _rescale(s: int, t: int) -> Any:
    env = env_for(s)
    collect(env.from_sequence(1, 40).map(lambda x: x).rescale().map(lambda x: (x, 0))
            .set_parallelism(t))
    return env.get_job_graph()


@pytest.mark.parametrize(("s", "t"), [(3, 2), (2, 3), (5, 3), (4, 2), (2, 2)])
def test_pointwise_rescale_keeps_every_record(s: int, t: int) -> None:
    # 3 -> 2 and 5 -> 3 lost records while the executors derived the wiring themselves
    # (producer k was sent to consumer k*T//S, which does not read partition k).
    r = run_reference(_rescale(s, t))
    assert sorted(x for x, _ in r["out"]) == list(range(1, 41))


def test_wiring_is_the_execution_graph() -> None:
    jg = _rescale(5, 3)
    eg = build_execution_graph(jg)
    wiring = Wiring(jg)
    for v in eg.vertices:
        for c in v.inputs:
            e = c.edge.stream_edge
            for i in range(v.parallelism):
                assert wiring.producers_of(e, i) == c.partitions(i)
                for k in wiring.producers_of(e, i):
                    assert i in wiring.consumers_of(e, k)


@pytest.mark.spark
def test_pointwise_rescale_on_spark(spark: Any) -> None:
    jg = _rescale(3, 2)
    assert run_job_graph(jg)["out"] == run_reference(jg)["out"]

