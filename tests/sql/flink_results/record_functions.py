"""Records tests/sql/flink_results/functions.json from a real Flink (not run by the tests).

    python -m venv /work/flink-sql-venv && /work/flink-sql-venv/bin/pip install apache-flink==2.3.0
    /work/flink-sql-venv/bin/python tests/sql/flink_results/record_functions.py

Each case's ``expr`` is run as ``SELECT <expr>``; ``result`` is ``str()`` of the value (null
for NULL) and ``type`` Flink's result type, or ``error`` when Flink fails the query.
"""

import json
import sys
from pathlib import Path

from pyflink.table import EnvironmentSettings, TableEnvironment

path = Path(sys.argv[1] if len(sys.argv) > 1 else Path(__file__).with_name("functions.json"))
doc = json.loads(path.read_text(encoding="utf-8"))
t = TableEnvironment.create(EnvironmentSettings.in_batch_mode())
t.get_config().set("table.local-time-zone", "UTC")
t.get_config().set("parallelism.default", "1")
cases = []
for case in doc["cases"]:
    e = case["expr"]
    try:
        v = [tuple(r) for r in t.execute_sql(f"SELECT {e}").collect()][0][0]
        kind = str(t.sql_query(f"SELECT {e}").get_schema().get_field_data_types()[0])
        cases.append({"expr": e, "result": None if v is None else str(v), "type": kind})
    except Exception:  # noqa: BLE001 - recorded as a failing query
        cases.append({"expr": e, "error": "Flink fails the query"})
doc["cases"] = cases
path.write_text(json.dumps(doc, indent=1) + "\n", encoding="utf-8")
