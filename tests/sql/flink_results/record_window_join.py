"""Records tests/sql/flink_results/window_join.json from a real Flink (not run by the tests):

    /work/flink-sql-venv/bin/python tests/sql/flink_results/record_window_join.py

Window joins (Flink's WindowJoin) of window aggregates and of window TVFs: INNER, LEFT,
RIGHT and FULL, with the window columns selected after the join. The table is
over_data.py's ORDERS (STREAMING mode, parallelism 2, watermark ts - 1 s). Rows are sorted;
values as str() of what PyFlink returns."""

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
L = (f"(SELECT window_start, window_end, user_id, COUNT(*) AS n FROM {TUMBLE} "
     "WHERE user_id <> 'u3' GROUP BY window_start, window_end, user_id) L")
R = (f"(SELECT window_start, window_end, user_id, SUM(amount) AS total FROM {TUMBLE} "
     "WHERE amount < 10 GROUP BY window_start, window_end, user_id) R")
ON = ("ON L.user_id = R.user_id AND L.window_start = R.window_start "
      "AND L.window_end = R.window_end")
QUERIES = [
    f"SELECT L.user_id, L.window_start, L.window_end, L.n, R.total FROM {L} JOIN {R} {ON}",
    f"SELECT L.user_id, L.window_start, L.n, R.total FROM {L} LEFT JOIN {R} {ON}",
    f"SELECT R.user_id, R.window_end, L.n, R.total FROM {L} RIGHT JOIN {R} {ON}",
    f"SELECT L.user_id AS lu, R.user_id AS ru, COALESCE(L.window_start, R.window_start) AS ws, "
    f"L.n, R.total FROM {L} FULL OUTER JOIN {R} {ON}",
    f"SELECT * FROM {L} JOIN {R} {ON}",
    (f"SELECT L.user_id, L.window_start, L.n, R.n AS m FROM (SELECT window_start, window_end, "
     f"user_id, COUNT(*) AS n FROM {HOP} GROUP BY window_start, window_end, user_id) L JOIN "
     f"(SELECT window_start, window_end, user_id, COUNT(amount) AS n FROM {HOP} WHERE amount "
     f"> 4 GROUP BY window_start, window_end, user_id) R {ON}"),
    (f"SELECT L.user_id, L.amount, R.amount AS r_amount, L.window_start FROM (SELECT * FROM "
     f"{TUMBLE} WHERE amount > 20) L LEFT JOIN (SELECT * FROM {TUMBLE} WHERE amount < 10) R "
     f"{ON}"),
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
    res = t.execute_sql(q)
    names = list(res.get_table_schema().get_field_names())
    rows = sorted([[None if v is None else str(v) for v in r] for r in res.collect()],
                  key=lambda r: [x or "" for x in r])
    out.append({"query": q, "names": names, "rows": rows})
    print(json.dumps(out[-1]), flush=True)
json.dump({"flink": "2.3.0 (PyFlink TableEnvironment, streaming mode, parallelism 2); the table "
           "is over_data.py's ORDERS; rows sorted, values as str()", "cases": out},
          open(here / "window_join.json", "w"), indent=1)
