"""Golden explain output of a corpus of SQL queries (tests/sql/queries/*.sql).

Each file's expected text is the JobGraph text rendering of the compiled file (for a file
of EXPLAIN statements, of the explained query). Regenerate after an intended change with
``FLOWC_UPDATE_GOLDEN=1 pytest tests/sql`` and review the diff.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from flowc.explain import render
from flowc.sql import compile_sql

QUERIES = Path(__file__).parent / "queries"
CASES = sorted(QUERIES.glob("*.sql"))


def explain_text(path: Path) -> str:
    script = compile_sql(path.read_text(encoding="utf-8"), path.name)
    parts = []
    if script.sinks:
        parts.append(render(script.env.get_job_graph(), "text"))
    for x, env in script.explains:
        parts.append(f"-- EXPLAIN at {x.span}\n" + render(env.get_job_graph(), "text"))
    return "\n".join(parts)


def test_corpus_covers_every_window_form() -> None:
    text = "\n".join(p.read_text() for p in CASES)
    for form in ("TABLE(TUMBLE(", "TABLE(HOP(", "TABLE(SESSION(", "GROUP BY TUMBLE(",
                 "GROUP BY HOP(", "GROUP BY SESSION(", "UNION ALL", "BETWEEN", "window_start =",
                 "INSERT INTO", "EXPLAIN"):
        assert form in text, form


@pytest.mark.parametrize("path", CASES, ids=[p.stem for p in CASES])
def test_explain_golden(path: Path) -> None:
    text = explain_text(path)
    expected = path.with_suffix(".expected")
    if os.environ.get("FLOWC_UPDATE_GOLDEN"):
        expected.write_text(text, encoding="utf-8")
    assert expected.exists(), f"{expected.name} is missing: write it (FLOWC_UPDATE_GOLDEN=1) " \
        "and review it"
    assert text == expected.read_text(encoding="utf-8")
