"""How a micro-batch's vertices map onto Spark stages.

Every Spark stage costs a micro-batch a scheduling round trip, Python task start-ups and,
between stages, a shuffle (~0.1-0.3 s each on a small machine, whatever the data). A vertex
fed only by a stage that runs as **one** Spark task needs no shuffle: that task can run
the vertex's subtasks itself, one after the other, handing each subtask exactly the items
it would have received through the shuffle (the same channels, each in its producer's
order). So a stage is either one vertex whose subtask *i* is Spark partition *i*, or -
starting from a source vertex of parallelism 1 - that vertex plus the vertices fed only by
the stage, all their subtasks in one task (``run_fused``). Subtasks are logical: each one
keeps its own snapshot, channels and watermarks wherever it runs, so results, snapshots
and checkpoints are the same either way (``flowc.streaming.fuse = false`` runs one stage
per vertex).

A keyed vertex of parallelism > 1 keeps its own stage (its parallelism is what spreads
its state and work over the cores); so does a vertex fed by several stages.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, replace
from typing import Any

from flowc.executor.streaming.plan import StreamingPlan, VertexPlan
from flowc.executor.streaming.task import BatchContext

OPTION = "flowc.streaming.fuse"

# (vertex, subtask, its input payloads or None for a source subtask) -> its items
RunSubtask = Callable[[VertexPlan, int, Any], Iterator[tuple[int, Any]]]


@dataclass(frozen=True)
class Stage:
    """One Spark stage of a micro-batch: ``vertices`` (topological); ``tasks`` its Spark
    partitions (a fused stage has one); ``inputs`` the (producer stage, stage slot) pairs
    it reads; ``slots`` maps each (vertex, slot) leaving the stage to its stage slot
    (the items' first field); ``internal`` the (vertex, slot) edges that stay inside."""

    index: int
    vertices: tuple[VertexPlan, ...]
    tasks: int
    inputs: tuple[tuple[int, int], ...]
    slots: dict[tuple[str, int], int]
    internal: frozenset[tuple[str, int]]
    # A one-task stage read by others: the first of them, which passes this stage's sink /
    # dead-letter / stats items on (``Carried`` through the shuffle), so the stage is
    # neither cached nor read a second time for the batch's collect. None: collected.
    carrier: int | None = None

    @property
    def fused(self) -> bool:
        return len(self.vertices) > 1


def fuse_option(options: dict[str, str]) -> bool:
    value = str(options.get(OPTION, "true")).strip().lower()
    if value not in ("true", "false"):
        from flowc.errors import ConfigError

        raise ConfigError(f"unknown value '{value}' for {OPTION} (use true or false)")
    return value == "true"


def plan_stages(plan: StreamingPlan, fuse: bool = True) -> list[Stage]:
    """The micro-batch's Spark stages, in topological order."""
    stage_of: dict[str, int] = {}
    groups: list[list[VertexPlan]] = []
    for v in plan.vertices:  # topological: producers first
        producers = {stage_of[vid] for vid, _ in v.inputs}
        one = next(iter(producers)) if len(producers) == 1 else None
        root = None if one is None else groups[one][0]
        # a fused stage starts at a source (so it has no inputs from other stages)
        if fuse and root is not None and root.source is not None and \
                root.parallelism == 1 and (v.parallelism == 1 or not _keyed(v)):
            groups[one].append(v)
            stage_of[v.id] = one
            continue
        stage_of[v.id] = len(groups)
        groups.append([v])
    # the edges each stage sends to others, numbered per stage
    slots: list[dict[tuple[str, int], int]] = [{} for _ in groups]
    internal: list[set[tuple[str, int]]] = [set() for _ in groups]
    inputs: list[list[tuple[int, int]]] = [[] for _ in groups]
    for k, group in enumerate(groups):
        for v in group:
            for vid, slot in v.inputs:
                src = stage_of[vid]
                if src == k:
                    internal[k].add((vid, slot))
                    continue
                own = slots[src]
                if (vid, slot) not in own:
                    # a one-vertex stage keeps the vertex's slot numbers
                    own[(vid, slot)] = slot if len(groups[src]) == 1 else len(own)
                inputs[k].append((src, own[(vid, slot)]))
    stages = [Stage(k, tuple(g), 1 if len(g) > 1 else g[0].parallelism,
                    tuple(dict.fromkeys(inputs[k])), slots[k], frozenset(internal[k]))
              for k, g in enumerate(groups)]
    return [replace(st, carrier=next((c.index for c in stages if any(
        src == st.index for src, _ in c.inputs)), None) if st.tasks == 1 else None)
        for st in stages]


def _keyed(v: VertexPlan) -> bool:
    return any(k is not None for m in v.members for k in m.keys)


def run_fused(stage: Stage, run: RunSubtask) -> Iterator[tuple[int, Any]]:
    """The fused stage's one task: every vertex's subtasks in turn, each fed what its
    producers in the stage sent it (channel by channel in production order, as a shuffle
    delivers them); items for other stages leave under their stage slot, sink /
    dead-letter / stats items (negative kinds) as they are."""
    sent: dict[tuple[str, int], dict[int, list[Any]]] = {e: {} for e in stage.internal}
    for v in stage.vertices:
        for idx in range(v.parallelism):
            received: list[Any] | None = None
            if v.source is None:
                received = [x for e in v.inputs for x in sent[e].get(idx, ())]
            for kind, payload in run(v, idx, received):
                if kind < 0:
                    yield kind, payload
                elif (v.id, kind) in sent:
                    sent[(v.id, kind)].setdefault(payload[0], []).append(payload[1])
                else:
                    yield stage.slots[(v.id, kind)], payload
        for vid, slot in v.inputs:  # each edge has one consumer vertex: free it
            sent.pop((vid, slot), None)


def subtask_runner(plan: StreamingPlan, chains: dict[str, Any] | None, ctx: BatchContext,
                   shares: dict[int, list[Any]]) -> RunSubtask:
    """Runs one vertex subtask of the batch ``ctx`` (in a Spark task), columnar
    (``chains``: per vertex, ``columnar.py``) or row by row (None): a source subtask reads
    its share (``shares``: per source, per subtask), another gets its received edge
    payloads."""
    from flowc.executor.streaming.columnar import run_columnar_subtask
    from flowc.executor.streaming.task import run_subtask

    sources = plan.sources

    def run(v: VertexPlan, idx: int, received: list[Any] | Iterable[Any] | None
            ) -> Iterator[tuple[int, Any]]:
        source = None if v.source is None else \
            (sources[v.source].spec, shares[v.source][idx])
        if chains is not None:  # the edges carry Arrow chunks
            return run_columnar_subtask(v, chains[v.id], idx, ctx, source, received)
        return run_subtask(v, idx, ctx, source,
                           None if received is None else ((0, x) for x in received))
    return run


@dataclass(frozen=True)
class Carried:
    """A producer stage's sink / dead-letter / stats item on its way to the driver through
    the consumer stage's partition 0 (``Stage.carrier``)."""

    item: tuple[int, Any]


def outgoing(slots: frozenset[int], carry: bool
             ) -> Callable[[Iterable[tuple[int, Any]]], Iterator[tuple[int, Any]]]:
    """What a consumer takes from a producer stage's partition: the ``(target, payload)`` items of
    its ``slots`` and, when it carries the stage, the stage's negative items (to its
    partition 0, in their order: a one-task stage's items come from one partition)."""
    def take(items: Iterable[tuple[int, Any]]) -> Iterator[tuple[int, Any]]:
        for kind, payload in items:
            if kind in slots:
                yield payload
            elif carry and kind < 0:
                yield 0, Carried((kind, payload))
    return take


def consume(run: Callable[[Iterable[Any]], Iterator[tuple[int, Any]]],
            items: Iterable[tuple[int, Any]]) -> Iterator[tuple[int, Any]]:
    """A consumer subtask over its shuffled partition: the payloads to ``run``, then the
    carried items as they came (a subtask reads all its input before it yields)."""
    carried: list[tuple[int, Any]] = []

    def payloads() -> Iterator[Any]:
        for _, payload in items:
            if type(payload) is Carried:
                carried.append(payload.item)
            else:
                yield payload
    yield from run(payloads())
    yield from carried
