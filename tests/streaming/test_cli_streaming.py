"""``flowc run`` of unbounded jobs as a real process: a PyFlink-style program's execute()
streams until SIGTERM, which ends it after the running micro-batch (exit 0); the streaming
flags on a bounded job are a user error."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from flowc.cli import main

SRC = Path(__file__).resolve().parents[2] / "src"
PROGRAM = """
from flowc.common import WatermarkStrategy
from flowc.datastream import Duration, StreamExecutionEnvironment
from flowc.datastream.connectors.file_system import FileSource, StreamFormat

env = StreamExecutionEnvironment.get_execution_environment()
source = FileSource.for_record_stream_format(StreamFormat.text_line_format(), "in") \\
    .monitor_continuously(Duration.of_millis(200)).build()
env.from_source(source, WatermarkStrategy.no_watermarks(), "lines") \\
    .map(lambda s: s.upper()).print()
env.execute("upper")
"""


@pytest.mark.spark
def test_python_program_streams_until_sigterm(tmp_path: Path) -> None:
    (tmp_path / "in").mkdir()
    (tmp_path / "prog.py").write_text(PROGRAM)
    out, err = tmp_path / "out.txt", tmp_path / "err.txt"
    with open(out, "w") as o, open(err, "w") as e:
        proc = subprocess.Popen(  # noqa: S603
            [sys.executable, "-m", "flowc.cli", "run", "prog.py", "--no-progress",
             "--checkpoint", "ck", "--trigger", "200ms"],
            cwd=tmp_path, env=dict(os.environ, PYTHONPATH=str(SRC)), stdout=o, stderr=e,
            start_new_session=True)
    try:
        (tmp_path / "in" / "a.txt").write_text("hello\nworld\n")
        deadline = time.monotonic() + 180
        while "WORLD" not in out.read_text():
            assert proc.poll() is None, err.read_text()[-3000:]
            assert time.monotonic() < deadline, err.read_text()[-3000:]
            time.sleep(0.2)
        proc.send_signal(signal.SIGTERM)  # the driver only, not its JVM
        assert proc.wait(120) == 0, err.read_text()[-3000:]
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    assert out.read_text().splitlines() == ["HELLO", "WORLD"]
    assert "stopped after 1 micro-batch (2 rows); batch 0 committed" in err.read_text()


def test_streaming_flags_on_a_bounded_job_are_a_user_error(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "a.csv").write_text("x\n1\n")
    (tmp_path / "job.flow").write_text("source a (x int) from csv 'a.csv';\na | print;\n")
    assert main(["run", str(tmp_path / "job.flow"), "--checkpoint", "ck"]) == 1
    assert "--checkpoint and --trigger apply to unbounded jobs" in capsys.readouterr().err
