"""``flowc run --trigger`` with a bad value: one clear user error (exit 1), whether the
value is joined (``--trigger=-1s``) or separate (``--trigger -1s``, which argparse alone
would reject as "expected one argument")."""

from __future__ import annotations

from pathlib import Path

import pytest

from flowc.cli import _join_dash_values, main

JOB = "source a (x int) from csv 'a.csv' monitor 1s;\na | print;\n"


@pytest.mark.parametrize("argv", [["--trigger", "-1s"], ["--trigger=-1s"],
                                  ["--trigger", "-500ms"], ["--trigger", "soon"]])
def test_bad_trigger_is_a_user_error(tmp_path: Path, argv: list[str],
                                     capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "job.flow").write_text(JOB)
    assert main(["run", str(tmp_path / "job.flow"), *argv]) == 1
    err = capsys.readouterr().err
    value = argv[-1].removeprefix("--trigger=")
    assert f"--trigger expects a duration such as 1s or 500ms, got '{value}'" in err
    assert "expected one argument" not in err


def test_only_a_dash_number_joins_the_trigger() -> None:
    assert _join_dash_values(["run", "j.flow", "--trigger", "-1s", "-p", "2"]) == \
        ["run", "j.flow", "--trigger=-1s", "-p", "2"]
    # an option after --trigger stays an option (argparse then names the missing value)
    assert _join_dash_values(["run", "j.flow", "--trigger", "-p", "2"]) == \
        ["run", "j.flow", "--trigger", "-p", "2"]
    assert _join_dash_values(["run", "j.flow", "-p", "-1"]) == ["run", "j.flow", "-p", "-1"]
