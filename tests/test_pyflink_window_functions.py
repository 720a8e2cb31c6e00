"""window_all (Flink's AllWindowedStream), WindowFunction / apply, dynamic session gaps."""

from __future__ import annotations

from typing import Any

import pytest

from flowc.datastream import CollectSink, StreamExecutionEnvironment, WatermarkStrategy
from flowc.datastream.functions import AllWindowFunction, WindowFunction
from flowc.datastream.window import EventTimeSessionWindows, TumblingEventTimeWindows
from flowc.errors import FlowcError
from flowc.executor import run_reference
from flowc.planner.stream_graph import NodeKind
from flowc.transformations import PartitionerKind


class Count(WindowFunction):
    def apply(self, key: Any, window: Any, inputs: Any) -> Any:
        yield (key, window.start, len(list(inputs)))


class Sum(AllWindowFunction):
    def apply(self, window: Any, inputs: Any) -> Any:
        yield (window.start, sum(v[2] for v in inputs))


def _events(env: Any, data: list[Any]) -> Any:
    return env.from_collection(data).assign_timestamps_and_watermarks(
        WatermarkStrategy.for_monotonous_timestamps().with_timestamp_assigner(
            lambda v, _: v[1]))


DATA = [("a", 1000, 1), ("b", 1200, 2), ("a", 2500, 3), ("b", 7000, 4)]


def test_window_all_is_a_null_key_hash_into_a_non_parallel_window() -> None:
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(3)
    out = _events(env, DATA).window_all(TumblingEventTimeWindows.of(5000)).apply(Sum())
    out.sink_to(CollectSink("out"))
    sg = env.get_stream_graph()
    (node,) = [n for n in sg.nodes.values() if n.name == "TumblingEventTimeWindows"]
    assert (node.parallelism, node.max_parallelism) == (1, 1)
    assert [e.partitioner.kind for e in sg.inputs(node.id)] == [PartitionerKind.HASH]
    assert node.description == "Window(TumblingEventTimeWindows(5000), EventTimeTrigger, Sum)"
    assert sorted(run_reference(env.get_job_graph()).collected["out"]) == [(0, 6), (5000, 4)]


def test_apply_and_dynamic_gap_sessions() -> None:
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(2)
    gap = EventTimeSessionWindows.with_dynamic_gap(lambda v: 2000 if v[0] == "a" else 100)
    _events(env, DATA).key_by(lambda v: v[0]).window(gap).apply(Count()) \
        .sink_to(CollectSink("out"))
    out = sorted(run_reference(env.get_job_graph()).collected["out"])
    # a: 1000 and 2500 merge ([1000, 3000) and [2500, 4500)); b's gap of 100 keeps them apart.
    assert out == [("a", 1000, 2), ("b", 1200, 1), ("b", 7000, 1)]
    assert [n.kind for n in env.get_stream_graph().nodes.values()].count(NodeKind.SINK) == 1


def test_dynamic_gap_must_be_positive() -> None:
    env = StreamExecutionEnvironment.get_execution_environment()
    gap = EventTimeSessionWindows.with_dynamic_gap(lambda v: 0)
    _events(env, DATA).key_by(lambda v: v[0]).window(gap).apply(Count()) \
        .sink_to(CollectSink("out"))
    with pytest.raises(FlowcError, match="Dynamic gap can not be negative or zero"):
        run_reference(env.get_job_graph())
