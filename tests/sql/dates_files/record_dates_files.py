"""Records tests/sql/dates_files/flink/ from a real Flink 2.3 (not run by the tests): what
Flink's filesystem connector writes for a DATE and a TIMESTAMP_LTZ(3) column in csv and json
(BATCH, parallelism 1, table.local-time-zone UTC), and what it does with a DATE
read from csv / json text that holds a time of day:

    /work/flink-sql-venv/bin/python tests/sql/dates_files/record_dates_files.py
"""

import json
import shutil
import sys
import tempfile
from pathlib import Path

here = Path(__file__).resolve().parent
out = here / "flink"


def env():
    from pyflink.table import EnvironmentSettings, TableEnvironment

    t = TableEnvironment.create(EnvironmentSettings.in_batch_mode())
    t.get_config().set("parallelism.default", "1")
    t.get_config().set("table.local-time-zone", "UTC")
    return t


ROWS = ("VALUES (1, DATE '2024-05-01', TO_TIMESTAMP_LTZ(1714557601000, 3)), "
        "(2, DATE '1969-12-31', TO_TIMESTAMP_LTZ(1714557602500, 3)), "
        "(3, CAST(NULL AS DATE), CAST(NULL AS TIMESTAMP_LTZ(3))), "
        "(4, DATE '2024-02-29', TO_TIMESTAMP_LTZ(-1500, 3))")


def write_files() -> None:
    tmp = Path(tempfile.mkdtemp())
    t = env()
    # parquet: the venv has no flink-sql-parquet jar (Maven is out of reach here)
    for fmt in ("csv", "json"):
        t.execute_sql(f"CREATE TABLE out_{fmt} (k INT, d DATE, lt TIMESTAMP_LTZ(3)) WITH "
                      f"('connector' = 'filesystem', 'path' = '{tmp / fmt}', 'format' = '{fmt}')")
        t.execute_sql(f"INSERT INTO out_{fmt} SELECT * FROM ({ROWS}) AS v(k, d, lt)").wait()
        files = sorted(p for p in (tmp / fmt).rglob("*") if p.is_file() and not p.name.startswith("."))
        assert len(files) == 1, files
        shutil.copy(files[0], out / f"written.{fmt}")


def read_text() -> None:
    """A DATE column read from text with a time of day, and the whole table read back."""
    tmp = Path(tempfile.mkdtemp())
    results = {}
    cases = {
        "csv": "1,2024-05-01\n2,2024-05-01 10:00:01\n3,2024-05-02\n",
        "json": '{"k":1,"d":"2024-05-01"}\n{"k":2,"d":"2024-05-01 10:00:01"}\n{"k":3,"d":"2024-05-02"}\n',
    }
    for fmt, text in cases.items():
        for ignore in (False, True):
            d = tmp / f"{fmt}{ignore}"
            d.mkdir()
            (d / f"in.{fmt}").write_text(text)
            t = env()
            opt = f", '{fmt}.ignore-parse-errors' = 'true'" if ignore else ""
            t.execute_sql(f"CREATE TABLE src (k INT, d DATE) WITH ('connector' = 'filesystem', "
                          f"'path' = '{d}', 'format' = '{fmt}'{opt})")
            key = f"{fmt}{'_ignore' if ignore else ''}"
            try:
                rows = [str(r) for r in t.execute_sql("SELECT k, CAST(d AS STRING) FROM src").collect()]
                results[key] = {"rows": rows}
            except Exception as e:  # noqa: BLE001 - the error is what we record
                msg = str(e)
                causes = [ln.strip() for ln in msg.splitlines() if "Caused by" in ln or "Exception:" in ln]
                results[key] = {"error": causes[:12]}
    (out / "read_text.json").write_text(json.dumps(results, indent=1) + "\n")


if __name__ == "__main__":
    out.mkdir(exist_ok=True)
    write_files()
    read_text()
    print("ok", file=sys.stderr)
