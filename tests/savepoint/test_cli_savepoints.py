"""The savepoint flags of ``flowc run`` as a user runs them: a real ``flowc run
--savepoint-on-stop`` process stopped by SIGTERM writes a savepoint after its last
micro-batch; ``flowc savepoint inspect`` reads it; ``flowc run --from-savepoint`` (in this
process, stopped by SIGTERM too) continues the job: both runs' outputs together equal one
uninterrupted run's."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from flowc.cli import main
from flowc.executor.streaming.commit import Checkpoint

from .test_roundtrip import _expected, _file, _rows, _sentinels, job

SRC = Path(__file__).resolve().parents[2] / "src"


def _files_read(ckpt: Path) -> int:
    if not (ckpt / "flowc" / "state").is_dir():
        return 0
    c = Checkpoint(str(ckpt))
    b = c.done_batches()
    return c.files_read(b[-1]) if b else 0


@pytest.mark.spark
@pytest.mark.slow  # two Spark start-ups (the real process's and this one's): ~55 s alone
def test_stop_with_savepoint_then_run_from_it(tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str],
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "in").mkdir()
    (tmp_path / "old.flow").write_text(job("out1/"))
    err = tmp_path / "err.txt"
    with open(err, "w") as e:
        proc = subprocess.Popen(  # noqa: S603
            [sys.executable, "-m", "flowc.cli", "run", "old.flow", "--no-progress",
             "--checkpoint", "ck1", "--trigger", "100ms", "--savepoint-on-stop", "sp"],
            cwd=tmp_path, env=dict(os.environ, PYTHONPATH=str(SRC)),
            stdout=subprocess.DEVNULL, stderr=e, start_new_session=True)
    try:
        for k in range(3):
            _file(tmp_path / "in", k)
        deadline = time.monotonic() + 150  # Spark start-up under load
        while _files_read(tmp_path / "ck1") < 3:
            assert proc.poll() is None, err.read_text()[-3000:]
            assert time.monotonic() < deadline, err.read_text()[-3000:]
            time.sleep(0.1)
        proc.send_signal(signal.SIGTERM)  # the driver only, not its JVM
        assert proc.wait(60) == 0, err.read_text()[-3000:]
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    assert "savepoint sp: 2 operators with state" in err.read_text()

    monkeypatch.chdir(tmp_path)
    assert main(["savepoint", "inspect", "sp"]) == 0
    out = capsys.readouterr().out
    assert "window-contents" in out and "3 units read (3 files done)" in out

    (tmp_path / "new.flow").write_text(job("out2/", p=3))

    def feed() -> None:
        for k in range(3, 6):
            _file(tmp_path / "in", k)
        _sentinels(tmp_path / "in", 3)
        deadline = time.monotonic() + 150
        while _files_read(tmp_path / "ck2") < 9 and time.monotonic() < deadline:
            time.sleep(0.05)
        os.kill(os.getpid(), signal.SIGTERM)  # flowc's handler: stop after the batch
    t = threading.Thread(target=feed)
    t.start()
    try:
        assert main(["run", "new.flow", "--from-savepoint", "sp", "--checkpoint", "ck2",
                     "--trigger", "100ms", "--no-progress"]) == 0
    finally:
        t.join()
    assert "restored 3 operators' state from sp" in capsys.readouterr().err
    assert _rows(tmp_path / "out1", tmp_path / "out2") == _expected(tmp_path, 6, p=3)
