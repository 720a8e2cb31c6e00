"""Records tests/sql/changelog/{cumulate,state_ttl_hint,topn_outside}.json from a real
Flink 2.3 (not run by the tests):

    /work/flink-sql-venv/bin/python tests/sql/changelog/record_sqla.py [file-stem ...]

As record_changelog.py (STREAMING mode, parallelism 1, table.local-time-zone UTC): per
query the ``changelog`` Flink's ``collect()`` returns, ``print``, the lines its print
connector writes, ``plan``, the optimized physical plan with changelog modes (EXPLAIN
CHANGELOG_MODE), or ``error``, the first line of Flink's exception, ``cause``, its
last "...Exception:" lines, and ``message``, the first exception's whole message. The queries and tables
are in sqla_queries.py."""

import json
import sys
import tempfile
from pathlib import Path

here = Path(__file__).resolve().parent
sys.path.insert(0, str(here))
sys.path.insert(0, str(here.parent / "flink_results"))
from data import ORDERS, ORDERS_COLUMNS, USERS, USERS_COLUMNS  # noqa: E402
from over_data import orders_csv  # noqa: E402
from recording import emit, record_case, write  # noqa: E402
from sqla_queries import CUMULATE, STATE_TTL_HINT, TOPN_OUTSIDE  # noqa: E402

FILES = {"cumulate": CUMULATE, "state_ttl_hint": STATE_TTL_HINT, "topn_outside": TOPN_OUTSIDE}
KINDS = {0: "+I", 1: "-U", 2: "+U", 3: "-D"}
EVENTS_COLUMNS = ("user_id STRING, amount INT, ts TIMESTAMP(3), "
                  "WATERMARK FOR ts AS ts - INTERVAL '1' SECOND")


def env(tmp: Path):
    from pyflink.table import EnvironmentSettings, TableEnvironment

    t = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    t.get_config().set("parallelism.default", "1")
    t.get_config().set("table.local-time-zone", "UTC")
    for name, cols, text in (("orders", ORDERS_COLUMNS, ORDERS), ("users", USERS_COLUMNS, USERS),
                             ("events", EVENTS_COLUMNS, orders_csv(header=False))):
        (tmp / f"{name}.csv").write_text(text, encoding="utf-8")
        t.execute_sql(f"CREATE TABLE {name} ({cols}) WITH ('connector' = 'filesystem', "
                      f"'path' = '{tmp / name}.csv', 'format' = 'csv', "
                      "'csv.null-literal' = '')")
    return t


def value(v):
    return None if v is None else str(v)


def record_one(query: str) -> dict:
    from pyflink.table import ExplainDetail

    t = env(Path(tempfile.mkdtemp()))
    out: dict = {"query": query}
    try:
        plan = t.explain_sql(query, ExplainDetail.CHANGELOG_MODE)
        out["plan"] = plan.split("== Optimized Physical Plan ==")[-1].split(
            "== Optimized Execution Plan ==")[0].strip().splitlines()
        result = t.execute_sql(query)
        names = list(result.get_table_schema().get_field_names())
        types = [str(x) for x in result.get_table_schema().get_field_data_types()]
        rows = []
        with result.collect() as it:
            for r in it:
                rows.append([KINDS[r.get_row_kind().value], [value(v) for v in r]])
        out.update(columns=names, types=types, changelog=rows)
    except Exception as err:  # noqa: BLE001 - recorded: Flink rejects the query
        text = str(err)
        lines = [x for x in text.splitlines() if x.strip()]
        cause = [x for x in lines if "Exception:" in x]
        out["error"] = lines[0][:500]
        out["cause"] = [x[:500] for x in cause[-3:]]
        # the first exception's whole message (it may span lines), without the stack trace
        head = text.split("\n: ", 1)[-1].split("\n\tat ", 1)[0]
        out["message"] = head.split(": ", 1)[-1]
        out.pop("plan", None)
        return out
    cols = ", ".join(f"`c{i}` {ty}" for i, ty in enumerate(types))
    t.execute_sql(f"CREATE TABLE sink ({cols}) WITH ('connector' = 'print')")
    t.execute_sql(f"INSERT INTO sink {query}").wait()
    return out


def error_message(t, query: str) -> str | None:
    """The first exception's whole message of a query Flink rejects (its EXPLAIN fails
    alike), without the stack trace; None if Flink takes the query."""
    try:
        t.explain_sql(query)
    except Exception as err:  # noqa: BLE001 - recorded
        return str(err).split("\n: ", 1)[-1].split("\n\tat ", 1)[0].split(": ", 1)[-1]
    return None


def main() -> None:
    """``[stem ...]``: record those files (all without arguments); ``stem:3,7``: re-record
    those cases into the existing file; ``--messages stem``: add each rejected query's
    ``message`` to the existing file (EXPLAIN only, one Flink session)."""
    if len(sys.argv) == 3 and sys.argv[1] == "--one":
        stem, i = sys.argv[2].split(":")
        emit(record_one(FILES[stem][int(i)]))
        return
    if len(sys.argv) == 3 and sys.argv[1] == "--messages":
        path = here / f"{sys.argv[2]}.json"
        doc = json.loads(path.read_text(encoding="utf-8"))
        t = env(Path(tempfile.mkdtemp()))
        for case in doc["cases"]:
            if "error" in case:
                case["message"] = error_message(t, case["query"])
        path.write_text(json.dumps(doc, indent=1) + "\n", encoding="utf-8")
        return
    for arg in sys.argv[1:] or list(FILES):
        stem, _, only = arg.partition(":")
        chosen = {int(x) for x in only.split(",")} if only else None
        old = json.loads((here / f"{stem}.json").read_text())["cases"] if chosen else []
        cases = [next(c for c in old if c["query"] == q)
                 if chosen is not None and i not in chosen else
                 record_case(__file__, q, ["--one", f"{stem}:{i}"])
                 for i, q in enumerate(FILES[stem])]
        write(here / f"{stem}.json", "queries and tables in sqla_queries.py", cases)


if __name__ == "__main__":
    main()
