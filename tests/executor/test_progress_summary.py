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
from flowc.executor.spark.progress import (
    CLEAR,
    Note,
    ProgressLine,
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
        "clicks: stage 3: 5/8 tasks (2 running) | stage 4: 0/2 tasks (1 failed) [1.4 s]"
    assert describe("clicks", [], 0.0) == "clicks: starting [0.0 s]"
    assert describe("clicks", [], 2.0, done=1) == "clicks: 1 stage done [2.0 s]"
    assert describe("clicks", [], 2.0, done=3) == "clicks: 3 stages done [2.0 s]"
    cut = describe("clicks", stages, 1.44, width=20)
    assert len(cut) == 20 and cut.endswith("…")


def test_progress_line_draws_and_erases_on_a_tty() -> None:
    stream = Tty()
    line = ProgressLine(FakeTracker({3: (8, 5, 2, 0)}), stream, "job", interval=0.01).start()
    time.sleep(0.1)
    line.stop()
    text = stream.getvalue()
    assert CLEAR + "job: stage 3: 5/8 tasks (2 running) [" in text
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
        "job: stage 0: 1/2 tasks (1 running)", "job: 1 stage done", "job: stage 1: 0/2 tasks"]


def test_no_progress_when_not_a_tty() -> None:
    stream = io.StringIO()
    fake_sc = SimpleNamespace(statusTracker=lambda: FakeTracker({1: (1, 0, 1, 0)}))
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
