"""The progress display of an unbounded job on a terminal: after every micro-batch the line
shows batches, rows and rows/s, per source the watermark, its lag (now - watermark) and
the files waiting, and the state's size; between batches it is redrawn (the lag counts
on); it is erased at the end. Read from what is written to a terminal-like stream."""

from __future__ import annotations

import io
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from flowc.executor.spark.progress import (
    CLEAR,
    BatchProgress,
    SourceLag,
    StreamProgress,
    describe_stream,
    files_waiting,
    rate,
)

from .harness import Progress, run_feeding

WM = 1_704_067_203_999  # 2024-01-01 00:00:03.999


class Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def _lines(stream: Tty) -> list[str]:
    return [x for x in stream.getvalue().split(CLEAR) if x]


def test_the_line_shows_batches_rate_watermark_lag_waiting_files_and_state() -> None:
    p = BatchProgress("clicks", 7, 8, 80, 2.0, 640, (SourceLag("Source: clicks", WM, 3),),
                      12_800, late=3)
    assert describe_stream(p, WM + 2_101) == (
        "clicks: batch 7 (8 done), 80 rows at 40 rows/s, 640 in all | Source: clicks "
        "watermark 2024-01-01 00:00:03.999 lag 2.1 s, 3 files waiting | state 12.5 KiB | "
        "3 late dropped")
    # no watermark yet; not a file source; long lags in minutes and hours
    none = BatchProgress("j", 0, 1, 5, 0.0, 5, (SourceLag("Source: s", None),), 0)
    assert "Source: s watermark - | state 0 B" in describe_stream(none, WM)
    lagging = BatchProgress("j", 0, 1, 5, 0.1, 5, (SourceLag("Source: s", WM, 1),), 3 << 20)
    line = describe_stream(lagging, WM + 3 * 3_600_000)
    assert "lag 3.0 h, 1 file waiting | state 3.0 MiB" in line
    assert len(describe_stream(lagging, WM, width=40)) == 40


def test_a_slow_batch_of_few_rows_shows_its_rate_with_a_decimal_not_zero() -> None:
    # a batch of 1 row that took 1.7 s showed "1 rows at 0 rows/s" (rounded to a whole
    # number): small rates keep one decimal, large ones stay compact
    slow = BatchProgress("j", 4, 1, 1, 1.7, 1, (SourceLag("Source: s", WM, 0),), 0)
    assert "1 rows at 0.59 rows/s" in describe_stream(slow, WM)
    assert rate(0.0) == "0" and rate(2.5) == "2.5" and rate(40.0) == "40"
    assert rate(2 / 45) == "0.044"
    assert rate(123_456.0) == "123.5k"


def test_the_input_rate_is_rows_over_the_time_since_the_previous_batch_started(
        capsys: pytest.CaptureFixture[str]) -> None:
    """The processing rate (rows / the batch's seconds) said nothing of how fast rows
    arrive: 10 rows read in a 0.5 s batch every 5 s arrive at 2 rows/s, not 20."""
    from flowc.executor.streaming.plan import SourcePlan, StreamingPlan
    from flowc.executor.streaming.report import BatchReporter
    from flowc.executor.streaming.task import STATS

    plan = StreamingPlan([], [SourcePlan(0, None, 1, "v1", False)], {}, {}, {})
    reporter = BatchReporter(plan, lambda n: "Source: s", "j", progress=False)
    stats = {"late": 0, "state_bytes": 2048, "in": 10, "watermark": WM}
    for batch, start in ((0, 100.0), (1, 105.0)):
        reporter.report(batch, [(STATS, ("v1", 0, stats))], "1 file", start, start + 0.5)
    first, second = capsys.readouterr().err.splitlines()
    assert "j: batch 0: 1 file, 10 rows (20 rows/s), watermark Source: s 2024-01-01" in first
    assert "j: batch 1: 1 file, 10 rows (20 rows/s, input 2.0 rows/s), watermark" in second
    assert second.endswith("state 2.0 KiB; 2 batches, 20 rows in all")
    p = BatchProgress("clicks", 7, 8, 80, 2.0, 640, (SourceLag("Source: clicks", WM, 3),),
                      0, input_rate=8.0)
    assert "80 rows at 40 rows/s (input 8.0 rows/s), 640 in all" in describe_stream(p, WM)


def test_the_display_redraws_between_batches_and_is_erased_at_the_end() -> None:
    now = [WM + 1000]
    waiting = {"Source: clicks": 4}
    out = Tty()
    display = StreamProgress(out, interval=0.02, waiting=lambda: dict(waiting),
                             clock=lambda: now[0], width=0).start()
    display.update(BatchProgress("clicks", 0, 1, 10, 1.0, 10,
                                 (SourceLag("Source: clicks", WM, None),), 2048))
    first = _lines(out)[-1]
    assert "batch 0 (1 done)" in first and "lag 1.0 s, 4 files waiting" in first
    now[0] += 5000  # no batch for 5 s: the lag grows, new files are counted
    waiting["Source: clicks"] = 6
    deadline = time.monotonic() + 5
    while "lag 6.0 s, 6 files waiting" not in _lines(out)[-1] and time.monotonic() < deadline:
        time.sleep(0.02)
    assert "lag 6.0 s, 6 files waiting | state 2.0 KiB" in _lines(out)[-1]
    display.stop()
    assert out.getvalue().endswith(CLEAR)


def test_files_waiting_counts_what_the_file_source_lists(tmp_path: Path) -> None:
    for name in ("a.csv", "b.csv", ".hidden.csv", "_tmp.csv"):
        (tmp_path / name).write_text("x\n")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "c.csv").write_text("x\n")
    assert files_waiting(str(tmp_path), 0) == 2
    assert files_waiting(str(tmp_path), 1) == 1
    assert files_waiting(str(tmp_path), 0, recursive=True) == 3
    assert files_waiting(str(tmp_path), 5) == 0


JOB = """set parallelism = 1;
source clicks (user_id string, ts timestamp)
  from csv '{src}' monitor every 100ms
  watermark ts - 1s;
clicks | key by user_id | window tumbling 5s | aggregate count(*) as n | write csv '{out}';
"""


@pytest.mark.spark
def test_flowc_run_shows_the_live_line_on_a_terminal(spark: Any, tmp_path: Path,
                                                     monkeypatch: Any) -> None:
    """A real streaming run with stderr a terminal: the rendered lines carry the batches,
    rows, the source's watermark and lag, files waiting and the state size."""
    from flowc.parser import compile_source

    src = tmp_path / "in"
    src.mkdir()
    jg = compile_source(JOB.format(src=src, out=tmp_path / "out"), "job.flow") \
        .env.get_job_graph()
    err = Tty()
    monkeypatch.setattr(sys, "stderr", err)
    monkeypatch.setenv("COLUMNS", "400")  # the whole line (it is cut to the terminal's width)

    def feed(progress: Progress) -> None:
        for k in range(2):
            (src / f".f{k}").write_text(f"user_id,ts\nu1,{k * 6000}\nu2,{k * 6000 + 1}\n")
            (src / f".f{k}").rename(src / f"f{k}.csv")
            progress.files(k + 1)
        time.sleep(1.2)  # a redraw or two after the last batch
    stats = run_feeding(jg, tmp_path / "ck", feed, progress=True, job_name="clicks")
    lines = _lines(err)
    assert stats.batches >= 2 and lines
    last = lines[-1]
    assert last.startswith(f"clicks: batch {stats.last_batch} ({stats.batches} done)")
    assert "4 in all" in last
    assert "Source: clicks watermark 1970-01-01 00:00:05.000 lag " in last
    assert "0 files waiting | state " in last
    assert err.getvalue().endswith(CLEAR)  # erased when the run ends
