"""Unions and two-input operators on the streaming executor: two monitored sources, one
file per source and micro-batch, give the reference executor's STREAMING results over the
same files (nothing is late: each file's timestamps follow the previous file's)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from .multi_harness import differential

pytestmark = pytest.mark.spark


def _check(tmp_path: Path, build: Any, **kw: Any) -> list[str]:
    got, expected = differential(tmp_path, build, **kw)
    assert got == expected
    assert got  # the job produced something
    return got


def test_union_then_a_keyed_tumbling_window(spark: Any, tmp_path: Path) -> None:
    from flowc.datastream import Time, TumblingEventTimeWindows

    got = _check(tmp_path, lambda a, b: a.union(b).key_by(lambda r: r[0])
                 .window(TumblingEventTimeWindows.of(Time.milliseconds(3000)))
                 .reduce(lambda x, y: (x[0], max(x[1], y[1]), x[2] + y[2])))
    assert len(got) == 4 * 4  # every key in every window


def test_connect_co_map_and_co_flat_map(spark: Any, tmp_path: Path) -> None:
    from flowc.datastream import CoFlatMapFunction, CoMapFunction

    class Tag(CoMapFunction):
        def map1(self, value: Any) -> Any:
            return f"1:{value}"

        def map2(self, value: Any) -> Any:
            return f"2:{value}"

    class Split(CoFlatMapFunction):
        def flat_map1(self, value: Any) -> Any:
            yield f"a:{value[0]}"

        def flat_map2(self, value: Any) -> Any:
            yield f"b:{value[0]}"
            yield f"b:{value[2]}"

    got = _check(tmp_path, lambda a, b: a.connect(b).map(Tag())
                 .connect(b).flat_map(Split()))
    assert len(got) == 4 * 12 * 2 + 4 * 12 * 2


def test_co_process_and_keyed_co_process_with_state_and_timers(spark: Any,
                                                              tmp_path: Path) -> None:
    from flowc.common import Types
    from flowc.datastream import CoProcessFunction, KeyedCoProcessFunction, MapStateDescriptor

    class Sum(KeyedCoProcessFunction):
        """Per key and 3 s period: the sums of each input, emitted by an event-time timer
        at the period's end (independent of how the inputs interleave)."""

        def open(self, ctx: Any) -> None:
            self.s1 = ctx.get_map_state(MapStateDescriptor("s1", Types.LONG(), Types.INT()))
            self.s2 = ctx.get_map_state(MapStateDescriptor("s2", Types.LONG(), Types.INT()))

        def _add(self, state: Any, value: Any, ctx: Any) -> None:
            end = value[1] // 3000 * 3000 + 2999
            state.put(end, (state.get(end) or 0) + value[2])
            ctx.timer_service().register_event_time_timer(end)

        def process_element1(self, value: Any, ctx: Any) -> None:
            self._add(self.s1, value, ctx)

        def process_element2(self, value: Any, ctx: Any) -> None:
            self._add(self.s2, value, ctx)

        def on_timer(self, ts: int, ctx: Any) -> Any:
            yield f"{ctx.get_current_key()}@{ts}: {self.s1.get(ts)} {self.s2.get(ts)}"

    class Plain(CoProcessFunction):
        def process_element1(self, value: Any, ctx: Any) -> Any:
            yield f"1:{value}@{ctx.timestamp()}"

        def process_element2(self, value: Any, ctx: Any) -> Any:
            yield f"2:{value}@{ctx.timestamp()}"

    got = _check(tmp_path, lambda a, b: a.connect(b).key_by(lambda r: r[0], lambda r: r[0])
                 .process(Sum()).union(a.connect(b).process(Plain())))
    assert len(got) == 4 * 4 + 2 * 4 * 12


def test_interval_join(spark: Any, tmp_path: Path) -> None:
    from flowc.datastream import Duration, ProcessJoinFunction

    class Pair(ProcessJoinFunction):
        def process_element(self, left: Any, right: Any, ctx: Any) -> Any:
            yield f"{left[0]} {left[1]}-{right[1]} {left[2]}+{right[2]}"

    got = _check(tmp_path, lambda a, b: a.key_by(lambda r: r[0]).interval_join(
        b.key_by(lambda r: r[0])).between(Duration.of_millis(-500), Duration.of_millis(500))
        .process(Pair()))
    assert len(got) > 10


def test_window_join(spark: Any, tmp_path: Path) -> None:
    from flowc.datastream import Time, TumblingEventTimeWindows

    got = _check(tmp_path, lambda a, b: a.join(b).where(lambda r: r[0])
                 .equal_to(lambda r: r[0])
                 .window(TumblingEventTimeWindows.of(Time.milliseconds(3000)))
                 .apply(lambda x, y: f"{x[0]} {x[2]}+{y[2]}"))
    assert len(got) > 10


def test_broadcast_state_from_a_bounded_source(spark: Any, tmp_path: Path) -> None:
    """The rules are a bounded file source read in the first micro-batch (its end of input
    lets the main stream's watermark through); main records wait in keyed state for their
    event-time timer, which only fires once every rule is in the broadcast state, so the
    output does not depend on how the inputs interleave."""
    from flowc.common import Types
    from flowc.datastream import KeyedBroadcastProcessFunction
    from flowc.datastream.state import MapStateDescriptor

    rules = MapStateDescriptor("rules", Types.STRING(), Types.INT())

    class Apply(KeyedBroadcastProcessFunction):
        def open(self, ctx: Any) -> None:
            self.seen = ctx.get_map_state(MapStateDescriptor("seen", Types.LONG(),
                                                             Types.PICKLED_BYTE_ARRAY()))

        def process_element(self, value: Any, ctx: Any) -> None:
            self.seen.put(value[1], [*(self.seen.get(value[1]) or []), value[2]])
            ctx.timer_service().register_event_time_timer(value[1])

        def process_broadcast_element(self, value: Any, ctx: Any) -> None:
            state = ctx.get_broadcast_state(rules)
            state.put(value[0], (state.get(value[0]) or 0) + value[2])

        def on_timer(self, ts: int, ctx: Any) -> Any:
            factor = ctx.get_broadcast_state(rules).get(ctx.get_current_key())
            yield f"{ctx.get_current_key()}@{ts}: {sorted(self.seen.get(ts))} x {factor}"
            self.seen.remove(ts)

    got = _check(tmp_path, lambda a, b: a.key_by(lambda r: r[0])
                 .connect(b.broadcast(rules)).process(Apply()), bounded=(1,))
    assert len(got) > 10
