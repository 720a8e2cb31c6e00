"""``flowc explain --diff``: which state of the old job the new job restores.

Flink's rules, applied to plans (Checkpoints.loadAndValidateCheckpoint and
StateAssignmentOperation.checkParallelismPreconditions, Flink 2.3):

- old state is matched by operator id: the new job's generated ids and its user-defined ids
  (``set_uid_hash``);
- state without a matching operator fails the restore unless ``--allowNonRestoredState``
  (it is then dropped): **lost**;
- a matching operator whose vertex has a *configured* max parallelism other than the
  state's fails the restore; a derived (default) one adapts to the state's: **lost** or
  restored;
- the state's max parallelism must be at least the new parallelism;
- otherwise **restored**, keyed state redistributed by key group when the parallelism
  changed; a new stateful operator no old state maps to starts empty: **new**.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from flowc.chaining.execution_graph import ExecutionGraph, ExecutionJobVertex
from flowc.chaining.job_graph import OperatorInfo
from flowc.savepoint.metadata import OperatorMeta, SavepointMetadata, metadata_from_plan
from flowc.savepoint.why import IdChanges

RESTORED, LOST, NEW = "restored", "lost", "new"


def non_restored_error(pointer: str, op_id: str) -> str:
    """Flink's Checkpoints.throwNonRestoredStateException message."""
    return (f"Failed to rollback to checkpoint/savepoint {pointer}. Cannot map "
            f"checkpoint/savepoint state for operator {op_id} to the new program, because the "
            "operator is not available in the new program. If you want to allow to skip this, "
            "you can set the --allowNonRestoredState option on the CLI.")


def max_parallelism_error(pointer: str, op_id: str, old: int, new: int) -> str:
    """Flink's Checkpoints.loadAndValidateCheckpoint message for a configured max parallelism
    that differs from the state's (StateAssignmentOperation.checkParallelismPreconditions has
    the same check, for restores that skip the former)."""
    return (f"Failed to rollback to checkpoint/savepoint {pointer}. Max parallelism mismatch "
            "between checkpoint/savepoint state and new program. Cannot map operator "
            f"{op_id} with max parallelism {old} to new program with max parallelism {new}. "
            "This indicates that the program has been changed in a non-compatible way after "
            "the checkpoint/savepoint.")


def parallelism_above_max_error(vertex_id: str, old_max: int, parallelism: int) -> str:
    """StateAssignmentOperation.checkParallelismPreconditions: the new parallelism exceeds the
    restored state's max parallelism (its number of key groups)."""
    return (f"The state for task {vertex_id} can not be restored. The maximum parallelism "
            f"({old_max}) of the restored state is lower than the configured parallelism "
            f"({parallelism}). Please reduce the parallelism of the task to be lower or equal "
            "to the maximum parallelism.")


@dataclass(frozen=True)
class DiffEntry:
    status: str
    name: str
    # The state's operator id (old side), or the new operator's id for a new one.
    id: str
    new_id: str | None
    uid: str | None
    state_names: tuple[str, ...]
    old_parallelism: int | None
    new_parallelism: int | None
    old_max_parallelism: int | None
    new_max_parallelism: int | None
    old_line: int | None = None
    new_line: int | None = None
    reasons: tuple[str, ...] = ()
    flink_error: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"status": self.status, "name": self.name, "id": self.id,
                "new_id": self.new_id, "uid": self.uid, "state_names": list(self.state_names),
                "parallelism": [self.old_parallelism, self.new_parallelism],
                "max_parallelism": [self.old_max_parallelism, self.new_max_parallelism],
                "line": [self.old_line, self.new_line], "reasons": list(self.reasons),
                "flink_error": self.flink_error}


@dataclass(frozen=True)
class StateDiff:
    old: str
    new: str
    entries: tuple[DiffEntry, ...]
    notes: tuple[str, ...] = ()

    @property
    def loses_state(self) -> bool:
        return any(e.status == LOST for e in self.entries)

    def count(self, status: str) -> int:
        return sum(1 for e in self.entries if e.status == status)

    def to_dict(self) -> dict[str, Any]:
        return {"old": self.old, "new": self.new,
                "summary": {s: self.count(s) for s in (RESTORED, LOST, NEW)},
                "state_lost": self.loses_state, "notes": list(self.notes),
                "operators": [e.to_dict() for e in self.entries]}


@dataclass(frozen=True)
class _Target:
    vertex: ExecutionJobVertex
    info: OperatorInfo


def _targets(graph: ExecutionGraph) -> dict[str, _Target]:
    """Every id old state can map to: generated and user-defined ids of every operator."""
    out: dict[str, _Target] = {}
    for ev in graph.vertices:
        for info in ev.job_vertex.operators:
            out[info.id] = _Target(ev, info)
            if info.uid_hash:
                out.setdefault(info.uid_hash, _Target(ev, info))
    return out


def diff_states(old: SavepointMetadata, new: ExecutionGraph, new_origin: str, *,
                old_graph: ExecutionGraph | None = None, pointer: str | None = None
                ) -> StateDiff:
    """Compare the state ``old`` holds with the plan ``new``. ``old_graph`` (when the old side
    is a plan, not a savepoint) lets a lost id be explained; ``pointer`` is the savepoint
    location Flink's messages name."""
    pointer = pointer or old.origin
    targets = _targets(new)
    why = (IdChanges(old_graph.job_graph, new.job_graph, old.origin, new_origin)
           if old_graph is not None else None)
    old_nodes = ({o.id: o.node_id for v in old_graph.job_graph.vertices.values()
                  for o in v.operators} if old_graph is not None else {})
    new_meta = metadata_from_plan(new, new_origin)
    entries = [_entry(o, targets.get(o.id), pointer, why, old_nodes.get(o.id), new_meta)
               for o in old.operators]
    restored = {o.id for o in old.operators}
    for n in new_meta.operators:
        if n.id in restored or (n.uid_hash and n.uid_hash in restored):
            continue
        reasons = ["no state of the old job maps to its id: it starts empty"]
        entries.append(DiffEntry(NEW, n.name, n.id, n.id, n.uid, n.state_names, None,
                                 n.parallelism, None, n.max_parallelism, None, n.line,
                                 tuple(reasons)))
    notes = tuple(f"{side} runs in BATCH mode: Flink takes no checkpoints or savepoints of "
                  "BATCH jobs (this compares operator ids only)"
                  for side, mode in ((old.origin, old.mode),
                                     (new_origin, new.job_graph.config.mode.value))
                  if mode == "BATCH")
    return StateDiff(old.origin, new_origin, tuple(entries), notes)


def _entry(o: OperatorMeta, target: _Target | None, pointer: str, why: IdChanges | None,
           old_node: int | None, new_meta: SavepointMetadata) -> DiffEntry:
    if target is None:
        return DiffEntry(LOST, o.name, o.id, None, o.uid, o.state_names, o.parallelism, None,
                         o.max_parallelism, None, o.line, None,
                         tuple(_lost_reasons(o, why, old_node, new_meta)),
                         non_restored_error(pointer, o.id))
    ev, info = target.vertex, target.info
    configured = ev.job_vertex.max_parallelism > 0
    common = dict(name=o.name, id=o.id, new_id=info.id, uid=o.uid, state_names=o.state_names,
                  old_parallelism=o.parallelism, new_parallelism=ev.parallelism,
                  old_max_parallelism=o.max_parallelism,
                  new_max_parallelism=ev.max_parallelism, old_line=o.line,
                  new_line=_line_of(new_meta, info.id))
    if o.max_parallelism != ev.max_parallelism and configured:
        return DiffEntry(LOST, reasons=(
            f"the max parallelism changed from {o.max_parallelism} to {ev.max_parallelism} "
            "(set in the new job): Flink refuses the restore (state is laid out in "
            "max-parallelism key groups)",), flink_error=max_parallelism_error(
                pointer, o.id, o.max_parallelism, ev.max_parallelism), **common)
    reasons: list[str] = []
    if o.max_parallelism != ev.max_parallelism:
        reasons.append(f"the new job's max parallelism is derived ({ev.max_parallelism}), "
                       f"so Flink adopts the state's ({o.max_parallelism})")
    if o.max_parallelism < ev.parallelism:
        return DiffEntry(LOST, reasons=(
            *reasons, f"the new parallelism {ev.parallelism} exceeds the state's max "
                      f"parallelism {o.max_parallelism}"),
            flink_error=parallelism_above_max_error(ev.id, o.max_parallelism, ev.parallelism),
            **common)
    if info.name != o.name:
        reasons.append(f"renamed from {o.name!r} to {info.name!r}: "
                       + (f"the uid {o.uid!r} keeps its id" if o.uid else "its id is the same"))
        common["name"] = info.name
    if o.parallelism != ev.parallelism:
        if o.keyed:
            reasons.append(f"parallelism {o.parallelism} -> {ev.parallelism}: keyed state "
                           f"redistributed by key group ({o.max_parallelism} key groups)")
        else:
            reasons.append(f"parallelism {o.parallelism} -> {ev.parallelism}: operator state "
                           "redistributed among the subtasks")
    if new_meta.operators and not any(n.id == info.id for n in new_meta.operators):
        reasons.append(f"the operator with this id in the new job ({info.name}) holds no "
                       "state: Flink restores the state into it, unused")
    return DiffEntry(RESTORED, reasons=tuple(reasons) or ("same operator id",), **common)


def _line_of(meta: SavepointMetadata, op_id: str) -> int | None:
    return next((n.line for n in meta.operators if n.id == op_id), None)


def _lost_reasons(o: OperatorMeta, why: IdChanges | None, old_node: int | None,
                  new_meta: SavepointMetadata) -> list[str]:
    if why is not None and old_node is not None:
        n = why.counterpart(old_node)
        if n is None:
            return [f"{o.name} was removed: the new job has no operator with its id"]
        lead = ("no uid, and its id changed" if o.uid is None
                else "its id changed")
        new_id = why.new_ids.get(n)
        return [f"{lead} (now {new_id})" if new_id else lead, *why.reasons(old_node)]
    # A savepoint: only the names are known.
    same = [n for n in new_meta.operators if (o.uid and n.uid == o.uid)
            or (n.name == o.name and n.kind == o.kind)]
    if same:
        return [f"the new job's {same[0].name} has id {same[0].id}"
                + ("" if o.uid else " (no uid: its id follows the topology)")]
    return [f"the new job has no operator with id {o.id} ({o.name})"]
