"""``flowc run|explain|check x.sql`` and ``flowc repl -i`` through the real command line."""

from __future__ import annotations

import os
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from flowc.executor import run_reference
from flowc.sql import compile_sql_file

ROOT = Path(__file__).parents[2]
EXAMPLES = ROOT / "examples"


def flowc(*args: str, cwd: Path = ROOT, stdin: str | None = None,
          timeout: int = 600) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, COLUMNS="120")
    return subprocess.run([sys.executable, "-m", "flowc.cli", *args], cwd=cwd, input=stdin,
                          capture_output=True, text=True, timeout=timeout, env=env)


@pytest.mark.spark
@pytest.mark.slow
def test_run_clicks_sql_end_to_end() -> None:
    """The example file runs on Spark (it groups by user_id, which is null in some rows)
    and prints exactly what the reference executor prints."""
    done = flowc("run", "--no-progress", "clicks.sql", cwd=EXAMPLES)
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr and "error" not in done.stderr
    assert "finished in" in done.stderr
    cwd = os.getcwd()
    os.chdir(EXAMPLES)
    try:
        script = compile_sql_file("clicks.sql")
        expected = run_reference(script.env.get_job_graph()).printed
    finally:
        os.chdir(cwd)
    printed = done.stdout.splitlines()
    assert Counter(printed) == Counter(expected)
    assert any(line.split("> ", 1)[-1][2:].startswith("[null, ")
               for line in printed)  # a null user_id


def test_check_and_explain_sql() -> None:
    done = flowc("check", "clicks.sql", cwd=EXAMPLES)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("clicks.sql: ok (")
    done = flowc("explain", "clicks.sql", cwd=EXAMPLES)
    assert done.returncode == 0, done.stderr
    assert "Keyed Reduce" in done.stdout and "TumblingEventTimeWindows" in done.stdout


def test_explain_prints_the_files_explain_statements_too(tmp_path: Path) -> None:
    text = (EXAMPLES / "clicks.sql").read_text(encoding="utf-8")
    path = tmp_path / "x.sql"
    path.write_text(text + "\nEXPLAIN SELECT user_id FROM clicks WHERE action = 'x';\n",
                    encoding="utf-8")
    done = flowc("explain", "x.sql", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "Keyed Reduce" in done.stdout  # the file's job
    assert "-- EXPLAIN at x.sql:" in done.stdout  # and the EXPLAIN statement's


def test_bad_sql_file_exit_code(tmp_path: Path) -> None:
    path = tmp_path / "bad.sql"
    path.write_text("SELECT * FROM nowhere;\n", encoding="utf-8")
    for command in ("check", "explain", "run"):
        done = flowc(command, str(path))
        assert done.returncode == 1, (command, done.stderr)
        assert "bad.sql:1:15: error: unknown table 'nowhere'" in done.stderr
        assert "Traceback" not in done.stderr


def test_sql_file_that_is_not_utf8_is_a_positioned_error(tmp_path: Path) -> None:
    # the same wording as for a .flow file, never Python's codec text
    (tmp_path / "latin1.sql").write_bytes("SELECT * FROM t WHERE a = 'café';\n"
                                          .encode("latin-1"))
    (tmp_path / "wide.sql").write_text("SELECT * FROM t;\n", encoding="utf-16")
    (tmp_path / "binary.sql").write_bytes(b"\x00\x97binary\xff")
    cases = {"latin1.sql": "latin1.sql:1:31: error: this file is not UTF-8 text (byte 0xe9",
             "wide.sql": "wide.sql:1:1: error: this file is UTF-16 text",
             "binary.sql": "binary.sql:1:2: error: this file is not UTF-8 text (byte 0x97); "
                           "it looks like a binary file"}
    for name, start in cases.items():
        done = flowc("check", name, cwd=tmp_path)
        assert done.returncode == 1, done.stderr
        assert done.stderr.startswith(start), done.stderr
        assert "codec" not in done.stderr and "Traceback" not in done.stderr
    assert "   1 | SELECT * FROM t WHERE a = 'caf" in flowc("check", "latin1.sql",
                                                         cwd=tmp_path).stderr


def test_sql_file_with_a_utf8_byte_order_mark(tmp_path: Path) -> None:
    # an editor's byte order mark is not text: the file checks, and columns on line 1 are
    # the ones the editor shows
    (tmp_path / "bom.sql").write_bytes(
        b"\xef\xbb\xbfCREATE TABLE t (a INT) WITH ('connector' = 'datagen', "
        b"'number-of-rows' = '3');\nSELECT a FROM t;\n")
    done = flowc("check", "bom.sql", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    (tmp_path / "bad.sql").write_bytes(b"\xef\xbb\xbfSELECT a FROM nowhere;\n")
    done = flowc("check", "bad.sql", cwd=tmp_path)
    assert done.returncode == 1
    assert done.stderr.startswith("bad.sql:1:15: error: unknown table 'nowhere'"), done.stderr
    assert "   1 | SELECT a FROM nowhere;" in done.stderr


def test_repl_init_file_that_is_not_utf8(tmp_path: Path) -> None:
    # reported like any error in the init file (file:line:col, the line, a caret); the
    # session starts without it
    (tmp_path / "init.sql").write_bytes(b"-- caf\xe9\nSELECT 1;\n")
    done = flowc("repl", "-i", "init.sql", "--history", str(tmp_path / "history"),
                 cwd=tmp_path, stdin="quit\n")
    assert done.returncode == 0, done.stderr
    assert "init.sql:1:7: error: this file is not UTF-8 text (byte 0xe9" in done.stdout
    assert "   1 | -- caf" in done.stdout
    assert "Traceback" not in done.stdout + done.stderr
    assert "internal error" not in done.stdout + done.stderr


def test_empty_or_definitions_only_sql_file(tmp_path: Path) -> None:
    cases = {"empty.sql": "", "comments.sql": "-- nothing yet\n/* still nothing */\n",
             "ddl.sql": "CREATE TABLE t (a INT) WITH ('connector' = 'print');\n"}
    for name, text in cases.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
        done = flowc("check", name, cwd=tmp_path)
        assert done.returncode == 1, done.stderr
        assert done.stderr.startswith(f"{name}:1:1: error: No operators defined"), done.stderr
        hint = "only defines tables" if name == "ddl.sql" else "the file is empty"
        assert hint in done.stderr and "Traceback" not in done.stderr
