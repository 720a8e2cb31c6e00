"""KeyedStream.sum / min / max / min_by / max_by on the reference executor, against Flink's
documented semantics (DataStream API, "Aggregations"; SumAggregator / ComparableAggregator):

- ``sum(p)``, ``min(p)``, ``max(p)`` are rolling: the first record of a key is emitted as it
  is; afterwards only field ``p`` changes, every other field stays the *first* record's;
- ``min_by(p)`` / ``max_by(p)`` emit the whole record holding the extreme value, the first
  such record on ties (PyFlink's ``min_by``/``max_by`` use Flink's ``first = true``);
- STREAMING emits the running value for every record, BATCH only each key's final value
  (Flink's BATCH execution mode: rolling operations are not rolling);
- the operator is named "Keyed Aggregation" whatever the kind.

The expectations are written out by hand, not computed with the operator's own code.
"""

from __future__ import annotations

from collections import namedtuple
from typing import Any

import pytest

from flowc.datastream import CollectSink, KeyedStream, StreamExecutionEnvironment
from flowc.executor import run_reference
from flowc.transformations import RuntimeExecutionMode

# Key "a": the values 3, 1, 4, 1, 4 (ties at 1 and at 4); key "b": one record.
DATA = [("a", 3, "p"), ("b", 7, "u"), ("a", 1, "q"), ("a", 4, "r"), ("a", 1, "s"),
        ("a", 4, "t")]

EXPECTED_STREAMING = {
    "sum": [("a", 3, "p"), ("a", 4, "p"), ("a", 8, "p"), ("a", 9, "p"), ("a", 13, "p")],
    # max / min: the first record ("p") with the field replaced.
    "max": [("a", 3, "p"), ("a", 3, "p"), ("a", 4, "p"), ("a", 4, "p"), ("a", 4, "p")],
    "min": [("a", 3, "p"), ("a", 1, "p"), ("a", 1, "p"), ("a", 1, "p"), ("a", 1, "p")],
    # max_by / min_by: the whole extreme record, the first one on ties ("r", not "t").
    "max_by": [("a", 3, "p"), ("a", 3, "p"), ("a", 4, "r"), ("a", 4, "r"), ("a", 4, "r")],
    "min_by": [("a", 3, "p"), ("a", 1, "q"), ("a", 1, "q"), ("a", 1, "q"), ("a", 1, "q")],
}
KINDS = list(EXPECTED_STREAMING)


def _env(parallelism: int = 1, batch: bool = False) -> StreamExecutionEnvironment:
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(parallelism)
    if batch:
        env.set_runtime_mode(RuntimeExecutionMode.BATCH)
    return env


def _aggregate(keyed: KeyedStream, kind: str, position: int | str) -> Any:
    return getattr(keyed, kind)(position)


def _run(env: StreamExecutionEnvironment) -> Any:
    return run_reference(env.get_job_graph())


def _of_key(records: list[Any], key: str) -> list[Any]:
    return [r for r in records if r[0] == key]


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("parallelism", [1, 3])
def test_rolling_aggregation_per_record_in_streaming(kind: str, parallelism: int) -> None:
    env = _env(parallelism)
    out = _aggregate(env.from_collection(DATA).key_by(lambda v: v[0]), kind, 1)
    out.sink_to(CollectSink("out"))
    got = _run(env)["out"]
    # Every record of a key reaches one subtask in order, so each key's sequence is exact.
    assert _of_key(got, "a") == EXPECTED_STREAMING[kind]
    assert _of_key(got, "b") == [("b", 7, "u")]
    assert len(got) == len(DATA)
    assert out.get_name() == "Keyed Aggregation"


@pytest.mark.parametrize("kind", KINDS)
def test_batch_emits_only_the_final_value_per_key(kind: str) -> None:
    env = _env(2, batch=True)
    _aggregate(env.from_collection(DATA).key_by(lambda v: v[0]), kind, 1).sink_to(
        CollectSink("out"))
    got = _run(env)["out"]
    assert sorted(got) == sorted([EXPECTED_STREAMING[kind][-1], ("b", 7, "u")])


def test_max_keeps_the_first_records_other_fields_and_max_by_takes_the_whole_record() -> None:
    """The distinction Flink's documentation draws, on one stream side by side."""
    env = _env()
    keyed = env.from_collection([("k", 1, "first"), ("k", 9, "big"), ("k", 5, "mid")]).key_by(
        lambda v: v[0])
    keyed.max(1).sink_to(CollectSink("max"))
    keyed.max_by(1).sink_to(CollectSink("max_by"))
    r = _run(env)
    assert r["max"] == [("k", 1, "first"), ("k", 9, "first"), ("k", 9, "first")]
    assert r["max_by"] == [("k", 1, "first"), ("k", 9, "big"), ("k", 9, "big")]


Reading = namedtuple("Reading", ["sensor", "value", "note"])


@pytest.mark.parametrize("as_dict", [False, True])
def test_field_by_name_for_dicts_and_named_tuples(as_dict: bool) -> None:
    rows = [Reading(*r) for r in DATA]
    data: list[Any] = [r._asdict() for r in rows] if as_dict else rows
    env = _env()
    keyed = env.from_collection(data).key_by("sensor")
    for kind in KINDS:
        _aggregate(keyed, kind, "value").sink_to(CollectSink(kind))
    r = _run(env)
    for kind in KINDS:
        expected = [Reading(*t) for t in EXPECTED_STREAMING[kind]]
        got = [Reading(**v) if as_dict else v for v in r[kind] if v["sensor" if as_dict else 0]
               == "a"]
        assert got == expected, kind
        if not as_dict:
            assert all(type(v) is Reading for v in r[kind])  # still the record's own type


def test_scalar_stream_field_zero_is_the_value() -> None:
    """For a stream of plain values, position 0 is the value itself (as for Flink's basic
    types)."""
    env = _env()
    keyed = env.from_collection([5, 2, 8, 3, 10]).key_by(lambda v: "all")
    for kind in KINDS:
        _aggregate(keyed, kind, 0).sink_to(CollectSink(kind))
    r = _run(env)
    assert r["sum"] == [5, 7, 15, 18, 28]
    assert r["max"] == r["max_by"] == [5, 5, 8, 8, 10]
    assert r["min"] == r["min_by"] == [5, 2, 2, 2, 2]
