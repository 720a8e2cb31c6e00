"""``flowc run new.flow --from-savepoint DIR``: Flink's restore rules (flowc.savepoint.diff
decides; its messages are Flink's), then the savepoint's state laid out as the streaming
executor's first snapshot (``state/-1`` of the checkpoint), for the new job's vertices,
subtasks and key-group ranges. The executor's own restore path (task.py) does the rest."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from typing import Any

from flowc.chaining.execution_graph import ExecutionGraph
from flowc.errors import ConfigError
from flowc.executor.runtime.core import LONG_MIN
from flowc.executor.streaming.commit import RESTORED_BATCH, SOURCE_FILES, Checkpoint
from flowc.executor.streaming.plan import plan_streaming
from flowc.executor.streaming.task import SubtaskRun, _write_snapshot, snapshot_path
from flowc.keygroups import key_group_range
from flowc.operators import KafkaSource, SocketSource
from flowc.savepoint.diff import LOST, RESTORED, diff_states
from flowc.savepoint.metadata import SavepointMetadata, read_metadata
from flowc.savepoint.state import OperatorState, read_operator, subtask_state

FIRST_STATE_VERSION = 2  # format version 1 was metadata only


@dataclass(frozen=True)
class Restored:
    restored: int
    dropped: tuple[str, ...]  # ids of state skipped (--allow-non-restored-state)
    new: int
    files_read: int
    adopted: tuple[tuple[str, int], ...] = ()  # (vertex id, the savepoint's max parallelism)
    notes: tuple[str, ...] = ()

    def summary(self, savepoint: str) -> str:
        text = (f"restored {self.restored} operator{'s' if self.restored != 1 else ''}' "
                f"state from {savepoint}")
        if self.dropped:
            text += (f"; skipped the state of {len(self.dropped)} operator"
                     f"{'s' if len(self.dropped) != 1 else ''} not in the new job "
                     f"({', '.join(self.dropped)})")
        if self.new:
            text += f"; {self.new} new stateful operator{'s' if self.new != 1 else ''} " \
                    "start empty"
        for vid, mp in self.adopted:
            text += f"; vertex {vid} runs with the savepoint's max parallelism {mp}"
        for note in self.notes:
            text += f"; {note}"
        return text


def read_savepoint(path: str) -> SavepointMetadata:
    meta = read_metadata(path)
    if meta.version < FIRST_STATE_VERSION:
        raise ConfigError(f"{path} holds savepoint metadata of format version {meta.version}, "
                          "which holds no state: nothing to restore",
                          hint="take a savepoint with `flowc savepoint write` or "
                               "`flowc run --savepoint-on-stop`")
    return meta


def restore_savepoint(savepoint: str, graph: ExecutionGraph, origin: str, checkpoint: str,
                      allow_non_restored: bool) -> Restored | None:
    """Lay ``savepoint``'s state out in ``checkpoint`` for the job ``graph``. None when the
    checkpoint already holds completed micro-batches: a restarted run resumes from its own
    checkpoint (newer than the savepoint), as Flink restores the latest checkpoint."""
    meta = read_savepoint(savepoint)
    ckpt = Checkpoint(checkpoint)
    if ckpt.done_batches():
        return None
    diff = diff_states(meta, graph, origin, pointer=savepoint)
    mapping: dict[str, str] = {}  # new operator id -> the savepoint's
    dropped: list[str] = []
    for e in diff.entries:
        if e.status == LOST and e.new_id is None:
            if not allow_non_restored:
                raise ConfigError(e.flink_error or f"cannot restore {e.id}")
            dropped.append(e.id)
        elif e.status == LOST:
            raise ConfigError(e.flink_error or f"cannot restore {e.id}")
        elif e.status == RESTORED:
            assert e.new_id is not None
            mapping[e.new_id] = e.id
    adopted = _adopted_max_parallelism(graph, diff.entries)
    # the new run's key groups and the routing into them: the adopted max parallelism
    plan = plan_streaming(graph.job_graph, adopted)
    states: dict[str, OperatorState] = {}
    for v in plan.vertices:
        for idx in range(v.parallelism):
            run = SubtaskRun(v, idx)
            kg = key_group_range(v.max_parallelism, v.parallelism, idx)
            # channel watermarks start unknown unless the head's state brings them (below)
            snap: dict[str, Any] = {"channels": [LONG_MIN] * len(v.channels[idx])}
            for m in v.members:
                old = mapping.get(m.operator_id)
                if old is None or m.nid not in run.ops:
                    continue
                if old not in states:
                    states[old] = read_operator(os.path.join(savepoint, "operators", old))
                st = states[old]
                snap[f"op_{m.operator_id}"] = subtask_state(
                    st, kg, idx, v.parallelism, os.path.join(savepoint, "operators", old))
                if m is v.head and len(st.channels) == v.parallelism \
                        and len(st.channels[idx]) == len(v.channels[idx]):
                    snap["channels"] = st.channels[idx]
            _write_snapshot(snapshot_path(ckpt.state, RESTORED_BATCH, v.id, idx), snap)
    units: list[int] = []
    done: list[str] = []
    offsets: list[dict[str, dict[str, int]] | None] = []
    notes: list[str] = []
    for s in plan.sources:
        if s.bounded:  # read whole by the savepoint's job: not read again
            continue
        source_id = next(m.operator_id for v in plan.vertices for m in v.members
                         if m.nid == s.node)
        n, read, kafka = _source(savepoint, mapping.get(source_id))
        units.append(n)
        done.extend(read)
        offsets.append(kafka if isinstance(s.spec, KafkaSource) else None)
        if isinstance(s.spec, SocketSource) and source_id in mapping:
            notes.append(f"the socket source {s.spec.hostname}:{s.spec.port} has no position "
                         "to restore: it reads the lines sent after it connects (Flink's "
                         "socket source keeps none either)")
    ckpt.write_restored(adopted, offsets)
    d = os.path.join(ckpt.state, str(RESTORED_BATCH))
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, SOURCE_FILES), "w", encoding="utf-8") as fh:
        json.dump(sorted(set(done)), fh)
    ckpt.finish_batch(RESTORED_BATCH, units)  # _DONE last: a whole restore or none
    return Restored(len(mapping), tuple(dropped), diff.count("new"), sum(units),
                    tuple(sorted(adopted.items())), tuple(notes))


def _adopted_max_parallelism(graph: ExecutionGraph, entries: Any) -> dict[str, int]:
    """Per new vertex whose state is restored with a max parallelism other than its own
    (derived: diff_states refused an explicitly set one), the state's, as Flink's
    StateAssignmentOperation.checkParallelismPreconditions sets it on the vertex."""
    vertex_of = {info.id: ev for ev in graph.vertices for info in ev.job_vertex.operators}
    adopted: dict[str, int] = {}
    for e in entries:
        if e.status != RESTORED or e.old_max_parallelism == e.new_max_parallelism:
            continue
        ev = vertex_of[e.new_id]
        if adopted.setdefault(ev.id, e.old_max_parallelism) != e.old_max_parallelism:
            # Flink keeps the last operator's; key groups of two sizes cannot share a task
            raise ConfigError(
                f"the state restored into the vertex {ev.name} ({ev.id}) was taken with "
                f"max parallelism {adopted[ev.id]} and {e.old_max_parallelism} (operator "
                f"{e.id}): one task cannot hold both",
                hint="set the job's max_parallelism to one of them and restore the other "
                     "operator's state into a separate vertex")
    return adopted


def _source(savepoint: str, old_id: str | None
            ) -> tuple[int, list[str], dict[str, dict[str, int]] | None]:
    """(units read, files read, Kafka offsets) of the savepoint's source when the new job's
    source is the same operator; else the new source starts from the beginning (its state
    is new)."""
    if old_id is None:
        return 0, [], None
    path = os.path.join(savepoint, "sources", f"{old_id}.json")
    if not os.path.exists(path):
        return 0, [], None
    try:
        with open(path, encoding="utf-8") as fh:
            doc = json.load(fh)
        units, done = int(doc["units_read"]), [str(f) for f in doc["done"]]
        raw = doc.get("offsets")
        offsets = None if raw is None else {
            str(t): {str(p): int(o) for p, o in parts.items()} for t, parts in raw.items()}
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as e:
        raise ConfigError(f"{path}: expected {{\"units_read\": N, \"done\": [files], "
                          f"\"offsets\": {{topic: {{partition: offset}}}} (Kafka)}} "
                          f"({type(e).__name__}: {e})") from None
    return units, done, offsets
