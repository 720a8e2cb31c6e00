"""Records tests/sql/date_arith/flink.json from a real Flink 2.3 (not run by the tests):
DATE +/- a day-time interval (BATCH, parallelism 1, table.local-time-zone UTC), and what
Flink does with CAST / TRY_CAST of text that is no DATE and with a DATE literal holding a
time of day:

    /work/flink-sql-venv/bin/python tests/sql/date_arith/record_date_arith.py
"""

import json
import sys
from pathlib import Path

here = Path(__file__).resolve().parent

# The rows of test_sql_date_arith.py: (k, d, h)
ROWS = ("VALUES (1, DATE '2024-05-01', 1), (2, DATE '2024-05-01', 25), "
        "(3, DATE '2024-05-01', -1), (4, DATE '2024-05-01', -25), "
        "(5, CAST(NULL AS DATE), 3), (6, DATE '1969-12-31', 30)")
ARITH = ("SELECT k, CAST(d + INTERVAL '1' HOUR AS STRING), CAST(d + INTERVAL '25' HOUR AS STRING), "
         "CAST(d - INTERVAL '1' SECOND AS STRING), CAST(d - INTERVAL '25' HOUR AS STRING), "
         "CAST(d + h * INTERVAL '1' HOUR AS STRING), CAST(d - h * INTERVAL '1' HOUR AS STRING), "
         "CAST(INTERVAL '25' HOUR + d AS STRING), d + INTERVAL '1' HOUR = d FROM ({rows}) AS v(k, d, h)")
GROUPED = ("SELECT CAST(d + h * INTERVAL '1' HOUR AS STRING), COUNT(*) FROM ({rows}) AS v(k, d, h) "
           "GROUP BY d + h * INTERVAL '1' HOUR")
CASTS = {
    "cast_xx": "SELECT CAST('xx' AS DATE)",
    "cast_12": "SELECT CAST('12' AS DATE)",
    "cast_ts_text": "SELECT CAST('2024-05-01 10:00:00' AS DATE)",
    "try_cast_xx": "SELECT TRY_CAST('xx' AS DATE)",
    "try_cast_12": "SELECT TRY_CAST('12' AS DATE)",
    "cast_int_xx": "SELECT CAST('xx' AS INT)",
    "try_cast_int_xx": "SELECT TRY_CAST('xx' AS INT)",
    "date_literal_time": "SELECT DATE '2024-05-01 10:00:00'",
}
# Texts CAST / TRY_CAST to DATE: Flink's DateTimeUtils.parseDate (flowc.dates.text_date)
TEXTS = ["2024-5-1", " 2024-05-01 ", "2024-05-01T10:00:00", "2024-02-30", "12", "-1",
         "10000-01-01", "2024", "2024-05", "2024-05-01x", "", "+2024-05-01", "2024-05-01 xx",
         "2024 -05-01", "2024-05-01-02", "1969-12-31"]
LITERALS = ["2024-5-1", "12", "2024-02-30", "2024-05-01T10:00:00"]


def env():
    from pyflink.table import EnvironmentSettings, TableEnvironment

    t = TableEnvironment.create(EnvironmentSettings.in_batch_mode())
    t.get_config().set("parallelism.default", "1")
    t.get_config().set("table.local-time-zone", "UTC")
    return t


def run(t, sql: str) -> dict:
    try:
        return {"rows": sorted([[None if v is None else str(v) for v in r]
                                for r in t.execute_sql(sql).collect()], key=str)}
    except Exception as e:  # noqa: BLE001 - the error is what we record
        lines = [ln.strip() for ln in str(e).splitlines()
                 if "Caused by" in ln or "Exception:" in ln]
        return {"error": lines[:8]}


if __name__ == "__main__":
    t = env()
    results = {"arith": run(t, ARITH.format(rows=ROWS)), "grouped": run(t, GROUPED.format(rows=ROWS))}
    results.update({k: run(t, q) for k, q in CASTS.items()})
    sel = ", ".join(f"CAST(TRY_CAST('{c}' AS DATE) AS STRING)" for c in TEXTS)
    results["texts"] = dict(zip(TEXTS, run(t, "SELECT " + sel)["rows"][0]))
    results["literals"] = {c: run(t, f"SELECT CAST(DATE '{c}' AS STRING)") for c in LITERALS}
    (here / "flink.json").write_text(json.dumps(results, indent=1) + "\n")
    print("ok", file=sys.stderr)
