"""Event-time windows with allowed lateness in columnar micro-batches
(``arrow/stream_windows.py``: a late-but-allowed record fires its window again; groups are
cleaned up at end + lateness), their state converted to and from the row WindowOperator's
snapshot (accumulators, the end-of-window and cleanup timers) by
``streaming/window_state.py``: the same multi-batch jobs on the columnar and the row path
give the same outputs, stats and row-format snapshots after every batch, a checkpoint
resumes across the paths, and the printed lines are the reference executor's micro-batch
model's. No Spark: the batches run in this process (``test_streaming_columnar.Driver``)."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest

from .columnar_paths import (
    Driver,
    job_graph,
    model_lines,
    printed,
    random_click,
    row_and_columnar,
    same_on_every_path,
    write_batches,
)

JOB = """set parallelism = {p};
{head}source clicks (user_id string, action string, score double, n int, ts timestamp)
  from csv '{src}' monitor every 100ms
  watermark ts - {delay}ms;
clicks
  | key by {key}
  | window {window} allowed lateness {lateness} late into late_clicks
  | aggregate count(*) as c, count(score) as cs, count(distinct action) as d,
      sum(score) as s, sum(n) as sn, avg(score) as a, avg(n) as an, min(ts) as lo,
      max(action) as hi, first(action) as f, last(score) as l
  | print 'win';
late_clicks | print 'late';
"""


def _job(rnd: random.Random) -> str:
    return JOB.format(
        p=rnd.choice([1, 2]), src="{src}", delay=rnd.choice([0, 500, 1500]),
        key=rnd.choice(["user_id", "user_id, action"]),
        window=rnd.choice(["tumbling 2s", "tumbling 3s", "sliding 4s every 2s"]),
        lateness=rnd.choice(["1s", "3s", "10s"]),
        head="set flowc.watermarks = 'per-record';\n" if rnd.random() < 0.3 else "")


def _files(d: Driver, batches: int, rnd: random.Random) -> list[list[str]]:
    """One csv file per batch, records from well behind the batch's time (late, late but
    allowed) to ahead of it."""
    return write_batches(d, [
        [random_click(rnd, 2500 * b, (-9000, 3000), 4, ["click", "buy", "view"])
         for _ in range(rnd.randrange(1, 25))] for b in range(batches)])


@pytest.mark.parametrize("seed", range(8))
def test_windows_with_lateness_equal_on_both_paths_and_the_model(tmp_path: Path,
                                                                 seed: int) -> None:
    rnd = random.Random(seed)
    text = _job(rnd)
    d = Driver(text, tmp_path)
    assert [m.kind for c in d.chains.values() for m in c.members].count("window") == 1
    files = _files(d, 7, rnd)
    runs = row_and_columnar(d, files)
    same_on_every_path(runs)
    lines = printed(d, runs["col"])
    assert lines == model_lines(job_graph(d, text), files).printed


def test_a_late_record_within_the_lateness_fires_its_window_again(tmp_path: Path) -> None:
    """Batch 0 fires [0, 2 s); batch 1's record at 1500 is behind the watermark but within
    the lateness: the window fires again with it, on both paths, and from a snapshot the
    other path wrote; after the cleanup time the next one is late."""
    text = JOB.format(p=1, head="", src="{src}", delay=0, key="user_id",
                      window="tumbling 2s", lateness="3s")
    d = Driver(text, tmp_path)
    files = write_batches(d, [["u1,click,1.0,1,100", "u1,buy,2.0,2,2500"], ["u1,view,,3,1500"],
                              ["u1,click,4.0,4,9000"], ["u1,click,5.0,5,1600"]])
    runs = row_and_columnar(d, files)
    t = "1970-01-01T00:00"
    expected = [
        [f"win> +I[u1, {t}, {t}:02, 1, 1, 1, 1.0, 1, 1.0, 1.0, {t}:00.100, click, click, 1.0]"],
        [f"win> +I[u1, {t}, {t}:02, 2, 1, 2, 1.0, 4, 1.0, 2.0, {t}:00.100, view, click, 1.0]"],
        [f"win> +I[u1, {t}:02, {t}:04, 1, 1, 1, 2.0, 2, 2.0, 2.0, {t}:02.500, buy, buy, 2.0]"],
        [f"late> +I[u1, click, 5.0, 5, {t}:01.600]"]]
    for name, results in runs.items():
        assert [printed(d, [r]) for r in results] == expected, name
        assert [r["sinks"] for r in results] == [r["sinks"] for r in runs["row"]], name
        assert [r["snapshots"] for r in results] == [r["snapshots"] for r in runs["row"]]


def test_a_restored_group_aggregates_on_from_its_accumulator(tmp_path: Path) -> None:
    """A group of many records restored from a row snapshot (as rows that aggregate to
    its accumulator) gives every aggregate the row path's value in its late firing."""
    text = JOB.format(p=1, head="", src="{src}", delay=0, key="user_id",
                      window="tumbling 10s", lateness="15s")
    d = Driver(text, tmp_path)
    first = [f"u1,{['a', 'b', 'c'][i % 3]},{'' if i % 4 == 0 else i * 0.25},"
             f"{'' if i % 5 == 0 else i},{i * 10}" for i in range(40)]
    files = write_batches(d, [first + ["u1,x,1.0,1,20000"], ["u1,d,7.5,2147483647,5000"],
                              ["u1,a,,2147483647,6000"]])
    runs: dict[str, Any] = {
        "row": [d.batch(d.work / "r", b, f, False) for b, f in enumerate(files)],
        "row-then-col": [d.batch(d.work / "rc", b, f, b > 0) for b, f in enumerate(files)]}
    assert runs["row-then-col"] == runs["row"]
    assert len(printed(d, runs["row"])) == 3  # [0, 10 s) fired at 20 s, then twice late


@pytest.mark.parametrize("lateness", ["0s", "5s"])
def test_an_average_of_negative_zeros_prints_zero_on_both_paths(tmp_path: Path,
                                                                lateness: str) -> None:
    """The row code's average sums from 0 (0 + -0.0 is 0.0): an on-time and a late firing
    print 0.0, not -0.0, on the columnar path too."""
    text = JOB.format(p=1, head="", src="{src}", delay=0, key="user_id",
                      window="tumbling 2s", lateness=lateness)
    d = Driver(text, tmp_path)
    files = write_batches(d, [["u1,click,-0.0,1,100", "u1,buy,-0.0,2,2500"],
                              ["u1,view,-0.0,3,1500", "u2,view,-0.0,3,1500"]])  # u2: late, new
    runs = row_and_columnar(d, files)
    lines = printed(d, runs["col"])
    assert lines == printed(d, runs["row"])
    wins = [line for line in lines if line.startswith("win> +I[u")]
    assert any(line.startswith("win> +I[u2") for line in wins) == (lateness != "0s")
    assert all(", -0.0, 1, 0.0, " in line or ", -0.0, 3, 0.0, " in line
               or ", -0.0, 4, 0.0, " in line for line in wins), wins
