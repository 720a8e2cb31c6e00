"""Watermark timing (docs/executor.md, "Watermark generation"): periodic by default, as Flink's
200 ms auto-watermark interval is on a small bounded input (only the end-of-input watermark),
configurable through ``env.get_config().set_auto_watermark_interval`` and the option
``flowc.watermarks = per-record``."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from flowc.common import Types
from flowc.datastream import (
    CollectSink,
    KeyedProcessFunction,
    StreamExecutionEnvironment,
    ValueStateDescriptor,
    WatermarkStrategy,
)
from flowc.errors import ConfigError
from flowc.executor import run_job_graph, run_reference
from flowc.operators import CollectionSource

EVENTS = [("a", 1000, 1), ("a", 1500, 2), ("b", 1200, 5), ("a", 3000, 3), ("b", 4000, 1),
          ("a", 5000, 4)]


class SumThenTimer(KeyedProcessFunction):
    """The classic event-time timer program: keep a running sum per key and, 1 s after each
    record, emit the sum as it is when the timer fires."""

    def open(self, runtime_context: Any) -> None:
        self.sum = runtime_context.get_state(ValueStateDescriptor("sum", Types.LONG()))

    def process_element(self, value: Any, ctx: Any) -> None:
        self.sum.update((self.sum.value() or 0) + value[2])
        ctx.timer_service().register_event_time_timer(ctx.timestamp() + 1000)

    def on_timer(self, timestamp: int, ctx: Any) -> Any:
        yield (ctx.get_current_key(), timestamp, self.sum.value())


def _job(configure: Any = None, from_source: bool = False) -> Any:
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(1)
    if configure is not None:
        configure(env)
    strategy = WatermarkStrategy.for_monotonous_timestamps().with_timestamp_assigner(
        lambda v, _: v[1])
    if from_source:
        src = env.from_source(CollectionSource(tuple(EVENTS)), strategy, "events")
    else:
        src = env.from_collection(EVENTS).assign_timestamps_and_watermarks(strategy)
    src.key_by(lambda v: v[0]).process(SumThenTimer()).sink_to(CollectSink("out"))
    return env.get_job_graph()


# With only the final watermark every timer sees the key's whole sum (Flink on this input).
AT_END = [("a", 2000, 10), ("a", 2500, 10), ("a", 4000, 10), ("a", 6000, 10),
          ("b", 2200, 6), ("b", 5000, 6)]
# A watermark after every record fires timers as the input goes: ("a", 3000) makes it 2999,
# firing a@2000, a@2500 (a's sum 6 by then) and b@2200 (5); ("a", 5000) fires a@4000 (10).
PER_RECORD = [("a", 2000, 6), ("a", 2500, 6), ("a", 4000, 10), ("a", 6000, 10),
              ("b", 2200, 5), ("b", 5000, 6)]


@pytest.mark.parametrize("from_source", [False, True], ids=["operator", "source"])
def test_default_is_periodic_so_a_small_input_fires_timers_only_at_the_end(
        from_source: bool) -> None:
    out = run_reference(_job(from_source=from_source)).collected["out"]
    assert sorted(out) == AT_END


@pytest.mark.parametrize("from_source", [False, True], ids=["operator", "source"])
def test_per_record_option_emits_after_every_record(from_source: bool) -> None:
    job = _job(lambda e: e.set_option("flowc.watermarks", "per-record"), from_source)
    assert sorted(run_reference(job).collected["out"]) == PER_RECORD


def test_interval_is_a_record_count_and_zero_turns_periodic_watermarks_off() -> None:
    # 1 ms = 50 records: far more than 6, so as the default.
    job = _job(lambda e: e.get_config().set_auto_watermark_interval(1))
    assert sorted(run_reference(job).collected["out"]) == AT_END
    job = _job(lambda e: e.get_config().set_auto_watermark_interval(0))
    assert sorted(run_reference(job).collected["out"]) == AT_END
    strategy = job.stream_graph.nodes[2].operator.strategy
    assert strategy.emit_every == 0


def test_periodic_emission_every_n_records() -> None:
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(1)
    strategy = WatermarkStrategy.for_monotonous_timestamps().with_timestamp_assigner(
        lambda v, _: v[1])
    strategy = dataclasses.replace(strategy, emit_every=5)  # a strategy's own timing wins
    (env.from_collection(EVENTS).assign_timestamps_and_watermarks(strategy)
     .key_by(lambda v: v[0]).process(SumThenTimer()).sink_to(CollectSink("out")))
    out = sorted(run_reference(env.get_job_graph()).collected["out"])
    # After the 5th record (b 4000) the watermark is 3999: a@2000, a@2500 fire with a's sum
    # 6 and b@2200 with b's 6 (neither the per-record nor the end-only answer); the rest at
    # the end of input.
    assert out == [("a", 2000, 6), ("a", 2500, 6), ("a", 4000, 10), ("a", 6000, 10),
                   ("b", 2200, 6), ("b", 5000, 6)]


def test_bad_watermark_settings_are_user_errors() -> None:
    with pytest.raises(ConfigError, match="flowc.watermarks"):
        _job(lambda e: e.set_option("flowc.watermarks", "sometimes"))
    from flowc.errors import ApiError

    env = StreamExecutionEnvironment.get_execution_environment()
    with pytest.raises(ApiError, match="must not be negative"):
        env.get_config().set_auto_watermark_interval(-1)


@pytest.mark.spark
@pytest.mark.parametrize("per_record", [False, True], ids=["periodic", "per-record"])
@pytest.mark.parametrize("from_source", [False, True], ids=["operator", "source"])
def test_spark_executor_follows_the_same_timing(spark: Any, per_record: bool,
                                                from_source: bool) -> None:
    configure = (lambda e: e.set_option("flowc.watermarks", "per-record")) if per_record \
        else None
    out = run_job_graph(_job(configure, from_source)).collected["out"]
    assert sorted(out) == (PER_RECORD if per_record else AT_END)
