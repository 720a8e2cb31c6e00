"""Records tests/sql/changelog/topn_updating.json from a real Flink 2.3 (not run by the
tests): Top-N over an updating input (a GROUP BY result), as record_changelog.py records
changelog.json, plus each query's Rank node from Flink's EXPLAIN (its strategy):

    /work/flink-sql-venv/bin/python tests/sql/changelog/record_topn_updating.py
"""

import sys
import tempfile
from pathlib import Path

here = Path(__file__).resolve().parent
sys.path.insert(0, str(here))
from record_changelog import env, record_one  # noqa: E402
from recording import emit, record_all, write  # noqa: E402

COUNTS = "(SELECT user_id, COUNT(*) AS n FROM orders GROUP BY user_id)"
SUMS = "(SELECT product, user_id, SUM(amount) AS s FROM orders GROUP BY product, user_id)"
QUERIES = [
    f"SELECT * FROM (SELECT user_id, n, ROW_NUMBER() OVER (ORDER BY n DESC) AS rn FROM {COUNTS}) WHERE rn <= 2",
    f"SELECT user_id, n FROM (SELECT user_id, n, ROW_NUMBER() OVER (ORDER BY n DESC) AS rn FROM {COUNTS}) WHERE rn <= 2",
    f"SELECT * FROM (SELECT user_id, n, ROW_NUMBER() OVER (ORDER BY n ASC) AS rn FROM {COUNTS}) WHERE rn <= 2",
    f"SELECT * FROM (SELECT product, user_id, s, ROW_NUMBER() OVER (PARTITION BY product ORDER BY s DESC) AS rn FROM {SUMS}) WHERE rn <= 2",
    f"SELECT product, user_id, s FROM (SELECT product, user_id, s, ROW_NUMBER() OVER (PARTITION BY product ORDER BY s DESC) AS rn FROM {SUMS}) WHERE rn = 1",
    f"SELECT * FROM (SELECT product, user_id, s, ROW_NUMBER() OVER (PARTITION BY product ORDER BY s ASC) AS rn FROM {SUMS}) WHERE rn <= 2",
    f"SELECT * FROM (SELECT user_id, n, ROW_NUMBER() OVER (ORDER BY n DESC) AS rn FROM {COUNTS}) WHERE rn > 1 AND rn <= 3",
    f"SELECT * FROM (SELECT user_id, n, RANK() OVER (ORDER BY n DESC) AS r FROM {COUNTS}) WHERE r <= 2",
    f"SELECT * FROM (SELECT user_id, n, DENSE_RANK() OVER (ORDER BY n DESC) AS r FROM {COUNTS}) WHERE r <= 2",
    "SELECT * FROM (SELECT order_id, user_id, amount, ROW_NUMBER() OVER (PARTITION BY user_id ORDER BY amount DESC) AS rn FROM orders) WHERE rn > 1 AND rn <= 2",
]


def explain_rank(query: str) -> str | None:
    t = env(Path(tempfile.mkdtemp()))
    try:
        plan = t.explain_sql(query)
    except Exception:  # noqa: BLE001 - the query's error is recorded by record_one
        return None
    tail = plan.split("== Optimized Physical Plan ==")[-1]
    return next((line.strip() for line in tail.splitlines() if "Rank(" in line), None)


def main() -> None:
    if len(sys.argv) == 2:
        q = QUERIES[int(sys.argv[1])]
        doc = record_one(q)
        doc["rank_node"] = explain_rank(q)
        emit(doc)
        return
    write(here / "topn_updating.json", "tables in data.py", record_all(__file__, QUERIES))


if __name__ == "__main__":
    main()
