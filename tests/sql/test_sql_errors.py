"""Golden diagnostics: every tests/sql/errors/*.sql fails with exactly its .expected text.

Regenerate after an intended change with ``FLOWC_UPDATE_GOLDEN=1 pytest tests/sql``.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from flowc.errors import EXIT_USER, FlowcError
from flowc.sql import compile_sql

ERRORS = Path(__file__).parent / "errors"
CASES = sorted(ERRORS.glob("*.sql"))


def diagnostics(path: Path) -> FlowcError:
    try:
        compile_sql(path.read_text(encoding="utf-8"), path.name)
    except FlowcError as e:
        return e
    raise AssertionError(f"{path.name} compiled without errors")


def test_corpus_is_big_enough() -> None:
    assert len(CASES) >= 30


@pytest.mark.parametrize("path", CASES, ids=[p.stem for p in CASES])
def test_error_golden(path: Path) -> None:
    err = diagnostics(path)
    text = err.format() + "\n"
    assert err.exit_code == EXIT_USER
    assert "Traceback" not in text and "sqlglot" not in text
    assert text.startswith(f"{path.name}:")
    expected = path.with_suffix(".expected")
    if os.environ.get("FLOWC_UPDATE_GOLDEN"):
        expected.write_text(text, encoding="utf-8")
    assert expected.exists(), f"{expected.name} is missing: write it (FLOWC_UPDATE_GOLDEN=1) " \
        "and review it"
    assert text == expected.read_text(encoding="utf-8")
