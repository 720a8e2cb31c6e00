"""CUMULATE windows on Spark (test_sql_cumulate.py's fixtures): the window aggregate, the
TVF's rows and a window join print Flink's rows; window aggregates also with
``flowc.executor = columnar``, in BATCH and STREAMING mode, where the window is a columnar
(Arrow) window member (test_sql_cumulate.py checks the plan)."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqla_tables import final_table, printed
from test_sql_cumulate import RUNS

from flowc.executor import run_job_graph

pytestmark = pytest.mark.spark

CHOSEN = [RUNS[0], next(c for c in RUNS if c["query"].startswith("SELECT * FROM TABLE(")),
          next(c for c in RUNS if " JOIN " in c["query"])]


@pytest.fixture(scope="module", autouse=True)
def spark() -> None:
    from flowc.executor import get_spark

    get_spark("local[2]")  # the test session's master (tests/executor/conftest.py)


@pytest.mark.parametrize("case", CHOSEN, ids=["aggregate", "tvf-rows", "window-join"])
def test_cumulate_on_spark(tmp_path: Path, case: dict) -> None:  # type: ignore[type-arg]
    lines = printed(tmp_path, case["query"], 2, run_job_graph)
    assert sorted(lines) == sorted(case["print"])
    assert final_table(lines) == final_table(case["print"])


AGGREGATES = [c for c in RUNS if "GROUP BY window_start" in c["query"] and " JOIN " not in
              c["query"] and "ROW_NUMBER" not in c["query"] and "HAVING" not in c["query"]]


@pytest.mark.parametrize("mode", ["streaming", "batch"])
@pytest.mark.parametrize("case", AGGREGATES, ids=[c["query"][:70] for c in AGGREGATES])
def test_cumulate_aggregates_run_columnar(tmp_path: Path, case: dict,  # type: ignore[type-arg]
                                          mode: str) -> None:
    settings = (f"SET 'flowc.executor' = 'columnar';\n"
                f"SET 'execution.runtime-mode' = '{mode}';\n")
    lines = printed(tmp_path, case["query"], 2, run_job_graph, settings)
    assert sorted(lines) == sorted(case["print"])
