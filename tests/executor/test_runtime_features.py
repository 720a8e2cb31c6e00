"""Runtime features checked against hand-computed values on the reference executor and
against the reference executor on Spark: discarding sinks, datagen sources, ProcessFunction
side outputs, List/Map/Reducing keyed state, window joins."""

from __future__ import annotations

from typing import Any

import pytest

from flowc.datastream import (
    DiscardingSink,
    KeyedProcessFunction,
    ListStateDescriptor,
    MapStateDescriptor,
    OutputTag,
    ProcessFunction,
    ReducingStateDescriptor,
    TumblingEventTimeWindows,
)
from flowc.executor import JobResult, run_job_graph, run_reference
from flowc.operators import DatagenSource

from .helpers import collect, env_for, timestamped


def _metrics(r: JobResult) -> list[tuple[Any, ...]]:
    return [(v.name, v.parallelism, v.records_in, v.records_out, v.records_written)
            for v in r.vertices]


# ----------------------------------------------------------------- discarding sink


def _discard_job(chaining: bool) -> Any:
    env = env_for(2, chaining=chaining)
    s = env.from_collection(list(range(30))).map(lambda v: v + 1)
    s.filter(lambda v: v % 2 == 0).sink_to(DiscardingSink())
    collect(s.filter(lambda v: v % 5 == 0))
    return env.get_job_graph()


@pytest.mark.parametrize("chaining", [True, False])
def test_discarding_sink_consumes_and_counts(chaining: bool) -> None:
    r = run_reference(_discard_job(chaining))
    assert sorted(r["out"]) == [5, 10, 15, 20, 25, 30]
    assert r.collected.keys() == {"out"} and r.printed == []
    written = [v.records_written for v in r.vertices if v.records_written is not None]
    # Chained, both sinks share the Map's vertex; unchained, each is its own vertex.
    assert sorted(written) == ([21] if chaining else [6, 15])


# ----------------------------------------------------------------- datagen


def _gen(i: int) -> tuple[int, int]:
    return (i, i * i)


def _datagen_job() -> Any:
    env = env_for(3)
    src = env.from_source(DatagenSource(10, _gen), None, "gen")
    collect(src.map(lambda v: (v[0], v[1] + 1)))
    return env.get_job_graph()


def test_datagen_splits_like_number_sequence_source() -> None:
    r = run_reference(_datagen_job())
    # Subtask order: split 0 = rows 0..3, split 1 = 4..6, split 2 = 7..9.
    assert r["out"] == [(i, i * i + 1) for i in range(10)]
    assert [v.records_in for v in r.vertices] == [10]


# ----------------------------------------------------------------- side outputs

ODD = OutputTag("odd")
BIG = OutputTag("big")


class Split(ProcessFunction):
    def process_element(self, value: Any, ctx: Any) -> Any:
        if value[2] % 2:
            ctx.output(ODD, (value[0], value[2] * 10, ctx.timestamp()))
        else:
            yield value


class KeyedSplit(KeyedProcessFunction):
    def process_element(self, value: Any, ctx: Any) -> Any:
        if value[2] >= 4:
            ctx.output(BIG, (ctx.get_current_key(), value[2]))
        yield (ctx.get_current_key(), value[2])


DATA = [("a", 1, 1), ("a", 2, 2), ("b", 3, 5), ("a", 4, 0), ("a", 5, 3), ("b", 6, 4)]


def _side_job(chaining: bool) -> Any:
    env = env_for(2, chaining=chaining)
    main = timestamped(env, DATA).process(Split())
    collect(main.get_side_output(ODD), "odd")
    keyed = main.key_by(lambda v: v[0]).process(KeyedSplit())
    collect(keyed, "main")
    collect(keyed.get_side_output(BIG), "big")
    return env.get_job_graph()


@pytest.mark.parametrize("chaining", [True, False])
def test_process_function_side_outputs(chaining: bool) -> None:
    r = run_reference(_side_job(chaining))
    assert sorted(r["odd"]) == [("a", 10, 1), ("a", 30, 5), ("b", 50, 3)]
    assert sorted(r["main"]) == [("a", 0), ("a", 2), ("b", 4)]
    assert r["big"] == [("b", 4)]


# ----------------------------------------------------------------- keyed state


def _plus(a: int, b: int) -> int:
    return a + b


class States(KeyedProcessFunction):
    def open(self, runtime_context: Any) -> None:
        self.seen = runtime_context.get_list_state(ListStateDescriptor("seen"))
        self.parity = runtime_context.get_map_state(MapStateDescriptor("parity"))
        self.total = runtime_context.get_reducing_state(ReducingStateDescriptor("total", _plus))

    def process_element(self, value: Any, ctx: Any) -> Any:
        v = value[2]
        if v == 0:
            self.seen.clear()
            self.parity.clear()
            self.total.clear()
        else:
            self.seen.add(v)
            p = "odd" if v % 2 else "even"
            self.parity.put(p, (self.parity.get(p) or 0) + 1)
            self.total.add(v)
            if v == 4:  # update replaces the list, remove drops one map entry
                self.seen.update([40] + self.seen.get())
                self.parity.remove("odd")
        yield (ctx.get_current_key(), self.seen.get(), sorted(self.parity.items()),
               self.total.get(), self.parity.contains("even"), self.parity.is_empty())


def _state_job(p: int) -> Any:
    env = env_for(p)
    collect(timestamped(env, DATA).key_by(lambda v: v[0]).process(States()))
    return env.get_job_graph()


STATE_EXPECTED = [
    ("a", [1], [("odd", 1)], 1, False, False),
    ("a", [1, 2], [("even", 1), ("odd", 1)], 3, True, False),
    ("a", [], [], None, False, True),  # cleared by 0
    ("a", [3], [("odd", 1)], 3, False, False),
    ("b", [5], [("odd", 1)], 5, False, False),
    ("b", [40, 5, 4], [("even", 1)], 9, True, False),
]


@pytest.mark.parametrize("p", [1, 3])
def test_list_map_reducing_state(p: int) -> None:
    r = run_reference(_state_job(p))
    out = r["out"]
    # Per key, in record order (one key's records go to one subtask, in order).
    assert sorted(out, key=lambda x: x[0]) == STATE_EXPECTED


# ----------------------------------------------------------------- window join

LEFT = [("a", 100, "L1"), ("a", 900, "L2"), ("b", 500, "L3"), ("a", 1200, "L4")]
RIGHT = [("a", 300, "R1"), ("b", 1700, "R2"), ("a", 1100, "R3"), ("c", 200, "R4")]


class WithTs(ProcessFunction):
    def process_element(self, value: Any, ctx: Any) -> Any:
        yield value + (ctx.timestamp(),)


def _join_job(p: int, chaining: bool = True) -> Any:
    env = env_for(p, chaining=chaining)
    left, right = timestamped(env, LEFT), timestamped(env, RIGHT)
    joined = left.join(right).where(lambda v: v[0]).equal_to(lambda v: v[0]) \
        .window(TumblingEventTimeWindows.of(1000)).apply(lambda a, b: (a[0], a[2], b[2]))
    collect(joined.process(WithTs()))
    return env.get_job_graph()


# [0, 1000): a has L1, L2 and R1 -> two pairs; b has only L3, c only R4. [1000, 2000): a has
# L4 and R3; b only R2. Results carry the window's max timestamp (end - 1).
JOIN_EXPECTED = [("a", "L1", "R1", 999), ("a", "L2", "R1", 999), ("a", "L4", "R3", 1999)]


@pytest.mark.parametrize("p", [1, 2])
def test_window_join_hand_computed(p: int) -> None:
    assert sorted(run_reference(_join_job(p))["out"]) == JOIN_EXPECTED


# ----------------------------------------------------------------- on Spark


def _same(jg: Any) -> tuple[JobResult, JobResult]:
    expected = run_reference(jg)
    actual = run_job_graph(jg)
    assert actual.collected == expected.collected
    assert _metrics(actual) == _metrics(expected)
    return expected, actual


@pytest.mark.spark
def test_spark_matches_reference_on_runtime_features(spark: Any) -> None:
    for chaining in (True, False):
        _, a = _same(_discard_job(chaining))
        assert sorted(a["out"]) == [5, 10, 15, 20, 25, 30]
        _, a = _same(_side_job(chaining))
        assert sorted(a["odd"]) == [("a", 10, 1), ("a", 30, 5), ("b", 50, 3)]
        assert a["big"] == [("b", 4)]
    _, a = _same(_datagen_job())
    assert a["out"] == [(i, i * i + 1) for i in range(10)]
    _, a = _same(_state_job(3))
    assert sorted(a["out"], key=lambda x: x[0]) == STATE_EXPECTED
    _, a = _same(_join_job(2))
    assert sorted(a["out"]) == JOIN_EXPECTED
