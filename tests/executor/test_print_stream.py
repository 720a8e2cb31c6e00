"""Print sinks on Spark stream their lines to stdout a partition at a time: the driver
never holds a whole print result (1M printed rows used to take 659 MB of driver memory)."""

from __future__ import annotations

import io
import sys
import tracemalloc
from typing import Any

import pytest

from flowc.executor import run_job_graph
from flowc.executor.spark import runner

from .helpers import env_for

pytestmark = pytest.mark.spark


class _CountingOut(io.TextIOBase):
    """stdout that only counts lines (so the test itself holds none)."""

    def __init__(self) -> None:
        self.lines = 0
        self.first = ""

    def write(self, text: str) -> int:
        if not self.first:
            self.first = text.split("\n", 1)[0]
        self.lines += text.count("\n")
        return len(text)


def _wide(v: int) -> tuple[int, str]:
    return (v, "x" * 100)


def test_a_large_print_result_streams_without_being_collected(
        spark: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    rows = 200_000  # ~25 MB of lines if collected
    env = env_for(4)
    env.from_sequence(1, rows).map(_wide).print()
    jg = env.get_job_graph()
    out = _CountingOut()
    monkeypatch.setattr(sys, "stdout", out)
    tracemalloc.start()
    try:
        r = run_job_graph(jg)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 8 << 20, f"driver peak {peak / 1e6:.1f} MB"
    assert out.lines == rows
    assert out.first == f"1> (1, '{'x' * 100}')"
    assert len(r.printed) == runner.PRINTED_KEPT  # the first lines only
    assert r.printed[0] == out.first


def test_print_lines_keep_sink_subtask_arrival_order(spark: Any,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    from flowc.executor import run_reference

    env = env_for(3)
    s = env.from_sequence(1, 20).rebalance().map(lambda v: v * 2)
    s.print("a")
    s.filter(lambda v: v % 3 == 0).print_to_err("b")
    jg = env.get_job_graph()
    r = run_job_graph(jg)
    captured = capsys.readouterr()
    assert r.printed == run_reference(jg).printed
    assert captured.out.splitlines() == [x for x in r.printed if x.startswith("a:")]
    assert captured.err.splitlines() == [x for x in r.printed if x.startswith("b:")]
