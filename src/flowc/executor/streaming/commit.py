"""The checkpoint directory's flowc part (beside Spark's offsets and commits logs):

- ``state/<batch>/<vertex>-<subtask>.pkl``: each subtask's snapshot after a micro-batch,
  ``state/<batch>/_DONE`` (holding the number of files - or socket lines, datagen rows,
  Kafka records - each unbounded source read so far, space-separated) once the whole batch
  (all tasks, all sinks) completed. A batch reads the latest done snapshot before it.
- ``state/-1/``: the state a run restored from a savepoint (``flowc.savepoint.restore``),
  laid out as a completed batch before Spark's first, plus ``_SOURCE.json`` (the files the
  savepoint's job had read: not read again).
- ``restored.json``: what a savepoint restore decided for every later run on the
  checkpoint: ``max_parallelism`` (vertex id -> the savepoint's max parallelism, adopted
  where the job's was derived) and ``kafka_offsets`` (per unbounded source, the savepoint's
  Kafka offsets by topic and partition, or null: where the new query starts).
- ``sinks/<node>/<batch>``: a sink committed the batch (its files renamed into place, or its
  lines printed); a replayed batch skips it.

Writes are a temp file plus rename, so a kill -9 leaves a whole marker or none.

A columnar micro-batch's sink records reach the driver as Arrow chunks (``SINK_CHUNK``
items, ``sink_chunk``): a file sink's part file is written from them (``stage_arrow_part``,
byte for byte the records' file), print / collect / Kafka sinks get the records decoded
there (``chunk_records``), at the end.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable
from typing import Any

from flowc.errors import ConfigError, ExecutionError

SINK_CHUNK = -4  # an item kind beside task.SINK / DEAD / STATS: (node, subtask, Arrow IPC)
KEEP_SINK_MARKERS = 100  # batches of sink markers kept (a replay is of the last batch only)
RESTORED_BATCH = -1  # the batch a savepoint's state is restored as (Spark's first is 0)
SOURCE_FILES = "_SOURCE.json"
RESTORED = "restored.json"


def _batch(name: str) -> int | None:
    return int(name) if name.lstrip("-").isdigit() else None


class Checkpoint:
    def __init__(self, root: str) -> None:
        self.root = os.path.abspath(root)
        self.spark = os.path.join(self.root, "spark")
        self.state = os.path.join(self.root, "flowc", "state")
        self.sinks = os.path.join(self.root, "flowc", "sinks")
        for d in (self.state, self.sinks):
            try:
                os.makedirs(d, exist_ok=True)
            except OSError as e:  # a file, or no permission: the user's --checkpoint
                raise ConfigError(f"--checkpoint {root}: cannot use it as a checkpoint "
                                  f"directory ({e.strerror}: {e.filename})",
                                  hint="give a directory (a new one, or one a run of this "
                                       "job wrote)") from None

    # -- state -----------------------------------------------------------------------

    def done_batches(self) -> list[int]:
        return sorted(int(n) for n in os.listdir(self.state)
                      if _batch(n) is not None
                      and os.path.exists(os.path.join(self.state, n, "_DONE")))

    def previous(self, batch: int) -> int | None:
        """The latest completed batch before ``batch`` (its snapshots are the state)."""
        done = [b for b in self.done_batches() if b < batch]
        return done[-1] if done else None

    def files_read(self, batch: int | None) -> int:
        """How many files (lines, rows, records: ``sources.BatchShares.units``) the sources
        read up to and including completed ``batch``, in all."""
        return sum(self.units_read(batch))

    def restored_files(self, batch: int | None) -> list[str]:
        """The files (local paths) read before a savepoint restored as ``batch``: the source
        skips them."""
        if batch is None:
            return []
        path = os.path.join(self.state, str(batch), SOURCE_FILES)
        if not os.path.exists(path):
            return []
        with open(path, encoding="utf-8") as fh:
            return list(json.load(fh))

    def restored(self) -> dict[str, Any]:
        """``restored.json`` (empty when the checkpoint's first run did not restore)."""
        path = os.path.join(self.root, "flowc", RESTORED)
        if not os.path.exists(path):
            return {}
        with open(path, encoding="utf-8") as fh:
            doc: dict[str, Any] = json.load(fh)
        return doc

    def adopted_max_parallelism(self) -> dict[str, int]:
        return {str(k): int(v) for k, v in self.restored().get("max_parallelism", {}).items()}

    def kafka_offsets(self) -> list[dict[str, dict[str, int]] | None]:
        return list(self.restored().get("kafka_offsets", []))

    def write_restored(self, max_parallelism: dict[str, int],
                       kafka_offsets: list[dict[str, dict[str, int]] | None]) -> None:
        _touch(os.path.join(self.root, "flowc", RESTORED),
               json.dumps({"max_parallelism": max_parallelism,
                           "kafka_offsets": kafka_offsets}, sort_keys=True))

    def units_read(self, batch: int | None) -> list[int]:
        """Per source (in the plan's order): the files, lines, rows or records read up to
        and including completed ``batch`` (empty before the first batch)."""
        if batch is None:
            return []
        with open(os.path.join(self.state, str(batch), "_DONE"), encoding="utf-8") as fh:
            return [int(x) for x in fh.read().split()]

    def finish_batch(self, batch: int, files_read: int | list[int]) -> None:
        prev = self.previous(batch)
        d = os.path.join(self.state, str(batch))
        os.makedirs(d, exist_ok=True)
        counts = [files_read] if isinstance(files_read, int) else files_read
        _touch(os.path.join(d, "_DONE"), " ".join(map(str, counts)))
        # Until Spark commits this batch it may be replayed, reading ``prev``: snapshots
        # older than that are no longer read.
        for n in os.listdir(self.state):
            b = _batch(n)
            if b is not None and prev is not None and b < prev:
                shutil.rmtree(os.path.join(self.state, n), ignore_errors=True)
        for node in os.listdir(self.sinks):
            nd = os.path.join(self.sinks, node)
            for n in os.listdir(nd):
                if n.isdigit() and int(n) < batch - KEEP_SINK_MARKERS:
                    os.remove(os.path.join(nd, n))

    def batch_timestamp_ms(self, batch: int) -> int:
        """Spark's ``batchTimestampMs`` of ``batch``, from the query's offsets log (written
        before the batch runs, reused when it is replayed): the batch's processing time."""
        path = os.path.join(self.spark, "offsets", str(batch))
        try:
            with open(path, encoding="utf-8") as fh:
                lines = fh.read().splitlines()
            return int(json.loads(lines[1])["batchTimestampMs"])
        except (OSError, IndexError, KeyError, ValueError) as e:
            raise ExecutionError(f"cannot read the timestamp of micro-batch {batch} from "
                                 f"Spark's offsets log {path}: {e}") from None

    # -- sinks -----------------------------------------------------------------------

    def committed(self, node: int, batch: int) -> bool:
        return os.path.exists(os.path.join(self.sinks, str(node), str(batch)))

    def commit_once(self, node: int, batch: int, write: Callable[[], None]) -> bool:
        """Run ``write`` (which must leave the sink's output of this batch in place, and
        may be repeated) unless the batch is committed for ``node``; then mark it. Returns
        whether it ran."""
        if self.committed(node, batch):
            return False
        write()
        d = os.path.join(self.sinks, str(node))
        os.makedirs(d, exist_ok=True)
        _touch(os.path.join(d, str(batch)))
        return True


def _touch(path: str, text: str = "") -> None:
    tmp = f"{path}.tmp"
    with open(tmp, "w", encoding="utf-8") as fh:
        fh.write(text)
    os.replace(tmp, path)


# -- a columnar micro-batch's sink records, as Arrow ------------------------------------------

def sink_chunk(nid: int, idx: int, chunk: Any) -> tuple[int, Any]:
    """The item carrying a sink's chunk (``convert.Chunk``) of subtask ``idx`` to the
    driver."""
    from flowc.executor.arrow import convert

    return SINK_CHUNK, (nid, idx, convert.to_ipc(chunk))


def _chunks(parts: list[tuple[int, bytes]], declared: Any) -> list[Any]:
    """The chunks in subtask order, each subtask's in arrival order (a stable sort)."""
    from flowc.executor.arrow import convert

    schema = convert.arrow_schema(declared)
    return [convert.from_ipc(data, schema) for _, data in sorted(parts, key=lambda p: p[0])]


def chunk_records(parts: list[tuple[int, bytes]], declared: Any) -> list[tuple[int, Any]]:
    """``(subtask, record)`` pairs of a sink's chunks (``declared``: the sink's input type),
    as the row path's SINK items give them."""
    from flowc.executor.arrow import convert

    schema = convert.arrow_schema(declared)
    return [(idx, r) for idx, data in parts for r in convert.from_ipc(data, schema).rows()]


def stage_arrow_part(spec: Any, columns: Any, parts: list[tuple[int, bytes]],
                     declared: Any) -> str | None:
    """The staged part file (a temp dir, as ``sinks.stage_python`` stages it) of a file
    sink's micro-batch from its chunks; None when the batch had no record for it. Sinks
    ``part_files`` does not write (and chunks holding pickled records) are written from
    the decoded records, checked as the row path checks them."""
    from flowc.executor.arrow import part_files, typed
    from flowc.executor.sinks import row_checker, shaper, stage_python

    chunks = [c for c in _chunks(parts, declared) if c.num_rows]
    if not chunks:
        return None

    def pickled(c: Any) -> bool:
        b = c.batch
        return typed.codec_of(b.schema) is not None and \
            b.column(b.num_columns - 1).null_count < b.num_rows
    if part_files.writable(spec, columns) and not any(map(pickled, chunks)):
        return part_files.stage_part(spec, columns, [part_files.chunk_columns(c.batch, columns)
                                                     for c in chunks])
    check = row_checker(spec.path, columns, shaper([c for c, _ in columns]))
    return stage_python(spec, columns, [check(r) for c in chunks for r in c.rows()])
