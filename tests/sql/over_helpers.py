"""Running a SQL query over over_data.py's ORDERS on the reference executor or on Spark, and
comparing with rows recorded from Flink 2.3 (tests/sql/flink_results/*.json)."""

from __future__ import annotations

import datetime as dt
import json
import sys
from pathlib import Path
from typing import Any

from flowc.executor import run_job_graph, run_reference
from flowc.sql import Unit, collect_query
from flowc.sql.source import split_sql

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE / "flink_results"))
from over_data import orders_csv  # noqa: E402

ORDERS = """
CREATE TABLE orders (user_id STRING, amount INT, ts TIMESTAMP(3),
  WATERMARK FOR ts AS ts - INTERVAL '1' SECOND)
  WITH ('connector' = 'filesystem', 'path' = 'orders.csv', 'format' = 'csv');
"""


def cases(name: str) -> list[dict[str, Any]]:
    data = json.loads((HERE / "flink_results" / name).read_text(encoding="utf-8"))
    return data["cases"]  # type: ignore[no-any-return]


def flink_text(v: Any, kind: str) -> str | None:
    """A value as str() of what PyFlink returns (the fixtures' form)."""
    if v is None:
        return None
    if kind == "timestamp":
        return str(dt.datetime(1970, 1, 1) + dt.timedelta(milliseconds=v))
    return str(v)


def sorted_rows(rows: list[Any], kinds: list[str]) -> list[list[str | None]]:
    return sorted(([flink_text(v, k) for v, k in zip(r, kinds)] for r in rows),
                  key=lambda r: [x or "" for x in r])


def run_query(tmp_path: Path, query: str, *, spark: bool = False, parallelism: int = 2,
              tables: str = ORDERS) -> tuple[list[str], list[list[str | None]]]:
    """Column names and sorted rows (as Flink's fixtures write them) of ``query``."""
    (tmp_path / "orders.csv").write_text(orders_csv(header=True), encoding="utf-8")
    text = f"SET 'parallelism.default' = '{parallelism}';\n" + tables + query + ";\n"
    unit = Unit("q.sql", text, str(tmp_path))
    chunks = split_sql(text, "q.sql")
    for chunk in chunks[:-1]:
        unit.add_sql(chunk)
    assert not unit.errors, [e.format() for e in unit.errors]
    lets, pipeline = unit.query(chunks[-1])
    script, names, kinds = collect_query(unit, pipeline, lets)
    jg = script.env.get_job_graph()
    if spark:
        from flowc.executor import get_spark

        get_spark("local[2]")  # the test session's master (tests/executor/conftest.py)
        result = run_job_graph(jg)
    else:
        result = run_reference(jg)
    return names, sorted_rows([tuple(r) for r in result["result"]], kinds)
