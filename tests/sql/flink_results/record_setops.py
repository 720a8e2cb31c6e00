"""Records tests/sql/flink_results/setops.json from a real Flink (not run by the tests):

    /work/flink-sql-venv/bin/python tests/sql/flink_results/record_setops.py

The table is tests/sql/test_sql_results.py's CLICKS_CSV (an empty field is NULL, as flowc
reads it; ts as STRING since the queries do not use it)."""

import json
import sys
import tempfile
from pathlib import Path

from pyflink.table import EnvironmentSettings, TableEnvironment

here = Path(__file__).resolve().parent
sys.path.insert(0, str(here.parent))
from test_sql_results import CLICKS_CSV  # noqa: E402

csv = Path(tempfile.mkdtemp()) / "clicks.csv"
csv.write_text("".join(line + "\n" for line in CLICKS_CSV.splitlines()[1:]), encoding="utf-8")
t = TableEnvironment.create(EnvironmentSettings.in_batch_mode())
t.get_config().set("parallelism.default", "2")
t.execute_sql(f"""CREATE TABLE clicks (user_id STRING, article_id STRING, action STRING, ts STRING)
  WITH ('connector' = 'filesystem', 'path' = '{csv}', 'format' = 'csv', 'csv.null-literal' = '')""")
qs = ["SELECT DISTINCT user_id FROM clicks",
      "SELECT DISTINCT user_id, action FROM clicks",
      "SELECT user_id FROM clicks WHERE action = 'appclick' UNION SELECT user_id FROM clicks",
      "SELECT user_id FROM clicks WHERE action = 'appclick' INTERSECT SELECT user_id FROM clicks WHERE action = 'scroll'",
      "SELECT user_id, article_id FROM clicks EXCEPT SELECT user_id, 'a1' FROM clicks",
      "SELECT article_id FROM clicks EXCEPT SELECT article_id FROM clicks WHERE user_id IS NULL"]
out = []
for q in qs:
    rows = sorted([[None if v is None else str(v) for v in r] for r in t.execute_sql(q).collect()], key=lambda r: [x or "" for x in r])
    out.append({"query": q, "rows": rows})
    print(json.dumps(out[-1]), flush=True)
json.dump({"flink": "2.3.0 (PyFlink TableEnvironment, batch mode); the table is tests/sql/test_sql_results.py's CLICKS_CSV (ts read as STRING); rows sorted", "cases": out}, open(here / "setops.json", "w"), indent=1)
