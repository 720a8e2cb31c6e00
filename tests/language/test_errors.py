"""Golden diagnostics: every tests/language/errors/*.flow fails with exactly its .expected text.

Regenerate after an intended change with ``FLOWC_UPDATE_GOLDEN=1 pytest tests/language``
and review the diff.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from flowc.chaining import build_execution_graph
from flowc.errors import EXIT_USER, FlowcError, PlanError
from flowc.parser import compile_source
from flowc.parser.plan_help import plan_help

ERRORS = Path(__file__).parent / "errors"
CASES = sorted(ERRORS.glob("*.flow"))


def diagnostics(path: Path) -> FlowcError:
    """The error of ``flowc check``: compiling, then planning (JobGraph, ExecutionGraph)."""
    try:
        script = compile_source(path.read_text(encoding="utf-8"), path.name)
        with plan_help(script.env):  # as the flowc command plans
            build_execution_graph(script.env.get_job_graph())
    except FlowcError as e:
        return e
    raise AssertionError(f"{path.name} compiled and planned without errors")


def test_corpus_is_big_enough() -> None:
    assert len(CASES) >= 40


@pytest.mark.parametrize("path", CASES, ids=[p.stem for p in CASES])
def test_error_golden(path: Path) -> None:
    err = diagnostics(path)
    text = err.format() + "\n"
    assert err.exit_code == EXIT_USER
    assert "Traceback" not in text
    # Positioned, and never a grammar token name.
    assert text.startswith(f"{path.name}:")
    for token_name in ("RPAR", "LPAR", "__ANON", "SEMICOLON", "$END", "VBAR"):
        assert token_name not in text
    expected = path.with_suffix(".expected")
    if os.environ.get("FLOWC_UPDATE_GOLDEN") or not expected.exists():
        expected.write_text(text, encoding="utf-8")
    assert text == expected.read_text(encoding="utf-8")


# Planner errors carry Flink's exception class and exact text (see tests/golden/flink).
PLAN_ERRORS = {"plan_forward_parallelism": "UnsupportedOperationException",
               "plan_uid_collision": "IllegalArgumentException",
               "plan_parallelism_above_max": "JobException",
               "plan_parallelism_above_set_max": "JobException"}


@pytest.mark.parametrize("stem", sorted(PLAN_ERRORS))
def test_planner_errors_are_flinks(stem: str) -> None:
    err = diagnostics(ERRORS / f"{stem}.flow")
    assert isinstance(err, PlanError)
    assert err.java_class == PLAN_ERRORS[stem]
