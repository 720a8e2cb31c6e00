"""Records tests/sql/flink_results/decimal.json from a real Flink (not run by the tests):

    /work/flink-sql-venv/bin/python tests/sql/flink_results/record_decimal.py

Exact DECIMAL arithmetic, casts, comparisons and aggregates over decimal_data.py's orders
(BATCH mode, parallelism 1). Rows are sorted; values as str() of what PyFlink returns (a
Decimal prints with its scale, as Flink's print connector)."""

import json
import sys
import tempfile
from pathlib import Path

from pyflink.table import EnvironmentSettings, TableEnvironment

here = Path(__file__).resolve().parent
sys.path.insert(0, str(here))
from decimal_data import DDL, orders_csv  # noqa: E402

QUERIES = [
    # the currency conversion: DECIMAL(10, 2) * DECIMAL(10, 4) is DECIMAL(21, 6)
    "SELECT id, cur, amount * rate AS usd FROM orders",
    "SELECT id, CAST(amount * rate AS DECIMAL(12, 2)) AS usd FROM orders",
    "SELECT id, amount + rate, amount - rate, amount / rate, MOD(amount, rate) FROM orders",
    "SELECT id, amount * id, id / amount, amount * 1.1, amount / 3, amount - 0.005 FROM orders",
    "SELECT id, CAST(amount AS DOUBLE), CAST(amount AS BIGINT), CAST(amount AS STRING), "
    "CAST(rate AS DECIMAL(5, 1)), -amount FROM orders",
    "SELECT id, CAST(amount * 1000000 AS DECIMAL(10, 2)), CAST(CAST(id AS STRING) || '.555' "
    "AS DECIMAL(6, 2)), CAST(rate * 3.3 AS DECIMAL(4, 3)) FROM orders",
    "SELECT id, amount FROM orders WHERE amount > 5000 AND rate < 1.1",
    "SELECT id, amount, rate FROM orders WHERE amount * rate >= 500.5 OR amount = 47.11",
    "SELECT cur, SUM(amount), AVG(amount), MIN(amount), MAX(amount), COUNT(amount) "
    "FROM orders GROUP BY cur",
    "SELECT cur, SUM(amount * rate), AVG(rate), MAX(amount * rate) FROM orders GROUP BY cur",
    "SELECT SUM(amount), AVG(amount * rate), MIN(rate) FROM orders",
]

# Result types, as Flink's TYPEOF names them, over one row of these types.
TYPE_VIEW = ("SELECT CAST(1.5 AS DECIMAL(10, 2)) AS amount, CAST(1.5 AS DECIMAL(10, 4)) AS rate, "
             "CAST(7 AS BIGINT) AS id, CAST(1 AS DECIMAL(38, 10)) AS big")
TYPE_EXPRS = ["amount * rate", "amount / rate", "amount + rate", "MOD(amount, rate)",
              "amount * id", "id / amount", "amount * 1.1", "amount / 3", "big * big",
              "SUM(amount)", "AVG(amount)", "AVG(big)", "amount - 0.005",
              "CASE WHEN id > 1 THEN amount ELSE rate END", "-amount"]

csv = Path(tempfile.mkdtemp()) / "orders.csv"
csv.write_text(orders_csv(), encoding="utf-8")
t = TableEnvironment.create(EnvironmentSettings.in_batch_mode())
t.get_config().set("parallelism.default", "1")
t.execute_sql(f"""{DDL} WITH ('connector' = 'filesystem', 'path' = '{csv}', 'format' = 'csv',
  'csv.null-literal' = '')""")
out = []
for q in QUERIES:
    try:
        rows = sorted([[None if v is None else str(v) for v in r]
                       for r in t.execute_sql(q).collect()], key=lambda r: [x or "" for x in r])
        out.append({"query": q, "rows": rows})
    except Exception as e:  # noqa: BLE001 - a failure is a result too
        out.append({"query": q, "error": str(e).splitlines()[0][:300]})
    print(json.dumps(out[-1])[:300], flush=True)
t.execute_sql(f"CREATE TEMPORARY VIEW one_row AS {TYPE_VIEW}")
types = {e: list(t.execute_sql(f"SELECT TYPEOF({e}) FROM one_row").collect())[0][0]
         for e in TYPE_EXPRS}
print(types, flush=True)
json.dump({"flink": "2.3.0 (PyFlink TableEnvironment, batch mode, parallelism 1); the table "
           "is decimal_data.py's orders; rows sorted, values as str()", "cases": out, "type_view": TYPE_VIEW, "types": types},
          open(here / "decimal.json", "w"), indent=1)
