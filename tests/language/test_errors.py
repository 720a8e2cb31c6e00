"""Golden diagnostics: every tests/language/errors/*.flow fails with exactly its .expected text.

Regenerate after an intended change with ``FLOWC_UPDATE_GOLDEN=1 pytest tests/language``
and review the diff.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from flowc.errors import EXIT_USER, FlowcError
from flowc.parser import compile_source

ERRORS = Path(__file__).parent / "errors"
CASES = sorted(ERRORS.glob("*.flow"))


def diagnostics(path: Path) -> FlowcError:
    try:
        compile_source(path.read_text(encoding="utf-8"), path.name)
    except FlowcError as e:
        return e
    raise AssertionError(f"{path.name} compiled without errors")


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
