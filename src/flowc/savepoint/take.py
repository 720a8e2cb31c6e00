"""Taking a savepoint: the streaming executor's state after the checkpoint's latest completed
micro-batch (``flowc savepoint write``, ``flowc run --savepoint-on-stop``), written in the
savepoint format (docs/savepoints.md) under the job's operator ids."""

from __future__ import annotations

import json
import os
import pickle
import shutil
from dataclasses import dataclass, replace
from typing import Any

from flowc.chaining.execution_graph import ExecutionGraph
from flowc.errors import ConfigError
from flowc.executor.runtime import files
from flowc.executor.streaming.commit import Checkpoint
from flowc.executor.streaming.identity import check_job
from flowc.executor.streaming.plan import StreamingPlan, plan_streaming
from flowc.executor.streaming.task import SubtaskRun, operator_state, snapshot_path
from flowc.operators import KafkaSource
from flowc.savepoint.metadata import METADATA_FILE, OperatorMeta, metadata_from_plan
from flowc.savepoint.state import OperatorState, class_names, split_subtask, write_operator

ATTRIBUTES = "attributes"  # the state name of operator state flowc keeps (docs)


@dataclass(frozen=True)
class Taken:
    path: str
    batch: int
    operators: int
    files_read: int

    def summary(self) -> str:
        return (f"savepoint {self.path}: {self.operators} operator"
                f"{'s' if self.operators != 1 else ''} with state, after micro-batch "
                f"{self.batch} ({self.files_read:,} source units read)")


def open_checkpoint(path: str) -> Checkpoint:
    """The checkpoint at ``path``, or a clear error (never creating anything there)."""
    if not os.path.isdir(os.path.join(path, "flowc", "state")):
        raise ConfigError(f"{path} is not a flowc streaming checkpoint (no flowc/state in it)",
                          hint="give the directory `flowc run --checkpoint DIR` wrote")
    return Checkpoint(path)


def take_savepoint(checkpoint: str, graph: ExecutionGraph, origin: str, out: str) -> Taken:
    """Write the savepoint of ``checkpoint`` (written by the job ``graph``, planned from
    ``origin``) to the new directory ``out``."""
    ckpt = open_checkpoint(checkpoint)
    done = ckpt.done_batches()
    if not done:
        raise ConfigError(f"the checkpoint {checkpoint} has no completed micro-batch yet: "
                          "there is no state to save")
    if os.path.exists(out) and (not os.path.isdir(out) or os.listdir(out)):
        raise ConfigError(f"{out} already exists: a savepoint is written to a new directory")
    batch = done[-1]
    adopted = ckpt.adopted_max_parallelism()  # a restored run's state keeps its key groups
    plan = plan_streaming(graph.job_graph, adopted)
    # another job's checkpoint would give a savepoint without its state, silently
    check_job(ckpt.root, plan, lambda: checkpoint, reading=True)
    states = _operator_states(plan, ckpt.state, batch, checkpoint)
    meta = metadata_from_plan(graph, origin)
    listed = {o.id for o in meta.operators}
    extra = [_extra_meta(graph, op_id) for op_id, s in states.items()
             if op_id not in listed and not s.empty()]
    meta = replace(meta, operators=tuple(
        replace(o, max_parallelism=adopted[o.vertex_id]) if o.vertex_id in adopted else o
        for o in meta.operators + tuple(extra)))
    tmp = f"{out.rstrip(os.sep)}.{os.getpid()}.tmp"
    shutil.rmtree(tmp, ignore_errors=True)
    for o in meta.operators:
        if o.id in states:
            write_operator(os.path.join(tmp, "operators", o.id), states[o.id])
    os.makedirs(os.path.join(tmp, "sources"), exist_ok=True)
    read = ckpt.units_read(batch)
    unbounded = [s for s in plan.sources if not s.bounded]
    for k, s in enumerate(unbounded):  # the n-th unbounded source is Spark's source n
        source_id = next(m.operator_id for v in plan.vertices for m in v.members
                         if m.nid == s.node)
        doc: dict[str, Any] = {"units_read": read[k] if k < len(read) else 0,
                               "kind": type(s.spec).__name__,
                               "done": done_files(ckpt, batch, k)}
        if isinstance(s.spec, KafkaSource):
            doc["offsets"] = kafka_offsets(ckpt, batch, k)
        with open(os.path.join(tmp, "sources", f"{source_id}.json"), "w",
                  encoding="utf-8") as fh:
            json.dump(doc, fh, indent=1)
    units = sum(read)
    with open(os.path.join(tmp, METADATA_FILE), "w", encoding="utf-8") as fh:
        fh.write(meta.to_json())  # last: a directory without it is no savepoint
    if os.path.isdir(out):
        os.rmdir(out)
    os.replace(tmp, out)
    return Taken(out, batch, sum(1 for o in meta.operators if o.id in states), units)


def _operator_states(plan: StreamingPlan, state_dir: str, batch: int, checkpoint: str
                     ) -> dict[str, OperatorState]:
    out: dict[str, OperatorState] = {}
    for v in plan.vertices:
        for idx in range(v.parallelism):
            path = snapshot_path(state_dir, batch, v.id, idx)
            try:
                with open(path, "rb") as fh:
                    snap = pickle.load(fh)  # noqa: S301 - the job's own snapshot
            except FileNotFoundError:
                raise ConfigError(
                    f"the checkpoint {checkpoint} was not written by this job: micro-batch "
                    f"{batch} has no state of its vertex {v.name} ({v.id}) subtask {idx}",
                    hint="give the job file (and --parallelism / --set options) the "
                         "checkpoint's run used") from None
            except (OSError, pickle.UnpicklingError, EOFError) as e:
                raise ConfigError(f"cannot read {path}: {e}") from None
            fresh = _fresh_operators(v, idx)
            for m in v.members:
                op = fresh.get(m.nid)
                saved = snap.get(f"op_{m.operator_id}")
                if op is None or saved is None:
                    continue
                st = out.setdefault(m.operator_id, OperatorState())
                split_subtask(st, idx, saved, operator_state(op), class_names(op),
                              v.max_parallelism)
                if m is v.head:
                    while len(st.channels) <= idx:
                        st.channels.append([])
                    channels = snap.get("channels", [])
                    if isinstance(channels, dict):  # the valve's state: its watermarks
                        channels = channels.get("wms", [])
                    st.channels[idx] = list(channels)
    return out


def _fresh_operators(v: Any, idx: int) -> dict[int, Any]:
    """The subtask's operators as a new run opens them: attributes equal to theirs are
    configuration (allowed lateness, watermark delay ...), not state."""
    run = SubtaskRun(v, idx)
    try:
        run.open(None)
        run.close()
    except Exception:  # noqa: BLE001 - a function's open() failing here: compare unopened
        run = SubtaskRun(v, idx)
    return run.ops


def _extra_meta(graph: ExecutionGraph, op_id: str) -> OperatorMeta:
    """An operator Flink keeps no state for whose attributes flowc keeps (a non-keyed
    process function's fields): listed so a restore matches it like any other."""
    nodes = graph.job_graph.stream_graph.nodes
    for ev in graph.vertices:
        for info in ev.job_vertex.operators:
            if info.id == op_id:
                node = nodes[info.node_id]
                return OperatorMeta(
                    id=info.id, uid_hash=info.uid_hash, uid=info.uid, name=info.name,
                    vertex_id=ev.id, parallelism=ev.parallelism,
                    max_parallelism=ev.max_parallelism,
                    max_parallelism_configured=ev.job_vertex.max_parallelism > 0,
                    keyed=False, state_names=(ATTRIBUTES,), kind=type(node.operator).__name__,
                    line=node.span.line if node.span is not None else None)
    raise AssertionError(f"operator {op_id} is not in the plan")


def done_files(ckpt: Checkpoint, batch: int, source: int = 0) -> list[str]:
    """The files a monitored file source read up to completed ``batch``: Spark's file
    source log (``spark/sources/<n>`` of the query's n-th source: ``v1`` then one JSON object a line with ``path`` and
    ``batchId``; every tenth batch a ``.compact`` file repeats all before it), plus the
    files a restore said were read before (``_SOURCE.json`` of the restored batch)."""
    found: set[str] = set(ckpt.restored_files(batch))
    for b in ckpt.done_batches():
        if b <= batch:
            found.update(ckpt.restored_files(b))
    log = os.path.join(ckpt.spark, "sources", str(source))
    names = sorted(os.listdir(log)) if os.path.isdir(log) else []
    for name in names:
        if name.startswith(".") or not name.split(".")[0].isdigit():
            continue
        with open(os.path.join(log, name), encoding="utf-8") as fh:
            for line in fh.read().splitlines()[1:]:
                entry = _log_entry(line)
                if entry is not None and entry[1] <= batch:
                    found.add(files.local_path(entry[0]) or entry[0])
    return sorted(found)


def kafka_offsets(ckpt: Checkpoint, batch: int, source: int
                  ) -> dict[str, dict[str, int]] | None:
    """The query's ``source``-th source's position after completed ``batch``: its entry
    in Spark's offsets log (``spark/offsets/<batch>``: ``v1``, the batch's metadata, then
    one line per source; a Kafka source's is ``{"topic": {"partition": next offset}}``).
    A batch no Spark batch ran for (only a restore's) keeps the restored offsets."""
    path = os.path.join(ckpt.spark, "offsets", str(batch))
    if not os.path.exists(path):
        restored = ckpt.kafka_offsets()
        return restored[source] if source < len(restored) else None
    with open(path, encoding="utf-8") as fh:
        lines = fh.read().splitlines()
    try:
        doc: Any = json.loads(lines[2 + source])
    except (IndexError, ValueError):
        raise ConfigError(f"Spark's offsets log {path} has no offsets of source {source}") \
            from None
    if not isinstance(doc, dict) or not all(isinstance(v, dict) for v in doc.values()):
        raise ConfigError(f"Spark's offsets log {path}: source {source}'s offsets {doc!r} are "
                          "not Kafka offsets (topic -> partition -> offset)")
    return {str(t): {str(p): int(o) for p, o in parts.items()} for t, parts in doc.items()}


def _log_entry(line: str) -> tuple[str, int] | None:
    try:
        doc: Any = json.loads(line)
        return str(doc["path"]), int(doc["batchId"])
    except (ValueError, KeyError, TypeError):
        return None

