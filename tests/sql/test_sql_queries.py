"""Golden explain output of a corpus of SQL queries (tests/sql/queries/*.sql).

Each file's expected text is the JobGraph text rendering of the compiled file (for a file
of EXPLAIN statements, of the explained query) and the configuration of every operator
(window sizes, generated expression code, aggregates, schemas, keys, watermarks), so a
wrong window size or expression fails the test, not only a wrong plan shape. Regenerate after an intended change with
``FLOWC_UPDATE_GOLDEN=1 pytest tests/sql`` and review the diff.
"""

from __future__ import annotations

import inspect
import os
from enum import Enum
from pathlib import Path
from typing import Any

import pytest

from flowc.explain import render
from flowc.operators import CodeFn
from flowc.sql import compile_sql
from flowc.types import Schema

QUERIES = Path(__file__).parent / "queries"
CASES = sorted(QUERIES.glob("*.sql"))


def describe(value: Any, depth: int = 0) -> str:
    """A stable text of an operator's configuration: generated code as its source, window
    assigners and aggregate specs field by field; never object ids."""
    if depth > 6:
        return "..."
    if isinstance(value, CodeFn):
        return f"code({value.source})"
    if isinstance(value, Schema):
        return str(value)
    if isinstance(value, (str, int, float, bool)) or value is None or isinstance(value, Enum):
        return repr(value)
    if isinstance(value, (tuple, list)):
        return "(" + ", ".join(describe(v, depth + 1) for v in value) + ")"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k}: {describe(v, depth + 1)}" for k, v in value.items()) + "}"
    if callable(value) and not hasattr(value, "__dict__"):
        return "<function>"
    fields = vars(value) if hasattr(value, "__dict__") else {}
    inner = ", ".join(f"{k}={describe(v, depth + 1)}" for k, v in fields.items()
                      if not k.startswith("_") and not inspect.isfunction(v))
    return f"{type(value).__name__}({inner})"


def plan_details(env: Any) -> str:
    """Per StreamGraph node: operator and its configuration (window sizes, expressions,
    aggregates, file options), output schema, keys and watermark strategy."""
    sg = env.get_stream_graph()
    lines = []
    for nid in sorted(sg.nodes):
        n = sg.nodes[nid]
        lines.append(f"node {nid} {n.name} -> {n.output_type}")
        lines.append(f"    {describe(n.operator)}")
        for k in n.keys:
            if k is not None:
                lines.append(f"    key {describe(k.fn)} {k.fields}")
        if n.watermark_strategy is not None:
            lines.append(f"    watermarks {describe(n.watermark_strategy)}")
    return "\n".join(lines) + "\n"


def explain_text(path: Path) -> str:
    script = compile_sql(path.read_text(encoding="utf-8"), path.name)
    parts = []
    if script.sinks:
        parts.append(render(script.env.get_job_graph(), "text"))
        parts.append("-- details\n" + plan_details(script.env))
    for x, env in script.explains:
        parts.append(f"-- EXPLAIN at {x.span}\n" + render(env.get_job_graph(), "text"))
        parts.append("-- details\n" + plan_details(env))
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
