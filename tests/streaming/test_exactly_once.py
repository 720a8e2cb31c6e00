"""Exactly-once: ``flowc run`` as a real process on local Spark while files arrive, killed
with SIGKILL (the driver's Python and its JVM, with the JVM's Python workers, by pid) at
several moments - after the file sink committed a batch but before the query committed
it, after the batch's state snapshots were marked done but before the query committed it,
and at an arbitrary moment while files land -, restarted on the same checkpoint each time
and finally stopped with SIGTERM. The rows written equal the BATCH run over all files:
no duplicate, none missing."""

from __future__ import annotations

import random
import signal
import time
from pathlib import Path

import pytest

from flowc.executor import run_reference
from flowc.parser import compile_file

from .kill_driver import SENTINEL_TS, Driver, csv_rows, write_file

# Four Spark start-ups on top of the batches: minutes on a loaded machine, beyond the
# default run's budget (`python -m pytest -m heavy tests/streaming` runs it).
pytestmark = [pytest.mark.heavy, pytest.mark.slow, pytest.mark.spark]

JOB = """set parallelism = 2;
{mode}
source clicks (user_id string, action string, ts timestamp)
  from csv 'in/'{monitor}
  watermark ts - 2s
  with (parallelism = 1);
clicks
  | filter action = 'click'
  | key by user_id
  | window tumbling 5s
  | aggregate count(*) as n, max(ts) as last
  | write csv '{out}';
"""


def test_kill9_at_several_moments_then_restart_equals_the_batch_run(tmp_path: Path) -> None:
    work = tmp_path
    (work / "in").mkdir()
    (work / "hold").mkdir()
    (work / "job.flow").write_text(JOB.format(mode="", monitor=" monitor every 200ms",
                                              out="out/"))
    rng = random.Random(7)
    k = 0

    def land(n: int) -> None:
        nonlocal k
        for _ in range(n):
            write_file(work / "in", k, rng)
            k += 1

    def batch_done(d: Driver, b: int) -> bool:
        return f": batch {b}:" in d.log()

    drivers: list[Driver] = []
    try:
        land(2)
        d = Driver(work, "after-sinks-1")  # 1: sink committed, query not
        drivers.append(d)
        d.wait_for(lambda: batch_done(d, 0), "batch 0")
        land(1)
        d.wait_for(lambda: (work / "hold" / "after-sinks-1").exists(), "the hold after sinks")
        assert list((work / "ck" / "flowc" / "sinks").glob("*/1"))  # the sink committed 1
        d.kill9()

        d = Driver(work, "after-state-2")  # 2: snapshots done, query not committed
        drivers.append(d)
        d.wait_for(lambda: batch_done(d, 1), "the replay of batch 1")
        land(2)
        d.wait_for(lambda: (work / "hold" / "after-state-2").exists(), "the hold after state")
        d.kill9()

        d = Driver(work, None)  # 3: killed at an arbitrary moment while files land
        drivers.append(d)
        d.wait_for(lambda: batch_done(d, 2), "the replay of batch 2")
        for _ in range(3):
            land(1)
            time.sleep(0.3)
        time.sleep(rng.uniform(0.2, 1.5))
        d.kill9()

        d = Driver(work, None)  # 4: the rest, then a clean stop
        drivers.append(d)
        land(3)
        sentinel = work / "in" / "zz-sentinel.csv"
        sentinel.write_text(f"user_id,action,ts\nnobody,flush,{SENTINEL_TS}\n")
        d.wait_for(lambda: "2001-09-09" in d.log(), "the sentinel's watermark")
        d.proc.send_signal(signal.SIGTERM)
        assert d.proc.wait(120) == 0, d.log()[-3000:]
    finally:
        for d in drivers:
            d.cleanup()

    got = csv_rows(work / "out")
    # The oracle: the same job in BATCH mode over all files, on the reference executor.
    (work / "batch.flow").write_text(JOB.format(mode="set mode = batch;", monitor="",
                                                out="expected/"))
    run_reference(compile_file(str(work / "batch.flow")).env.get_job_graph())
    expected = csv_rows(work / "expected")
    assert sum(expected.values()) > 20
    duplicates = {r: n for r, n in got.items() if n > expected.get(r, 0)}
    missing = {r: n for r, n in expected.items() if got.get(r, 0) < n}
    assert not duplicates and not missing, (duplicates, missing)
