"""Records tests/sql/flink_results/partitioned_sink.json from a real Flink (not run by the
tests):

    /work/flink-sql-venv/bin/python tests/sql/flink_results/record_partitioned_sink.py

INSERT INTO filesystem tables with PARTITIONED BY (csv, 'csv.null-literal' = ''), from
over_data.py's ORDERS (STREAMING mode, parallelism 2): per partition directory (relative to
the table's path) the sorted data lines of its files, and the directories holding a
_SUCCESS file."""

import json
import os
import sys
import tempfile
from pathlib import Path

from pyflink.table import EnvironmentSettings, TableEnvironment

here = Path(__file__).resolve().parent
sys.path.insert(0, str(here))
from over_data import orders_csv  # noqa: E402

K = ("CASE WHEN amount IS NULL THEN CAST(NULL AS STRING) WHEN amount > 40 THEN 'a/b=c:d e%' "
     "WHEN amount < 5 THEN '' ELSE user_id END")
CASES = [
    ("amount INT, user_id STRING, big BOOLEAN", "PARTITIONED BY (user_id, big)",
     "'sink.partition-commit.policy.kind' = 'success-file'",
     "SELECT amount, user_id, amount > 20 FROM orders"),
    ("user_id STRING, amount INT, k STRING", "PARTITIONED BY (k)",
     "'sink.partition-commit.policy.kind' = 'success-file', "
     "'sink.partition-commit.success-file.name' = '_DONE', 'partition.default-name' = 'none'",
     f"SELECT user_id, amount, {K} FROM orders"),
    ("user_id STRING, n BIGINT", "PARTITIONED BY (n)", "'sink.partition-commit.trigger' = "
     "'partition-time'", "SELECT user_id, COUNT(*) FROM TABLE(TUMBLE(TABLE orders, "
     "DESCRIPTOR(ts), INTERVAL '5' SECOND)) GROUP BY window_start, window_end, user_id"),
]

root = Path(tempfile.mkdtemp())
csv = root / "orders.csv"
csv.write_text(orders_csv(header=False), encoding="utf-8")
t = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
t.get_config().set("parallelism.default", "2")
t.execute_sql(f"""CREATE TABLE orders (user_id STRING, amount INT, ts TIMESTAMP(3),
  WATERMARK FOR ts AS ts - INTERVAL '1' SECOND)
  WITH ('connector' = 'filesystem', 'path' = '{csv}', 'format' = 'csv', 'csv.null-literal' = '')""")
out = []
for i, (cols, part, opts, query) in enumerate(CASES):
    path = root / f"out{i}"
    t.execute_sql(f"CREATE TABLE out{i} ({cols}) {part} WITH ('connector' = 'filesystem', "
                  f"'path' = '{path}', 'format' = 'csv', 'csv.null-literal' = ''"
                  f"{', ' + opts if opts else ''})")
    t.execute_sql(f"INSERT INTO out{i} {query}").wait()
    files: dict[str, list[str]] = {}
    success: list[str] = []
    for d, _, names in os.walk(path):
        rel = os.path.relpath(d, path)
        for n in names:
            if n.startswith("part-"):
                files.setdefault(rel, []).extend(Path(d, n).read_text().splitlines())
            elif n.startswith("_"):
                success.append(f"{rel}/{n}")
    case = {"columns": cols, "partitioned": part, "options": opts, "query": query,
            "files": {k: sorted(v) for k, v in sorted(files.items())},
            "success": sorted(success)}
    out.append(case)
    print(json.dumps(case), flush=True)
json.dump({"flink": "2.3.0 (PyFlink TableEnvironment, streaming mode, parallelism 2); the "
           "table is over_data.py's ORDERS", "cases": out},
          open(here / "partitioned_sink.json", "w"), indent=1)
