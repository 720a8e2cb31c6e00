"""The checkpoint directory's flowc part (beside Spark's offsets and commits logs):

- ``state/<batch>/<vertex>-<subtask>.pkl``: each subtask's snapshot after a micro-batch,
  ``state/<batch>/_DONE`` (holding the number of files - or socket lines, datagen rows,
  Kafka records - the source read so far) once the whole batch
  (all tasks, all sinks) completed. A batch reads the latest done snapshot before it.
- ``sinks/<node>/<batch>``: a sink committed the batch (its files renamed into place, or its
  lines printed); a replayed batch skips it.

Writes are a temp file plus rename, so a kill -9 leaves a whole marker or none.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable

from flowc.errors import ExecutionError

KEEP_SINK_MARKERS = 100  # batches of sink markers kept (a replay is of the last batch only)


class Checkpoint:
    def __init__(self, root: str) -> None:
        self.root = os.path.abspath(root)
        self.spark = os.path.join(self.root, "spark")
        self.state = os.path.join(self.root, "flowc", "state")
        self.sinks = os.path.join(self.root, "flowc", "sinks")
        for d in (self.state, self.sinks):
            os.makedirs(d, exist_ok=True)

    # -- state -----------------------------------------------------------------------

    def done_batches(self) -> list[int]:
        return sorted(int(n) for n in os.listdir(self.state)
                      if n.isdigit() and os.path.exists(os.path.join(self.state, n, "_DONE")))

    def previous(self, batch: int) -> int | None:
        """The latest completed batch before ``batch`` (its snapshots are the state)."""
        done = [b for b in self.done_batches() if b < batch]
        return done[-1] if done else None

    def files_read(self, batch: int | None) -> int:
        """How many files (lines, rows, records: ``sources.BatchShares.units``) the source
        read up to and including completed ``batch``."""
        if batch is None:
            return 0
        with open(os.path.join(self.state, str(batch), "_DONE"), encoding="utf-8") as fh:
            text = fh.read().strip()
        return int(text) if text else 0

    def finish_batch(self, batch: int, files_read: int) -> None:
        prev = self.previous(batch)
        d = os.path.join(self.state, str(batch))
        os.makedirs(d, exist_ok=True)
        _touch(os.path.join(d, "_DONE"), str(files_read))
        # Until Spark commits this batch it may be replayed, reading ``prev``: snapshots
        # older than that are no longer read.
        for n in os.listdir(self.state):
            if n.isdigit() and prev is not None and int(n) < prev:
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
