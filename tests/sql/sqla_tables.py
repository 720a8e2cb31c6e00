"""The tables of changelog/{cumulate,state_ttl_hint,topn_outside}.json (recorded by
changelog/record_sqla.py): data.py's ``orders`` and ``users`` and ``events``, over_data.py's
ORDERS with a watermark; a query's printed lines on the reference executor or Spark."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from flowc.executor import run_reference
from flowc.rowkind import materialize
from flowc.sql import compile_sql

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE / "changelog"))
sys.path.insert(0, str(HERE / "flink_results"))
from data import ORDERS, ORDERS_COLUMNS, USERS, USERS_COLUMNS  # noqa: E402
from over_data import orders_csv  # noqa: E402

from printed import rows as printed_rows  # noqa: E402

EVENTS_COLUMNS = ("user_id STRING, amount INT, ts TIMESTAMP(3), "
                  "WATERMARK FOR ts AS ts - INTERVAL '1' SECOND")


def cases(stem: str) -> list[dict[str, Any]]:
    doc = json.loads((HERE / "changelog" / f"{stem}.json").read_text(encoding="utf-8"))
    return doc["cases"]  # type: ignore[no-any-return]


def sql_text(tmp: Path, query: str, parallelism: int, settings: str = "") -> str:
    tables = []
    for name, cols, text in (("orders", ORDERS_COLUMNS, ORDERS), ("users", USERS_COLUMNS, USERS),
                             ("events", EVENTS_COLUMNS, orders_csv(header=False))):
        (tmp / f"{name}.csv").write_text(text, encoding="utf-8")
        tables.append(f"CREATE TABLE {name} ({cols}) WITH ('connector' = 'filesystem', "
                      f"'path' = '{tmp / name}.csv', 'format' = 'csv', "
                      "'csv.header' = 'false', 'csv.null-literal' = '');")
    return (f"SET 'parallelism' = '{parallelism}';\n{settings}" + "\n".join(tables) +
            f"\n{query};\n")


def printed(tmp: Path, query: str, parallelism: int, runner: Any = run_reference,
            settings: str = "") -> list[str]:
    """The print sink's lines, without a subtask prefix."""
    script = compile_sql(sql_text(tmp, query, parallelism, settings), "q.sql")
    return [line.split("> ", 1)[1] if "> " in line.split("[", 1)[0] else line
            for line in runner(script.env.get_job_graph()).printed]


def final_table(lines: list[str]) -> list[str]:
    return sorted(map(repr, materialize(printed_rows(lines))))
