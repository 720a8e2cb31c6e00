"""Records tests/sql/changelog/topn_updating.json from a real Flink 2.3 (not run by the
tests): Top-N over an updating input (a GROUP BY result), as record_changelog.py records
changelog.json, plus each query's Rank node from Flink's EXPLAIN (its strategy):

    /work/flink-sql-venv/bin/python tests/sql/changelog/record_topn_updating.py
"""

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

here = Path(__file__).resolve().parent
sys.path.insert(0, str(here))
from record_changelog import env, record_one  # noqa: E402

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
        print("@@JSON " + json.dumps(doc), flush=True)
        return
    cases = []
    for i, q in enumerate(QUERIES):
        p = subprocess.run([sys.executable, __file__, str(i)], capture_output=True, text=True,
                           env={**os.environ, "PYTHONUNBUFFERED": "1"}, timeout=600)
        lines = p.stdout.splitlines()
        doc = next((json.loads(x[7:]) for x in lines if x.startswith("@@JSON ")), None)
        if doc is None:
            doc = {"query": q, "error": "recording failed: " + p.stderr[-800:]}
        elif "error" not in doc:
            doc["print"] = [x for x in lines if x[:3] in ("+I[", "-U[", "+U[", "-D[")]
        cases.append(doc)
        print(json.dumps(doc)[:400], flush=True)
    (here / "topn_updating.json").write_text(json.dumps({
        "flink": "2.3.0 (PyFlink TableEnvironment, STREAMING mode, parallelism 1, "
                 "table.local-time-zone UTC); tables in data.py",
        "cases": cases}, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
