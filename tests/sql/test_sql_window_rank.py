"""Window Top-N (Flink's WindowRank) and window deduplication (WindowDeduplicate) in SQL and
.flow's ``window top`` / ``window first|last`` steps, against rows recorded from Flink 2.3
(tests/sql/flink_results/window_rank.json), on the reference executor and on Spark."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from over_helpers import cases, orders_csv, run_query, sorted_rows

from flowc.errors import FlowcError
from flowc.executor import run_reference
from flowc.parser import compile_source
from printed import row as printed_row

CASES = cases("window_rank.json")
TUMBLE = "TABLE(TUMBLE(TABLE orders, DESCRIPTOR(ts), INTERVAL '5' SECOND))"


@pytest.mark.parametrize("parallelism", [1, 3])
@pytest.mark.parametrize("case", CASES, ids=[c["query"][-70:] for c in CASES])
def test_window_rank_matches_flink(tmp_path: Path, case: dict[str, Any],
                                   parallelism: int) -> None:
    _, rows = run_query(tmp_path, case["query"], parallelism=parallelism)
    assert rows == case["rows"]


@pytest.mark.spark
@pytest.mark.parametrize("case", [CASES[0], CASES[3], CASES[7]], ids=["tvf", "agg", "dedup"])
def test_window_rank_on_spark_matches_flink(tmp_path: Path, case: dict[str, Any]) -> None:
    _, rows = run_query(tmp_path, case["query"], spark=True)
    assert rows == case["rows"]


def test_output_names(tmp_path: Path) -> None:
    names, _ = run_query(tmp_path, CASES[0]["query"])
    assert names == ["user_id", "amount", "ts", "window_start", "window_end", "window_time",
                     "rn"]


FLOW = """source orders (user_id string, amount int, ts timestamp) from csv 'orders.csv'
  watermark ts - 1s;
let totals = orders | key by user_id | window tumbling 5s
  | aggregate sum(amount) as total, count(*) as n;
totals | key by window_start, window_end | window top 2 by total desc as rn | print;
"""


def test_flow_window_top_is_the_same_operator(tmp_path: Path) -> None:
    """``window top`` over a window aggregate gives Flink's rows for the SQL Top-N over the
    same aggregate (CASES[3]: window_start, window_end, user_id, total, n, rn)."""
    (tmp_path / "orders.csv").write_text(orders_csv(header=True), encoding="utf-8")
    text = FLOW.replace("'orders.csv'", f"'{tmp_path / 'orders.csv'}'")
    script = compile_source(text, str(tmp_path / "t.flow"))
    printed = run_reference(script.env.get_job_graph()).printed
    rows = [printed_row(line) for line in printed]  # noqa: S307 - our output
    kinds = ["string", "timestamp", "timestamp", "int", "int", "int"]
    flowc = sorted_rows(rows, kinds)
    flink = sorted([[r[2], r[0], r[1], r[3], r[4], r[5]] for r in CASES[3]["rows"]],
                   key=lambda r: [x or "" for x in r])
    assert flowc == flink


def test_flow_window_last_keeps_the_later_of_equal_rows(tmp_path: Path) -> None:
    """u1's 20 and 30 share 10:00:02: 'window last by ts' keeps 30, the later one (Flink's
    WindowDeduplicate keeps a row whose rowtime is >= the kept one's)."""
    (tmp_path / "orders.csv").write_text(orders_csv(header=True), encoding="utf-8")
    text = (f"source orders (user_id string, amount int, ts timestamp) from csv "
            f"'{tmp_path / 'orders.csv'}' watermark ts - 1s;\n"
            "let w = orders | key by user_id | window tumbling 5s | aggregate count(*) as n;\n"
            "orders | filter user_id = 'u1' and ts < timestamp '2024-05-01 10:00:05'"
            " | map user_id, amount, ts, timestamp '2024-05-01 10:00:05' as window_end"
            " | key by user_id | window last by ts as rn | print;\n"
            "orders | filter user_id = 'u1' and ts < timestamp '2024-05-01 10:00:05'"
            " | map user_id, amount, ts, timestamp '2024-05-01 10:00:05' as window_end"
            " | key by user_id | window top 1 by ts desc | print;\n")
    script = compile_source(text, str(tmp_path / "t.flow"))
    printed = run_reference(script.env.get_job_graph()).printed
    rows = [printed_row(line) for line in printed]  # noqa: S307 - our output
    assert [r[1] for r in rows] == [30, 20]  # dedup: the later; ROW_NUMBER: arrival order


@pytest.mark.parametrize(("query", "message"), [
    (f"SELECT * FROM (SELECT *, RANK() OVER (PARTITION BY window_start, window_end ORDER BY "
     f"amount DESC) AS r FROM {TUMBLE}) WHERE r <= 2",
     "RANK() function is not supported on Window TopN currently, only ROW_NUMBER() is "
     "supported."),
    (f"SELECT * FROM (SELECT *, DENSE_RANK() OVER (PARTITION BY window_start, window_end "
     f"ORDER BY amount DESC) AS r FROM {TUMBLE}) WHERE r <= 2",
     "DENSE_RANK() function is not supported on Window TopN currently"),
    (f"SELECT * FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY window_start, window_end "
     f"ORDER BY amount DESC) AS r FROM {TUMBLE}) WHERE r >= 2",
     "a window Top-N needs an upper bound on its row number"),
    (f"SELECT * FROM (SELECT ROW_NUMBER() OVER (PARTITION BY window_start, window_end "
     f"ORDER BY amount DESC) AS r, * FROM {TUMBLE}) WHERE r <= 2",
     "ROW_NUMBER() must be the last column"),
    (f"SELECT * FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY window_start, window_end "
     f"ORDER BY amount DESC) AS r FROM {TUMBLE}) WHERE r <= 2 OR amount > 3",
     "this condition on 'r' is not a rank range"),
])
def test_rejected(tmp_path: Path, query: str, message: str) -> None:
    with pytest.raises(FlowcError) as info:
        run_query(tmp_path, query)
    text = info.value.format()
    assert message in text and "q.sql:6:" in text, text
