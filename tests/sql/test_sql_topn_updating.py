"""Top-N over an updating input (a GROUP BY result) against Flink 2.3, recorded once
(changelog/record_topn_updating.py, not run here; Flink's Rank node from its EXPLAIN beside
each case). flowc picks Flink's strategy (``RetractStrategy`` / ``UpdateFastStrategy``) and
prints Flink's changelog line for line; at parallelism 2 the partitioned queries give
Flink's final table. A .flow `top` over a rolling `aggregate` prints what the same SQL prints."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_sql_changelog import final_table, printed, sql_text

CASES = json.loads((Path(__file__).parent / "changelog" / "topn_updating.json").read_text())[
    "cases"]
RUNS = [c for c in CASES if "error" not in c]
def test_the_fixtures_cover_both_strategies() -> None:
    nodes = [c["rank_node"] or "" for c in RUNS]
    assert sum("RetractStrategy" in n for n in nodes) >= 4
    assert any("UpdateFastStrategy" in n for n in nodes)


@pytest.mark.parametrize("query", [c["query"] for c in RUNS])
def test_rank_changelog_is_flinks(tmp_path: Path, query: str) -> None:
    # both strategies, and an insert-only Top-N with a lower rank bound (rn > 1: flowc
    # filters the rank column after its Top-N, with Flink's lines)
    flink = next(c for c in RUNS if c["query"] == query)
    assert printed(tmp_path, query, 1) == flink["print"]


@pytest.mark.parametrize("query", [c["query"] for c in RUNS if c["rank_node"] and
                                   "AppendFast" not in c["rank_node"]])
def test_the_rank_strategy_is_flinks(tmp_path: Path, query: str) -> None:
    """Flink's strategy, as the error of a file sink that cannot take the updates names
    the Rank node."""
    from flowc.errors import FlowcError
    from flowc.sql import compile_sql

    flink = next(c for c in RUNS if c["query"] == query)
    strategy = flink["rank_node"].split("strategy=[", 1)[1].split("], rankType")[0]
    text = sql_text(tmp_path, query, 1).replace(
        query, f"CREATE TABLE out (a STRING) WITH ('connector' = 'filesystem', 'path' = "
               f"'{tmp_path / 'out'}', 'format' = 'csv');\nINSERT INTO out SELECT * FROM "
               f"({query})")
    with pytest.raises(FlowcError) as info:
        compile_sql(text, "q.sql")
    assert f"Rank(strategy=[{strategy}]" in info.value.message


@pytest.mark.parametrize("query", [c["query"] for c in RUNS])
def test_final_table_is_flinks(tmp_path: Path, query: str) -> None:
    flink = next(c for c in RUNS if c["query"] == query)
    assert final_table(printed(tmp_path, query, 1)) == final_table(flink["print"])


# At parallelism 2 a global Top-N (parallelism 1) gets the updates of two GroupAggregate
# subtasks in an order that differs from one run (and engine) to the next, and rows tied in
# the order rank by arrival: only the partitioned queries, whose ties do not meet, compare.
@pytest.mark.parametrize("query", [c["query"] for c in RUNS if "PARTITION BY" in c["query"]])
def test_final_table_at_parallelism_2(tmp_path: Path, query: str) -> None:
    flink = next(c for c in RUNS if c["query"] == query)
    assert final_table(printed(tmp_path, query, 2)) == final_table(flink["print"])


@pytest.mark.parametrize("query", [c["query"] for c in CASES if "error" in c])
def test_rank_and_dense_rank_over_updates_fail_as_in_flink(tmp_path: Path, query: str) -> None:
    from flowc.errors import FlowcError

    flink = next(c for c in CASES if c["query"] == query)
    with pytest.raises(FlowcError) as info:
        printed(tmp_path, query, 1)
    assert info.value.message in flink["error"]



# .flow's ``key by`` takes no null key (the DataStream rule): both front ends drop the
# order without a user, and must then print the same changelog.
FLOW = """source orders (order_id int, user_id string, product string, amount int,
                price double, vip bool, ts timestamp)
  from csv '{path}' options (header = false, null_value = '');
orders | filter user_id is not null | key by {keys} | aggregate {agg}
  | {key_top}top {n} by {order} as rn | print;
"""
COUNTS = "(SELECT user_id, COUNT(*) AS n FROM orders WHERE user_id IS NOT NULL GROUP BY user_id)"
SUMS = ("(SELECT product, user_id, SUM(amount) AS s FROM orders WHERE user_id IS NOT NULL "
        "GROUP BY product, user_id)")


@pytest.mark.parametrize(("keys", "agg", "key_top", "n", "order", "query"), [
    ("user_id", "count(*) as n", "", 2, "n asc",
     f"SELECT * FROM (SELECT user_id, n, ROW_NUMBER() OVER (ORDER BY n ASC) AS rn FROM "
     f"{COUNTS}) WHERE rn <= 2"),
    ("product, user_id", "sum(amount) as s", "key by product | ", 2, "s desc",
     f"SELECT * FROM (SELECT product, user_id, s, ROW_NUMBER() OVER (PARTITION BY product "
     f"ORDER BY s DESC) AS rn FROM {SUMS}) WHERE rn <= 2"),
])
def test_flow_top_over_a_rolling_aggregate_is_sqls(
        tmp_path: Path, keys: str, agg: str, key_top: str, n: int, order: str,
        query: str) -> None:
    from flowc.executor import run_reference
    from flowc.parser import compile_source

    sql = printed(tmp_path, query, 1)
    assert any(line.startswith("-D") for line in sql) or any(
        line.startswith("-U") for line in sql)
    flow = compile_source(FLOW.format(path=tmp_path / "orders.csv", keys=keys, agg=agg,
                                      key_top=key_top, n=n, order=order), "t.flow")
    assert list(run_reference(flow.env.get_job_graph()).printed) == sql


@pytest.mark.spark
@pytest.mark.parametrize("query", [c["query"] for c in RUNS if "PARTITION BY" not in c["query"]
                                   and "rn <= 2" in c["query"]][:2])
def test_rank_changelog_on_spark(tmp_path: Path, query: str) -> None:
    from flowc.executor import get_spark, run_job_graph

    get_spark("local[2]")  # the test session's master (tests/executor/conftest.py)
    flink = next(c for c in RUNS if c["query"] == query)
    assert printed(tmp_path, query, 1, run_job_graph) == flink["print"]
