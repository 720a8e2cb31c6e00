"""The print connector's format for every type a SQL print writes, against Flink 2.3
(recorded by changelog/record_print_formats.py, not run here): timestamps with 0 and 3
fraction digits, DECIMAL scales, arrays (nested, with nulls), maps, DOUBLE / FLOAT in
Java's notation, long integers, booleans, nulls and strings with commas and blanks. On
the reference executor and on Spark (row by row: the columnar executor has no DECIMAL or MAP
columns yet, docs/executor.md)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from flowc.executor import run_reference
from flowc.sql import compile_sql

HERE = Path(__file__).parent / "changelog"
sys.path.insert(0, str(HERE))
from print_formats_data import ONE, QUERY  # noqa: E402

RECORDED = json.loads((HERE / "print_formats.json").read_text())


def graph(tmp: Path, settings: str = ""):  # type: ignore[no-untyped-def]
    (tmp / "row.csv").write_text(ONE, encoding="utf-8")
    return compile_sql(f"{settings}CREATE TABLE single_row (x INT) WITH ('connector' = 'filesystem', "
                       f"'path' = '{tmp / 'row.csv'}', 'format' = 'csv', "
                       f"'csv.header' = 'false');\n{QUERY};\n", "q.sql").env.get_job_graph()


def test_the_fixture_is_this_query() -> None:
    assert RECORDED["query"] == QUERY and len(RECORDED["print"]) == 1


def test_printed_line_is_flinks(tmp_path: Path) -> None:
    assert list(run_reference(graph(tmp_path)).printed) == RECORDED["print"]


@pytest.mark.spark
def test_printed_line_on_spark(tmp_path: Path) -> None:
    from flowc.executor import get_spark, run_job_graph

    get_spark("local[2]")  # the test session's master (tests/executor/conftest.py)
    g = graph(tmp_path)
    lines = [line.split("> ", 1)[-1] for line in run_job_graph(g).printed]
    assert lines == RECORDED["print"]
