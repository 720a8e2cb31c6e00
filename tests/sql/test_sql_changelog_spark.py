"""The changelog fixtures (test_sql_changelog.py) on Spark: row kinds survive Spark's
shuffles (a GROUP BY over an updating input, a join of one, read -U / +U rows through HASH
edges; a Top-N's keyed state) and the print sink writes Flink's lines."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_sql_changelog import FLINK, JOINS, SUPPORTED, final_table, per_key, printed

from flowc.executor import run_job_graph

pytestmark = pytest.mark.spark

QUERIES = [
    "SELECT user_id, SUM(amount) AS s, MIN(amount) AS mn, MAX(amount) AS mx FROM orders GROUP BY user_id",
    "SELECT user_id, MIN(amount) AS mn FROM orders GROUP BY user_id HAVING MIN(amount) > 4",
    "SELECT mx, COUNT(*) AS c, SUM(s) AS total FROM (SELECT user_id, MAX(amount) AS mx, SUM(amount) AS s FROM orders GROUP BY user_id) GROUP BY mx",
    "SELECT order_id, user_id, price, vip, ts FROM orders",
    "SELECT * FROM (SELECT order_id, user_id, amount, ROW_NUMBER() OVER (PARTITION BY user_id ORDER BY amount DESC) AS rn FROM orders) WHERE rn <= 2",
    "SELECT c.user_id, c.n, u.country FROM (SELECT user_id, COUNT(*) AS n FROM orders GROUP BY user_id) c LEFT JOIN users u ON u.user_id = c.user_id",
]


@pytest.fixture(scope="module", autouse=True)
def spark() -> None:
    from flowc.executor import get_spark

    get_spark("local[2]")  # the test session's master (tests/executor/conftest.py)


@pytest.mark.parametrize("query", QUERIES)
def test_changelog_on_spark(tmp_path: Path, query: str) -> None:
    flink = FLINK[query]["print"]
    one = printed(tmp_path, query, 1, run_job_graph)
    if query in JOINS:  # the changelog depends on how the two sources interleave
        assert final_table(one) == final_table(flink)
    else:
        assert one == flink
    lines = printed(tmp_path, query, 2, run_job_graph)
    width = SUPPORTED[query]
    if width is not None:
        assert per_key(lines, width) == per_key(flink, width)
    assert final_table(lines) == final_table(flink)
