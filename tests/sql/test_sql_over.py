"""OVER aggregates (SQL) and the .flow ``over`` step, against rows recorded from Flink 2.3
(tests/sql/flink_results/over.json), on the reference executor and on Spark; Flink's errors
for what it rejects."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from over_helpers import ORDERS, cases, orders_csv, run_query, sorted_rows

from flowc.errors import FlowcError
from flowc.executor import run_reference
from flowc.parser import compile_source
from printed import row as printed_row

CASES = cases("over.json")


@pytest.mark.parametrize("parallelism", [1, 3])
@pytest.mark.parametrize("case", CASES, ids=[c["query"][:60] for c in CASES])
def test_over_matches_flink(tmp_path: Path, case: dict[str, Any], parallelism: int) -> None:
    _, rows = run_query(tmp_path, case["query"], parallelism=parallelism)
    assert rows == case["rows"]


@pytest.mark.spark
@pytest.mark.parametrize("case", CASES[:4], ids=[c["query"][:60] for c in CASES[:4]])
def test_over_on_spark_matches_flink(tmp_path: Path, case: dict[str, Any]) -> None:
    _, rows = run_query(tmp_path, case["query"], spark=True)
    assert rows == case["rows"]


def test_output_names(tmp_path: Path) -> None:
    names, _ = run_query(tmp_path, "SELECT *, SUM(amount) OVER (PARTITION BY user_id ORDER BY "
                         "ts ROWS 1 PRECEDING), COUNT(*) OVER (PARTITION BY user_id ORDER BY "
                         "ts ROWS 1 PRECEDING) AS n FROM orders")
    assert names == ["user_id", "amount", "ts", "EXPR$3", "n"]


def test_late_rows_are_dropped(tmp_path: Path) -> None:
    """Flink's two rules for late rows: 4 at 10:00:01 comes after the watermark passed
    10:00:03. An unbounded frame drops it (at or behind the watermark); a bounded one drops
    only rows at or before the last rowtime it processed for the key (10:00:00), so it
    takes 4, and processes it before 2 (rowtime order)."""
    late = ("SET 'flowc.watermarks' = 'per-record';\n"
            "CREATE TABLE late_orders (user_id STRING, amount INT, ts TIMESTAMP(3), "
            "WATERMARK FOR ts AS ts - INTERVAL '1' SECOND) WITH ('connector' = 'filesystem', "
            "'path' = 'late.csv', 'format' = 'csv');\n")
    (tmp_path / "late.csv").write_text(
        "user_id,amount,ts\nu1,1,2024-05-01 10:00:00\nu1,2,2024-05-01 10:00:05\n"
        "u1,4,2024-05-01 10:00:01\nu1,8,2024-05-01 10:00:06\n", encoding="utf-8")
    for frame, want in (("ROWS 5 PRECEDING", [["1", "1"], ["2", "7"], ["4", "5"], ["8", "15"]]),
                        ("RANGE UNBOUNDED PRECEDING", [["1", "1"], ["2", "3"], ["8", "11"]])):
        _, rows = run_query(tmp_path, f"SELECT amount, SUM(amount) OVER (PARTITION BY user_id "
                            f"ORDER BY ts {frame}) AS s FROM late_orders", tables=late)
        assert rows == want, frame


FLOW = """source orders (user_id string, amount int, ts timestamp) from csv 'orders.csv'
  watermark ts - 1s;
orders | key by user_id | over rows 2 preceding aggregate sum(amount) as s, count(*) as n,
  min(amount) as lo, max(amount) as hi | print;
orders | key by user_id | over range 2s preceding aggregate sum(amount) as s,
  count(amount) as n | print;
orders | key by user_id | over rows unbounded preceding aggregate sum(amount) as s,
  count(*) as n | print;
orders | key by user_id | over range unbounded preceding aggregate sum(amount) as s | print;
"""


def test_flow_over_is_the_same_operator(tmp_path: Path) -> None:
    """The .flow steps give Flink's rows for the equivalent SQL (columns picked by position)."""
    (tmp_path / "orders.csv").write_text(orders_csv(header=True), encoding="utf-8")
    script = compile_source(FLOW.replace("'orders.csv'", f"'{tmp_path / 'orders.csv'}'"),
                            str(tmp_path / "t.flow"))
    printed = run_reference(script.env.get_job_graph()).printed
    rows = [printed_row(line) for line in printed]  # noqa: S307 - our output
    assert len(rows) == 4 * 13
    kinds = ["string", "int", "timestamp", "int", "int", "int", "int"]
    first = sorted_rows([r[:6] for r in rows[:13]], kinds)
    flink = [r[:6] for r in CASES[0]["rows"]]
    assert first == flink
    pick = [[r[0], r[1], r[3], r[4]] for r in sorted_rows(rows[13:26], kinds)]
    assert pick == CASES[1]["rows"]
    pick = [[r[0], r[1], r[3], r[4]] for r in sorted_rows(rows[26:39], kinds)]
    assert pick == CASES[2]["rows"]
    pick = [[r[0], r[1], r[3]] for r in sorted_rows(rows[39:], kinds)]
    assert pick == CASES[3]["rows"]


W = "PARTITION BY user_id ORDER BY ts"


@pytest.mark.parametrize(("query", "message", "column"), [
    ("SELECT SUM(amount) OVER (PARTITION BY user_id ORDER BY amount ROWS 2 PRECEDING) "
     "FROM orders", "Non-time attribute sort is not supported for bounded OVER window.", 56),
    (f"SELECT SUM(amount) OVER ({W} ROWS 2 PRECEDING), COUNT(*) OVER ({W} ROWS 1 "
     "PRECEDING) FROM orders", "All aggregates must be computed on the same window", 78),
    ("SELECT SUM(amount) OVER (PARTITION BY user_id ORDER BY ts DESC ROWS 2 PRECEDING) "
     "FROM orders", "The window can only be ordered in ASCENDING mode.", 56),
    (f"SELECT SUM(amount) OVER ({W} ROWS BETWEEN 2 PRECEDING AND 1 FOLLOWING) FROM orders",
     "OVER RANGE FOLLOWING windows are not supported yet.", 0),
    (f"SELECT SUM(amount) OVER ({W} RANGE BETWEEN 2 PRECEDING AND CURRENT ROW) FROM orders",
     "Data Type mismatch between ORDER BY and RANGE clause", 0),
    ("SELECT ROW_NUMBER() OVER (PARTITION BY user_id ORDER BY ts) FROM orders",
     "ROW_NUMBER() OVER (...) is not supported: only aggregate functions", 8),
    ("SELECT SUM(amount) OVER w FROM orders WINDOW v AS (PARTITION BY user_id ORDER BY ts)",
     "Window 'w' not found", 0),
])
def test_flink_rejects(tmp_path: Path, query: str, message: str, column: int) -> None:
    with pytest.raises(FlowcError) as info:
        run_query(tmp_path, query)
    text = info.value.format()
    assert message in text
    assert "q.sql:6:" in text and (not column or f"q.sql:6:{column}:" in text), text


@pytest.mark.parametrize("form", ["view", "cte"])
def test_over_a_view_or_cte_matches_flink(tmp_path: Path, form: str) -> None:
    """A view's time attribute is its table's: the same rows as Flink's inline WHERE
    (CASES[4])."""
    query = CASES[4]["query"].replace(" WHERE amount > 3", "")
    body = "SELECT * FROM orders WHERE amount > 3"
    if form == "view":
        tables = ORDERS + f"CREATE VIEW big AS {body};\n"
        sql = query.replace("FROM orders", "FROM big")
    else:
        tables = ORDERS
        sql = f"WITH big AS ({body}) " + query.replace("FROM orders", "FROM big")
    _, rows = run_query(tmp_path, sql, tables=tables)
    assert rows == CASES[4]["rows"]


def test_over_ordered_by_a_view_column_that_is_not_a_timestamp(tmp_path: Path) -> None:
    tables = ORDERS + "CREATE VIEW v AS SELECT user_id, amount, ts FROM orders;\n"
    with pytest.raises(FlowcError, match="'amount' is not a timestamp"):
        run_query(tmp_path, "SELECT SUM(amount) OVER (PARTITION BY user_id ORDER BY amount "
                  "ROWS 1 PRECEDING) FROM v", tables=tables)


@pytest.mark.parametrize(("step", "message"), [
    ("orders | over rows 2 preceding aggregate count(*) as n | print;",
     "'over' needs 'key by' before it"),
    ("orders | key by user_id | ovr rows 2 preceding aggregate count(*) as n | print;",
     "did you mean 'over'?"),
    ("orders | key by user_id | over rows 2 preceding aggregate amount as n | print;",
     "each 'aggregate' item must be an aggregate function"),
    ("orders | key by user_id | over range 2s preceding aggregate count(*) as amount | print;",
     "column 'amount' appears twice"),
    ("orders | key by user_id | window top 2 by amount desc | print;",
     "this stream has no window_end column"),
    ("orders | map user_id, amount, ts as window_end | key by user_id | window last by amount "
     "| print;", "'amount' is not a timestamp"),
    ("orders | window join orders as o on user_id | print;",
     "the left side has no window_end column"),
    ("orders | write csv 'x' partitioned by ts | print;", "a sink ends a pipeline"),
    ("orders | write csv 'x' partitioned by ts;", "cannot partition by 'ts'"),
    ("orders | write csv 'x' partitioned by dt;", "unknown field 'dt' in 'partitioned by'"),
    ("orders | write csv 'x' options (success_file = '_S');",
     "'success_file' applies to partitioned output"),
])
def test_flow_errors(tmp_path: Path, step: str, message: str) -> None:
    text = ("source orders (user_id string, amount int, ts timestamp) from csv 'orders.csv' "
            "watermark ts - 1s;\n" + step + "\n")
    with pytest.raises(FlowcError) as info:
        compile_source(text, str(tmp_path / "t.flow"))
    out = info.value.format()
    assert message in out and "t.flow:2:" in out, out
