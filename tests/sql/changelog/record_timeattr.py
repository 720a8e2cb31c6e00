"""Records tests/sql/changelog/timeattr.json from a real Flink 2.3 (not run by the tests):
computed time attributes (TO_TIMESTAMP_LTZ, TO_TIMESTAMP(FROM_UNIXTIME(...)), CAST), a
declared TIMESTAMP_LTZ(3) time attribute, DATE columns and casts over the events of
timeattr_data.py, STREAMING, parallelism 1, table.local-time-zone UTC. Only the print
connector's lines are kept (PyFlink's collect() cannot pickle an Instant), with the plan's
lines that show the Calc before the WatermarkAssigner:

    /work/flink-sql-venv/bin/python tests/sql/changelog/record_timeattr.py
"""

import sys
import tempfile
from pathlib import Path

here = Path(__file__).resolve().parent
sys.path.insert(0, str(here))
from recording import emit, record_all, write  # noqa: E402
from timeattr_data import EVENTS, TABLES, ddl, json_lines  # noqa: E402

QUERIES = [
    "SELECT k, window_start, window_end, window_time, COUNT(*) AS n, MAX(epoch_ms) AS mx FROM TABLE(TUMBLE(TABLE ev, DESCRIPTOR(ts), INTERVAL '5' SECOND)) GROUP BY k, window_start, window_end, window_time",
    "SELECT window_start, window_end, COUNT(*) AS n FROM TABLE(HOP(TABLE ev2, DESCRIPTOR(ts), INTERVAL '2' SECOND, INTERVAL '4' SECOND)) GROUP BY window_start, window_end",
    "SELECT k, window_start, COUNT(*) AS n, MIN(d) AS first_day FROM TABLE(TUMBLE(TABLE ev3, DESCRIPTOR(ts), INTERVAL '10' SECOND)) GROUP BY k, window_start, window_end",
    "SELECT TUMBLE_START(ts, INTERVAL '5' SECOND) AS ws, TUMBLE_ROWTIME(ts, INTERVAL '5' SECOND) AS wr, COUNT(*) AS n FROM ev GROUP BY TUMBLE(ts, INTERVAL '5' SECOND)",
    "SELECT k, window_start, window_time, COUNT(*) AS n FROM TABLE(TUMBLE(TABLE evl, DESCRIPTOR(lt), INTERVAL '5' SECOND)) GROUP BY k, window_start, window_end, window_time",
    "SELECT k, d, ts, lt, CAST(d AS STRING) AS ds, CAST(ts AS DATE) AS td, CAST(ts AS STRING) AS tss, CAST(ts AS TIMESTAMP(3)) AS t3, CAST(s AS DATE) AS sd, CAST(d AS TIMESTAMP(3)) AS dt, d < DATE '2024-05-01' AS before_may, EXTRACT(DAY FROM d) AS dd FROM ev",
    "SELECT d, COUNT(*) AS n FROM ev GROUP BY d",
    "SELECT k, d, lt FROM evj WHERE d >= DATE '2024-05-01'",
    "SELECT k, d + INTERVAL '1' DAY AS d1, ts - INTERVAL '1' SECOND AS t1, CAST(ts AS TIMESTAMP(3)) + INTERVAL '1' SECOND AS t2 FROM ev",
    "SELECT k, window_start, window_time FROM TABLE(TUMBLE(TABLE ev, DESCRIPTOR(ts), INTERVAL '5' SECOND))",
]


def env():
    from pyflink.table import EnvironmentSettings, TableEnvironment

    tmp = Path(tempfile.mkdtemp())
    t = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    t.get_config().set("parallelism.default", "1")
    t.get_config().set("table.local-time-zone", "UTC")
    (tmp / "events.csv").write_text(EVENTS, encoding="utf-8")
    (tmp / "events.json").write_text(json_lines(), encoding="utf-8")
    for name in TABLES:
        t.execute_sql(ddl(name, str(tmp)))
    t.execute_sql(ddl("ev", str(tmp), "json").replace("TABLE ev ", "TABLE evj ", 1))
    return t


def sql_type(x) -> str:
    """A PyFlink DataType as SQL (its str() has no precisions, nor LTZ's name)."""
    name = type(x).__name__
    if name == "LocalZonedTimestampType":
        return f"TIMESTAMP_LTZ({x.precision})"
    if name == "TimestampType":
        return f"TIMESTAMP({x.precision})"
    return str(x)


def record_one(query: str) -> dict:
    t = env()
    out: dict = {"query": query}
    try:
        plan = t.explain_sql(query).split("== Optimized Physical Plan ==")[-1]
        out["plan"] = [line.strip() for line in plan.split("==")[0].splitlines()
                       if "Calc(" in line or "WatermarkAssigner" in line]
        schema = t.sql_query(query).get_schema()
        types = [sql_type(x) for x in schema.get_field_data_types()]
        out.update(columns=list(schema.get_field_names()), types=types)
        cols = ", ".join(f"`c{i}` {ty}" for i, ty in enumerate(types))
        t.execute_sql(f"CREATE TABLE sink ({cols}) WITH ('connector' = 'print')")
        t.execute_sql(f"INSERT INTO sink {query}").wait()
    except Exception as err:  # noqa: BLE001 - recorded: Flink rejects the query
        out["error"] = str(err).splitlines()[0][:500]
    return out


def main() -> None:
    if len(sys.argv) == 2:
        emit(record_one(QUERIES[int(sys.argv[1])]))
        return
    write(here / "timeattr.json", "events of timeattr_data.py", record_all(__file__, QUERIES))


if __name__ == "__main__":
    main()
