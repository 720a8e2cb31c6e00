"""Keyed state handles (runtime/state.py) directly: per-key isolation and Flink's null rules
of the heap state backend."""

from __future__ import annotations

import pytest

from flowc.datastream import (
    ListStateDescriptor,
    MapStateDescriptor,
    ReducingStateDescriptor,
    ValueStateDescriptor,
)
from flowc.errors import ExecutionError
from flowc.executor.runtime.state import KeyedStateBackend, RuntimeContext


def _ctx() -> tuple[KeyedStateBackend, RuntimeContext]:
    b = KeyedStateBackend()
    return b, RuntimeContext("op", 0, 1, 128, b)


def test_list_state_per_key_and_null_rules() -> None:
    b, ctx = _ctx()
    s = ctx.get_list_state(ListStateDescriptor("l"))
    b.current_key = "a"
    s.add(1)
    s.add_all([2, 3])
    b.current_key = "b"
    assert s.get() == [] and list(s) == []
    s.update([9])
    b.current_key = "a"
    assert s.get() == [1, 2, 3]
    with pytest.raises(ExecutionError, match="You cannot add null to a ListState."):
        s.add(None)
    with pytest.raises(ExecutionError, match="You cannot add null to a ListState."):
        s.update([4, None])
    with pytest.raises(ExecutionError, match="List of values to add cannot be null."):
        s.add_all(None)  # type: ignore[arg-type]
    assert s.get() == [1, 2, 3]  # a rejected call changes nothing
    s.update([])
    assert s.get() == [] and "a" not in b.tables["l"]
    b.current_key = "b"
    assert s.get() == [9]


def test_reducing_state_adding_null_clears() -> None:
    b, ctx = _ctx()
    s = ctx.get_reducing_state(ReducingStateDescriptor("r", lambda x, y: x + y))
    b.current_key = 1
    assert s.get() is None
    s.add(2)
    s.add(5)
    assert s.get() == 7
    s.add(None)  # Flink's HeapReducingState: add(null) clears
    assert s.get() is None
    s.add(1)
    assert s.get() == 1


def test_map_state_and_value_state() -> None:
    b, ctx = _ctx()
    m = ctx.get_map_state(MapStateDescriptor("m"))
    v = ctx.get_state(ValueStateDescriptor("v"))
    b.current_key = "k"
    assert m.is_empty() and m.get("x") is None
    m.put("x", 1)
    m.put_all({"y": 2})
    assert sorted(m.items()) == [("x", 1), ("y", 2)] and m.contains("y")
    m.remove("x")
    m.remove("y")
    assert m.is_empty() and "k" not in b.tables["m"]  # an empty map is no entry
    v.update(3)
    assert v.value() == 3
    v.update(None)  # Flink: update(null) clears
    assert v.value() is None and "k" not in b.tables["v"]
    with pytest.raises(ExecutionError, match="registered as MapStateDescriptor"):
        ctx.get_state(ValueStateDescriptor("m"))


def test_state_outside_a_keyed_stream_fails() -> None:
    ctx = RuntimeContext("op", 0, 1, 128, None)
    with pytest.raises(ExecutionError, match="Keyed state can only be used on a 'keyed stream'"):
        ctx.get_list_state(ListStateDescriptor("l"))
