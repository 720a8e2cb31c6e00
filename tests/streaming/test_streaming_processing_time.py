"""Processing time on Spark Structured Streaming: a micro-batch's processing time is Spark's
``batchTimestampMs`` from the query's offsets log. A processing-time window fires at the
start of the first micro-batch at or after its end, its pending timers survive a restart
(they are part of the operator's snapshot), and a replayed batch sees the same timestamp,
so it writes the same rows."""

from __future__ import annotations

import csv
import json
import shutil
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from flowc.parser import compile_file

from .harness import run_feeding

JOB = """source clicks (user_id string)
  from csv 'in/' monitor every 100ms;
clicks
  | key by user_id
  | window tumbling 1s on processing time
  | aggregate count(*) as n
  | write csv 'out/';
"""


def _land(d: Path, name: str, users: list[str]) -> None:
    tmp = d / f".{name}.csv"
    tmp.write_text("user_id\n" + "".join(f"{u}\n" for u in users))
    tmp.rename(d / f"{name}.csv")


def _part(out: Path, batch: int) -> list[tuple[str, ...]]:
    f = out / f"part-{batch:08d}.csv"
    if not f.exists():
        return []
    with open(f, newline="") as fh:
        rows = list(csv.reader(fh))
    return sorted(tuple(r) for r in rows[1:])


def _batch_ts(ckpt: Path, batch: int) -> int:
    lines = (ckpt / "spark" / "offsets" / str(batch)).read_text().splitlines()
    return int(json.loads(lines[1])["batchTimestampMs"])


def _window(ts: int) -> tuple[str, str]:
    """The 1 s window holding ``ts``, as the streaming csv sink writes it (epoch ms)."""
    start = ts - ts % 1000
    return str(start), str(start + 1000)


def _run(work: Path, feed: Callable[[Callable[[int], int]], None]) -> None:
    """Run the job while ``feed(wait)`` lands files; ``wait(n)`` waits until the
    checkpoint's completed micro-batches read ``n`` files and returns the last batch id."""
    jg = compile_file(str(work / "job.flow")).env.get_job_graph()
    run_feeding(jg, work / "ck", lambda progress: feed(progress.files))


@pytest.mark.spark
@pytest.mark.slow
def test_processing_time_window_fires_across_batches_survives_restart_and_replays(
        spark: Any, tmp_path: Path) -> None:
    work = tmp_path
    (work / "in").mkdir()
    (work / "job.flow").write_text(JOB)
    out, ckpt = work / "out", work / "ck"
    batches: list[int] = []

    def first(wait: Callable[[int], int]) -> None:
        _land(work / "in", "f1", ["u1", "u1", "u1", "u2", "u2"])
        batches.append(wait(1))
        time.sleep(1.2)  # the next batch's timestamp is past the first one's window
        _land(work / "in", "f2", ["u1"])
        batches.append(wait(2))

    _run(work, first)
    b1, b2 = batches
    ts1, ts2 = _batch_ts(ckpt, b1), _batch_ts(ckpt, b2)
    assert ts2 - ts1 >= 1000
    # nothing fires in the batch that filled the window; it fires at the next batch's start
    assert _part(out, b1) == []
    s, e = _window(ts1)
    fired = _part(out, b2)
    assert fired == [("u1", s, e, "3"), ("u2", s, e, "2")]

    # A crash after the batch's sinks, before Spark committed it: Spark replays it with
    # the offsets log's timestamp, from the previous batch's snapshots.
    for f in (str(b2), f".{b2}.crc"):
        (ckpt / "spark" / "commits" / f).unlink(missing_ok=True)
    shutil.rmtree(ckpt / "flowc" / "state" / str(b2))
    for marker in (ckpt / "flowc" / "sinks").glob(f"*/{b2}"):
        marker.unlink()
    (out / f"part-{b2:08d}.csv").unlink()

    def second(wait: Callable[[int], int]) -> None:
        batches.append(wait(2))  # the replayed batch
        time.sleep(1.2)
        _land(work / "in", "f3", ["u3"])
        batches.append(wait(3))

    _run(work, second)
    replayed, b3 = batches[2:]
    assert replayed == b2 and _batch_ts(ckpt, b2) == ts2
    assert _part(out, b2) == fired  # the same rows again
    # f2's window was pending in the snapshot across the restart; it fires now
    s2, e2 = _window(ts2)
    assert ("u1", s2, e2, "1") in _part(out, b3)
