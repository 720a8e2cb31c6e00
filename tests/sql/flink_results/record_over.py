"""Records tests/sql/flink_results/over.json from a real Flink (not run by the tests):

    /work/flink-sql-venv/bin/python tests/sql/flink_results/record_over.py

The table is over_data.py's ORDERS (STREAMING mode, parallelism 2, watermark ts - 1 s).
Rows are sorted; timestamps as str() of what PyFlink returns (``2024-05-01 10:00:02``)."""

import json
import sys
import tempfile
from pathlib import Path

from pyflink.table import EnvironmentSettings, TableEnvironment

here = Path(__file__).resolve().parent
sys.path.insert(0, str(here))
from over_data import orders_csv  # noqa: E402

W = "PARTITION BY user_id ORDER BY ts"
QUERIES = [
    f"SELECT user_id, amount, ts, SUM(amount) OVER ({W} ROWS BETWEEN 2 PRECEDING AND CURRENT ROW) AS s, "
    f"COUNT(*) OVER ({W} ROWS BETWEEN 2 PRECEDING AND CURRENT ROW) AS n, "
    f"MIN(amount) OVER ({W} ROWS BETWEEN 2 PRECEDING AND CURRENT ROW) AS lo, "
    f"MAX(amount) OVER ({W} ROWS BETWEEN 2 PRECEDING AND CURRENT ROW) AS hi, "
    f"AVG(amount) OVER ({W} ROWS BETWEEN 2 PRECEDING AND CURRENT ROW) AS av FROM orders",
    f"SELECT user_id, amount, SUM(amount) OVER ({W} RANGE BETWEEN INTERVAL '2' SECOND PRECEDING AND CURRENT ROW) AS s, "
    f"COUNT(amount) OVER ({W} RANGE BETWEEN INTERVAL '2' SECOND PRECEDING AND CURRENT ROW) AS n FROM orders",
    "SELECT user_id, amount, SUM(amount) OVER w AS s, COUNT(*) OVER w AS n FROM orders "
    f"WINDOW w AS ({W} ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW)",
    f"SELECT user_id, amount, SUM(amount) OVER ({W} RANGE UNBOUNDED PRECEDING) AS s FROM orders",
    f"SELECT user_id, ts, amount - AVG(amount) OVER ({W} ROWS 1 PRECEDING) AS d, "
    f"SUM(amount) OVER ({W} ROWS 1 PRECEDING) * 2 AS s2 FROM orders WHERE amount > 3",
    "SELECT user_id, amount, SUM(amount) OVER (PARTITION BY user_id, amount > 20 ORDER BY ts "
    "ROWS BETWEEN 1 PRECEDING AND CURRENT ROW) AS s FROM orders",
    "SELECT user_id, amount, FIRST_VALUE(amount) OVER w AS f, LAST_VALUE(amount) OVER w AS l, "
    "COUNT(DISTINCT amount) OVER w AS d FROM orders "
    f"WINDOW w AS ({W} RANGE BETWEEN INTERVAL '3' SECOND PRECEDING AND CURRENT ROW)",
    # no PARTITION BY: one partition (RANGE, so rows with equal rowtimes need no order)
    "SELECT user_id, amount, SUM(amount) OVER (ORDER BY ts RANGE BETWEEN INTERVAL '3' SECOND "
    "PRECEDING AND CURRENT ROW) AS s, COUNT(*) OVER (ORDER BY ts RANGE BETWEEN INTERVAL '3' "
    "SECOND PRECEDING AND CURRENT ROW) AS n FROM orders",
]

csv = Path(tempfile.mkdtemp()) / "orders.csv"
csv.write_text(orders_csv(header=False), encoding="utf-8")
t = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
t.get_config().set("parallelism.default", "2")
t.execute_sql(f"""CREATE TABLE orders (user_id STRING, amount INT, ts TIMESTAMP(3),
  WATERMARK FOR ts AS ts - INTERVAL '1' SECOND)
  WITH ('connector' = 'filesystem', 'path' = '{csv}', 'format' = 'csv', 'csv.null-literal' = '')""")
out = []
for q in QUERIES:
    rows = sorted([[None if v is None else str(v) for v in r] for r in t.execute_sql(q).collect()],
                  key=lambda r: [x or "" for x in r])
    out.append({"query": q, "rows": rows})
    print(json.dumps(out[-1]), flush=True)
json.dump({"flink": "2.3.0 (PyFlink TableEnvironment, streaming mode, parallelism 2); the table "
           "is over_data.py's ORDERS; rows sorted, values as str()", "cases": out},
          open(here / "over.json", "w"), indent=1)
