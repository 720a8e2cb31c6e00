"""Exactly-once: ``flowc run`` as a real process on local Spark while files arrive, killed
with SIGKILL (the driver's Python and its JVM, with the JVM's Python workers, by pid) at
several moments - after the file sink committed a batch but before the query committed
it, after the batch's state snapshots were marked done but before the query committed it,
and at an arbitrary moment while files land -, restarted on the same checkpoint each time
and finally stopped with SIGTERM. The rows written equal the BATCH run over all files:
no duplicate, none missing."""

from __future__ import annotations

import csv
import os
import random
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

from flowc.executor import run_reference
from flowc.parser import compile_file

# Four Spark start-ups on top of the batches: minutes on a loaded machine, beyond the
# default run's budget (`python -m pytest -m heavy tests/streaming` runs it).
pytestmark = [pytest.mark.heavy, pytest.mark.slow, pytest.mark.spark]

SRC = Path(__file__).resolve().parents[2] / "src"
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
SENTINEL_TS = 1_000_000_000_000  # 2001-09-09: its watermark closes every window


def _write_file(d: Path, k: int, rng: random.Random) -> None:
    """File k: 40 rows in [k*3000, k*3000+3000) ms, out of order by up to 1 s (less than
    the 2 s watermark delay: nothing is late in the stream either)."""
    rows = ["user_id,action,ts"]
    for _ in range(40):
        ts = k * 3000 + 1000 + rng.randrange(-1000, 2000)
        rows.append(f"u{rng.randrange(5)},{rng.choice(['click', 'click', 'view'])},{ts}")
    tmp = d / f".f{k:03d}.csv"
    tmp.write_text("\n".join(rows) + "\n")
    tmp.rename(d / f"f{k:03d}.csv")  # appears whole (Spark skips '.' files)


def _rows(d: Path) -> Counter[tuple[str, ...]]:
    out: Counter[tuple[str, ...]] = Counter()
    for f in sorted(d.glob("part-*.csv")):
        with open(f, newline="") as fh:
            r = csv.reader(fh)
            next(r)
            out.update(tuple(row) for row in r)
    return out


def _descendants(pid: int) -> list[int]:
    children: dict[int, list[int]] = {}
    for p in Path("/proc").iterdir():
        if p.name.isdigit():
            try:
                ppid = int((p / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(ppid, []).append(int(p.name))
    out, stack = [], [pid]
    while stack:
        for c in children.get(stack.pop(), []):
            out.append(c)
            stack.append(c)
    return out


class Driver:
    def __init__(self, work: Path, hold_at: str | None) -> None:
        env = dict(os.environ, PYTHONPATH=str(SRC), FLOWC_STREAMING_TEST_HOLD=str(work / "hold"))
        if hold_at:
            env["FLOWC_STREAMING_TEST_HOLD_AT"] = hold_at
        self.err = work / f"err-{time.monotonic_ns()}.txt"
        self.proc = subprocess.Popen(  # noqa: S603
            [sys.executable, "-m", "flowc.cli", "run", "job.flow", "--no-progress",
             "--checkpoint", str(work / "ck"), "--trigger", "200ms"],
            cwd=work, env=env, stdout=subprocess.DEVNULL, stderr=open(self.err, "w"),  # noqa: SIM115
            start_new_session=True)

    def log(self) -> str:
        return self.err.read_text()

    def wait_for(self, cond, what: str, timeout: float = 180) -> None:  # noqa: ANN001
        deadline = time.monotonic() + timeout
        while not cond():
            if self.proc.poll() is not None:
                raise AssertionError(f"flowc exited ({self.proc.returncode}) waiting for "
                                     f"{what}:\n{self.log()[-3000:]}")
            if time.monotonic() > deadline:
                raise AssertionError(f"timed out waiting for {what}:\n{self.log()[-3000:]}")
            time.sleep(0.1)

    def kill9(self) -> None:
        """SIGKILL the driver's Python, its JVM and the JVM's Python workers, by pid."""
        for pid in [self.proc.pid, *_descendants(self.proc.pid)]:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        self.proc.wait(30)

    def cleanup(self) -> None:
        if self.proc.poll() is None:
            self.kill9()
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)  # anything left in its session
        except (ProcessLookupError, PermissionError):
            pass


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
            _write_file(work / "in", k, rng)
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

    got = _rows(work / "out")
    # The oracle: the same job in BATCH mode over all files, on the reference executor.
    (work / "batch.flow").write_text(JOB.format(mode="set mode = batch;", monitor="",
                                                out="expected/"))
    run_reference(compile_file(str(work / "batch.flow")).env.get_job_graph())
    expected = _rows(work / "expected")
    assert sum(expected.values()) > 20
    duplicates = {r: n for r, n in got.items() if n > expected.get(r, 0)}
    missing = {r: n for r, n in expected.items() if got.get(r, 0) < n}
    assert not duplicates and not missing, (duplicates, missing)
