"""The flowc command: exit codes, diagnostics, golden explain output."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from flowc.cli import main

ROOT = Path(__file__).parent.parent
GOLDEN = Path(__file__).parent / "golden" / "explain"


def run_cli(*args: str) -> tuple[int, str, str]:
    proc = subprocess.run([sys.executable, "-m", "flowc.cli", *args], cwd=ROOT,
                          capture_output=True, text=True,
                          env={**os.environ, "PYTHONHASHSEED": "0"})
    return proc.returncode, proc.stdout, proc.stderr


@pytest.mark.parametrize("level,fmt", [("stream", "text"), ("stream", "json"), ("job", "text"),
                                       ("job", "json"), ("job", "dot"), ("job", "mermaid"),
                                       ("execution", "text"), ("execution", "json")])
def test_explain_python_program_golden(level: str, fmt: str, capsys: pytest.CaptureFixture[str],
                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    assert main(["explain", "examples/wordcount.py", "--level", level, "--format", fmt]) == 0
    out = capsys.readouterr().out
    golden = GOLDEN / f"wordcount.{level}.{fmt}"
    if os.environ.get("FLOWC_UPDATE_GOLDEN"):
        golden.write_text(out)
    assert out == golden.read_text()


def test_planner_error_points_at_program_line() -> None:
    code, out, err = run_cli("explain", "tests/programs/forward_error.py")
    assert code == 1
    assert "Traceback" not in err
    assert err.startswith(
        "tests/programs/forward_error.py:6:1: error: Forward partitioning does not "
        "allow change of parallelism.")
    assert "   6 | src.forward().map(lambda v: v + 1)" in err
    # The caret underlines the call that built the operator.
    assert "     | " + "^" * len("src.forward().map(lambda v: v + 1)") + "\n" in err


def test_missing_file_is_a_user_error() -> None:
    code, out, err = run_cli("check", "does/not/exist.flow")
    assert code == 1 and "no such file: does/not/exist.flow" in err and "Traceback" not in err


def test_bad_flag_value_is_a_user_error(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        main(["explain", "x.flow", "--level", "nope"])
    assert info.value.code == 1
    assert "invalid choice" in capsys.readouterr().err


EXAMPLES = sorted(p.stem for p in (ROOT / "examples").glob("*.flow"))


@pytest.mark.parametrize("example", EXAMPLES)
@pytest.mark.parametrize("level,fmt", [("job", "text"), ("job", "json"), ("stream", "json"),
                                       ("execution", "text")])
def test_explain_examples_golden(example: str, level: str, fmt: str,
                                 capsys: pytest.CaptureFixture[str],
                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    assert main(["explain", f"examples/{example}.flow", "--level", level, "--format", fmt]) == 0
    out = capsys.readouterr().out
    golden = GOLDEN / f"{example}.{level}.{fmt}"
    if os.environ.get("FLOWC_UPDATE_GOLDEN"):
        golden.write_text(out)
    assert out == golden.read_text()


def test_check_examples_ok(capsys: pytest.CaptureFixture[str],
                           monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    for example in EXAMPLES:
        assert main(["check", f"examples/{example}.flow"]) == 0
    assert capsys.readouterr().out.count(": ok (") == len(EXAMPLES)


def test_binary_script_is_a_positioned_user_error(tmp_path: Path) -> None:
    path = tmp_path / "e.flow"
    path.write_bytes(b"\x00\x97binary\xff")
    code, out, err = run_cli("check", str(path))
    assert code == 1 and "Traceback" not in err
    assert err.startswith(f"{path}:1:2: error: this file is not UTF-8 text (byte 0x97)")
    assert "codec" not in err


def test_planner_errors_get_script_help() -> None:
    # Flink's text unchanged, then where the other operator is, in the script's words.
    code, out, err = run_cli("check", "tests/language/errors/plan_uid_collision.flow")
    assert code == 1
    assert err.startswith("tests/language/errors/plan_uid_collision.flow:4:10: error: Hash "
                          'collision on user-specified ID "step". Most likely cause is a '
                          "non-unique ID.")
    assert ('tests/language/errors/plan_uid_collision.flow:3:10: note: the other operator with '
            'uid "step" is here\n   3 | clicks | filter') in err
    code, out, err = run_cli("explain", "tests/language/errors/plan_forward_parallelism.flow")
    assert code == 1
    assert "  = help: 'forward' (line 5) connects the 'filter' on line 4 (parallelism 2) to " \
           "the 'map' on line 6 (parallelism 3)" in err
