"""test_sql_watermarks.py's Flink-recorded cases on Spark: the row executor's generated
source loop (executor/spark/codegen.py) and the columnar executor's vectorised generator
(``flowc.executor = columnar``, arrow/chain.py Watermarks) print Flink's rows in STREAMING
mode, where the exact watermark decides which rows are late, and in BATCH mode."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from test_sql_watermarks import CASES, IDS, sql_text

from flowc.executor import run_job_graph
from flowc.sql import compile_sql

pytestmark = pytest.mark.spark

WINDOWS = [(i, c) for i, c in zip(IDS, CASES) if "OVER" not in c["query"]]


@pytest.fixture(scope="module", autouse=True)
def spark() -> None:
    from flowc.executor import get_spark

    get_spark("local[2]")  # the test session's master (tests/executor/conftest.py)


def spark_lines(tmp: Path, case: dict[str, Any], executor: str) -> list[str]:
    text = sql_text(tmp, case, 2, f"SET 'flowc.executor' = '{executor}';\n")
    graph = compile_sql(text, "q.sql").env.get_job_graph()
    return [line.split("> ", 1)[-1] for line in run_job_graph(graph).printed]


@pytest.mark.parametrize("executor", ["row", "columnar"])
@pytest.mark.parametrize("case", [c for _, c in WINDOWS], ids=[i for i, _ in WINDOWS])
def test_watermark_cases_on_spark(tmp_path: Path, case: dict[str, Any], executor: str) -> None:
    assert sorted(spark_lines(tmp_path, case, executor)) == sorted(case["print"])
