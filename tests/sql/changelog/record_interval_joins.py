"""Records tests/sql/changelog/interval_joins.json from a real Flink 2.3 (not run by the
tests): interval joins (inner and outer) of orders and shipments (interval_data.py),
STREAMING, parallelism 1, as record_changelog.py records; plus the plan's join line:

    /work/flink-sql-venv/bin/python tests/sql/changelog/record_interval_joins.py
"""

import sys
import tempfile
from pathlib import Path

here = Path(__file__).resolve().parent
sys.path.insert(0, str(here))
from data import ORDERS, ORDERS_COLUMNS  # noqa: E402
from interval_data import SHIPMENTS, SHIPMENTS_COLUMNS, WATERMARK  # noqa: E402
from recording import emit, record_all, record_query, write  # noqa: E402

ON = "o.order_id = s.order_id AND s.ts BETWEEN o.ts AND o.ts + INTERVAL '2' SECOND"
QUERIES = [
    f"SELECT o.order_id, o.amount, s.ts AS shipped FROM orders o JOIN shipments s ON {ON}",
    f"SELECT o.order_id, o.amount, s.ts AS shipped FROM orders o LEFT JOIN shipments s ON {ON}",
    f"SELECT o.order_id, s.order_id AS sid, s.ts AS shipped FROM orders o RIGHT JOIN shipments s ON {ON}",
    f"SELECT o.order_id, s.order_id AS sid, o.ts, s.ts AS shipped FROM orders o FULL JOIN shipments s ON {ON}",
    "SELECT o.order_id, s.user_id FROM orders o LEFT JOIN shipments s ON o.user_id = s.user_id AND s.ts > o.ts - INTERVAL '1' SECOND AND s.ts < o.ts + INTERVAL '1' SECOND",
]


def env():
    from pyflink.table import EnvironmentSettings, TableEnvironment

    tmp = Path(tempfile.mkdtemp())
    t = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    t.get_config().set("parallelism.default", "1")
    t.get_config().set("table.local-time-zone", "UTC")
    for name, cols, text in (("orders", ORDERS_COLUMNS, ORDERS),
                             ("shipments", SHIPMENTS_COLUMNS, SHIPMENTS)):
        (tmp / f"{name}.csv").write_text(text, encoding="utf-8")
        t.execute_sql(f"CREATE TABLE {name} ({cols}{WATERMARK}) WITH ('connector' = "
                      f"'filesystem', 'path' = '{tmp / name}.csv', 'format' = 'csv', "
                      "'csv.null-literal' = '')")
    return t


def record_one(query: str) -> dict:
    return record_query(env(), query, lambda line: "Join" in line)


def main() -> None:
    if len(sys.argv) == 2:
        emit(record_one(QUERIES[int(sys.argv[1])]))
        return
    write(here / "interval_joins.json", "orders of data.py, shipments of "
              "interval_data.py, watermarks ts - 1 s",
          record_all(__file__, QUERIES))


if __name__ == "__main__":
    main()
