"""A real Spark standalone cluster on 127.0.0.1: master + one worker started with pyspark's
bin/spark-class, an example run with ``flowc run --master spark://127.0.0.1:PORT``, its output
checked against the local run, and the cluster stopped."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).parent.parent
pytestmark = [pytest.mark.spark, pytest.mark.skipif(shutil.which("java") is None,
                                                    reason="needs java")]


def _free_port(preferred: int) -> int:
    for port in (preferred, 0):
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
            return s.getsockname()[1]
    raise RuntimeError("no free port")


def _wait_for_port(port: int, timeout: float) -> None:
    deadline = time.time() + timeout
    while time.time() < deadline:
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.3)
    raise TimeoutError(f"nothing listens on 127.0.0.1:{port} after {timeout} s")


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    import pyspark

    spark_home = Path(pyspark.__file__).parent
    spark_class = spark_home / "bin" / "spark-class"
    logs = tmp_path_factory.mktemp("spark-cluster")
    env = {**os.environ, "SPARK_HOME": str(spark_home), "SPARK_LOCAL_IP": "127.0.0.1",
           "PYSPARK_PYTHON": sys.executable, "SPARK_WORKER_DIR": str(logs / "work")}
    port = _free_port(7077)
    master_url = f"spark://127.0.0.1:{port}"
    procs: list[subprocess.Popen[bytes]] = []
    try:
        procs.append(subprocess.Popen(
            [str(spark_class), "org.apache.spark.deploy.master.Master", "--host", "127.0.0.1",
             "--port", str(port), "--webui-port", str(_free_port(8080))],
            env=env, stdout=open(logs / "master.log", "wb"), stderr=subprocess.STDOUT))
        _wait_for_port(port, 60)
        procs.append(subprocess.Popen(
            [str(spark_class), "org.apache.spark.deploy.worker.Worker", master_url,
             "--host", "127.0.0.1", "--cores", "2", "--memory", "2g",
             "--webui-port", str(_free_port(8081))],
            env=env, stdout=open(logs / "worker.log", "wb"), stderr=subprocess.STDOUT))
        _wait_for_worker(logs / "master.log", 60)
        yield master_url, logs / "master.log"
    finally:
        for p in reversed(procs):
            p.terminate()
        for p in procs:
            try:
                p.wait(timeout=20)
            except subprocess.TimeoutExpired:
                p.kill()


def _wait_for_worker(master_log: Path, timeout: float) -> None:
    deadline = time.time() + timeout
    while time.time() < deadline:
        if "Registering worker" in master_log.read_text(errors="replace"):
            return
        time.sleep(0.5)
    raise TimeoutError(f"no worker registered with the master: {master_log.read_text()[-2000:]}")


def _run(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "flowc.cli", "run", *args], cwd=cwd,
                          capture_output=True, text=True, timeout=600,
                          env={**os.environ, "PYSPARK_PYTHON": sys.executable})


def test_example_runs_on_standalone_cluster(cluster: tuple[str, Path]) -> None:
    url, master_log = cluster
    remote = _run("examples/clicks.flow", "--master", url)
    assert remote.returncode == 0, remote.stderr[-3000:]
    assert "Traceback" not in remote.stderr
    # The job really went to the cluster (an ignored --master would run locally).
    assert "Registering app flowc" in master_log.read_text(errors="replace")
    lines = [x for x in remote.stdout.splitlines() if x.strip()]
    assert lines, "the job printed no results"
    local = _run("examples/clicks.flow")
    assert local.returncode == 0, local.stderr[-3000:]
    # Print sinks are emitted on the driver in subtask order, so the output is identical.
    assert sorted(lines) == sorted(x for x in local.stdout.splitlines() if x.strip())


def test_udf_module_reaches_cluster_workers(cluster: tuple[str, Path], tmp_path: Path) -> None:
    # The workers' import path lacks tmp_path: the UDF must be shipped with the job.
    (tmp_path / "cluster_udfs.py").write_text("def twice(n):\n    return n * 2\n")
    (tmp_path / "job.flow").write_text(
        "import udf cluster_udfs.twice(int) -> int;\n"
        "source nums (n int) from values (1), (2), (3);\n"
        "nums | map twice(n) as m | print;\n")
    out = _run("job.flow", "--master", cluster[0], cwd=tmp_path)
    assert out.returncode == 0, out.stderr[-3000:]
    assert sorted(x for x in out.stdout.splitlines() if x.strip()) == ["+I[2]", "+I[4]", "+I[6]"]
