"""Small helpers shared by the planner rule tests (tests/test_*_rules.py)."""

from __future__ import annotations

from flowc.datastream import StreamExecutionEnvironment


def env(p: int = 2) -> StreamExecutionEnvironment:
    e = StreamExecutionEnvironment.get_execution_environment()
    e.set_parallelism(p)
    return e


def inc(v: int) -> int:
    return v + 1


def key(v: int) -> int:
    return v % 7
