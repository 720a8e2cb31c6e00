"""Top-N and deduplication in BATCH mode: Flink plans a sort-based Rank
(BatchPhysicalRank) that emits each key's final rows once, insert-only - not the streaming
changelog. Expected rows recorded once from Flink 2.3 (PyFlink TableEnvironment in batch
mode, parallelism 1, the same six rows; collect() sorted; the dedup query was recorded
without `ts` in the inner select list, which flowc does not accept yet: same rows)."""

from __future__ import annotations

from pathlib import Path

import pytest

from flowc.executor.reference import run_reference
from flowc.sql import compile_sql

ROWS = ("a,1,2024-01-01 00:00:00\na,5,2024-01-01 00:00:01\nb,3,2024-01-01 00:00:02\n"
        "a,4,2024-01-01 00:00:03\nb,9,2024-01-01 00:00:04\na,7,2024-01-01 00:00:05\n")
TOP2 = ("SELECT u, amount, rn FROM (SELECT u, amount, ROW_NUMBER() OVER (PARTITION BY u "
        "ORDER BY amount DESC) AS rn FROM o) WHERE rn <= 2")
FIRST = ("SELECT u, amount FROM (SELECT u, amount, ts, ROW_NUMBER() OVER (PARTITION BY u "
         "ORDER BY ts ASC) AS rn FROM o) WHERE rn = 1")
FLINK = {TOP2: ["+I[a, 5, 2]", "+I[a, 7, 1]", "+I[b, 3, 2]", "+I[b, 9, 1]"],
         FIRST: ["+I[a, 1]", "+I[b, 3]"]}


def _script(tmp: Path, query: str, parallelism: int, sink: str = "") -> str:
    (tmp / "o.csv").write_text(ROWS, encoding="utf-8")
    return (f"SET 'execution.runtime-mode' = 'batch';\nSET 'parallelism' = '{parallelism}';\n"
            "CREATE TABLE o (u STRING, amount INT, ts TIMESTAMP(3)) WITH ('connector' = "
            f"'filesystem', 'path' = '{tmp / 'o.csv'}', 'format' = 'csv', "
            f"'csv.header' = 'false');\n{sink}{query};\n")


@pytest.mark.parametrize("parallelism", [1, 2])
@pytest.mark.parametrize("query", list(FLINK))
def test_batch_rank_prints_final_rows_only(tmp_path: Path, query: str,
                                           parallelism: int) -> None:
    script = compile_sql(_script(tmp_path, query, parallelism), "q.sql")
    lines = [x.split("> ", 1)[-1] for x in run_reference(script.env.get_job_graph()).printed]
    assert sorted(lines) == FLINK[query]


def test_batch_rank_feeds_a_file_sink(tmp_path: Path) -> None:
    """Insert-only in BATCH, as Flink: a filesystem table takes it (STREAMING refuses)."""
    out = tmp_path / "out"
    sink = (f"CREATE TABLE t (u STRING, amount INT) WITH ('connector' = 'filesystem', "
            f"'path' = '{out}', 'format' = 'csv', 'csv.header' = 'false');\nINSERT INTO t ")
    script = compile_sql(_script(tmp_path, FIRST, 1, sink), "q.sql")
    run_reference(script.env.get_job_graph())
    rows = sorted(line for f in out.rglob("*") if f.is_file() and not f.name.startswith(".")
                  for line in f.read_text(encoding="utf-8").splitlines() if line)
    assert rows == ["a,1", "b,3"]
