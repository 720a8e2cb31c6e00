"""Hand-computed expectations for Flink's event-time semantics on the reference executor."""

from __future__ import annotations

from typing import Any

from flowc.datastream import (
    EventTimeSessionWindows,
    KeyedProcessFunction,
    OutputTag,
    ProcessJoinFunction,
    ProcessWindowFunction,
    SlidingEventTimeWindows,
    TumblingEventTimeWindows,
    ValueStateDescriptor,
)
from flowc.executor import run_reference
from flowc.executor.runtime.channels import merge_channels
from flowc.executor.runtime.core import LONG_MIN, Watermark
from flowc.keygroups import assign_key_to_parallel_operator

from .helpers import collect, env_for, timestamped


class Count(ProcessWindowFunction):
    def process(self, key: Any, context: Any, elements: Any) -> Any:
        w = context.window()
        yield (key, w.start, w.end, len(list(elements)))


def run(env: Any) -> Any:
    return run_reference(env.get_job_graph())


def test_tumbling_fires_on_watermark_and_late_goes_to_side_output() -> None:
    env = env_for()
    late = OutputTag("late")
    data = [("a", 1000), ("a", 2000), ("a", 6000), ("a", 3000), ("a", 7000)]
    w = (timestamped(env, data).key_by(lambda v: v[0])
         .window(TumblingEventTimeWindows.of(5000)).side_output_late_data(late).process(Count()))
    collect(w)
    collect(w.get_side_output(late), "late")
    r = run(env)
    assert r["out"] == [("a", 0, 5000, 2), ("a", 5000, 10000, 2)]
    assert r["late"] == [("a", 3000)]


def test_allowed_lateness_refires_then_cleans_up() -> None:
    env = env_for()
    data = [("a", 1000), ("a", 2000), ("a", 6000), ("a", 3000), ("a", 7000), ("a", 4000)]
    late = OutputTag("late")
    w = (timestamped(env, data).key_by(lambda v: v[0])
         .window(TumblingEventTimeWindows.of(5000)).allowed_lateness(2000)
         .side_output_late_data(late).process(Count()))
    collect(w)
    collect(w.get_side_output(late), "late")
    r = run(env)
    # 3000 arrives at wm 5999 < cleanup 6999: re-fires with 3; 7000 moves wm to 6999 and
    # the window is cleaned up, so 4000 is late.
    assert r["out"] == [("a", 0, 5000, 2), ("a", 0, 5000, 3), ("a", 5000, 10000, 2)]
    assert r["late"] == [("a", 4000)]


def test_late_without_side_output_is_dropped_and_counted() -> None:
    env = env_for()
    data = [("a", 1000), ("a", 6000), ("a", 3000)]
    collect(timestamped(env, data).key_by(lambda v: v[0])
            .window(TumblingEventTimeWindows.of(5000)).process(Count()))
    r = run(env)
    assert r["out"] == [("a", 0, 5000, 1), ("a", 5000, 10000, 1)]
    assert r.late_records_dropped == 1


def test_sliding_windows_reduce() -> None:
    env = env_for()
    data = [("a", 1000, 1), ("a", 2500, 10), ("a", 4100, 100)]
    collect(timestamped(env, data, delay=10_000).key_by(lambda v: v[0])
            .window(SlidingEventTimeWindows.of(2000, 1000))
            .reduce(lambda x, y: (x[0], max(x[1], y[1]), x[2] + y[2])))
    out = sorted(run(env)["out"], key=lambda v: (v[1], v[2]))
    # windows: [0,2000) {1}, [1000,3000) {1,10}, [2000,4000) {10}, [3000,5000) {100},
    # [4000,6000) {100}
    assert sorted(x[2] for x in out) == [1, 10, 11, 100, 100]


def test_session_windows_merge() -> None:
    env = env_for()
    data = [("a", 1000), ("a", 1500), ("a", 3000), ("a", 2200), ("b", 1000), ("a", 9000)]
    collect(timestamped(env, data, delay=5000).key_by(lambda v: v[0])
            .window(EventTimeSessionWindows.with_gap(1000)).process(Count()))
    out = run(env)["out"]
    assert sorted(out) == [("a", 1000, 4000, 4), ("a", 9000, 10000, 1),
                           ("b", 1000, 2000, 1)]


def test_session_window_merge_with_streaming_watermarks() -> None:
    env = env_for()
    # wm after 3500 is 3499: session [1000,2000) fired at wm >= 1999.
    data = [("a", 1000), ("a", 3500), ("a", 1800)]
    late = OutputTag("late")
    w = (timestamped(env, data).key_by(lambda v: v[0])
         .window(EventTimeSessionWindows.with_gap(1000)).side_output_late_data(late)
         .process(Count()))
    collect(w)
    collect(w.get_side_output(late), "late")
    r = run(env)
    assert r["out"] == [("a", 1000, 2000, 1), ("a", 3500, 4500, 1)]
    assert r["late"] == [("a", 1800)]


class CountWithTimer(KeyedProcessFunction):
    def open(self, runtime_context: Any) -> None:
        self.count = runtime_context.get_state(ValueStateDescriptor("count", None))

    def process_element(self, value: Any, ctx: Any) -> Any:
        c = (self.count.value() or 0) + 1
        self.count.update(c)
        ctx.timer_service().register_event_time_timer(ctx.timestamp() + 1000)
        yield ("seen", ctx.get_current_key(), c)

    def on_timer(self, timestamp: int, ctx: Any) -> Any:
        yield ("timer", ctx.get_current_key(), timestamp, self.count.value())
        self.count.clear()


def test_keyed_process_state_and_timers() -> None:
    env = env_for()
    data = [("a", 100), ("b", 150), ("a", 300), ("a", 1500), ("b", 2000)]
    collect(timestamped(env, data).key_by(lambda v: v[0]).process(CountWithTimer()))
    out = run(env)["out"]
    # The watermark follows its record: a@1500 is counted before wm 1499 fires the timers
    # at 1100 (a), 1150 (b), 1300 (a, state already cleared).
    assert out == [
        ("seen", "a", 1), ("seen", "b", 1), ("seen", "a", 2), ("seen", "a", 3),
        ("timer", "a", 1100, 3), ("timer", "b", 1150, 1), ("timer", "a", 1300, None),
        ("seen", "b", 1), ("timer", "a", 2500, None), ("timer", "b", 3000, 1),
    ]


class Pair(ProcessJoinFunction):
    def process_element(self, left: Any, right: Any, ctx: Any) -> Any:
        yield (left[2], right[2], ctx.get_timestamp())


def test_interval_join_bounds() -> None:
    env = env_for()
    left = timestamped(env, [("k", 1000, "L1"), ("k", 5000, "L2")], delay=10_000)
    right = timestamped(env, [("k", 0, "R0"), ("k", 1000, "R1"), ("k", 2000, "R2"),
                              ("k", 4000, "R4")], delay=10_000)
    joined = (left.key_by(lambda v: v[0]).interval_join(right.key_by(lambda v: v[0]))
              .between(-1000, 1000).upper_bound_exclusive().process(Pair()))
    collect(joined)
    out = sorted(run(env)["out"])
    # L1@1000 joins right ts in [0, 2000): R0, R1; L2@5000 joins [4000, 6000): R4.
    assert out == [("L1", "R0", 1000), ("L1", "R1", 1000), ("L2", "R4", 5000)]


def test_rolling_aggregations() -> None:
    env = env_for()
    data = [("a", 3, "x"), ("a", 1, "y"), ("b", 5, "z"), ("a", 2, "w")]
    ks = env.from_collection(data).key_by(lambda v: v[0])
    collect(ks.sum(1), "sum")
    collect(ks.min(1), "min")
    collect(ks.min_by(1), "min_by")
    collect(ks.max_by(1), "max_by")
    r = run(env)
    assert r["sum"] == [("a", 3, "x"), ("a", 4, "x"), ("b", 5, "z"), ("a", 6, "x")]
    assert r["min"] == [("a", 3, "x"), ("a", 1, "x"), ("b", 5, "z"), ("a", 1, "x")]
    assert r["min_by"] == [("a", 3, "x"), ("a", 1, "y"), ("b", 5, "z"), ("a", 1, "y")]
    assert r["max_by"] == [("a", 3, "x"), ("a", 3, "x"), ("b", 5, "z"), ("a", 3, "x")]


def test_batch_reduce_emits_final_values_only() -> None:
    env = env_for(batch=True)
    collect(env.from_collection([("a", 1), ("b", 2), ("a", 3)]).key_by(lambda v: v[0])
            .reduce(lambda x, y: (x[0], x[1] + y[1])))
    assert run(env)["out"] == [("a", 4), ("b", 2)]


def test_batch_windows_have_no_late_data() -> None:
    env = env_for(batch=True)
    data = [("a", 1000), ("a", 6000), ("a", 3000)]
    collect(timestamped(env, data).key_by(lambda v: v[0])
            .window(TumblingEventTimeWindows.of(5000)).process(Count()))
    assert sorted(run(env)["out"]) == [("a", 0, 5000, 2), ("a", 5000, 10000, 1)]


def test_hash_edges_route_to_flink_subtask() -> None:
    env = env_for(parallelism=4)
    keys = [f"user{i}" for i in range(40)] + list(range(20))

    class Where(KeyedProcessFunction):
        def open(self, runtime_context: Any) -> None:
            self.subtask = runtime_context.get_index_of_this_subtask()

        def process_element(self, value: Any, ctx: Any) -> Any:
            yield (value, self.subtask)

    collect(env.from_collection(keys).key_by(lambda v: v).process(Where()))
    out = run(env)["out"]
    assert len(out) == len(keys)
    for key, subtask in out:
        assert subtask == assign_key_to_parallel_operator(key, 128, 4)


def test_channel_merge_round_robin_and_min_watermark() -> None:
    a = [(1, None), (Watermark, 10), (2, None), (Watermark, 30)]
    b = [(Watermark, 20), (3, None)]
    merged = list(merge_channels([a, b], [1, 1], batch=False))
    # round 0: a1, b:wm20 (min still MIN); round 1: a:wm10 -> 10, b3; round 2: a2;
    # round 3: a:wm30 -> min(30, 20) = 20
    assert merged == [(1, 1, None), (0, Watermark, 10), (1, 3, None), (1, 2, None),
                      (0, Watermark, 20)]
    assert LONG_MIN < 0
