"""The PyFlink-style programs (tests/pyflink_programs) on the columnar executor: each run
with ``flowc.executor = columnar`` on Spark prints exactly what real PyFlink printed (the
recorded ``.expected`` lines, as tests/test_pyflink_programs.py compares them), or - for a
program with an operator the columnar executor lacks - is refused naming it."""

from __future__ import annotations

import contextlib
import io
from pathlib import Path
from typing import Any

import pytest

from test_pyflink_programs import CASES, _write, expected_lines, normalised

# Programs with two-input operators: refused under ``columnar`` (plan.py).
REFUSED = {
    "p11_union_connect": "two inputs",
    "p16_keyed_co_process": "two inputs",
    "p23_broadcast_state": "two inputs",
}

pytestmark = [pytest.mark.spark, pytest.mark.slow]


@pytest.mark.parametrize("program", CASES, ids=lambda p: p.stem)
def test_program_on_the_columnar_executor(program: Path, tmp_path: Path, spark: Any,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    from flowc.cli import main

    path = _write(program, tmp_path)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = main(["run", str(path), "--no-progress", "--set", "flowc.executor=columnar"])
    if program.stem in REFUSED:
        assert code == 1
        err = capsys.readouterr().err
        assert "cannot run columnar" in err and REFUSED[program.stem] in err
        return
    assert code == 0, capsys.readouterr().err
    assert normalised(out.getvalue().splitlines()) == expected_lines(program)
