"""Records tests/sql/changelog/print_formats.json from a real Flink 2.3 (not run by the
tests): print_formats_data.py's query into a print table, its one printed line:

    /work/flink-sql-venv/bin/python tests/sql/changelog/record_print_formats.py
"""

import json
import subprocess
import sys
import tempfile
from pathlib import Path

here = Path(__file__).resolve().parent
sys.path.insert(0, str(here))
from print_formats_data import ITEMS, ONE, QUERY  # noqa: E402
from recording import FLINK, KINDS  # noqa: E402


def child() -> None:
    from pyflink.table import EnvironmentSettings, TableEnvironment

    tmp = Path(tempfile.mkdtemp())
    (tmp / "row.csv").write_text(ONE, encoding="utf-8")
    t = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    t.get_config().set("parallelism.default", "1")
    t.get_config().set("table.local-time-zone", "UTC")
    t.execute_sql(f"CREATE TABLE single_row (x INT) WITH ('connector' = 'filesystem', "
                  f"'path' = '{tmp / 'row.csv'}', 'format' = 'csv')")
    cols = ", ".join(f"c{i} {ty}" for i, (_, ty) in enumerate(ITEMS))
    t.execute_sql(f"CREATE TABLE sink ({cols}) WITH ('connector' = 'print')")
    t.execute_sql(f"INSERT INTO sink {QUERY}").wait()


def main() -> None:
    if len(sys.argv) == 2:
        child()
        return
    p = subprocess.run([sys.executable, __file__, "child"], capture_output=True, text=True,
                       timeout=600)
    lines = [x for x in p.stdout.splitlines() if x[:3] in KINDS]
    if len(lines) != 1:
        raise SystemExit("recording failed: " + p.stderr[-800:])
    (here / "print_formats.json").write_text(json.dumps({
        "flink": f"{FLINK}; the query of print_formats_data.py",
        "query": QUERY, "print": lines}, indent=1) + "\n", encoding="utf-8")
    print(lines[0])


if __name__ == "__main__":
    main()
