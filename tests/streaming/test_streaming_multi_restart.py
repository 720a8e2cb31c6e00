"""Exactly-once with two monitored sources in one query: ``flowc run`` killed with SIGKILL
after the file sink committed a batch the query had not, and at an arbitrary moment while
files land in both directories, restarted on the same checkpoint each time; the rows
written equal the BATCH run over all files of both sources."""

from __future__ import annotations

import random
import signal
import time
from pathlib import Path

import pytest

from flowc.executor import run_reference
from flowc.parser import compile_file

from .kill_driver import SENTINEL_TS, Driver, csv_rows, write_file

pytestmark = [pytest.mark.heavy, pytest.mark.slow, pytest.mark.spark]

JOB = """set parallelism = 2;
{mode}
source a (user_id string, action string, ts timestamp)
  from csv 'a/'{monitor}
  watermark ts - 2s
  with (parallelism = 1);
source b (user_id string, action string, ts timestamp)
  from csv 'b/'{monitor}
  watermark ts - 2s
  with (parallelism = 1);
a | union b
  | filter action = 'click'
  | key by user_id
  | window tumbling 5s
  | aggregate count(*) as n, max(ts) as last
  | write csv '{out}';
"""


def test_kill9_with_two_sources_then_restart_equals_the_batch_run(tmp_path: Path) -> None:
    work = tmp_path
    for d in ("a", "b", "hold"):
        (work / d).mkdir()
    (work / "job.flow").write_text(JOB.format(mode="", monitor=" monitor every 200ms",
                                              out="out/"))
    rng = random.Random(11)
    k = {"a": 0, "b": 0}

    def land(src: str, n: int = 1) -> None:
        for _ in range(n):
            write_file(work / src, k[src], rng)
            k[src] += 1

    def batch_done(d: Driver, b: int) -> bool:
        return f": batch {b}:" in d.log()

    drivers: list[Driver] = []
    try:
        land("a", 2)
        land("b", 1)
        d = Driver(work, "after-sinks-1")  # the sink committed batch 1, the query not
        drivers.append(d)
        d.wait_for(lambda: batch_done(d, 0), "batch 0")
        land("b")
        land("a")
        d.wait_for(lambda: (work / "hold" / "after-sinks-1").exists(), "the hold after sinks")
        d.kill9()

        d = Driver(work, None)  # killed at an arbitrary moment while files land
        drivers.append(d)
        d.wait_for(lambda: batch_done(d, 1), "the replay of batch 1")
        for _ in range(3):
            land(rng.choice("ab"))
            time.sleep(0.3)
        time.sleep(rng.uniform(0.2, 1.5))
        d.kill9()

        d = Driver(work, None)  # the rest, then a clean stop
        drivers.append(d)
        land("a", 2)
        land("b", 2)
        for src in "ab":
            (work / src / ".zz.csv").write_text(
                f"user_id,action,ts\nnobody,flush,{SENTINEL_TS}\n")
            (work / src / ".zz.csv").rename(work / src / "zz.csv")
        d.wait_for(lambda: any(line.count("2001-09-09") == 2 for line in
                               d.log().splitlines()), "both sentinels' watermarks")
        d.proc.send_signal(signal.SIGTERM)
        assert d.proc.wait(120) == 0, d.log()[-3000:]
    finally:
        for d in drivers:
            d.cleanup()

    got = csv_rows(work / "out")
    (work / "batch.flow").write_text(JOB.format(mode="set mode = batch;", monitor="",
                                                out="expected/"))
    run_reference(compile_file(str(work / "batch.flow")).env.get_job_graph())
    expected = csv_rows(work / "expected")
    assert sum(expected.values()) >= 20  # 5 users x 4 windows
    duplicates = {r: n for r, n in got.items() if n > expected.get(r, 0)}
    missing = {r: n for r, n in expected.items() if got.get(r, 0) < n}
    assert not duplicates and not missing, (duplicates, missing)
