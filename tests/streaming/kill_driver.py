"""Helpers of the kill -9 tests (test_exactly_once*.py): files that land whole, the rows of
csv part files, and a ``flowc run`` driver process that can be held at a point of a batch
and killed with its JVM and the JVM's Python workers, by pid."""

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

SRC = Path(__file__).resolve().parents[2] / "src"
SENTINEL_TS = 1_000_000_000_000  # 2001-09-09: its watermark closes every window


def write_file(d: Path, k: int, rng: random.Random, bad: bool = False) -> None:
    """File k: 40 rows in [k*3000, k*3000+3000) ms, out of order by up to 1 s (less than
    the 2 s watermark delay: nothing is late in the stream either)."""
    rows = ["user_id,action,ts"]
    for _ in range(40):
        ts = k * 3000 + 1000 + rng.randrange(-1000, 2000)
        rows.append(f"u{rng.randrange(5)},{rng.choice(['click', 'click', 'view'])},{ts}")
    if bad:  # a row that does not parse: a dead letter (or a failed job without one)
        rows.insert(rng.randrange(1, len(rows)), f"u0,click,not-a-time-{k}")
    tmp = d / f".f{k:03d}.csv"
    tmp.write_text("\n".join(rows) + "\n")
    tmp.rename(d / f"f{k:03d}.csv")  # appears whole (Spark skips '.' files)


def csv_rows(d: Path) -> Counter[tuple[str, ...]]:
    out: Counter[tuple[str, ...]] = Counter()
    for f in sorted(d.glob("part-*.csv")):
        with open(f, newline="") as fh:
            r = csv.reader(fh)
            next(r)
            out.update(tuple(row) for row in r)
    return out


def descendants(pid: int) -> list[int]:
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
    """``flowc run job.flow --checkpoint ck --trigger 200ms`` in its own session, optionally
    held (``control.hold_for_test``) at ``hold_at`` = ``<point>-<batch>``."""

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
        for pid in [self.proc.pid, *descendants(self.proc.pid)]:
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
