"""Window joins (Flink's WindowJoin) of window aggregates and window TVFs: INNER, LEFT,
RIGHT and FULL, window columns after the join, in SQL and as .flow's ``window join``
step, against rows recorded from Flink 2.3 (tests/sql/flink_results/window_join.json), on
the reference executor and on Spark."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from over_helpers import cases, orders_csv, run_query, sorted_rows

from flowc.errors import FlowcError
from flowc.executor import run_reference
from flowc.parser import compile_source
from printed import row as printed_row

CASES = cases("window_join.json")


@pytest.mark.parametrize("parallelism", [1, 3])
@pytest.mark.parametrize("case", CASES, ids=[c["query"][:40] + str(i)
                                              for i, c in enumerate(CASES)])
def test_window_join_matches_flink(tmp_path: Path, case: dict[str, Any],
                                   parallelism: int) -> None:
    names, rows = run_query(tmp_path, case["query"], parallelism=parallelism)
    assert names == case["names"]
    assert rows == case["rows"]


@pytest.mark.spark
@pytest.mark.parametrize("case", [CASES[3], CASES[6]], ids=["full", "tvf-left"])
def test_window_join_on_spark_matches_flink(tmp_path: Path, case: dict[str, Any]) -> None:
    _, rows = run_query(tmp_path, case["query"], spark=True)
    assert rows == case["rows"]


FLOW = """source orders (user_id string, amount int, ts timestamp) from csv 'orders.csv'
  watermark ts - 1s;
let l = orders | filter user_id <> 'u3' | key by user_id | window tumbling 5s
  | aggregate count(*) as n;
let r = orders | filter amount < 10 | key by user_id | window tumbling 5s
  | aggregate sum(amount) as total;
l | window full join r on l.user_id = r.user_id
  | map user_id as lu, r_user_id as ru, coalesce(window_start, r_window_start) as ws, n, total
  | print;
"""


def test_flow_window_join_is_the_same_operator(tmp_path: Path) -> None:
    (tmp_path / "orders.csv").write_text(orders_csv(header=True), encoding="utf-8")
    text = FLOW.replace("'orders.csv'", f"'{tmp_path / 'orders.csv'}'")
    script = compile_source(text, str(tmp_path / "t.flow"))
    jg = script.env.get_job_graph()
    assert any(v.name.startswith("WindowJoin(joinType=[FullJoin]") for v in jg.vertices_sorted())
    rows = [printed_row(line)
            for line in run_reference(jg).printed]
    assert sorted_rows(rows, ["string", "string", "timestamp", "int", "int"]) == \
        CASES[3]["rows"]


def test_the_window_columns_must_be_joined(tmp_path: Path) -> None:
    agg = ("(SELECT window_start, window_end, user_id, COUNT(*) AS n FROM TABLE(TUMBLE(TABLE "
           "orders, DESCRIPTOR(ts), INTERVAL '5' SECOND)) GROUP BY window_start, window_end, "
           "user_id)")
    with pytest.raises(FlowcError) as info:
        run_query(tmp_path, f"SELECT * FROM {agg} L JOIN {agg} R ON L.user_id = R.user_id "
                  "AND L.window_start = R.window_start AND L.window_end = R.window_end AND "
                  "L.n > R.n")
    assert "this window join condition is not supported" in info.value.format()


def test_flow_window_join_pairs_equal_windows_only(tmp_path: Path) -> None:
    """A 5 s window [10:00:05, 10:00:10) and a 10 s one [10:00:00, 10:00:10) end together but
    are different windows: nothing joins, and a full join pads every row."""
    (tmp_path / "orders.csv").write_text(orders_csv(header=True), encoding="utf-8")
    text = (f"source orders (user_id string, amount int, ts timestamp) from csv "
            f"'{tmp_path / 'orders.csv'}' watermark ts - 1s;\n"
            "let a = orders | key by user_id | window tumbling 5s | aggregate count(*) as n;\n"
            "let b = orders | key by user_id | window tumbling 10s | aggregate count(*) as m;\n"
            "a | window join b on user_id | print;\n"
            "a | window full join b on user_id | print;\n")
    script = compile_source(text, str(tmp_path / "t.flow"))
    rows = [printed_row(line)
            for line in run_reference(script.env.get_job_graph()).printed]
    a_rows, b_rows = 8, 6  # (user, window) groups of each side
    assert len(rows) == a_rows + b_rows
    assert all(r[3] is None or r[4] is None for r in rows)
