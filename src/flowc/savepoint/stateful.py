"""Which operators of a plan hold state in Flink, and under which state names.

Flink's savepoint is a map from operator id to that operator's state; everything
``flowc explain --diff`` and the savepoint metadata say is about these operators. The names
are those Flink's operators register (``WindowOperator``'s ``window-contents``,
``SourceOperator``'s ``SourceReaderState`` ...); a user function's own state descriptors are
added when its ``open()`` creates them with a literal name (read from its source, best
effort: the plan cannot run ``open()``).
"""

from __future__ import annotations

import ast
import inspect
import textwrap
from dataclasses import dataclass
from typing import Any

from flowc.chaining.execution_graph import ExecutionGraph
from flowc.errors import Span
from flowc.operators import (
    AggregationOp,
    BroadcastProcessOp,
    CountWindowOp,
    FileSink,
    IntervalJoinOp,
    KeyedBroadcastProcessOp,
    KeyedCoProcessOp,
    KeyedProcessOp,
    ReduceOp,
    SourceSpec,
    TriggerWindowOp,
    WindowOp,
)
from flowc.planner.sink_topology import SinkCommitterOp
from flowc.planner.stream_graph import StreamNode
from flowc.triggers import CountTrigger

# Flink's names (flink-streaming-java / flink-runtime operators).
WINDOW_CONTENTS = "window-contents"  # WindowOperator.windowStateDescriptor
WINDOW_TIMERS = "window-timers"  # WindowOperator's InternalTimerService
MERGING_WINDOW_SET = "merging-window-set"  # WindowOperator, merging assigners
COUNT_TRIGGER = "count"  # CountTrigger.stateDesc
USER_TIMERS = "user-timers"  # KeyedProcessOperator / KeyedCoProcessOperator / broadcast
REDUCE_STATE = "_op_state"  # StreamGroupedReduceOperator.STATE_NAME
SOURCE_READER = "SourceReaderState"  # SourceOperator.SPLITS_STATE_DESC
WRITER_STATE = "writer_raw_states"  # SinkWriterOperator (stateful writers)
COMMITTER_STATE = "streaming_committer_raw_states"  # CommitterOperator


@dataclass(frozen=True)
class StatefulOperator:
    """One operator that holds state: what a savepoint stores under ``state_id``."""

    node_id: int
    # Generated operator id, hex as Flink prints it: a savepoint files the state under it.
    id: str
    # set_uid_hash: an id a restore also matches old state against (Flink's OperatorIDPair).
    uid_hash: str | None
    uid: str | None
    name: str
    vertex_id: str
    vertex_name: str
    parallelism: int
    max_parallelism: int
    # Whether the job set the max parallelism (Flink adapts a derived one to a savepoint's).
    max_parallelism_configured: bool
    keyed: bool
    state_names: tuple[str, ...]
    kind: str  # the operator spec's class name
    span: Span | None = None


def state_names(node: StreamNode) -> tuple[str, ...] | None:
    """Flink's state names of ``node``'s operator, or None when it holds no state."""
    op = node.operator
    if isinstance(op, SourceSpec):
        return (SOURCE_READER,)  # FLIP-27 sources: split positions; the enumerator's too
    if isinstance(op, SinkCommitterOp):
        return (COMMITTER_STATE,)
    if node.sink_writer:
        spec = op
        return (WRITER_STATE,) if isinstance(spec, FileSink) else None
    if isinstance(op, (WindowOp, TriggerWindowOp, CountWindowOp)):
        names = [WINDOW_CONTENTS, WINDOW_TIMERS]
        if getattr(op.assigner, "is_merging", False):
            names.append(MERGING_WINDOW_SET)
        trigger = getattr(op, "trigger", None)
        if isinstance(op, CountWindowOp) or isinstance(trigger, CountTrigger):
            names.append(COUNT_TRIGGER)
        return tuple(names) + _declared(op.window_fn)
    if isinstance(op, (ReduceOp, AggregationOp)):
        return (REDUCE_STATE,)
    if isinstance(op, (KeyedProcessOp, KeyedCoProcessOp)):
        return (USER_TIMERS,) + _declared(op.fn)
    if isinstance(op, IntervalJoinOp) and op.table_runtime:
        # SQL's interval joins run the table runtime's TimeIntervalJoin: its states
        return ("IntervalJoinLeftCache", "IntervalJoinRightCache",
                "IntervalJoinLeftTimerState", "IntervalJoinRightTimerState")
    if isinstance(op, IntervalJoinOp):
        # IntervalJoinOperator's buffers and its cleanup timer service.
        return ("LEFT_BUFFER", "RIGHT_BUFFER", "CLEANUP_TIMER")
    if isinstance(op, KeyedBroadcastProcessOp):
        return (_descriptor_names(op.descriptors) + (USER_TIMERS,) + _declared(op.fn))
    if isinstance(op, BroadcastProcessOp):
        return _descriptor_names(op.descriptors)
    return None


def _descriptor_names(descriptors: tuple[Any, ...]) -> tuple[str, ...]:
    return tuple(str(d.name) for d in descriptors if getattr(d, "name", None))


def _declared(fn: Any) -> tuple[str, ...]:
    """Literal names of the state descriptors the function's class creates (``open()``
    usually): ``ValueStateDescriptor("total", ...)`` -> ``total``."""
    if fn is None:
        return ()
    cls = fn if isinstance(fn, type) else type(fn)
    if cls.__module__ == "builtins" or inspect.isfunction(fn):
        return ()
    # Method by method: a class of a program run as __main__ has no module to read.
    trees = []
    for klass in cls.__mro__:
        if klass.__module__.startswith(("flowc.", "builtins")):
            continue
        for member in vars(klass).values():
            if inspect.isfunction(member):
                try:
                    trees.append(ast.parse(textwrap.dedent(inspect.getsource(member))))
                except (OSError, TypeError, SyntaxError):
                    continue
    names: list[str] = []
    for call in (c for tree in trees for c in ast.walk(tree)):
        if not isinstance(call, ast.Call) or not call.args:
            continue
        f = call.func
        callee = f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", "")
        first = call.args[0]
        if callee.endswith("StateDescriptor") and isinstance(first, ast.Constant) \
                and isinstance(first.value, str) and first.value not in names:
            names.append(first.value)
    return tuple(names)


def stateful_operators(graph: ExecutionGraph) -> tuple[StatefulOperator, ...]:
    """Every operator of the plan that holds state in Flink, in the ExecutionGraph's
    (topological) vertex order and each vertex's operator order."""
    nodes = graph.job_graph.stream_graph.nodes
    out: list[StatefulOperator] = []
    for ev in graph.vertices:
        jv = ev.job_vertex
        for info in jv.operators:
            node = nodes[info.node_id]
            names = state_names(node)
            if names is None:
                continue
            out.append(StatefulOperator(
                node_id=node.id, id=info.id, uid_hash=info.uid_hash, uid=info.uid,
                name=info.name, vertex_id=jv.id, vertex_name=jv.name,
                parallelism=ev.parallelism, max_parallelism=ev.max_parallelism,
                max_parallelism_configured=jv.max_parallelism > 0, keyed=node.is_keyed,
                state_names=names, kind=type(node.operator).__name__, span=node.span))
    return tuple(out)
