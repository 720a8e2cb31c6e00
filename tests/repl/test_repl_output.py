"""How the REPL shows results: print output once, long and wide results paged (not cut),
the background Spark start, Ctrl-C during a query, hints worded for the REPL.

Most tests run jobs on the reference executor through a stand-in for run_job_graph that
behaves as the Spark runner does (it prints the print sinks' lines to stdout itself); the
Spark ones are marked."""

from __future__ import annotations

import io
import os
import re
import select
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

import flowc.executor
from flowc.executor import run_reference
from flowc.repl import Session
from flowc.repl_terminal import cancel_on_interrupt

ROWS = "source many (n int, s string) values " + ", ".join(
    f"({i}, 'r{i}')" for i in range(30)) + ";"


@pytest.fixture
def reference(monkeypatch: pytest.MonkeyPatch) -> None:
    def run(job_graph: Any, *, master: str | None = None, job_name: str | None = None,
            **_: Any) -> Any:
        result = run_reference(job_graph)
        for line in result.printed:  # as run_on_spark does
            print(line)
        return result

    monkeypatch.setattr(flowc.executor, "run_job_graph", run)


def session(pager: list[str] | None = None, width: int = 100,
            spark_start: threading.Thread | None = None) -> tuple[Session, io.StringIO]:
    out = io.StringIO()
    s = Session(out=out, width=width, pager=pager.append if pager is not None else None,
                spark_start=spark_start)
    s.execute("set parallelism = 1;")
    return s, out


def test_print_output_is_shown_once(reference: None, capsys: pytest.CaptureFixture[str]) -> None:
    s, out = session()
    s.execute("source nums (n int) values (7), (8);")
    s.execute("nums | map n * 111 as m | print;")
    shown = out.getvalue() + capsys.readouterr().out
    assert shown.count("777") == 1 and shown.count("888") == 1, shown
    assert "done in" in out.getvalue()


def test_long_results_go_whole_to_the_pager(reference: None) -> None:
    pages: list[str] = []
    s, out = session(pages)
    s.execute(ROWS)
    s.execute("many;")
    assert len(pages) == 1
    assert all(f"│ {i:<2} │ r{i}" in pages[0] for i in range(30)), pages[0]
    assert "30 rows in" in out.getvalue() and "showing" not in out.getvalue()
    s.execute("many | print;")
    assert len(pages) == 2 and all(f"r{i}" in pages[1] for i in range(30))
    s.execute("many | filter n < 3;")  # fits: shown in place
    assert len(pages) == 2 and "3 rows in" in out.getvalue()


def test_without_a_pager_the_first_rows_are_shown_and_the_rest_counted(
        reference: None) -> None:
    s, out = session()
    s.execute(ROWS)
    s.execute("many;")
    text = out.getvalue()
    assert "30 rows (showing 20; set max_rows = N for more)" in text
    assert "r19" in text and "r20" not in text
    s.execute("many | print;")
    assert "... 10 more printed lines (set max_rows = N for more)" in out.getvalue()


def test_wide_values_are_not_cut(reference: None) -> None:
    wide = "w" * 150 + "END"
    s, out = session(width=60)
    s.execute(f"source w (n int, s string) values (1, '{wide}');")
    s.execute("w;")
    text = out.getvalue()
    assert "…" not in text
    assert "".join(re.findall(r"[wEND]+", text)).count(wide) == 1  # folded, all there
    pages: list[str] = []
    s2, _ = session(pages, width=60)
    s2.execute(f"source w (n int, s string) values (1, '{wide}');")
    s2.execute("w;")
    assert len(pages) == 1 and wide in pages[0]  # the pager gets it on one line


def test_the_first_query_waits_for_the_background_start(reference: None) -> None:
    started = threading.Event()
    starting = threading.Thread(target=started.wait, args=(0.5,), daemon=True)
    starting.start()
    s, out = session(spark_start=starting)
    s.execute("source nums (n int) values (1);")
    s.execute("nums;")
    text = out.getvalue()
    assert "waiting for Spark to start ..." in text and "1 row in" in text
    assert not starting.is_alive()
    s.execute("nums;")
    assert out.getvalue().count("waiting for Spark") == 1


def test_ctrl_c_handler_is_restored_and_reports_once() -> None:
    import signal

    before = signal.getsignal(signal.SIGINT)
    with cancel_on_interrupt() as hit:
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(0.1)
        assert hit.is_set()  # no KeyboardInterrupt from the first Ctrl-C: the job is cancelled
        with pytest.raises(KeyboardInterrupt):
            os.kill(os.getpid(), signal.SIGINT)  # a second one stops waiting
            time.sleep(0.1)
    assert signal.getsignal(signal.SIGINT) is before


def test_unknown_function_hint_in_the_repl_mentions_import_udf() -> None:
    s, out = session()
    s.execute("source nums (n int) values (1);")
    s.execute("SELECT zzqx(n) AS x FROM nums;")
    assert "Python functions are imported with 'import udf'" in out.getvalue()


# ---------------------------------------------------------------------------- on Spark


def _drive_pty(lines: list[tuple[str, float]], env: dict[str, str]) -> str:
    """Run `flowc repl` on a pseudo-terminal; each line is typed after its delay (seconds,
    reading the output meanwhile) and "^C" sends Ctrl-C. Returns everything it printed."""
    import fcntl
    import pty
    import struct
    import termios

    pid, fd = pty.fork()
    if pid == 0:  # the child: the REPL
        os.execvpe(sys.executable, [sys.executable, "-m", "flowc.cli", "repl", "--history",
                                    os.devnull], env)
    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", 50, 200, 0, 0))
    out = bytearray()

    def pump(seconds: float) -> None:
        end = time.time() + seconds
        while time.time() < end:
            if select.select([fd], [], [], 0.1)[0]:
                try:
                    data = os.read(fd, 65536)
                except OSError:
                    return
                out.extend(data)

    try:
        for line, delay in lines:
            pump(delay)
            os.write(fd, b"\x03" if line == "^C" else line.encode())
            pump(0.3)
            if line != "^C":
                os.write(fd, b"\r")
        pump(20)
    finally:
        os.close(fd)
        os.waitpid(pid, 0)
    return out.decode(errors="replace")


@pytest.mark.spark
@pytest.mark.slow
@pytest.mark.heavy  # about 4 minutes: not in the default run
def test_ctrl_c_cancels_a_running_query_quietly(tmp_path: Path) -> None:
    env = {**os.environ, "PROMPT_TOOLKIT_NO_CPR": "1", "PAGER": "cat",
           "PYTHONPATH": str(Path(__file__).parents[2] / "src")}
    text = _drive_pty([
        ("CREATE TABLE big (a BIGINT) WITH ('connector' = 'datagen', "
         "'number-of-rows' = '2000000000');", 2),
        ("CREATE TABLE small (a BIGINT) WITH ('connector' = 'datagen', "
         "'number-of-rows' = '3');", 1),
        ("SELECT a FROM big WHERE a < 0;", 1),
        ("^C", 120),  # Spark started in the background, the query runs (for minutes)
        ("SELECT a FROM small;", 3),  # the session goes on
        ("quit", 120),
    ], env)
    assert "Starting Spark in the background" in text
    assert "interrupted: the query was cancelled" in text
    assert "Traceback" not in text and "py4j" not in text, text
    assert "3 rows in" in text, text
