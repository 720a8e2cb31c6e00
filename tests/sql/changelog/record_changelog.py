"""Records tests/sql/changelog/changelog.json from a real Flink 2.3 (not run by the tests):

    /work/flink-sql-venv/bin/python tests/sql/changelog/record_changelog.py

STREAMING mode, parallelism 1 (so the changelog order is deterministic), tables from
data.py. Per query: ``changelog``, the rows Flink's ``collect()`` returns with their row
kind (``["+I", [values...]]``, values as ``str()``, NULL as null), and ``print``, the lines
Flink's print connector writes for the same query (an ``INSERT INTO`` a print table)."""

import json
import sys
import tempfile
from pathlib import Path

here = Path(__file__).resolve().parent
sys.path.insert(0, str(here))
from data import ORDERS, ORDERS_COLUMNS, USERS, USERS_COLUMNS  # noqa: E402
from queries import QUERIES  # noqa: E402
from recording import emit, record_case, write  # noqa: E402

KINDS = {0: "+I", 1: "-U", 2: "+U", 3: "-D"}


def env(tmp: Path):
    from pyflink.table import EnvironmentSettings, TableEnvironment

    t = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    t.get_config().set("parallelism.default", "1")
    t.get_config().set("table.local-time-zone", "UTC")
    for name, cols, text in (("orders", ORDERS_COLUMNS, ORDERS), ("users", USERS_COLUMNS, USERS)):
        (tmp / f"{name}.csv").write_text(text, encoding="utf-8")
        t.execute_sql(f"CREATE TABLE {name} ({cols}) WITH ('connector' = 'filesystem', "
                      f"'path' = '{tmp / name}.csv', 'format' = 'csv', "
                      "'csv.null-literal' = '')")
    return t


def value(v):
    return None if v is None else str(v)


def record_one(query: str) -> dict:
    tmp = Path(tempfile.mkdtemp())
    t = env(tmp)
    out: dict = {"query": query}
    try:
        result = t.execute_sql(query)
        names = list(result.get_table_schema().get_field_names())
        types = [str(x) for x in result.get_table_schema().get_field_data_types()]
        rows = []
        with result.collect() as it:
            for r in it:
                rows.append([KINDS[r.get_row_kind().value], [value(v) for v in r]])
        out.update(columns=names, types=types, changelog=rows)
    except Exception as err:  # noqa: BLE001 - recorded: Flink rejects the query
        out["error"] = str(err).splitlines()[0][:500]
        return out
    cols = ", ".join(f"`c{i}` {ty}" for i, ty in enumerate(types))
    t.execute_sql(f"CREATE TABLE sink ({cols}) WITH ('connector' = 'print')")
    t.execute_sql(f"INSERT INTO sink {query}").wait()
    return out


def main() -> None:
    """No arguments: record every query. ``--only 3 7``: re-record those queries into the
    existing changelog.json. ``N``: one query in a child process (its stdout is the print
    output)."""
    if len(sys.argv) == 2 and sys.argv[1] != "--only":
        q = QUERIES[int(sys.argv[1])]
        emit(record_one(q))
        return
    only = {int(x) for x in sys.argv[2:]} if sys.argv[1:2] == ["--only"] else None
    old = json.loads((here / "changelog.json").read_text())["cases"] if only else []
    cases = [old[i] if only is not None and i not in only else
             record_case(__file__, q, [str(i)], 300) for i, q in enumerate(QUERIES)]
    write(here / "changelog.json", "tables in data.py", cases)


if __name__ == "__main__":
    main()
