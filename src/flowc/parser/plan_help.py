"""Script-level help for planner errors.

Planner errors carry Flink's exception text unchanged (tests compare it with a real Flink
run), which speaks of operators as ``Map-4`` and of ``uid(String)``. This adds what a script
author needs: where the other operator is and what to change, in the script's own words.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from flowc.api.environment import StreamExecutionEnvironment
from flowc.errors import PlanError, Span
from flowc.parser.syntax import STEP_WORDS

_UID = re.compile(r'^Hash collision on user-specified ID "(.*)"\. Most likely cause')
_FORWARD = re.compile(r"^Forward partitioning does not allow change of parallelism\. "
                      r"Upstream operation: (.*)-(\d+) parallelism: (\d+), downstream "
                      r"operation: (.*)-(\d+) parallelism: (\d+) You must")


@contextmanager
def plan_help(env: StreamExecutionEnvironment) -> Iterator[None]:
    """Planner errors raised inside get the script-level help of :func:`add_plan_help`."""
    try:
        yield
    except PlanError as e:
        add_plan_help(e, env)
        raise


def add_plan_help(err: PlanError, env: StreamExecutionEnvironment) -> PlanError:
    """Adds a help line and related positions to a planner error about ``env``'s job (the
    message is left exactly as Flink words it)."""
    if err.hint is not None or err.related:
        return err  # already explained
    transformations = env.program().transformations
    m = _UID.match(err.message)
    if m is not None:
        uid = m.group(1)
        others = [t.span for _, t in sorted(transformations.items())
                  if t.uid == uid and t.span is not None and t.span != err.span]
        err.hint = "give every operator its own uid"
        if others:
            err.related = ((f'the other operator with uid "{uid}" is here', others[0]),)
        return err
    m = _FORWARD.match(err.message)
    if m is not None:
        up = transformations.get(int(m.group(2)))
        down = transformations.get(int(m.group(5))) or _sink_of(transformations,
                                                                 m.group(4), up)
        if up is None or down is None:
            return err
        up_p, down_p = m.group(3), m.group(6)
        forward = next((t for t in transformations.values()
                        if up.id in getattr(t, "inputs", ()) and t.id in down.inputs), None)
        where = f" (line {forward.span.line})" if forward is not None and forward.span else ""
        err.hint = (f"'forward'{where} connects {_describe(up, m.group(1))} (parallelism "
                    f"{up_p}) to {_describe(down, m.group(4))} (parallelism {down_p}): use "
                    "'rebalance' or 'rescale' instead of 'forward', or give both the same "
                    "parallelism")
        if up.span is not None:
            err.related = ((f"the upstream operator (parallelism {up_p}) is here", up.span),)
    return err


def _sink_of(transformations: dict[int, Any], name: str, up: Any) -> Any:
    """The sink transformation behind a sink's ``<name>: Writer`` (or ``: Committer``)
    operator, which has an id of its own: the sink of that name that ``up`` feeds."""
    base = re.sub(r": (Writer|Committer)$", "", name)
    if up is None or base == name:
        return None
    for t in transformations.values():
        if t.name != base:
            continue
        for i in getattr(t, "inputs", ()):
            if i == up.id or up.id in getattr(transformations.get(i), "inputs", ()):
                return t
    return None


def _describe(t: Any, name: str) -> str:
    """``the 'map' on line 6`` for a script step, ``Map-4 (line 6)`` otherwise."""
    span: Span | None = t.span
    if span is None:
        return f"{name}-{t.id}"
    line = span.source_line() or ""
    word = re.match(r"[A-Za-z_]*", line[span.column - 1:])
    step = word.group() if word else ""
    if step in STEP_WORDS or step == "source":
        return f"the '{step}' on line {span.line}"
    return f"{name}-{t.id} (line {span.line})"
