"""`flowc run`'s Spark settings and start-up failures: --conf / --set spark.* / `set spark.*`
reach the SparkSession, --packages / --jars / --py-files pass through, a bad or unreachable
master and a bad Java are user errors (exit 1) in plain words, within seconds."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from flowc.cli import main
from flowc.errors import ConfigError
from flowc.executor.spark import session

ROOT = Path(__file__).parent.parent
SCRIPT = "source words (w string) from values ('a'), ('b');\nwords | print;\n"


def flowc(*args: str, cwd: Path, env: dict[str, str] | None = None,
          timeout: float = 300) -> tuple[int, str, str, float]:
    """``python -m flowc.cli`` of this checkout in a fresh process (its own Spark)."""
    full = {**os.environ, **(env or {}), "PYTHONPATH": str(ROOT / "src")}
    start = time.monotonic()
    proc = subprocess.run([sys.executable, "-m", "flowc.cli", *args], cwd=cwd, env=full,
                          capture_output=True, text=True, timeout=timeout)
    return proc.returncode, proc.stdout, proc.stderr, time.monotonic() - start


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]  # closed again when the block ends: nothing listens


def test_unreachable_master_is_a_user_error_within_seconds(tmp_path: Path) -> None:
    (tmp_path / "j.flow").write_text(SCRIPT)
    port = _closed_port()
    code, out, err, took = flowc("run", "j.flow", "--master", f"spark://127.0.0.1:{port}",
                                 cwd=tmp_path)
    assert code == 1, err
    assert took < 15
    assert err.strip() == (f"error: cannot reach the Spark master spark://127.0.0.1:{port} "
                           f"(127.0.0.1:{port}: Connection refused): is the master running, "
                           "and are host and port right?")


@pytest.mark.parametrize("master", ["bogus", "spark://nohostport", "local[x]"])
def test_bogus_master_is_a_user_error(master: str) -> None:
    with pytest.raises(ConfigError) as info:
        session.check_master(master)
    assert "is not a Spark master URL" in info.value.message


@pytest.mark.parametrize("master", ["local", "local[*]", "local[4]", "local[2,3]",
                                    "local-cluster[2,1,1024]", "yarn", "k8s://https://h:6443"])
def test_valid_masters_pass_the_check(master: str) -> None:
    session.check_master(master)


def test_a_bad_java_home_is_named(tmp_path: Path) -> None:
    (tmp_path / "j.flow").write_text(SCRIPT)
    missing = tmp_path / "no-such-jdk"
    code, _, err, took = flowc("run", "j.flow", cwd=tmp_path, env={"JAVA_HOME": str(missing)})
    assert code == 1 and took < 15
    assert err.strip() == (f"error: JAVA_HOME is set to {missing}, but {missing}/bin/java does "
                           "not exist: point JAVA_HOME at a Java 17+ installation (the "
                           "directory holding bin/java) or unset it to use the java on the PATH")


def test_a_hanging_java_is_a_user_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    java = tmp_path / "jdk" / "bin" / "java"
    java.parent.mkdir(parents=True)
    java.write_text("#!/bin/sh\nexec sleep 30\n")
    java.chmod(0o755)
    monkeypatch.setenv("JAVA_HOME", str(tmp_path / "jdk"))
    monkeypatch.setattr(session, "JAVA_VERSION_TIMEOUT", 0.5)
    with pytest.raises(ConfigError) as info:
        session.find_java()
    assert info.value.message == (
        f"'{java} -version' (from JAVA_HOME={tmp_path / 'jdk'}) did not answer within 0.5 s: "
        "it does not look like a working Java 17+ runtime")


class _Captured(Exception):
    pass


def test_spark_settings_reach_the_session(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    from flowc.executor.spark import runner

    seen: dict[str, Any] = {}

    def fake_get_spark(master: Any, verbose: bool, conf: dict[str, str]) -> Any:
        seen.update(conf)
        raise _Captured

    monkeypatch.setattr(runner, "get_spark", fake_get_spark)
    monkeypatch.setattr(sys, "path", list(sys.path))  # --py-files extends it
    (tmp_path / "j.flow").write_text("set spark.sql.shuffle.partitions = 3;\n" + SCRIPT)
    (tmp_path / "m.zip").write_bytes(b"")
    # (main reports the fake's exception as an internal error: the settings were seen.)
    assert main(["run", str(tmp_path / "j.flow"), "--no-progress",
              "--conf", "spark.executor.memory=2g",
              "--set", "spark.driver.extraJavaOptions=-Dx=1 -Dy=2",
              "--packages", "org.example:lib:1.0", "--jars", "a.jar,b.jar",
              "--py-files", str(tmp_path / "m.zip")]) == 2
    assert seen == {"spark.sql.shuffle.partitions": "3", "spark.executor.memory": "2g",
                    "spark.driver.extraJavaOptions": "-Dx=1 -Dy=2",
                    "spark.jars.packages": "org.example:lib:1.0", "spark.jars": "a.jar,b.jar",
                    "spark.submit.pyFiles": str(tmp_path / "m.zip")}
    assert sys.path[0] == str(tmp_path / "m.zip")


def test_conf_takes_spark_settings_only(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", "x.flow", "--conf", "parallelism=2"]) == 1
    assert "--conf takes Spark settings (spark.*), not 'parallelism'" in capsys.readouterr().err


@pytest.mark.spark
@pytest.mark.slow
def test_ui_and_py_files_on_a_fresh_spark(tmp_path: Path) -> None:
    """A fresh process: `set spark.ui.enabled` in the script turns the UI on (its address is
    printed, on the port --conf gave), a module from --py-files runs in the workers, and no
    per-run log4j temp dir is left behind."""
    import zipfile

    with zipfile.ZipFile(tmp_path / "mods.zip", "w") as z:
        z.writestr("flowc_test_pyfiles_mod.py",
                   "def shout(s):\n    return None if s is None else s.upper() + '!'\n")
    (tmp_path / "ui.flow").write_text(
        "set spark.ui.enabled = true;\n"
        "import udf flowc_test_pyfiles_mod.shout(string) -> string;\n"
        "source words (w string) from values ('a'), ('b');\nwords | map shout(w) as s | print;\n")
    port = _closed_port()
    # A private temp and cache dir: the old code left a flowc-log4j-* dir in the temp dir
    # on every run; the configuration now is one fixed file in the cache dir.
    (tmp_path / "tmp").mkdir()
    env = {"TMPDIR": str(tmp_path / "tmp"), "XDG_CACHE_HOME": str(tmp_path / "cache")}
    code, out, err, _ = flowc("run", "ui.flow", "--no-progress", "--py-files", "mods.zip",
                              "--conf", f"spark.ui.port={port}", cwd=tmp_path, env=env)
    assert code == 0, err
    assert sorted(out.split()) == ["+I[A!]", "+I[B!]"]
    ui = [line for line in err.splitlines() if line.startswith("Spark UI: http://")]
    assert len(ui) == 1 and ui[0].endswith(f":{port}")
    assert not [p for p in os.listdir(tmp_path / "tmp") if p.startswith("flowc-log4j-")]
    assert os.listdir(tmp_path / "cache" / "flowc") == ["log4j2-error.properties"]
