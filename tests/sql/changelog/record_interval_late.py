"""Records tests/sql/changelog/interval_late.json from a real Flink 2.3 (not run by the
tests): inner interval joins whose rows arrive behind the watermark (interval_late_data.py),
which Flink SQL's RowTimeIntervalJoin joins with the other side's rows still cached.

The rows come from a datagen table at RATE rows a second, with network buffers flushed
after every record (``execution.buffer-timeout.interval`` 0) and each watermark advance
emitted after its row (``pipeline.auto-watermark-interval`` 0): the join takes every row and
its watermark before the next exists, so its input order is the table's - unless the join's
thread falls a row behind (a loaded machine: it then takes its two channels in another
order). Each query runs RUNS times; the fixture keeps every distinct result with its count:

    /work/flink-sql-venv/bin/python tests/sql/changelog/record_interval_late.py
"""

import json
import sys
from pathlib import Path

here = Path(__file__).resolve().parent
sys.path.insert(0, str(here))
from interval_late_data import LEFT, RIGHT, datagen_ddl  # noqa: E402
from recording import FLINK, emit, run_child  # noqa: E402

RATE = 2
RUNS = 3
ON = "l.k = r.k AND r.ts BETWEEN l.ts - INTERVAL '1' SECOND AND l.ts + INTERVAL '1' SECOND"
QUERIES = [
    f"SELECT l.v, r.v AS rv FROM {LEFT} l JOIN {RIGHT} r ON {ON}",
    # strict bounds: the pairs exactly 1 s apart do not join
    f"SELECT l.v, r.v AS rv FROM {LEFT} l JOIN {RIGHT} r ON l.k = r.k "
    "AND r.ts > l.ts - INTERVAL '1' SECOND AND r.ts < l.ts + INTERVAL '1' SECOND",
    # a window wholly after the left row, the times printed
    f"SELECT l.k, l.v, r.v AS rv, l.ts, r.ts AS rts FROM {LEFT} l JOIN {RIGHT} r "
    "ON l.k = r.k AND r.ts BETWEEN l.ts AND l.ts + INTERVAL '1' SECOND",
    # a window wholly before the left row, in WHERE
    f"SELECT l.v, r.v AS rv FROM {LEFT} l, {RIGHT} r WHERE l.k = r.k "
    "AND r.ts >= l.ts - INTERVAL '2' SECOND AND r.ts <= l.ts - INTERVAL '1' SECOND",
    # the right side first
    f"SELECT r.v, l.v AS lv FROM {RIGHT} r JOIN {LEFT} l ON r.k = l.k "
    "AND l.ts BETWEEN r.ts - INTERVAL '2' SECOND AND r.ts + INTERVAL '1' SECOND",
]


def record_one(query: str) -> dict:
    from pyflink.table import EnvironmentSettings, TableEnvironment

    t = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    for k, v in (("parallelism.default", "1"), ("table.local-time-zone", "UTC"),
                 ("pipeline.auto-watermark-interval", "0"),
                 ("execution.buffer-timeout.enabled", "true"),
                 ("execution.buffer-timeout.interval", "0 ms")):
        t.get_config().set(k, v)
    t.execute_sql(datagen_ddl(RATE))
    out: dict = {"query": query}
    plan = t.explain_sql(query).split("== Optimized Physical Plan ==")[-1]
    out["plan"] = [line.strip() for line in plan.split("==")[0].splitlines()
                   if "Join" in line or "Reused" in line]
    types = [str(x) for x in t.sql_query(query).get_schema().get_field_data_types()]
    cols = ", ".join(f"`c{i}` {ty}" for i, ty in enumerate(types))
    t.execute_sql(f"CREATE TABLE sink ({cols}) WITH ('connector' = 'print')")
    t.execute_sql(f"INSERT INTO sink {query}").wait()
    return out


def main() -> None:
    if len(sys.argv) == 2:
        emit(record_one(QUERIES[int(sys.argv[1])]))
        return
    out = here / "interval_late.json"
    # a query recorded before (same text) is kept: a failed run resumes where it stopped
    done = {c["query"]: c for c in json.loads(out.read_text())["cases"]} \
        if out.exists() else {}
    cases = []
    for i in range(len(QUERIES)):
        if QUERIES[i] in done:
            cases.append(done[QUERIES[i]])
            continue
        doc: dict = {}
        results: list[list[str]] = []
        counts: list[int] = []
        for _ in range(RUNS):
            run, printed, err = run_child(__file__, [str(i)])
            if run is None:
                raise SystemExit(f"recording failed: {err}")
            doc = run
            if printed in results:
                counts[results.index(printed)] += 1
            else:
                results.append(printed)
                counts.append(1)
        doc.update(prints=results, runs=counts)
        cases.append(doc)
        print(json.dumps(doc)[:600], flush=True)
        out.write_text(json.dumps({
            "flink": f"{FLINK}; the datagen table of interval_late_data.py at {RATE} rows/s, "
                     "pipeline.auto-watermark-interval 0, execution.buffer-timeout.interval "
                     f"0 ms; {RUNS} runs each, every distinct result kept (runs: how many "
                     "gave it)", "cases": cases}, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
