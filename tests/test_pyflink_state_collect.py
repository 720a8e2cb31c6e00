"""PyFlink's AggregatingState and ``execute_and_collect``."""

from __future__ import annotations

from typing import Any

import pytest

from flowc.common import Row, Types
from flowc.datastream import StreamExecutionEnvironment
from flowc.datastream.functions import AggregateFunction, KeyedProcessFunction
from flowc.datastream.state import AggregatingStateDescriptor
from flowc.executor import run_reference
from flowc.operators import CollectSink


class Mean(AggregateFunction):
    def create_accumulator(self) -> Any:
        return (0, 0)

    def add(self, value: Any, accumulator: Any) -> Any:
        return (accumulator[0] + value, accumulator[1] + 1)

    def get_result(self, accumulator: Any) -> Any:
        return accumulator[0] / accumulator[1]

    def merge(self, a: Any, b: Any) -> Any:
        return (a[0] + b[0], a[1] + b[1])


class RunningMean(KeyedProcessFunction):
    def open(self, runtime_context: Any) -> None:
        self.mean = runtime_context.get_aggregating_state(
            AggregatingStateDescriptor("mean", Mean(), Types.TUPLE([Types.LONG(), Types.LONG()])))

    def process_element(self, value: Any, ctx: Any) -> Any:
        before = self.mean.get()
        self.mean.add(value[1])
        if value[1] == 0:
            self.mean.add(None)  # Flink's heap state: adding null clears it
        yield (value[0], before, self.mean.get())


def test_aggregating_state_keeps_the_accumulator_and_returns_the_result() -> None:
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(1)
    (env.from_collection([("a", 2), ("b", 10), ("a", 4), ("a", 0), ("a", 6)])
        .key_by(lambda v: v[0]).process(RunningMean()).sink_to(CollectSink("out")))
    out = run_reference(env.get_job_graph()).collected["out"]
    assert out == [("a", None, 2.0), ("b", None, 10.0), ("a", 2.0, 3.0), ("a", 3.0, None),
                   ("a", None, 6.0)]


@pytest.mark.spark
def test_execute_and_collect_runs_the_job_and_returns_its_records(spark: Any) -> None:
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(2)
    ds = env.from_collection([("a", 1), ("b", 2), ("a", 3)]).map(
        lambda t: Row(t[0], t[1] * 10), output_type=Types.ROW([Types.STRING(), Types.INT()]))
    with ds.execute_and_collect() as results:
        rows = sorted((r[0], r[1]) for r in results)
    assert rows == [("a", 10), ("a", 30), ("b", 20)]
    # The environment was cleared: a new job collects only its own stream.
    assert sorted(env.from_collection([7, 8]).execute_and_collect(limit=1)) in ([7], [8])


@pytest.fixture(scope="module")
def spark() -> Any:
    from flowc.executor import get_spark

    return get_spark("local[2]")
