"""The streaming and savepoint tests' one way to run a job on Spark: ``run_feeding`` runs it
on a checkpoint while a feeder thread lands input and waits on the checkpoint's completed
micro-batches (``Progress``), and stops it when the feeder returns. A feeder's failure (a
wait that timed out, a bad assertion) is raised after the run has stopped."""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from flowc.executor.streaming.commit import Checkpoint
from flowc.executor.streaming.runner import StreamStats, run_streaming

TRIGGER_MS = 100
# Datagen has rows at every trigger: at an interval shorter than a micro-batch takes, the
# next batch starts at once (a stop still ends the query right after the running batch
# returned; the interrupted next one is replayed on restart); 500 ms keeps the rows a batch
# and the batch counts of the tests small without waiting seconds for each batch.
DATAGEN_TRIGGER_MS = 500
WAIT_S = 150.0  # a wait's limit: Spark's start-up on a loaded machine comes first
POLL_S = 0.05


def last_batch(ckpt: Path) -> int:
    """The latest completed micro-batch of ``ckpt`` (-1: none; older snapshots are
    removed)."""
    done = Checkpoint(str(ckpt)).done_batches()
    return done[-1] if done else -1


class Progress:
    """Waits on the completed micro-batches of one checkpoint, while the job runs; each
    wait gives up when the run ended (``stop``) or after ``timeout`` seconds, failing."""

    def __init__(self, ckpt: Path, stop: threading.Event, timeout: float) -> None:
        self.done = Checkpoint(str(ckpt))
        self.stop = stop
        self.timeout = timeout

    def _until(self, reached: Callable[[], int | None], what: str) -> int:
        deadline = time.monotonic() + self.timeout
        while time.monotonic() < deadline and not self.stop.is_set():
            batch = reached()
            if batch is not None:
                return batch
            time.sleep(POLL_S)
        raise AssertionError(f"the job did not {what} in time")

    def files(self, n: int) -> int:
        """Until completed micro-batches read ``n`` units (files, rows, records) of the
        unbounded sources in all; returns the batch that did."""
        def reached() -> int | None:
            batches = self.done.done_batches()
            if batches and self.done.files_read(batches[-1]) >= n:
                return batches[-1]
            return None
        return self._until(reached, f"read {n} files")

    def batch(self, last: int) -> int:
        """Until micro-batch ``last`` (or a later one) completed; returns the latest."""
        def reached() -> int | None:
            batches = self.done.done_batches()
            return batches[-1] if batches and batches[-1] >= last else None
        return self._until(reached, f"complete micro-batch {last}")


def run_feeding(job_graph: Any, ckpt: Path, feed: Callable[[Progress], None], *,
                trigger_ms: int = TRIGGER_MS, timeout: float = WAIT_S,
                **options: Any) -> StreamStats:
    """Run ``job_graph`` on checkpoint ``ckpt`` while ``feed(progress)`` lands input in a
    thread; stop after the running micro-batch when it returns. ``options``: more of
    ``run_streaming``'s (``progress``, ``job_name``)."""
    stop = threading.Event()
    errors: list[BaseException] = []
    progress = Progress(ckpt, stop, timeout)

    def feeder() -> None:
        try:
            feed(progress)
        except BaseException as e:  # noqa: BLE001 - raised after the run
            errors.append(e)
        finally:
            stop.set()
    thread = threading.Thread(target=feeder)
    thread.start()
    try:
        stats = run_streaming(job_graph, checkpoint=str(ckpt), trigger_ms=trigger_ms,
                              stop=stop, **options)
    finally:
        stop.set()
        thread.join()
    if errors:
        raise errors[0]
    return stats


def stream_files(job_graph: Any, work: Path, make: Callable[[Path, int], str],
                 n_files: int) -> StreamStats:
    """Run ``job_graph`` on checkpoint ``work/ck``, landing file ``k`` (``make(work, k)``
    writes it beside ``work/in`` and returns its path) as ``work/in/f<k>.csv`` once the
    previous one was read, until all are read."""
    def feed(progress: Progress) -> None:
        for k in range(n_files):
            os.replace(make(work, k), work / "in" / f"f{k:03d}.csv")
            progress.files(k + 1)
    return run_feeding(job_graph, work / "ck", feed)
