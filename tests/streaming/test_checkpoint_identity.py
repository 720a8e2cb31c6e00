"""A checkpoint belongs to the job that wrote it: restarting another job on it (other
sources, other operators, another parallelism) is a user error naming the difference,
before Spark starts - it was ``the streaming query failed: Wrong basePath ...`` from deep
inside Spark's file source, or a silent start with empty or lost subtask state."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from flowc.cli import main
from flowc.errors import ConfigError
from flowc.executor.streaming.identity import JOB_FILE, check_job
from flowc.executor.streaming.plan import plan_streaming
from flowc.executor.streaming.runner import run_streaming
from flowc.parser import compile_source

JOB = """set parallelism = {p};
source clicks (user_id string, n int)
  from csv '{d}' options (header = false) monitor every 1s;
clicks | filter n > 1 | key by user_id | aggregate sum(n) as n | print;
"""


def _graph(tmp: Path, directory: str = "in", p: int = 2, text: str = JOB) -> object:
    (tmp / directory).mkdir(exist_ok=True)
    script = compile_source(text.format(p=p, d=str(tmp / directory)), "job.flow")
    return script.env.get_job_graph()


def _stamp(tmp: Path, graph: object, progress: bool = True) -> Path:
    ck = tmp / "ck"
    (ck / "flowc").mkdir(parents=True, exist_ok=True)
    check_job(str(ck), plan_streaming(graph), lambda: "ck")  # what the first run writes
    if progress:  # Spark began a micro-batch: there is something to resume
        (ck / "spark" / "offsets").mkdir(parents=True, exist_ok=True)
        (ck / "spark" / "offsets" / "0").write_text("v1\n")
    return ck


def test_a_checkpoint_with_nothing_to_resume_takes_the_fixed_job(tmp_path: Path) -> None:
    # a first run that failed before any micro-batch (say, the Kafka jar missing) must not
    # tie the directory to the job as it was then
    ck = _stamp(tmp_path, _graph(tmp_path), progress=False)
    check_job(str(ck), plan_streaming(_graph(tmp_path, p=3)), lambda: "ck")
    doc = json.loads((ck / "flowc" / JOB_FILE).read_text())
    assert {v["parallelism"] for v in doc["vertices"]} == {3}


def test_the_first_run_stamps_the_checkpoint_and_the_same_job_passes(tmp_path: Path) -> None:
    graph = _graph(tmp_path)
    ck = _stamp(tmp_path, graph)
    doc = json.loads((ck / "flowc" / JOB_FILE).read_text())
    assert doc["sources"] == [f"csv files in {tmp_path / 'in'}"]
    assert {v["parallelism"] for v in doc["vertices"]} == {2}
    check_job(str(ck), plan_streaming(_graph(tmp_path)), lambda: "ck")  # no error


def test_another_jobs_checkpoint_is_refused_before_spark_starts(tmp_path: Path) -> None:
    ck = _stamp(tmp_path, _graph(tmp_path))
    other = _graph(tmp_path, "elsewhere")
    with pytest.raises(ConfigError) as e:
        run_streaming(other, checkpoint=str(ck))  # no SparkSession: fails first
    assert "belongs to another job: it read 'csv files in" in str(e.value)
    assert "this job reads 'csv files in " + str(tmp_path / "elsewhere") in str(e.value)
    assert "flowc savepoint write OLD_JOB --checkpoint" in (e.value.hint or "")


def test_a_changed_topology_or_parallelism_is_refused(tmp_path: Path) -> None:
    ck = _stamp(tmp_path, _graph(tmp_path))
    changed = JOB.replace("| print;", "| map user_id, n * 2 as m | key by m "
                                       "| aggregate count(*) as c | print;")
    with pytest.raises(ConfigError, match="another version of this job's operators: only in "
                                          "this job: "):
        check_job(str(ck), plan_streaming(_graph(tmp_path, text=changed)), lambda: "ck")
    with pytest.raises(ConfigError, match="ran at parallelism 2 on it, this run at 3; a "
                                          "checkpoint's parallelism is fixed") as e:
        check_job(str(ck), plan_streaming(_graph(tmp_path, p=3)), lambda: "ck")
    assert "run with parallelism 2 again" in (e.value.hint or "")


def test_an_unreadable_stamp_is_a_user_error(tmp_path: Path) -> None:
    ck = _stamp(tmp_path, _graph(tmp_path))
    (ck / "flowc" / JOB_FILE).write_text("{not json")
    with pytest.raises(ConfigError, match="cannot read its job.json"):
        check_job(str(ck), plan_streaming(_graph(tmp_path)), lambda: "ck")


def test_cli_another_jobs_checkpoint_exits_1_without_a_traceback(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    _stamp(tmp_path, _graph(tmp_path))
    (tmp_path / "other").mkdir()
    (tmp_path / "other.flow").write_text(
        f"source s (x string) from csv '{tmp_path / 'other'}' monitor every 1s;\ns | print;\n")
    monkeypatch.chdir(tmp_path)
    assert main(["run", "other.flow", "--checkpoint", "ck", "--no-progress"]) == 1
    err = capsys.readouterr().err
    assert "error: --checkpoint ck belongs to another job" in err
    assert "Traceback" not in err



def test_cli_a_file_as_checkpoint_exits_1_without_a_traceback(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    # was "internal error: NotADirectoryError" (exit 2) from making ck/flowc/state
    (tmp_path / "in").mkdir()
    (tmp_path / "job.flow").write_text(JOB.format(p=1, d=str(tmp_path / "in")))
    (tmp_path / "ck").write_text("not a directory\n")
    monkeypatch.chdir(tmp_path)
    assert main(["run", "job.flow", "--checkpoint", "ck", "--no-progress"]) == 1
    err = capsys.readouterr().err
    assert "error: --checkpoint ck: cannot use it as a checkpoint directory (Not a " \
           "directory" in err
    assert "Traceback" not in err and "internal error" not in err

def test_a_savepoint_of_another_jobs_checkpoint_is_refused(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    # was "savepoint sp: 0 operators with state": the checkpoint's state silently left out
    ck = _stamp(tmp_path, _graph(tmp_path))
    (ck / "flowc" / "state" / "0").mkdir(parents=True)
    (ck / "flowc" / "state" / "0" / "_DONE").write_text("1")  # a completed micro-batch
    (tmp_path / "other").mkdir()
    (tmp_path / "other.flow").write_text(
        f"source s (x string) from csv '{tmp_path / 'other'}' monitor every 1s;\ns | print;\n")
    monkeypatch.chdir(tmp_path)
    assert main(["savepoint", "write", "other.flow", "--checkpoint", "ck", "-o", "sp"]) == 1
    err = capsys.readouterr().err
    assert "error: --checkpoint ck belongs to another job" in err
    assert "give `flowc savepoint write` the job that wrote the checkpoint" in err
    assert not (tmp_path / "sp").exists()


@pytest.mark.spark
def test_a_bad_row_in_a_watched_file_fails_the_job_naming_file_line_and_source(
        tmp_path: Path) -> None:
    """Without a dead letter a row that does not parse fails the job as on the bounded
    executors: the file, its line, the row and the source's script line; the batch is not
    committed (a restart after fixing the file replays it)."""
    from flowc.errors import ExecutionError

    from .harness import run_feeding

    graph = _graph(tmp_path, p=1)
    (tmp_path / "in" / "a.csv").write_text("u1,2\n")

    def feed(progress: object) -> None:
        progress.files(1)  # type: ignore[attr-defined]
        (tmp_path / "in" / ".b").write_text("u2,3\nu3,many\n")
        (tmp_path / "in" / ".b").rename(tmp_path / "in" / "b.csv")
        progress.batch(99)  # type: ignore[attr-defined]  # until the failure ends the run

    with pytest.raises(ExecutionError) as e:
        run_feeding(graph, tmp_path / "ck", feed)
    text = str(e.value)
    assert f"bad row in {tmp_path / 'in' / 'b.csv'} (line 2): 'u3,many'" in text, text
    assert "operator 'Source: clicks'" in text
    assert e.value.span is not None and e.value.span.file == "job.flow"
    assert e.value.span.line == 2
