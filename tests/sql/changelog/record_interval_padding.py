"""Records tests/sql/changelog/interval_padding.json from a real Flink 2.3 (not run by the
tests): outer interval joins over out-of-order rows (interval_padding_data.py), so rows arrive
behind the watermark. Flink's table runtime (RowTimeIntervalJoin) joins such a row with the
other side's rows still cached and pads it at once when its window has passed.

Watermarks and delivery are made deterministic: ``pipeline.auto-watermark-interval`` 0 (the
watermark assigner emits each advance after its row) and no buffer timeout (the network
buffers are flushed when the source ends, so the join mostly takes its two inputs
round-robin from the start). Each query is run three times; the fixture keeps each distinct
result (the two channels may still reach the join at different moments):

    /work/flink-sql-venv/bin/python tests/sql/changelog/record_interval_padding.py
"""

import json
import sys
import tempfile
from pathlib import Path

here = Path(__file__).resolve().parent
sys.path.insert(0, str(here))
from interval_padding_data import COLUMNS, EVENTS, LEFT, RIGHT  # noqa: E402
from recording import emit, run_child  # noqa: E402

ON = "l.k = r.k AND r.ts BETWEEN l.ts - INTERVAL '1' SECOND AND l.ts + INTERVAL '1' SECOND"
QUERIES = [
    f"SELECT l.v, r.v AS rv FROM {LEFT} l LEFT JOIN {RIGHT} r ON {ON}",
    f"SELECT l.v, r.v AS rv FROM {LEFT} l RIGHT JOIN {RIGHT} r ON {ON}",
    f"SELECT l.v, r.v AS rv, l.ts, r.ts AS rts FROM {LEFT} l FULL JOIN {RIGHT} r ON {ON}",
    f"SELECT l.v, r.v AS rv FROM {LEFT} l JOIN {RIGHT} r ON {ON}",
]
# Left out: ``r.ts > l.ts - INTERVAL '2' SECOND AND r.ts < l.ts`` (a window wholly before the
# left row) gave three different results in three Flink runs with this table.
RUNS = 3


def record_one(query: str) -> dict:
    from pyflink.table import EnvironmentSettings, TableEnvironment

    tmp = Path(tempfile.mkdtemp())
    t = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    for k, v in (("parallelism.default", "1"), ("table.local-time-zone", "UTC"),
                 ("pipeline.auto-watermark-interval", "0"),
                 ("execution.buffer-timeout.enabled", "false")):
        t.get_config().set(k, v)
    (tmp / "events.csv").write_text(EVENTS, encoding="utf-8")
    t.execute_sql(f"CREATE TABLE events ({COLUMNS}) WITH ('connector' = 'filesystem', "
                  f"'path' = '{tmp / 'events.csv'}', 'format' = 'csv')")
    out: dict = {"query": query}
    plan = t.explain_sql(query).split("== Optimized Physical Plan ==")[-1]
    out["plan"] = [line.strip() for line in plan.split("==")[0].splitlines() if "Join" in line]
    types = [str(x) for x in t.sql_query(query).get_schema().get_field_data_types()]
    cols = ", ".join(f"`c{i}` {ty}" for i, ty in enumerate(types))
    t.execute_sql(f"CREATE TABLE sink ({cols}) WITH ('connector' = 'print')")
    t.execute_sql(f"INSERT INTO sink {query}").wait()
    return out


def main() -> None:
    if len(sys.argv) == 2:
        emit(record_one(QUERIES[int(sys.argv[1])]))
        return
    cases = []
    for i in range(len(QUERIES)):
        runs = []
        for _ in range(RUNS):
            doc, printed, err = run_child(__file__, [str(i)])
            if doc is None:
                raise SystemExit(f"recording failed: {err}")
            doc["print"] = printed
            runs.append(doc)
        doc = runs[0]
        # the join takes its two channels as they arrive: the runs may interleave them
        # differently; every distinct result is kept, in the order first seen
        doc["prints"] = []
        for r in runs:
            if r["print"] not in doc["prints"]:
                doc["prints"].append(r["print"])
        del doc["print"]
        cases.append(doc)
        print(json.dumps(runs[0])[:300], flush=True)
    (here / "interval_padding.json").write_text(json.dumps({
        "flink": "2.3.0 (PyFlink TableEnvironment, STREAMING mode, parallelism 1, "
                 "table.local-time-zone UTC, pipeline.auto-watermark-interval 0, "
                 f"execution.buffer-timeout.enabled false; {RUNS} runs each, every distinct "
                 "result kept); "
                 "the table in interval_padding_data.py",
        "cases": cases}, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
