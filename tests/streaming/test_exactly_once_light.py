"""Exactly-once in the default run: the lighter variant of test_exactly_once.py (which is
``heavy``). ``flowc run`` of a job with two file sinks and a dead-letter output, all in its
one query, as a real process on local Spark: killed with SIGKILL (driver Python, JVM and
Python workers, by pid) once after the sinks committed a micro-batch but before the query
did, restarted on the same checkpoint, killed again at a random moment while files land,
restarted and stopped with SIGTERM. Every sink's rows and the dead letters equal the BATCH
run over all files: none twice, none missing. Three Spark start-ups: about a minute on a
quiet 2-core machine, several under load, hence ``slow``."""

from __future__ import annotations

import json
import random
import signal
import time
from collections import Counter
from pathlib import Path

import pytest

from flowc.executor import run_reference
from flowc.parser import compile_file

from .kill_driver import SENTINEL_TS, Driver, csv_rows, write_file

pytestmark = [pytest.mark.slow, pytest.mark.spark]

JOB = """set parallelism = 2;
{mode}
source clicks (user_id string, action string, ts timestamp)
  from csv 'in/'{monitor}
  watermark ts - 2s
  dead letter '{bad}'
  with (parallelism = 1);
clicks
  | filter action = 'view'
  | write json '{views}';
clicks
  | filter action = 'click'
  | key by user_id
  | window tumbling 5s
  | aggregate count(*) as n, max(ts) as last
  | write csv '{out}';
"""


def _lines(path: Path) -> Counter[str]:
    """The json lines of a file, or of every part file in a directory."""
    files = sorted(path.glob("part-*")) if path.is_dir() else [path] if path.exists() else []
    out: Counter[str] = Counter()
    for f in files:
        out.update(json.dumps(json.loads(x), sort_keys=True)
                   for x in f.read_text().splitlines() if x.strip())
    return out


def _differences(got: Counter, expected: Counter) -> tuple[dict, dict]:  # type: ignore[type-arg]
    return ({r: n for r, n in got.items() if n > expected.get(r, 0)},
            {r: n for r, n in expected.items() if got.get(r, 0) < n})


def test_two_kills_then_restart_every_sink_and_dead_letter_equals_the_batch_run(
        tmp_path: Path) -> None:
    work = tmp_path
    (work / "in").mkdir()
    (work / "hold").mkdir()
    (work / "job.flow").write_text(JOB.format(mode="", monitor=" monitor every 200ms",
                                              bad="bad/", views="views/", out="out/"))
    rng = random.Random(11)
    k = 0

    def land(n: int) -> None:
        nonlocal k
        for _ in range(n):
            write_file(work / "in", k, rng, bad=k in (1, 2, 4))
            k += 1

    drivers: list[Driver] = []
    try:
        land(2)
        d = Driver(work, "after-sinks-1")  # sinks and dead letters committed 1, query not
        drivers.append(d)
        d.wait_for(lambda: ": batch 0:" in d.log(), "batch 0")
        land(1)
        d.wait_for(lambda: (work / "hold" / "after-sinks-1").exists(), "the hold after sinks")
        committed = {p.parent.name for p in (work / "ck" / "flowc" / "sinks").glob("*/1")}
        assert len(committed) == 3, committed  # csv, json and the dead letters
        d.kill9()

        d = Driver(work, None)  # the replay of batch 1, then a kill at a random moment
        drivers.append(d)
        d.wait_for(lambda: ": batch 1:" in d.log(), "the replay of batch 1")
        for _ in range(3):
            land(1)
            time.sleep(rng.uniform(0.1, 0.5))
        d.kill9()

        d = Driver(work, None)  # the rest, then a clean stop
        drivers.append(d)
        land(1)
        (work / "in" / "zz-sentinel.csv").write_text(
            f"user_id,action,ts\nnobody,flush,{SENTINEL_TS}\n")
        d.wait_for(lambda: "2001-09-09" in d.log(), "the sentinel's watermark")
        d.proc.send_signal(signal.SIGTERM)
        assert d.proc.wait(120) == 0, d.log()[-3000:]
    finally:
        for d in drivers:
            d.cleanup()

    # The oracle: the same job in BATCH mode over all files, on the reference executor.
    (work / "batch.flow").write_text(JOB.format(
        mode="set mode = batch;", monitor="", bad="expected-bad.jsonl",
        views="expected-views/", out="expected/"))
    run_reference(compile_file(str(work / "batch.flow")).env.get_job_graph())
    expected_windows = csv_rows(work / "expected")
    assert sum(expected_windows.values()) > 10
    assert _differences(csv_rows(work / "out"), expected_windows) == ({}, {})
    expected_views = _lines(work / "expected-views")
    assert sum(expected_views.values()) > 20
    assert _differences(_lines(work / "views"), expected_views) == ({}, {})
    expected_bad = _lines(work / "expected-bad.jsonl")
    assert sum(expected_bad.values()) == 3  # files 1, 2 and 4 have one bad row each
    assert _differences(_lines(work / "bad"), expected_bad) == ({}, {})
