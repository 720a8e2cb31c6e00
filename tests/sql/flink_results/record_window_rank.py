"""Records tests/sql/flink_results/window_rank.json from a real Flink (not run by the tests):

    /work/flink-sql-venv/bin/python tests/sql/flink_results/record_window_rank.py

Window Top-N (WindowRank) and window deduplication (WindowDeduplicate) over window TVFs and
window aggregates. The table is over_data.py's ORDERS (STREAMING mode, parallelism 2,
watermark ts - 1 s). Rows are sorted; values as str() of what PyFlink returns."""

import json
import sys
import tempfile
from pathlib import Path

from pyflink.table import EnvironmentSettings, TableEnvironment

here = Path(__file__).resolve().parent
sys.path.insert(0, str(here))
from over_data import orders_csv  # noqa: E402

TUMBLE = "TABLE(TUMBLE(TABLE orders, DESCRIPTOR(ts), INTERVAL '5' SECOND))"
HOP = "TABLE(HOP(TABLE orders, DESCRIPTOR(ts), INTERVAL '5' SECOND, INTERVAL '10' SECOND))"
AGG = (f"SELECT window_start, window_end, user_id, SUM(amount) AS total, COUNT(*) AS n "
       f"FROM {TUMBLE} GROUP BY window_start, window_end, user_id")
QUERIES = [
    "SELECT * FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY window_start, window_end "
    f"ORDER BY amount DESC) AS rn FROM {TUMBLE}) WHERE rn <= 2",
    "SELECT user_id, amount, window_start, rn FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY "
    f"window_start, window_end, user_id ORDER BY amount ASC) AS rn FROM {TUMBLE}) WHERE rn < 2",
    "SELECT window_start, window_end, user_id, amount FROM (SELECT *, ROW_NUMBER() OVER "
    f"(PARTITION BY window_start, window_end ORDER BY amount DESC) AS rn FROM {HOP}) "
    "WHERE rn BETWEEN 2 AND 3",
    "SELECT * FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY window_start, window_end "
    f"ORDER BY total DESC) AS rn FROM ({AGG})) WHERE rn <= 2",
    "SELECT window_start, user_id, total, n FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY "
    f"window_start, window_end ORDER BY n DESC, total ASC) AS rn FROM ({AGG})) WHERE rn = 1",
    # window deduplication: first / last row per window (and key) by the time attribute
    "SELECT user_id, amount, ts, window_start, window_end FROM (SELECT *, ROW_NUMBER() OVER "
    f"(PARTITION BY window_start, window_end ORDER BY ts DESC) AS rn FROM {TUMBLE}) WHERE rn = 1",
    "SELECT * FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY window_start, window_end, user_id "
    f"ORDER BY ts ASC) AS rn FROM {TUMBLE}) WHERE rn <= 1",
    "SELECT user_id, amount, window_start FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY "
    f"window_start, window_end, user_id ORDER BY ts DESC) AS rn FROM {TUMBLE}) WHERE rn = 1",
    "SELECT * FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY window_start, window_end "
    f"ORDER BY amount DESC) AS rn FROM {TUMBLE}) WHERE rn <= 3 AND amount > 5",
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
          open(here / "window_rank.json", "w"), indent=1)
