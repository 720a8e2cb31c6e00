"""The terminal progress line (Spark's status tracker -> text, only on a TTY, transient) and
the end summary (records written by sinks, Spark start-up apart from the job's time)."""

from __future__ import annotations

import io
import time
from types import SimpleNamespace
from typing import Any

import pytest

from flowc.datastream import DiscardingSink
from flowc.executor import JobResult, VertexMetrics, run_job_graph, run_reference
from flowc.executor.spark import tasks
from flowc.executor.spark.progress import (
    CLEAR,
    Note,
    ProgressLine,
    RowFeed,
    SourceRows,
    StageProgress,
    describe,
    poll,
    start_progress,
)

from .helpers import collect, env_for


class FakeTracker:
    def __init__(self, stages: dict[int, tuple[int, int, int, int]]) -> None:
        self.stages = stages

    def getActiveStageIds(self) -> list[int]:  # noqa: N802 - Spark's name
        return list(self.stages)

    def getStageInfo(self, sid: int) -> Any:  # noqa: N802 - Spark's name
        if sid not in self.stages:
            return None
        tasks, done, active, failed = self.stages[sid]
        return SimpleNamespace(numTasks=tasks, numCompletedTasks=done, numActiveTasks=active,
                               numFailedTasks=failed)


class Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_poll_reads_active_stages_in_id_order() -> None:
    tracker = FakeTracker({4: (2, 0, 0, 0), 3: (8, 5, 2, 0)})
    assert poll(tracker) == [StageProgress(3, 8, 5, 2), StageProgress(4, 2, 0, 0)]

    class Gone(FakeTracker):  # a stage that finishes between the two calls is skipped
        def getActiveStageIds(self) -> list[int]:  # noqa: N802
            return [1, 2]
    assert poll(Gone({2: (1, 0, 1, 0)})) == [StageProgress(2, 1, 0, 1)]


def test_describe_stage_line() -> None:
    stages = [StageProgress(3, 8, 5, 2), StageProgress(4, 2, 0, 0, failed=1)]
    assert describe("clicks", stages, 1.44) == \
        "clicks: stage 3 █████░░░ 5/8 tasks (2 running) | stage 4 ░░░░░░░░ 0/2 tasks " \
        "(1 failed) [1.4 s]"
    assert describe("clicks", [], 0.0) == "clicks: starting [0.0 s]"
    assert describe("clicks", [], 2.0, done=1) == "clicks: 1 stage done [2.0 s]"
    assert describe("clicks", [], 2.0, done=3) == "clicks: 3 stages done [2.0 s]"
    cut = describe("clicks", stages, 1.44, width=20)
    assert len(cut) == 20 and cut.endswith("…")


def test_describe_shows_rows_read_per_source() -> None:
    rows = [SourceRows("Source: clicks", 1_234_567, 456_000.0), SourceRows("Source: v", 900, 0)]
    assert describe("clicks", [StageProgress(0, 2, 0, 2)], 3.0, sources=rows) == (
        "clicks: Source: clicks 1.23M rows (456.0k/s) | Source: v 900 rows (0/s) | "
        "stage 0 ░░░░░░░░ 0/2 tasks (2 running) [3.0 s]")
    assert describe("j", [], 1.0, sources=rows[1:]) == "j: Source: v 900 rows (0/s) [1.0 s]"


def test_row_feed_sums_the_subtasks_reports() -> None:
    feed = RowFeed("127.0.0.1")
    try:
        list(tasks.reporting(iter(range(5000)), feed.address, 7, 0))
        list(tasks.reporting(iter(range(300)), feed.address, 7, 1))
        list(tasks.reporting(iter(range(10)), feed.address, 8, 0))
        deadline = time.time() + 5
        while feed.total(7)[0] != 5300 and time.time() < deadline:
            time.sleep(0.01)
        assert feed.total(7)[0] == 5300
        assert feed.total(9) == (0, 0.0)
    finally:
        feed.close()


def test_reporting_sends_while_the_task_reads(monkeypatch: pytest.MonkeyPatch) -> None:
    """A long task reports before it ends (the display moves), at most every
    REPORT_EVERY seconds."""
    monkeypatch.setattr(tasks, "REPORT_EVERY", 0.0)
    feed = RowFeed("127.0.0.1")
    try:
        it = tasks.reporting(iter(range(10_000)), feed.address, 1, 0)
        for _ in range(4096):
            next(it)
        deadline = time.time() + 5
        while not feed.total(1)[0] and time.time() < deadline:
            time.sleep(0.01)
        assert feed.total(1)[0] in (1024, 2048, 3072, 4096)
    finally:
        feed.close()


def test_progress_line_draws_and_erases_on_a_tty() -> None:
    stream = Tty()
    line = ProgressLine(FakeTracker({3: (8, 5, 2, 0)}), stream, "job", interval=0.01).start()
    time.sleep(0.1)
    line.stop()
    text = stream.getvalue()
    assert CLEAR + "job: stage 3 █████░░░ 5/8 tasks (2 running) [" in text
    assert text.endswith(CLEAR)  # transient: nothing left on the line


def test_progress_line_counts_finished_stages() -> None:
    tracker = FakeTracker({0: (2, 1, 1, 0)})
    stream = Tty()
    line = ProgressLine(tracker, stream, "job")
    line.render()
    tracker.stages = {}
    line.render()
    tracker.stages = {1: (2, 0, 0, 0)}
    line.render()
    frames = stream.getvalue().split(CLEAR)[1:]
    assert [f.split(" [")[0] for f in frames] == [
        "job: stage 0 ████░░░░ 1/2 tasks (1 running)", "job: 1 stage done",
        "job: stage 1 ░░░░░░░░ 0/2 tasks"]


def test_no_progress_when_not_a_tty() -> None:
    stream = io.StringIO()
    fake_sc = SimpleNamespace(statusTracker=lambda: FakeTracker({1: (1, 0, 1, 0)}),
                              getConf=lambda: {"spark.driver.host": "127.0.0.1"})
    assert start_progress(fake_sc, stream, "job") is None
    assert stream.getvalue() == ""
    tty = Tty()
    display = start_progress(fake_sc, tty, "job")
    assert display is not None
    display.stop()


def test_start_up_note_is_transient_and_tty_only() -> None:
    tty = Tty()
    note = Note(tty, "job: starting Spark ...")
    note.erase()
    note.erase()  # once only
    assert tty.getvalue() == CLEAR + "job: starting Spark ..." + CLEAR
    plain = io.StringIO()
    Note(plain, "job: starting Spark ...").erase()
    assert plain.getvalue() == ""


def test_summary_reports_written_records_and_start_up() -> None:
    r = JobResult("j", wall_time=1.5, startup_time=3.25)
    r.vertices = [VertexMetrics("Source: s -> Map", 2, 10, 10),
                  VertexMetrics("TumblingEventTimeWindows -> Sink: Print to Std. Out", 2,
                                10, 0, 4)]
    assert r.summary().splitlines() == [
        "job 'j' finished in 1.50 s (Spark start-up 3.25 s)",
        "  Source: s -> Map (p=2): in 10, out 10",
        "  TumblingEventTimeWindows -> Sink: Print to Std. Out (p=2): in 10, out 0, "
        "written 4",
    ]
    assert JobResult("j").summary() == "job 'j' finished in 0.00 s"  # no start-up: no note
    # Spark reports the seconds its subtasks ran: rows/s of the subtasks side by side.
    r.vertices = [VertexMetrics("Source: s", 2, 30_000, 30_000, seconds=3.0)]
    assert r.summary().splitlines()[1] == "  Source: s (p=2): in 30000, out 30000, 20,000 rows/s"


def _sinks_job() -> Any:
    env = env_for(2)
    s = env.from_collection(list(range(20))).map(lambda v: v * 2)
    collect(s.filter(lambda v: v % 3 == 0), "a")
    s.key_by(lambda v: v % 4).map(lambda v: v + 1).sink_to(DiscardingSink())
    return env.get_job_graph()


def test_reference_counts_records_written_by_sinks() -> None:
    r = run_reference(_sinks_job())
    assert r.summary().splitlines()[1:] == [
        "  Source: Collection Source (p=1): in 20, out 20",
        "  Map -> Filter -> Collect Sink: Writer (p=2): in 20, out 20, written 7",
        "  Map -> Sink: Writer (p=2): in 20, out 0, written 20",  # a DiscardingSink counts
    ]

@pytest.mark.spark
def test_spark_counts_written_and_startup_like_reference(
        spark: Any, capfd: pytest.CaptureFixture[str]) -> None:
    jg = _sinks_job()
    expected = run_reference(jg)
    actual = run_job_graph(jg, progress=True)  # stderr is captured: not a TTY
    assert [(v.name, v.records_in, v.records_out, v.records_written)
            for v in actual.vertices] == \
        [(v.name, v.records_in, v.records_out, v.records_written) for v in expected.vertices]
    assert actual.startup_time == 0.0  # the session fixture started Spark already
    assert capfd.readouterr().err == ""  # no progress output without a terminal


def _slow(v: int) -> int:
    time.sleep(0.15)
    return v


@pytest.mark.spark
def test_progress_line_from_the_real_status_tracker(spark: Any) -> None:
    env = env_for(2)
    collect(env.from_collection(list(range(6))).map(_slow).rebalance().map(lambda v: v + 1))
    stream = Tty()
    line = ProgressLine(spark.sparkContext.statusTracker(), stream, "slow", interval=0.02)
    line.start()
    try:
        result = run_job_graph(env.get_job_graph())
    finally:
        line.stop()
    assert sorted(result["out"]) == [1, 2, 3, 4, 5, 6]
    text = stream.getvalue()
    assert "slow: stage " in text and " tasks" in text
    assert text.endswith(CLEAR)


def _number(text: str) -> float:
    scale = {"k": 1e3, "M": 1e6}.get(text[-1], 1.0)
    return float(text.rstrip("kM").replace(",", "")) * scale


def _slow_source_value(v: int) -> int:
    time.sleep(0.00005)
    return v


@pytest.mark.spark
def test_progress_shows_rows_read_while_the_source_tasks_run(
        spark: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """Two source tasks reading for seconds: the line shows their rows growing, not only
    "0/2 tasks"; the summary has each vertex's rows/s."""
    env = env_for(2)
    collect(env.from_sequence(1, 60_000).map(_slow_source_value).name("slow map"))
    stderr = Tty()
    monkeypatch.setattr("sys.stderr", stderr)
    result = run_job_graph(env.get_job_graph(), progress=True)
    assert len(result["out"]) == 60_000
    frames = [f for f in stderr.getvalue().split(CLEAR) if "rows (" in f]
    counts = [_number(f.split("Source: Sequence Source ")[1].split(" rows")[0])
              for f in frames]
    assert len(set(counts)) >= 2 and counts == sorted(counts)  # it moved
    assert counts[0] < 60_000
    [v] = result.vertices
    assert v.seconds is not None and v.rows_per_second is not None
    assert 1000 < v.rows_per_second < 1_000_000


@pytest.mark.spark
def test_progress_is_erased_before_printed_lines(spark: Any,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """print_to_err writes to the same stream as the progress line: the line is erased
    before any printed record appears, and no record is drawn over."""
    env = env_for(2)
    env.from_collection(list(range(8))).map(_slow).rebalance().map(lambda v: v * 10) \
        .print_to_err()
    stderr = Tty()
    monkeypatch.setattr("sys.stderr", stderr)
    result = run_job_graph(env.get_job_graph(), progress=True)
    text = stderr.getvalue()
    assert CLEAR in text  # the job takes > 1 s: the line was drawn
    lines = "".join(line + "\n" for line in result.printed)
    assert text.split(CLEAR)[-1] == lines
    assert sorted(int(x.split("> ")[1]) for x in result.printed) == \
        [v * 10 for v in range(8)]
