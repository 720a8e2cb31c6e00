"""The changelog fixtures (test_sql_changelog.py) on Spark: row kinds survive Spark's
shuffles (a GROUP BY over an updating input reads -U / +U rows through a HASH edge) and the
print sink writes Flink's lines."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_sql_changelog import FLINK, SUPPORTED, per_key, printed

from flowc.executor import run_job_graph
from flowc.rowkind import materialize
from printed import rows as printed_rows

pytestmark = pytest.mark.spark

QUERIES = [
    "SELECT user_id, SUM(amount) AS s, MIN(amount) AS mn, MAX(amount) AS mx FROM orders GROUP BY user_id",
    "SELECT user_id, MIN(amount) AS mn FROM orders GROUP BY user_id HAVING MIN(amount) > 4",
    "SELECT mx, COUNT(*) AS c, SUM(s) AS total FROM (SELECT user_id, MAX(amount) AS mx, SUM(amount) AS s FROM orders GROUP BY user_id) GROUP BY mx",
    "SELECT order_id, user_id, price, vip, ts FROM orders",
]


@pytest.fixture(scope="module", autouse=True)
def spark() -> None:
    from flowc.executor import get_spark

    get_spark("local[2]")  # the test session's master (tests/executor/conftest.py)


@pytest.mark.parametrize("query", QUERIES)
def test_changelog_on_spark(tmp_path: Path, query: str) -> None:
    assert printed(tmp_path, query, 1, run_job_graph) == FLINK[query]["print"]
    lines = printed(tmp_path, query, 2, run_job_graph)
    flink = FLINK[query]["print"]
    width = SUPPORTED[query]
    if width is not None:
        assert per_key(lines, width) == per_key(flink, width)
    final = sorted(map(repr, materialize(printed_rows([x.split("> ", 1)[-1] for x in lines]))))
    assert final == sorted(map(repr, materialize(printed_rows(flink))))
