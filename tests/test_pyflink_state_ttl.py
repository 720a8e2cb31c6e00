"""State TTL (``StateTtlConfig``, runtime/ttl.py and state.py) with an injected processing
clock: Flink's heap TTL rules per state kind, then a job on both executors.
tests/pyflink_programs/p25_state_ttl is the same API on real PyFlink 2.3 (a TTL that never
expires, so its output does not depend on the run's speed)."""

from __future__ import annotations

from typing import Any

import pytest

from flowc.common import Duration, Time, Types
from flowc.datastream import CollectSink, StreamExecutionEnvironment
from flowc.datastream.functions import AggregateFunction, KeyedProcessFunction
from flowc.datastream.state import (
    AggregatingStateDescriptor,
    ListStateDescriptor,
    MapStateDescriptor,
    ReducingStateDescriptor,
    StateTtlConfig,
    ValueStateDescriptor,
)
from flowc.errors import ApiError
from flowc.executor import run_reference
from flowc.executor.runtime.clock import ManualClock, processing_clock, using_clock
from flowc.executor.runtime.state import KeyedStateBackend, RuntimeContext

U = StateTtlConfig.UpdateType
V = StateTtlConfig.StateVisibility


def _config(ms: int = 1000, update: Any = U.OnCreateAndWrite,
            visibility: Any = V.NeverReturnExpired) -> StateTtlConfig:
    return (StateTtlConfig.new_builder(Time.milliseconds(ms)).set_update_type(update)
            .set_state_visibility(visibility).cleanup_full_snapshot().build())


def _ctx() -> tuple[KeyedStateBackend, RuntimeContext]:
    b = KeyedStateBackend()
    b.current_key = "k"
    return b, RuntimeContext("op", 0, 1, 128, b)


def test_value_expires_ttl_after_its_last_write() -> None:
    b, ctx = _ctx()
    d = ValueStateDescriptor("v", Types.INT())
    d.enable_time_to_live(_config(1000))
    s = ctx.get_state(d)
    with using_clock(ManualClock(0)) as clock:
        s.update(1)
        clock.advance(999)
        assert s.value() == 1  # a read does not extend OnCreateAndWrite
        clock.advance(1)
        assert s.value() is None and "k" not in b.tables["v"]  # expired at ts + ttl: removed
        s.update(2)
        clock.advance(600)
        s.update(3)  # a write restarts the TTL
        clock.advance(600)
        assert s.value() == 3


def test_on_read_and_write_extends_on_every_read() -> None:
    _, ctx = _ctx()
    d = ValueStateDescriptor("v", Types.INT())
    d.enable_time_to_live(_config(1000, U.OnReadAndWrite))
    s = ctx.get_state(d)
    with using_clock(ManualClock(0)) as clock:
        s.update(7)
        for _ in range(5):
            clock.advance(900)
            assert s.value() == 7
        clock.advance(1000)
        assert s.value() is None


def test_return_expired_if_not_cleaned_up_returns_it_once() -> None:
    _, ctx = _ctx()
    d = ValueStateDescriptor("v", Types.INT())
    d.enable_time_to_live(_config(10, visibility=V.ReturnExpiredIfNotCleanedUp))
    s = ctx.get_state(d)
    with using_clock(ManualClock(0)) as clock:
        s.update(5)
        clock.advance(50)
        assert s.value() == 5  # expired but not cleaned up yet; this read cleans it up
        assert s.value() is None


def test_list_elements_expire_one_by_one() -> None:
    b, ctx = _ctx()
    d = ListStateDescriptor("l", Types.INT())
    d.enable_time_to_live(_config(1000))
    s = ctx.get_list_state(d)
    with using_clock(ManualClock(0)) as clock:
        s.add(1)
        clock.advance(500)
        s.add_all([2, 3])
        clock.advance(500)
        assert s.get() == [2, 3]
        clock.advance(499)
        assert list(s) == [2, 3]
        clock.advance(1)
        assert s.get() == [] and "k" not in b.tables["l"]
        s.update([4])
        assert s.get() == [4]


def test_map_entries_expire_one_by_one_and_reads_refresh_only_their_entry() -> None:
    b, ctx = _ctx()
    d = MapStateDescriptor("m", Types.STRING(), Types.INT())
    d.enable_time_to_live(_config(1000, U.OnReadAndWrite))
    s = ctx.get_map_state(d)
    with using_clock(ManualClock(0)) as clock:
        s.put("a", 1)
        s.put_all({"b": 2, "c": 3})
        clock.advance(800)
        assert s.get("a") == 1  # refreshed to 800
        assert s.contains("b")  # refreshed to 800
        clock.advance(800)  # 1600: c (written at 0) expired
        assert sorted(s.items()) == [("a", 1), ("b", 2)]
        assert sorted(s.keys()) == ["a", "b"] and sorted(s.values()) == [1, 2]
        assert not s.contains("c") and s.get("c") is None
        clock.advance(5000)
        assert s.is_empty() and "k" not in b.tables["m"]


def test_reducing_and_aggregating_start_over_after_expiry() -> None:
    _, ctx = _ctx()
    r = ReducingStateDescriptor("r", lambda x, y: x + y, Types.INT())
    r.enable_time_to_live(_config(100))

    class Avg(AggregateFunction):
        def create_accumulator(self) -> Any:
            return (0, 0)

        def add(self, value: Any, acc: Any) -> Any:
            return (acc[0] + value, acc[1] + 1)

        def get_result(self, acc: Any) -> Any:
            return acc[0] / acc[1]

        def merge(self, a: Any, b: Any) -> Any:
            return (a[0] + b[0], a[1] + b[1])

    a = AggregatingStateDescriptor("a", Avg(), Types.TUPLE([Types.INT(), Types.INT()]))
    a.enable_time_to_live(_config(100))
    rs, ags = ctx.get_reducing_state(r), ctx.get_aggregating_state(a)
    with using_clock(ManualClock(0)) as clock:
        for v in (1, 2, 3):
            rs.add(v)
            ags.add(v)
        assert (rs.get(), ags.get()) == (6, 2.0)
        clock.advance(100)
        rs.add(10)
        ags.add(10)
        assert (rs.get(), ags.get()) == (10, 10.0)
        clock.advance(100)
        assert (rs.get(), ags.get()) == (None, None)


def test_disabled_ttl_and_state_without_ttl_never_expire() -> None:
    _, ctx = _ctx()
    d = ValueStateDescriptor("v", Types.INT())
    d.enable_time_to_live(_config(1, U.Disabled))
    plain = ctx.get_state(ValueStateDescriptor("w", Types.INT()))
    s = ctx.get_state(d)
    with using_clock(ManualClock(0)) as clock:
        s.update(1)
        plain.update(2)
        clock.advance(10**9)
        assert (s.value(), plain.value()) == (1, 2)


def test_builder_and_getters_as_pyflink() -> None:
    c = (StateTtlConfig.new_builder(Duration.of_seconds(3)).update_ttl_on_read_and_write()
         .return_expired_if_not_cleaned_up().cleanup_incrementally(10, True)
         .cleanup_in_rocksdb_compact_filter(1000).disable_cleanup_in_background().build())
    assert c.get_ttl().to_milliseconds() == 3000 and c.is_enabled()
    assert str(c.get_update_type()) == "UpdateType.OnReadAndWrite"
    assert str(c.get_state_visibility()) == "StateVisibility.ReturnExpiredIfNotCleanedUp"
    d = ListStateDescriptor("l", Types.INT())
    assert d.get_ttl_config() is None
    d.enable_time_to_live(c)
    assert d.get_ttl_config() is c
    with pytest.raises(ApiError, match="positive Time / Duration"):
        StateTtlConfig.new_builder(5)
    with pytest.raises(ApiError, match="needs a StateTtlConfig"):
        d.enable_time_to_live("1h")  # type: ignore[arg-type]
    with pytest.raises(ApiError, match="UpdateType"):
        StateTtlConfig.new_builder(Time.seconds(1)).set_update_type("OnReadAndWrite")


class LastSeen(KeyedProcessFunction):
    """Advances the injected clock by the record's ``wait`` (test-only: the task's copy of
    the driver's clock), then emits the key's previous value (None once expired)."""

    def open(self, runtime_context: Any) -> None:
        d = ValueStateDescriptor("last", Types.INT())
        d.enable_time_to_live(StateTtlConfig.new_builder(Time.seconds(5)).build())
        self.last = runtime_context.get_state(d)

    def process_element(self, value: Any, ctx: Any) -> Any:
        key, wait, n = value
        processing_clock().advance(wait)
        yield key, self.last.value()
        self.last.update(n)


DATA = [("a", 0, 1), ("a", 3000, 2), ("a", 4000, 3), ("b", 1000, 9), ("a", 5000, 4),
        ("b", 0, 10)]
EXPECTED = [("a", None), ("a", 1), ("a", 2), ("b", None), ("a", None), ("b", None)]


def _ttl_job() -> Any:
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(1)
    (env.from_collection(DATA).key_by(lambda v: v[0]).process(LastSeen())
        .sink_to(CollectSink("out")))
    return env.get_job_graph()


def test_ttl_in_a_job_on_the_reference_executor() -> None:
    with using_clock(ManualClock(10_000)):
        out = run_reference(_ttl_job()).collected["out"]
    assert out == EXPECTED


@pytest.mark.spark
@pytest.mark.slow
def test_ttl_in_a_job_on_spark_with_the_drivers_clock(spark: Any) -> None:
    from flowc.executor import run_job_graph

    with using_clock(ManualClock(10_000)):
        out = run_job_graph(_ttl_job()).collected["out"]
    assert out == EXPECTED


@pytest.fixture(scope="module")
def spark() -> Any:
    from flowc.executor import get_spark

    return get_spark("local[2]")
