"""Records tests/sql/changelog/updatefast.json from a real Flink 2.3 (not run by the tests):
Top-N over updating inputs other than a plain GROUP BY (a keep-last deduplication, a join of
aggregates, a filtered or SUM aggregate, a Top-N), each with its Rank node from Flink's
EXPLAIN (the strategy Flink picks), its changelog and print lines:

    /work/flink-sql-venv/bin/python tests/sql/changelog/record_updatefast.py
"""

import sys
from pathlib import Path

here = Path(__file__).resolve().parent
sys.path.insert(0, str(here))
from record_changelog import record_one  # noqa: E402
from record_topn_updating import explain_rank  # noqa: E402
from recording import emit, record_all, write  # noqa: E402

C = "(SELECT user_id, COUNT(*) AS n FROM orders GROUP BY user_id)"
M = "(SELECT user_id, COUNT(*) AS m FROM orders GROUP BY user_id)"
DL = ("(SELECT order_id, user_id, product, amount, ts FROM (SELECT *, ROW_NUMBER() OVER "
      "(PARTITION BY user_id ORDER BY ts DESC) AS r FROM orders) WHERE r = 1)")
DL2 = ("(SELECT order_id, user_id, product, amount, ts FROM (SELECT *, ROW_NUMBER() OVER "
       "(PARTITION BY product, user_id ORDER BY ts DESC) AS r FROM orders) WHERE r = 1)")


def sums(where: str, order: str = "s DESC") -> str:
    return (f"SELECT * FROM (SELECT user_id, s, ROW_NUMBER() OVER (ORDER BY {order}) AS rn "
            f"FROM (SELECT user_id, SUM(amount) AS s FROM orders {where} GROUP BY user_id)) "
            "WHERE rn <= 2")


QUERIES = [
    # a keep-last deduplication: keyed by its partition key, the rest changes
    f"SELECT * FROM (SELECT *, ROW_NUMBER() OVER (ORDER BY user_id) AS rn FROM {DL}) WHERE rn <= 2",
    f"SELECT * FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY product ORDER BY user_id) AS rn FROM {DL2}) WHERE rn <= 2",
    f"SELECT * FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY product ORDER BY user_id DESC, product) AS rn FROM {DL2}) WHERE rn <= 1",
    f"SELECT * FROM (SELECT *, ROW_NUMBER() OVER (ORDER BY amount DESC) AS rn FROM {DL}) WHERE rn <= 2",
    f"SELECT * FROM (SELECT *, ROW_NUMBER() OVER (ORDER BY user_id) AS rn FROM {DL} WHERE user_id <> 'u1') WHERE rn <= 2",
    f"SELECT * FROM (SELECT *, ROW_NUMBER() OVER (ORDER BY user_id) AS rn FROM {DL} WHERE amount > 3) WHERE rn <= 2",
    "SELECT * FROM (SELECT *, ROW_NUMBER() OVER (ORDER BY user_id DESC) AS rn FROM (SELECT order_id, user_id, product, amount, ts, r FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY user_id ORDER BY ts DESC) AS r FROM orders) WHERE r = 1)) WHERE rn <= 2",
    # a Top-N over a Top-N
    f"SELECT * FROM (SELECT order_id, user_id, ROW_NUMBER() OVER (ORDER BY user_id DESC) AS rn2 FROM (SELECT order_id, user_id FROM (SELECT *, ROW_NUMBER() OVER (ORDER BY user_id DESC) AS rn FROM {DL}) WHERE rn <= 3)) WHERE rn2 <= 2",
    f"SELECT * FROM (SELECT user_id, n, ROW_NUMBER() OVER (ORDER BY n DESC) AS rn2 FROM (SELECT user_id, n FROM (SELECT user_id, n, ROW_NUMBER() OVER (ORDER BY n DESC) AS rn FROM {C}) WHERE rn <= 3)) WHERE rn2 <= 2",
    # joins of aggregates: a side's key stays unique when the other is unique on the join key
    f"SELECT * FROM (SELECT a.user_id, a.n, b.m, ROW_NUMBER() OVER (ORDER BY a.n DESC) AS rn FROM {C} a JOIN {M} b ON a.user_id = b.user_id) WHERE rn <= 2",
    f"SELECT * FROM (SELECT a.product, a.user_id, a.n, b.m, ROW_NUMBER() OVER (PARTITION BY a.product ORDER BY a.n DESC) AS rn FROM (SELECT product, user_id, COUNT(*) AS n FROM orders GROUP BY product, user_id) a JOIN {M} b ON a.user_id = b.user_id) WHERE rn <= 1",
    f"SELECT * FROM (SELECT a.user_id, a.n, u.name, ROW_NUMBER() OVER (ORDER BY a.n DESC) AS rn FROM {C} a JOIN users u ON a.user_id = u.user_id) WHERE rn <= 2",
    f"SELECT * FROM (SELECT a.user_id, a.n, b.m, ROW_NUMBER() OVER (ORDER BY a.n DESC) AS rn FROM {C} a LEFT JOIN {M} b ON a.user_id = b.user_id) WHERE rn <= 2",
    # filters after the aggregate: on a non-key column the Rank retracts (FLINK-9528)
    "SELECT * FROM (SELECT user_id, n, ROW_NUMBER() OVER (ORDER BY n DESC) AS rn FROM (SELECT user_id, COUNT(*) AS n FROM orders GROUP BY user_id HAVING COUNT(*) > 1)) WHERE rn <= 2",
    f"SELECT * FROM (SELECT user_id, n, ROW_NUMBER() OVER (ORDER BY n DESC) AS rn FROM {C} WHERE n < 4) WHERE rn <= 2",
    f"SELECT * FROM (SELECT user_id, n, ROW_NUMBER() OVER (ORDER BY n DESC) AS rn FROM {C} WHERE user_id <> 'u1') WHERE rn <= 2",
    # SUM grows over non-negative values (the WHERE bounds them), a COUNT of a COUNT grows
    sums("WHERE amount > 0"),
    sums("WHERE amount BETWEEN 0 AND 10"),
    sums("WHERE amount > -5"),
    sums("WHERE amount > 0 OR product <> 'p1'"),
    sums("WHERE amount <= 0", "s ASC"),
    "SELECT * FROM (SELECT user_id, s, ROW_NUMBER() OVER (ORDER BY s DESC) AS rn FROM (SELECT user_id, SUM(amount) FILTER (WHERE amount > 0) AS s FROM orders GROUP BY user_id)) WHERE rn <= 2",
    f"SELECT * FROM (SELECT user_id, c, ROW_NUMBER() OVER (ORDER BY c DESC) AS rn FROM (SELECT user_id, COUNT(n) AS c FROM {C} GROUP BY user_id)) WHERE rn <= 2",
    f"SELECT * FROM (SELECT n, c, ROW_NUMBER() OVER (ORDER BY c DESC) AS rn FROM (SELECT n, COUNT(*) AS c FROM {C} GROUP BY n)) WHERE rn <= 2",
    f"SELECT * FROM (SELECT user_id, n, ROW_NUMBER() OVER (ORDER BY n DESC) AS rn FROM (SELECT * FROM {C} UNION ALL SELECT product, COUNT(*) FROM orders GROUP BY product)) WHERE rn <= 2",
]


def main() -> None:
    if len(sys.argv) == 2:
        q = QUERIES[int(sys.argv[1])]
        doc = record_one(q)
        doc["rank_node"] = explain_rank(q)
        emit(doc)
        return
    write(here / "updatefast.json", "tables in data.py", record_all(__file__, QUERIES, 300))


if __name__ == "__main__":
    main()
