"""Window triggers (flowc.triggers, runtime.trigger_windows): Flink's WindowOperator driven by
the trigger's results, with per-(key, window) trigger state and event-time timers."""

from __future__ import annotations

from typing import Any

import pytest

from flowc.datastream import CollectSink, StreamExecutionEnvironment, WatermarkStrategy
from flowc.datastream.window import (
    CountTrigger,
    EventTimeSessionWindows,
    GlobalWindows,
    PurgingTrigger,
    Trigger,
    TriggerResult,
    TumblingEventTimeWindows,
)
from flowc.errors import ApiError
from flowc.executor import run_reference

DATA = [("a", 1000, 1), ("a", 1500, 2), ("a", 2600, 3), ("a", 4200, 4), ("a", 7000, 5)]


def _total(x: Any, y: Any) -> Any:
    return (x[0], max(x[1], y[1]), x[2] + y[2])


def _run(build: Any, per_record: bool = False) -> list[Any]:
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(1)
    if per_record:
        env.set_option("flowc.watermarks", "per-record")
    events = env.from_collection(DATA).assign_timestamps_and_watermarks(
        WatermarkStrategy.for_monotonous_timestamps().with_timestamp_assigner(
            lambda v, _: v[1]))
    build(events.key_by(lambda v: v[0])).sink_to(CollectSink("out"))
    return run_reference(env.get_job_graph()).collected["out"]


def test_count_trigger_fires_without_purging_and_purging_trigger_purges() -> None:
    count = _run(lambda k: k.window(GlobalWindows.create()).trigger(CountTrigger.of(2))
                 .reduce(_total))
    assert count == [("a", 1500, 3), ("a", 4200, 10)]  # contents kept between fires
    purged = _run(lambda k: k.window(GlobalWindows.create())
                  .trigger(PurgingTrigger.of(CountTrigger.of(2))).reduce(_total))
    assert purged == [("a", 1500, 3), ("a", 4200, 7)]
    # GlobalWindows alone: NeverTrigger, nothing fires.
    assert _run(lambda k: k.window(GlobalWindows.create()).reduce(_total)) == []


class EveryOther(Trigger):
    """A user trigger with state of its own: fire on every second element."""

    def __init__(self) -> None:
        from flowc.datastream.state import ValueStateDescriptor

        self.desc = ValueStateDescriptor("n", None)

    def on_element(self, element: Any, timestamp: int, window: Any, ctx: Any) -> TriggerResult:
        n = ctx.get_partitioned_state(self.desc)
        n.update((n.value() or 0) + 1)
        return TriggerResult.FIRE if n.value() % 2 == 0 else TriggerResult.CONTINUE

    def on_event_time(self, time: int, window: Any, ctx: Any) -> TriggerResult:
        return TriggerResult.CONTINUE


def test_user_trigger_state_is_per_key_and_window() -> None:
    out = _run(lambda k: k.window(TumblingEventTimeWindows.of(2000)).trigger(EveryOther())
               .reduce(_total))
    # [0, 2000): 1000, 1500 -> fire with 3; [2000, 4000): one element; [4000, 6000): one.
    assert out == [("a", 1500, 3)]


def test_event_time_trigger_matches_the_default_window_and_lateness_drops() -> None:
    from flowc.datastream.window import EventTimeTrigger

    default = _run(lambda k: k.window(TumblingEventTimeWindows.of(2000)).reduce(_total), True)
    explicit = _run(lambda k: k.window(TumblingEventTimeWindows.of(2000))
                    .trigger(EventTimeTrigger.create()).reduce(_total), True)
    assert explicit == default == [("a", 1500, 3), ("a", 2600, 3), ("a", 4200, 4),
                                   ("a", 7000, 5)]


def test_trigger_on_session_or_count_windows_is_rejected() -> None:
    env = StreamExecutionEnvironment.get_execution_environment()
    keyed = env.from_collection(DATA).key_by(lambda v: v[0])
    with pytest.raises(ApiError, match="not on EventTimeSessionWindows"):
        keyed.window(EventTimeSessionWindows.with_gap(10)).trigger(CountTrigger.of(2))
    with pytest.raises(ApiError, match="needs a Trigger"):
        keyed.window(GlobalWindows.create()).trigger("count")
