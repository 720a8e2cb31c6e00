"""SELECT DISTINCT, UNION, INTERSECT and EXCEPT in BATCH mode against rows recorded from
Flink 2.3 (tests/sql/flink_results/setops.json); positioned errors in STREAMING mode."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from test_sql_results import run_sql

from flowc.errors import FlowcError

CASES = json.loads((Path(__file__).parent / "flink_results" / "setops.json")
                   .read_text(encoding="utf-8"))["cases"]
BATCH = "SET 'execution.runtime-mode' = 'batch';\n"


def _sorted(rows: list[tuple[Any, ...]]) -> list[list[Any]]:
    return sorted(([None if v is None else str(v) for v in r] for r in rows),
                  key=lambda r: [x or "" for x in r])


@pytest.mark.parametrize("parallelism", [1, 3])
@pytest.mark.parametrize("case", CASES, ids=[c["query"][:50] for c in CASES])
def test_batch_set_operations_match_flink(tmp_path: Path, case: dict[str, Any],
                                          parallelism: int) -> None:
    _, rows = run_sql(tmp_path, BATCH + case["query"] + ";", parallelism=parallelism)
    assert _sorted(rows) == case["rows"]


@pytest.mark.parametrize(("query", "message", "column"), [
    ("SELECT DISTINCT user_id FROM clicks", "SELECT DISTINCT is not supported in STREAMING mode", 8),
    ("SELECT user_id FROM clicks UNION SELECT user_id FROM clicks",
     "UNION (which removes duplicates) is not supported in STREAMING", 28),
    ("SELECT user_id FROM clicks INTERSECT SELECT user_id FROM clicks",
     "INTERSECT is not supported in STREAMING mode", 1),
    ("SELECT user_id FROM clicks EXCEPT SELECT user_id FROM clicks",
     "EXCEPT is not supported in STREAMING mode", 1),
])
def test_streaming_is_a_positioned_error(tmp_path: Path, query: str, message: str,
                                         column: int) -> None:
    with pytest.raises(FlowcError) as info:
        run_sql(tmp_path, query + ";")
    text = info.value.format()
    assert message in text and f"q.sql:6:{column}:" in text
    assert "SET 'execution.runtime-mode' = 'batch'" in text


@pytest.mark.parametrize(("query", "message"), [
    ("SELECT user_id FROM clicks INTERSECT ALL SELECT user_id FROM clicks",
     "INTERSECT ALL is not supported"),
    ("SELECT user_id FROM clicks UNION SELECT user_id FROM clicks UNION ALL "
     "SELECT user_id FROM clicks", "mixing UNION and UNION ALL"),
])
def test_unsupported_forms_in_batch(tmp_path: Path, query: str, message: str) -> None:
    with pytest.raises(FlowcError, match=message):
        run_sql(tmp_path, BATCH + query + ";")


def test_distinct_then_order_by_and_limit(tmp_path: Path) -> None:
    """ORDER BY / LIMIT apply to the DISTINCT result (one sort after the set operation)."""
    _, rows = run_sql(tmp_path, BATCH + "SELECT DISTINCT user_id FROM clicks "
                      "ORDER BY user_id DESC LIMIT 3;")
    values = [r[0] for r in rows]
    assert len(values) == 3 and len(set(values)) == 3
    assert values == sorted(values, key=lambda v: (v is not None, v), reverse=True)
