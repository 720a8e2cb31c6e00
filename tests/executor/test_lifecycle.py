"""Function lifecycle in a chain (flink-semantics §7): open tail -> head, close head -> tail,
a failed open closes what was opened before it, a failed task closes its open operators.
Functions append ``subtask event name`` lines to a file, so calls made inside Spark's worker
processes are visible to the test; both executors must produce the same lines per subtask."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from flowc.datastream import (
    FilterFunction,
    FlatMapFunction,
    KeyedProcessFunction,
    MapFunction,
    ProcessFunction,
)
from flowc.errors import ExecutionError
from flowc.executor import run_job_graph, run_reference

from .helpers import collect, env_for


class _Recording:
    """Mixin: records open/close (and optional failures) in ``path``."""

    def setup(self, name: str, path: Path, fail_open: bool = False,
              fail_on: Any = None) -> None:
        self.name = name
        self.path = str(path)
        self.fail_open = fail_open
        self.fail_on = fail_on
        self.subtask = -1

    def _log(self, event: str) -> None:
        fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT)
        try:
            os.write(fd, f"{self.subtask} {event} {self.name}\n".encode())
        finally:
            os.close(fd)

    def open(self, runtime_context: Any) -> None:
        self.subtask = runtime_context.get_index_of_this_subtask()
        self._log("open")
        if self.fail_open:
            raise RuntimeError(f"{self.name} cannot open")

    def close(self) -> None:
        self._log("close")

    def check(self, value: Any) -> None:
        if self.fail_on is not None and value == self.fail_on:
            raise ValueError(f"{self.name} rejects {value}")


class RecMap(_Recording, MapFunction):
    def __init__(self, name: str, path: Path, **kw: Any) -> None:
        self.setup(name, path, **kw)

    def map(self, value: Any) -> Any:
        self.check(value)
        return value


class RecFilter(_Recording, FilterFunction):
    def __init__(self, name: str, path: Path) -> None:
        self.setup(name, path)

    def filter(self, value: Any) -> bool:
        return True


class RecFlat(_Recording, FlatMapFunction):
    def __init__(self, name: str, path: Path) -> None:
        self.setup(name, path)

    def flat_map(self, value: Any) -> Any:
        yield value


class RecProcess(_Recording, ProcessFunction):
    def __init__(self, name: str, path: Path) -> None:
        self.setup(name, path)

    def process_element(self, value: Any, ctx: Any) -> Any:
        yield value


class RecKeyed(_Recording, KeyedProcessFunction):
    def __init__(self, name: str, path: Path) -> None:
        self.setup(name, path)

    def process_element(self, value: Any, ctx: Any) -> Any:
        yield value


def _events(path: Path) -> dict[int, list[str]]:
    """Per subtask, the events in the order that subtask made them."""
    per: dict[int, list[str]] = {}
    for line in path.read_text().splitlines():
        subtask, event, name = line.split(" ")
        per.setdefault(int(subtask), []).append(f"{event} {name}")
    return per


def _linear(path: Path, p: int = 2) -> Any:
    env = env_for(p)
    s = env.from_collection(list(range(10)))
    s = s.map(RecMap("m1", path)).filter(RecFilter("f", path)) \
        .flat_map(RecFlat("fm", path)).process(RecProcess("p", path)) \
        .map(RecMap("m2", path))
    # A second chain behind a HASH edge: its own lifecycle.
    collect(s.key_by(lambda v: v % 3).process(RecKeyed("k", path)).map(RecMap("m3", path)))
    return env.get_job_graph()


LINEAR = ["open m2", "open p", "open fm", "open f", "open m1",
          "close m1", "close f", "close fm", "close p", "close m2"]
KEYED = ["open m3", "open k", "close k", "close m3"]


def _split(events: dict[int, list[str]]) -> dict[int, tuple[list[str], list[str]]]:
    keyed = {"m3", "k"}
    return {s: ([e for e in ev if e.split()[1] not in keyed],
                [e for e in ev if e.split()[1] in keyed]) for s, ev in events.items()}


def test_reference_opens_tail_first_and_closes_head_first(tmp_path: Path) -> None:
    path = tmp_path / "events"
    result = run_reference(_linear(path))
    assert sorted(result["out"]) == list(range(10))
    assert _split(_events(path)) == {s: (LINEAR, KEYED) for s in range(2)}


def test_fan_out_chain_follows_flink_operator_order(tmp_path: Path) -> None:
    """A -> (B, C) chained: Flink creates B, C, then A (post-order, head last): opens B, C,
    A and closes A, C, B."""
    path = tmp_path / "events"
    env = env_for(1)
    a = env.from_collection([1, 2]).map(RecMap("A", path))
    collect(a.map(RecMap("B", path)), "b")
    collect(a.map(RecMap("C", path)), "c")
    jg = env.get_job_graph()
    run_reference(jg)
    assert _events(path) == {0: ["open B", "open C", "open A",
                                 "close A", "close C", "close B"]}


def test_failed_open_closes_what_was_opened(tmp_path: Path) -> None:
    path = tmp_path / "events"
    env = env_for(1)
    collect(env.from_collection([1, 2]).map(RecMap("m1", path))
            .map(RecMap("m2", path, fail_open=True)).name("broken").map(RecMap("m3", path)))
    with pytest.raises(ExecutionError, match="operator 'broken'.*m2 cannot open"):
        run_reference(env.get_job_graph())
    assert _events(path) == {0: ["open m3", "open m2", "close m3"]}


def test_failed_record_closes_the_chain(tmp_path: Path) -> None:
    path = tmp_path / "events"
    env = env_for(1)
    collect(env.from_collection([1, 2, 3]).map(RecMap("m1", path))
            .map(RecMap("m2", path, fail_on=2)).name("picky").map(RecMap("m3", path)))
    with pytest.raises(ExecutionError, match="operator 'picky'.*m2 rejects 2"):
        run_reference(env.get_job_graph())
    assert _events(path) == {0: ["open m3", "open m2", "open m1",
                                 "close m1", "close m2", "close m3"]}


@pytest.mark.spark
def test_spark_lifecycle_matches_reference(spark: Any, tmp_path: Path) -> None:
    ref_path, spark_path = tmp_path / "ref", tmp_path / "spark"
    expected = run_reference(_linear(ref_path))
    actual = run_job_graph(_linear(spark_path))
    assert sorted(actual["out"]) == sorted(expected["out"])
    assert _split(_events(spark_path)) == _split(_events(ref_path)) == \
        {s: (LINEAR, KEYED) for s in range(2)}


@pytest.mark.spark
def test_spark_fan_out_and_failures_match_reference(spark: Any, tmp_path: Path) -> None:
    def fan_out(path: Path) -> Any:
        env = env_for(1)
        a = env.from_collection([1, 2]).map(RecMap("A", path))
        collect(a.map(RecMap("B", path)), "b")
        collect(a.map(RecMap("C", path)), "c")
        return env.get_job_graph()

    def failing(path: Path, **kw: Any) -> Any:
        env = env_for(1)
        collect(env.from_collection([1, 2, 3]).map(RecMap("m1", path))
                .map(RecMap("m2", path, **kw)).name("broken").map(RecMap("m3", path)))
        return env.get_job_graph()

    run_reference(fan_out(tmp_path / "r0"))
    run_job_graph(fan_out(tmp_path / "s0"))
    assert _events(tmp_path / "s0") == _events(tmp_path / "r0")
    for i, kw in enumerate([{"fail_open": True}, {"fail_on": 2}]):
        ref, spk = tmp_path / f"r{i + 1}", tmp_path / f"s{i + 1}"
        with pytest.raises(ExecutionError, match="operator 'broken'") as r_err:
            run_reference(failing(ref, **kw))
        with pytest.raises(ExecutionError, match="operator 'broken'") as s_err:
            run_job_graph(failing(spk, **kw))
        assert str(s_err.value) == str(r_err.value)
        assert _events(spk) == _events(ref)
