"""Broadcast state: broadcast(descriptor), connect(broadcast_stream).process(...)."""

from __future__ import annotations

from typing import Any

import pytest

from flowc.common import Types
from flowc.datastream import CollectSink, StreamExecutionEnvironment
from flowc.datastream.functions import BroadcastProcessFunction, KeyedBroadcastProcessFunction
from flowc.datastream.state import MapStateDescriptor
from flowc.errors import ApiError, FlowcError
from flowc.executor import run_reference
from flowc.planner.stream_graph import NodeKind
from flowc.transformations import PartitionerKind

RULES = MapStateDescriptor("rules", Types.STRING(), Types.INT())
OTHER = MapStateDescriptor("other", Types.STRING(), Types.INT())


class Apply(BroadcastProcessFunction):
    def process_element(self, value: Any, ctx: Any) -> Any:
        state = ctx.get_broadcast_state(RULES)
        assert not hasattr(state, "put")  # read-only on the main side
        yield (value, sorted(state.items()))

    def process_broadcast_element(self, value: Any, ctx: Any) -> Any:
        ctx.get_broadcast_state(RULES).put(value[0], value[1])
        return None


def _job(fn: Any, keyed: bool = False, descriptor: Any = RULES) -> Any:
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(2)
    main = env.from_collection(["x", "y"])
    rules = env.from_collection([("a", 1), ("b", 2)])
    left = main.key_by(lambda v: v) if keyed else main
    left.connect(rules.broadcast(descriptor)).process(fn).sink_to(CollectSink("out"))
    return env


def test_every_subtask_gets_every_broadcast_element_and_the_plan_is_flinks() -> None:
    env = _job(Apply())
    sg = env.get_stream_graph()
    (op,) = [n for n in sg.nodes.values() if n.name == "Co-Process-Broadcast"]
    assert op.two_input and op.kind is NodeKind.OPERATOR
    assert sorted(e.partitioner.kind.name for e in sg.inputs(op.id)) == [
        "BROADCAST", "REBALANCE"]
    assert PartitionerKind.BROADCAST in {e.partitioner.kind for e in sg.inputs(op.id)}
    out = run_reference(env.get_job_graph()).collected["out"]
    # Each main element sees the rules its subtask had received by then (the reference
    # executor reads input 1 and 2 in a fixed channel order); the state only grows.
    assert sorted(v for v, _ in out) == ["x", "y"]
    assert all(set(rules) <= {("a", 1), ("b", 2)} for _, rules in out)


def test_function_kind_must_match_and_unknown_states_fail() -> None:
    with pytest.raises(ApiError, match="KeyedBroadcastProcessFunction"):
        _job(Apply(), keyed=True)

    class Keyed(KeyedBroadcastProcessFunction):
        def process_element(self, value: Any, ctx: Any) -> Any:
            yield ctx.get_broadcast_state(OTHER).get("a")

        def process_broadcast_element(self, value: Any, ctx: Any) -> None:
            return None

    with pytest.raises(ApiError, match="non-keyed"):
        _job(Keyed())
    env = _job(Keyed(), keyed=True)
    with pytest.raises(FlowcError, match="The requested state does not exist"):
        run_reference(env.get_job_graph())
