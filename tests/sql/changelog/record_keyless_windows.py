"""Records tests/sql/changelog/keyless_windows.json from a real Flink 2.3 (not run by the
tests): window aggregates without a key (TVFs and legacy group windows) over the orders of
data.py with a watermark, STREAMING, parallelism 1, as record_changelog.py records; plus
the physical plan's lines that show the single exchange and the window aggregate:

    /work/flink-sql-venv/bin/python tests/sql/changelog/record_keyless_windows.py
"""

import sys
import tempfile
from pathlib import Path

here = Path(__file__).resolve().parent
sys.path.insert(0, str(here))
from data import ORDERS, ORDERS_COLUMNS  # noqa: E402
from recording import emit, record_all, record_query, write  # noqa: E402

COLUMNS = ORDERS_COLUMNS + ", WATERMARK FOR ts AS ts - INTERVAL '1' SECOND"
QUERIES = [
    "SELECT window_start, window_end, COUNT(*) AS n, SUM(amount) AS s FROM TABLE(TUMBLE(TABLE orders, DESCRIPTOR(ts), INTERVAL '5' SECOND)) GROUP BY window_start, window_end",
    "SELECT window_start, window_end, COUNT(*) AS n, MAX(price) AS mx FROM TABLE(HOP(TABLE orders, DESCRIPTOR(ts), INTERVAL '2' SECOND, INTERVAL '4' SECOND)) GROUP BY window_start, window_end",
    "SELECT window_start, window_end, COUNT(*) AS n FROM TABLE(CUMULATE(TABLE orders, DESCRIPTOR(ts), INTERVAL '2' SECOND, INTERVAL '6' SECOND)) GROUP BY window_start, window_end",
    "SELECT TUMBLE_START(ts, INTERVAL '5' SECOND) AS ws, TUMBLE_END(ts, INTERVAL '5' SECOND) AS we, COUNT(*) AS n, MAX(amount) AS mx FROM orders GROUP BY TUMBLE(ts, INTERVAL '5' SECOND)",
    "SELECT HOP_START(ts, INTERVAL '2' SECOND, INTERVAL '4' SECOND) AS ws, COUNT(DISTINCT user_id) AS users FROM orders GROUP BY HOP(ts, INTERVAL '2' SECOND, INTERVAL '4' SECOND)",
    "SELECT SESSION_START(ts, INTERVAL '1' SECOND) AS ws, SESSION_END(ts, INTERVAL '1' SECOND) AS we, COUNT(*) AS n FROM orders GROUP BY SESSION(ts, INTERVAL '1' SECOND)",
]


def env():
    from pyflink.table import EnvironmentSettings, TableEnvironment

    tmp = Path(tempfile.mkdtemp())
    t = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    t.get_config().set("parallelism.default", "1")
    t.get_config().set("table.local-time-zone", "UTC")
    (tmp / "orders.csv").write_text(ORDERS, encoding="utf-8")
    t.execute_sql(f"CREATE TABLE orders ({COLUMNS}) WITH ('connector' = 'filesystem', "
                  f"'path' = '{tmp / 'orders.csv'}', 'format' = 'csv', "
                  "'csv.null-literal' = '')")
    return t


def record_one(query: str) -> dict:
    return record_query(env(), query, lambda line: "Exchange" in line or "Window" in line)


def main() -> None:
    if len(sys.argv) == 2:
        emit(record_one(QUERIES[int(sys.argv[1])]))
        return
    write(here / "keyless_windows.json", "orders of data.py, watermark ts - 1 s",
          record_all(__file__, QUERIES))


if __name__ == "__main__":
    main()
