"""PyFlink's count windows (``count_window(size[, slide])``): per-key counters, windows that
fire when full (CountTrigger) and never when not, results at Long.MAX_VALUE."""

from __future__ import annotations

from typing import Any

import pytest

from flowc.datastream import CollectSink, StreamExecutionEnvironment
from flowc.datastream.functions import ProcessWindowFunction
from flowc.datastream.window import CountSlidingWindowAssigner, CountTumblingWindowAssigner
from flowc.errors import ApiError
from flowc.executor import run_reference

DATA = [("a", 1), ("b", 10), ("a", 2), ("a", 3), ("b", 20), ("a", 4), ("a", 5), ("a", 6),
        ("a", 7)]


def _env() -> Any:
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(2)
    return env


def _sum(x: Any, y: Any) -> Any:
    return (x[0], x[1] + y[1])


def test_tumbling_count_window_fires_every_size_elements_per_key() -> None:
    env = _env()
    env.from_collection(DATA).key_by(lambda v: v[0]).count_window(3).reduce(_sum) \
        .sink_to(CollectSink("out"))
    # a: 1+2+3, 4+5+6; 7 alone never fires; b has only 2 elements.
    assert sorted(run_reference(env.get_job_graph()).collected["out"]) == [("a", 6), ("a", 15)]


class Ids(ProcessWindowFunction):
    def process(self, key: Any, context: Any, elements: Any) -> Any:
        yield (key, context.window().id, context.window().max_timestamp(),
               [e[1] for e in elements])


def test_sliding_count_window_follows_pyflinks_assigner() -> None:
    assert [CountSlidingWindowAssigner.of(3, 2).window_ids(c) for c in range(6)] == [
        [0], [0], [1, 0], [1], [2, 1], [2]]
    assert CountSlidingWindowAssigner.of(1, 2).window_ids(1) == []  # size < slide: a gap
    assert CountTumblingWindowAssigner.of(2).window_ids(5) == [2]
    env = _env()
    env.from_collection(DATA).key_by(lambda v: v[0]).count_window(3, 2).process(Ids()) \
        .sink_to(CollectSink("out"))
    out = sorted(run_reference(env.get_job_graph()).collected["out"])
    long_max = 2**63 - 1
    assert out == [("a", 0, long_max, [1, 2, 3]), ("a", 1, long_max, [3, 4, 5]),
                   ("a", 2, long_max, [5, 6, 7])]


def test_count_window_plan_names_and_bad_arguments() -> None:
    env = _env()
    w = env.from_collection(DATA).key_by(lambda v: v[0]).count_window(3).reduce(_sum)
    assert w.get_name() == "CountTumblingWindowAssigner"
    with pytest.raises(ApiError, match="must be positive"):
        env.from_collection(DATA).key_by(lambda v: v[0]).count_window(0)
    with pytest.raises(ApiError, match="count windows have no event time"):
        env.from_collection(DATA).key_by(lambda v: v[0]).count_window(2) \
            .allowed_lateness(5).reduce(_sum)
