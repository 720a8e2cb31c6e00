"""Which job a checkpoint belongs to (``<checkpoint>/flowc/job.json``).

Spark's offsets log fits only the query's own sources, and the snapshots are per vertex id
and subtask (``state/<batch>/<vertex>-<subtask>.pkl``). A checkpoint restarted with
another job - other sources, other operators, another parallelism - would fail deep inside
Spark (``Wrong basePath ...``) or, worse, silently start operators empty or drop a
subtask's state. So the first run writes what the checkpoint's state fits, and every later
run checks it before Spark starts. Carrying state into a changed job is what savepoints do
(``flowc savepoint write`` + ``--from-savepoint``, Flink's restore rules)."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from typing import Any

from flowc.errors import ConfigError
from flowc.executor.runtime import files
from flowc.executor.streaming.plan import StreamingPlan
from flowc.operators import (
    FileSource,
    KafkaSource,
    RateDatagenSource,
    SocketSource,
    TextLineFileSource,
)

JOB_FILE = "job.json"


def describe_source(spec: Any) -> str:
    """What Spark's offsets log of an unbounded source is about."""
    if isinstance(spec, (FileSource, TextLineFileSource)):
        given = spec.paths[0] if isinstance(spec, TextLineFileSource) else spec.path
        kind = "text" if isinstance(spec, TextLineFileSource) else spec.format
        return f"{kind} files in {os.path.abspath(files.local_path(given) or given)}"
    if isinstance(spec, SocketSource):
        return f"socket {spec.hostname}:{spec.port}"
    if isinstance(spec, RateDatagenSource):
        return "datagen"
    if isinstance(spec, KafkaSource):
        what = spec.topic_pattern if spec.topic_pattern is not None else ";".join(spec.topics)
        return f"kafka {what} at {spec.bootstrap_servers}"
    return type(spec).__name__


def job_identity(plan: StreamingPlan) -> dict[str, Any]:
    return {
        "sources": [describe_source(s.spec) for s in plan.sources if not s.bounded],
        "vertices": [{"id": v.id, "name": v.name, "parallelism": v.parallelism}
                     for v in plan.vertices],
    }


def check_job(root: str, plan: StreamingPlan, shown: Callable[[], str], *,
              reading: bool = False) -> None:
    """Fail with a user error when the checkpoint at ``root`` was written by another job
    (``shown()``: the checkpoint as the user named it); a new checkpoint (or one of a
    flowc that wrote no ``job.json``) is stamped with this job, unless only ``reading``
    it (``flowc savepoint write``)."""
    path = os.path.join(root, "flowc", JOB_FILE)
    mine = job_identity(plan)
    if not os.path.exists(path) or not reading and not _holds_progress(root):
        # a run that failed before its first micro-batch (a missing connector, ...) left
        # nothing to resume: the fixed job may differ
        if reading:
            return
        tmp = path + ".tmp"
        with open(tmp, "w", encoding="utf-8") as fh:
            json.dump(mine, fh, indent=1, sort_keys=True)
        os.replace(tmp, path)
        return
    try:
        with open(path, encoding="utf-8") as fh:
            theirs = json.load(fh)
        their_sources = list(theirs["sources"])
        their_vertices = {v["id"]: v for v in theirs["vertices"]}
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise ConfigError(f"--checkpoint {shown()}: cannot read its {JOB_FILE} ({e}); "
                          "is it a flowc checkpoint?") from None
    hint = ("give `flowc savepoint write` the job that wrote the checkpoint (a savepoint "
            "of it then restores into a changed job with `flowc run NEW --from-savepoint`)"
            if reading else
            f"use a new --checkpoint directory; to carry the state over, take a savepoint "
            f"of the old job (`flowc savepoint write OLD_JOB --checkpoint {shown()} -o SP`) "
            "and start this one from it (`--from-savepoint SP`: Flink's restore rules)")
    if their_sources != mine["sources"]:
        raise ConfigError(
            f"--checkpoint {shown()} belongs to another job: it read "
            f"{_listed(their_sources)}, this job reads {_listed(mine['sources'])}",
            hint=hint)
    ours = {v["id"]: v for v in mine["vertices"]}
    if set(their_vertices) != set(ours):
        gone = [their_vertices[i]["name"] for i in their_vertices if i not in ours]
        new = [ours[i]["name"] for i in ours if i not in their_vertices]
        raise ConfigError(
            f"--checkpoint {shown()} holds the state of another version of this job's "
            "operators: " + "; ".join(
                x for x in (f"only in the checkpoint: {_listed(gone)}" if gone else "",
                            f"only in this job: {_listed(new)}" if new else "") if x),
            hint=hint)
    for i, v in ours.items():
        was = their_vertices[i]["parallelism"]
        if was != v["parallelism"]:
            raise ConfigError(
                f"--checkpoint {shown()}: '{v['name']}' ran at parallelism {was} on it, this "
                f"run at {v['parallelism']}; a checkpoint's parallelism is fixed (its "
                "snapshots are per subtask: docs/flink-differences.md)",
                hint=f"run with parallelism {was} again, or rescale through a savepoint: "
                     f"`flowc savepoint write JOB --checkpoint {shown()} -o SP`, then "
                     "`flowc run JOB --from-savepoint SP` with a new --checkpoint")


def _holds_progress(root: str) -> bool:
    """Whether the checkpoint has something a run resumes from: a completed micro-batch
    (a savepoint's restored state included) or Spark's offsets of a started batch."""
    state = os.path.join(root, "flowc", "state")
    offsets = os.path.join(root, "spark", "offsets")
    return (os.path.isdir(state) and any(
        os.path.exists(os.path.join(state, b, "_DONE")) for b in os.listdir(state))) \
        or (os.path.isdir(offsets) and any(not n.startswith(".") for n in os.listdir(offsets)))


def _listed(items: list[str]) -> str:
    return ", ".join(f"'{x}'" for x in items) if items else "nothing"
