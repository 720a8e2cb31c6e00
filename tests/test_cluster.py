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


STREAM_JOB = """set parallelism = 2;
source clicks (user_id string, action string, ts timestamp)
  from csv 'in/'{monitor}
  watermark ts - 2s
  with (parallelism = 1);
clicks
  | filter action = 'click'
  | key by user_id
  | window tumbling 5s
  | aggregate count(*) as n
  | write csv '{out}';
"""


def _stream_file(d: Path, k: int) -> None:
    """File k: 30 rows in [k*3000, k*3000+3000) ms, nothing late (disorder < 2 s)."""
    rows = ["user_id,action,ts"] + [
        f"u{(i * 7 + k) % 5},{('click', 'view', 'click')[i % 3]},{k * 3000 + (i * 97) % 3000}"
        for i in range(30)]
    (d / f".f{k:03d}.csv").write_text("\n".join(rows) + "\n")
    (d / f".f{k:03d}.csv").rename(d / f"f{k:03d}.csv")  # appears whole


def _part_rows(d: Path) -> list[tuple[str, ...]]:
    import csv

    out: list[tuple[str, ...]] = []
    for f in sorted(d.glob("part-*.csv")):
        with open(f, newline="") as fh:
            out.extend(tuple(r) for r in list(csv.reader(fh))[1:])
    return out


class _StreamingRun:
    """``flowc run job.flow --master <cluster> --checkpoint ck`` in its own session."""

    def __init__(self, work: Path, master: str) -> None:
        self.err = work / f"err-{time.monotonic_ns()}.txt"
        self.proc = subprocess.Popen(  # noqa: S603
            [sys.executable, "-m", "flowc.cli", "run", "job.flow", "--no-progress",
             "--master", master, "--checkpoint", str(work / "ck"), "--trigger", "200ms"],
            cwd=work, stdout=subprocess.DEVNULL, stderr=open(self.err, "w"),  # noqa: SIM115
            env={**os.environ, "PYSPARK_PYTHON": sys.executable}, start_new_session=True)

    def files_read(self, work: Path) -> int:
        from flowc.executor.streaming.commit import Checkpoint

        ck = Checkpoint(str(work / "ck"))
        done = ck.done_batches()
        return ck.files_read(done[-1] if done else None)

    def wait_files(self, work: Path, n: int, timeout: float = 240) -> None:
        deadline = time.monotonic() + timeout
        while self.files_read(work) < n:
            if self.proc.poll() is not None or time.monotonic() > deadline:
                raise AssertionError(f"{n} files not read (exit {self.proc.poll()}):\n"
                                     f"{self.err.read_text()[-3000:]}")
            time.sleep(0.2)

    def stop(self) -> None:
        """SIGTERM: the run ends after its micro-batch, exit 0."""
        import signal

        self.proc.send_signal(signal.SIGTERM)
        assert self.proc.wait(90) == 0, self.err.read_text()[-3000:]

    def cleanup(self) -> None:
        import signal

        if self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
            self.proc.wait(30)


# Two driver start-ups against the cluster plus their micro-batches: well over a minute.
@pytest.mark.heavy
@pytest.mark.slow
def test_streaming_job_on_the_cluster_stops_and_resumes_exactly_once(
        cluster: tuple[str, Path], tmp_path: Path) -> None:
    """An unbounded job on the standalone cluster (its tasks write the checkpoint's
    snapshots from the worker's executors), stopped with SIGTERM and restarted on the same
    checkpoint: the windows equal the BATCH run over all files, none twice, none missing."""
    from collections import Counter

    from flowc.executor import run_reference
    from flowc.parser import compile_file

    url, master_log = cluster
    (tmp_path / "in").mkdir()
    (tmp_path / "job.flow").write_text(STREAM_JOB.format(monitor=" monitor every 200ms",
                                                         out="out/"))
    runs = [_StreamingRun(tmp_path, url)]
    try:
        for k in range(3):
            _stream_file(tmp_path / "in", k)
            runs[0].wait_files(tmp_path, k + 1)
        runs[0].stop()
        first = _part_rows(tmp_path / "out")
        assert first, "no window closed in the first run"
        _stream_file(tmp_path / "in", 3)  # lands while the job is down
        runs.append(_StreamingRun(tmp_path, url))
        runs[1].wait_files(tmp_path, 4)
        for k in range(4, 6):
            _stream_file(tmp_path / "in", k)
            runs[1].wait_files(tmp_path, k + 1)
        (tmp_path / "in" / ".zz.csv").write_text("user_id,action,ts\nnobody,flush,"
                                                 "1000000000000\n")
        (tmp_path / "in" / ".zz.csv").rename(tmp_path / "in" / "zz.csv")
        runs[1].wait_files(tmp_path, 7)
        runs[1].stop()
    finally:
        for r in runs:
            r.cleanup()
    assert master_log.read_text(errors="replace").count("Registering app flowc") >= 2
    got = _part_rows(tmp_path / "out")
    (tmp_path / "ref.flow").write_text(STREAM_JOB.format(monitor="", out="expected/"))
    run_reference(compile_file(str(tmp_path / "ref.flow")).env.get_job_graph())
    expected = _part_rows(tmp_path / "expected")
    assert len(got) == len(set(got))  # no window written twice
    assert Counter(got) == Counter(expected)
