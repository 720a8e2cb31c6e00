"""`flowc run` end to end on the shared local Spark: UDF modules next to a script or a
program reach Spark's workers, `-p`/`--set` apply to Python programs, user errors exit 1."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from flowc.cli import main

ROOT = Path(__file__).parent.parent


@pytest.fixture(scope="module")
def spark() -> Iterator[Any]:
    from flowc.executor import get_spark

    yield get_spark("local[2]")


def test_udf_module_beside_a_script_run_from_its_directory(
        tmp_path: Path, spark: Any, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    # The module name is unique to this test: the workers were started without tmp_path on
    # their import path, so the function must travel by value.
    (tmp_path / "flowc_test_udfs_a.py").write_text(
        "def shout(s):\n    return None if s is None else s.upper() + '!'\n")
    (tmp_path / "u.flow").write_text(
        "import udf flowc_test_udfs_a.shout(string) -> string;\n"
        "source words (w string) from values ('a'), ('b'), (null);\n"
        "words | map shout(w) as s | print;\n")
    monkeypatch.chdir(tmp_path)
    assert main(["run", "u.flow", "--no-progress"]) == 0  # a bare file name: base dir '.'
    out = capsys.readouterr().out.split("\n")
    assert sorted(line for line in out if line) == ["+I[A!]", "+I[B!]", "+I[null]"]


def test_python_program_with_helper_module_and_parallelism(
        tmp_path: Path, spark: Any, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "flowc_test_helpers_b.py").write_text(
        "def split(line):\n    return [(w, 1) for w in line.split()]\n")
    (tmp_path / "prog.py").write_text(
        "from flowc.datastream import StreamExecutionEnvironment\n"
        "from flowc_test_helpers_b import split\n"
        "env = StreamExecutionEnvironment.get_execution_environment()\n"
        "(env.from_collection(['a b a', 'c a']).flat_map(split)\n"
        "    .key_by(lambda p: p[0]).reduce(lambda a, b: (a[0], a[1] + b[1])).print())\n"
        "env.execute('wc')\n")
    assert main(["run", str(tmp_path / "prog.py"), "-p", "3", "--no-progress"]) == 0
    captured = capsys.readouterr()
    lines = [line for line in captured.out.split("\n") if line]
    # -p 3 is the default parallelism of the program's environment: subtasks 1..3 exist.
    assert sorted(line.split("> ", 1)[1] for line in lines) == [
        "('a', 1)", "('a', 2)", "('a', 3)", "('b', 1)", "('c', 1)"]
    assert "Flat Map (p=3): in 2, out 5" in captured.err
    # The chain ending in the print sink reports what the sink received.
    assert "Sink: Print to Std. Out (p=3): in 5, out 0, written 5" in captured.err
    assert "job 'wc' finished" in captured.err


def test_second_execute_runs_only_what_was_added_since_the_first(
        tmp_path: Path, spark: Any, capsys: pytest.CaptureFixture[str]) -> None:
    """PyFlink's execute() clears the environment's transformations: job 2 does not re-run
    job 1 (before the fix the second job printed 1, 2, 3 again beside 10, 20)."""
    (tmp_path / "two.py").write_text(
        "from flowc.datastream import StreamExecutionEnvironment\n"
        "env = StreamExecutionEnvironment.get_execution_environment()\n"
        "env.from_collection([1, 2, 3]).print()\n"
        "env.execute('one')\n"
        "env.from_collection([10, 20]).print()\n"
        "env.execute('two')\n")
    assert main(["run", str(tmp_path / "two.py"), "--no-progress"]) == 0
    out = [line for line in capsys.readouterr().out.split("\n") if line]
    assert sorted(out, key=int) == ["1", "2", "3", "10", "20"]


def test_explain_of_a_program_with_two_executes_shows_the_last_job(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "two.py").write_text(
        "from flowc.datastream import StreamExecutionEnvironment\n"
        "env = StreamExecutionEnvironment.get_execution_environment()\n"
        "env.from_collection([1]).map(lambda v: v).name('first').print()\n"
        "env.execute()\n"
        "env.from_collection([2]).map(lambda v: v).name('second').print()\n"
        "env.execute()\n")
    assert main(["explain", str(tmp_path / "two.py")]) == 0
    out = capsys.readouterr().out
    assert "second" in out and "first" not in out


def test_program_set_parallelism_wins_over_command_line(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "prog.py").write_text(
        "from flowc.datastream import StreamExecutionEnvironment\n"
        "env = StreamExecutionEnvironment.get_execution_environment()\n"
        "env.from_collection([1, 2]).map(lambda v: v).name('m').print()\n"
        "env.get_execution_environment().set_parallelism(2)\n"
        "env.execute()\n")
    assert main(["explain", str(tmp_path / "prog.py"), "-p", "4", "--format", "json"]) == 0
    assert '"parallelism": 4' in capsys.readouterr().out


def test_program_exception_is_a_positioned_user_error(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    prog = tmp_path / "bad.py"
    prog.write_text("def f():\n    return {}['x']\n\nf()\n")
    assert main(["run", str(prog)]) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"{prog}:2:5: error: the program raised KeyError: 'x'")
    assert "Traceback" not in err


def test_bad_set_option_for_a_program_fails_before_it_runs(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    prog = tmp_path / "p.py"
    prog.write_text("raise SystemExit('must not run')\n")
    assert main(["run", str(prog), "--set", "paralelism=2"]) == 1
    assert "did you mean 'parallelism'" in capsys.readouterr().err


def test_usage_errors_exit_1(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        main(["run", "--bogus", "x.flow"])
    assert info.value.code == 1
    assert "unrecognized arguments: --bogus" in capsys.readouterr().err
