"""What a run leaves behind: stale temp dirs of killed runs are removed by the next run
(never a running job's), a failed dead-letter write leaves no temp dir and names the path
and the source."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path

from flowc.executor import run_reference, sinks
from flowc.operators import FileSource

from .helpers import collect, env_for

SRC = str(Path(__file__).resolve().parents[2] / "src")


def _dead_pid() -> int:
    p = subprocess.Popen([sys.executable, "-c", "pass"])
    p.wait()
    return p.pid


def test_stale_temp_dirs_of_a_target_are_removed_by_the_next_run(tmp_path: Path) -> None:
    host = socket.gethostname()
    (tmp_path / "a.csv").write_text("1\nx\n")
    names = {
        "dead": f".dead.flowc-tmp-{host}-{_dead_pid()}-0123abcd",
        "dead_old": f".dead.flowc-tmp-{host}-{_dead_pid()}-0123abce-old",
        "alive": f".dead.flowc-tmp-{host}-{os.getpid()}-0123abcf",  # a running job's
        "foreign_new": ".dead.flowc-tmp-otherhost-1-0123abd0",
        "foreign_old": ".dead.flowc-tmp-0123abd1",  # older naming, a week old
        "other_target": f".deadx.flowc-tmp-{host}-{_dead_pid()}-0123abd2",
    }
    for name in names.values():
        (tmp_path / name).mkdir()
        (tmp_path / name / "part-00000.json").write_text("{}\n")
    week = time.time() - 7 * 24 * 3600
    os.utime(tmp_path / names["foreign_old"], (week, week))
    env = env_for(1)
    spec = FileSource(str(tmp_path / "a.csv"), "csv", (("n", "int"),), (),
                      str(tmp_path / "dead"))
    collect(env.from_source(spec, None, "src"))
    run_reference(env.get_job_graph())
    left = {p.name for p in tmp_path.iterdir()}
    assert left == {"a.csv", "dead", names["alive"], names["foreign_new"],
                    names["other_target"]}


def test_a_failed_dead_letter_write_leaves_no_temp_dir_and_names_path_and_source(
        tmp_path: Path) -> None:
    # A full disk, simulated with a file size limit in a child process (SIGXFSZ ignored,
    # so the write fails with EFBIG instead of killing it).
    (tmp_path / "a.csv").write_text("".join(f"bad{i}\n" for i in range(2000)))
    program = f"""
import resource, signal, sys
sys.path.insert(0, {SRC!r})
sys.path.insert(0, {str(Path(__file__).parents[2])!r})
from flowc.errors import FlowcError
from flowc.executor import run_reference
from flowc.operators import FileSource
from tests.executor.helpers import collect, env_for
env = env_for(1)
spec = FileSource({str(tmp_path / 'a.csv')!r}, "csv", (("n", "int"),), (),
                  {str(tmp_path / 'dead')!r})
collect(env.from_source(spec, None, "src"))
jg = env.get_job_graph()
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
resource.setrlimit(resource.RLIMIT_FSIZE, (4096, 4096))
try:
    run_reference(jg)
except FlowcError as e:
    print(e.message)
"""
    out = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    message = out.stdout.strip()
    assert message.startswith("operator 'Source: src' (defined at ")
    assert message.endswith(f"failed: writing the dead letters to {tmp_path / 'dead'} "
                            "failed: File too large")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.csv"]


def test_temp_dirs_are_named_by_host_and_process(tmp_path: Path) -> None:
    name = os.path.basename(sinks.temp_path(str(tmp_path / "out")))
    assert name.startswith(f".out.flowc-tmp-{socket.gethostname()}-{os.getpid()}-")
