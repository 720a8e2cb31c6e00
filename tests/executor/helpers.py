"""Small builders shared by the executor tests."""

from __future__ import annotations

from typing import Any

from flowc.datastream import (
    CollectSink,
    StreamExecutionEnvironment,
    WatermarkStrategy,
)
from flowc.transformations import RuntimeExecutionMode


def env_for(parallelism: int = 1, batch: bool = False, chaining: bool = True,
            ) -> StreamExecutionEnvironment:
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(parallelism)
    # The executor tests' late-data and timer expectations are written for watermarks after
    # every record; the default periodic timing has tests of its own
    # (tests/executor/test_watermark_timing.py).
    env.set_option("flowc.watermarks", "per-record")
    if batch:
        env.set_runtime_mode(RuntimeExecutionMode.BATCH)
    if not chaining:
        env.disable_operator_chaining()
    return env


def ts_of(v: Any, _: int) -> int:
    return int(v[1])


def timestamped(env: StreamExecutionEnvironment, values: list[Any], delay: int = 0) -> Any:
    """A collection of ``(key, ts, ...)`` tuples with event time from field 1."""
    strategy = WatermarkStrategy.for_bounded_out_of_orderness(delay).with_timestamp_assigner(ts_of)
    return env.from_collection(values).assign_timestamps_and_watermarks(strategy)


def collect(stream: Any, name: str = "out") -> None:
    stream.sink_to(CollectSink(name))
