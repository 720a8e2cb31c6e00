"""Records tests/sql/changelog/watermarks.json from a real Flink 2.3 (not run by the tests):
the queries of watermark_data.py over its table, each with its WATERMARK expression, runtime
mode and ``pipeline.auto-watermark-interval``; parallelism 1, as record_changelog.py
records; plus the plan's WatermarkAssigner line (the expression as Flink resolved it):

    /work/flink-sql-venv/bin/python tests/sql/changelog/record_watermarks.py
"""

import sys
import tempfile
from pathlib import Path

here = Path(__file__).resolve().parent
sys.path.insert(0, str(here))
from recording import emit, record_case, record_query, write  # noqa: E402
from watermark_data import CASES, COLUMNS, EVENTS  # noqa: E402


def record_one(i: int) -> dict:
    from pyflink.table import EnvironmentSettings, TableEnvironment

    wm, mode, interval, query = CASES[i]
    tmp = Path(tempfile.mkdtemp())
    settings = (EnvironmentSettings.in_batch_mode() if mode == "batch"
                else EnvironmentSettings.in_streaming_mode())
    t = TableEnvironment.create(settings)
    t.get_config().set("parallelism.default", "1")
    t.get_config().set("table.local-time-zone", "UTC")
    if interval is not None:
        t.get_config().set("pipeline.auto-watermark-interval", interval)
    (tmp / "events.csv").write_text(EVENTS, encoding="utf-8")
    t.execute_sql(f"CREATE TABLE events ({COLUMNS}, WATERMARK FOR ts AS {wm}) WITH ("
                  f"'connector' = 'filesystem', 'path' = '{tmp / 'events.csv'}', "
                  "'format' = 'csv')")
    doc = record_query(t, query, lambda line: "WatermarkAssigner" in line or "Window" in line
                       or "Over" in line)
    doc.update(watermark=wm, mode=mode, interval=interval)
    return doc


def main() -> None:
    if len(sys.argv) == 2:
        emit(record_one(int(sys.argv[1])))
        return
    cases = [record_case(__file__, c[3], [str(i)]) for i, c in enumerate(CASES)]
    write(here / "watermarks.json", "the table and cases of watermark_data.py", cases)


if __name__ == "__main__":
    main()
