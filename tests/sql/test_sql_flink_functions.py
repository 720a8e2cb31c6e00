"""SQL functions against results recorded from Flink 2.3 (tests/sql/flink_results/
functions.json, made by record_functions.py there): every case Flink answers gives the same
value in flowc (run on the reference executor), every case Flink fails fails in flowc."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from test_sql_results import run_sql

from flowc.errors import FlowcError

CASES = json.loads((Path(__file__).parent / "flink_results" / "functions.json")
                   .read_text(encoding="utf-8"))["cases"]
# Deliberate differences (docs/flink-differences.md).
DIFFERENT = {
    "DATE_FORMAT(TIMESTAMP '2021-01-02 13:00:00')": "flowc's default pattern, as in .flow",
}
ONE_ROW = """
CREATE TABLE one (x BIGINT) WITH ('connector' = 'filesystem', 'path' = 'one.csv',
  'format' = 'csv');
"""


def _run(tmp_path: Path, exprs: list[str]) -> tuple[Any, ...]:
    (tmp_path / "one.csv").write_text("x\n1\n", encoding="utf-8")
    items = ", ".join(f"{e} AS v{i}" for i, e in enumerate(exprs))
    _, rows = run_sql(tmp_path, f"SELECT {items} FROM one;", parallelism=1, tables=ONE_ROW)
    assert len(rows) == 1
    return rows[0]


def test_values_match_flink(tmp_path: Path) -> None:
    cases = [c for c in CASES if "error" not in c and c["expr"] not in DIFFERENT]
    got = _run(tmp_path, [c["expr"] for c in cases])
    wrong = [(c["expr"], c["result"], v) for c, v in zip(cases, got)
             if (None if v is None else str(v)) != c["result"]]
    assert not wrong


@pytest.mark.parametrize("expr", [c["expr"] for c in CASES
                                  if "error" in c and c["expr"] not in DIFFERENT])
def test_failures_match_flink(tmp_path: Path, expr: str) -> None:
    with pytest.raises(FlowcError):
        _run(tmp_path, [expr])
