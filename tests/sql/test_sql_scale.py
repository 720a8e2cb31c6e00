"""Updating jobs of moderate size on the reference executor: a rolling COUNT(DISTINCT) over
one key emits one row per record, and each row's accumulator once held a copy of the whole
set (40k rows took 16.5 GB). The rows now share one set."""

from __future__ import annotations

import tracemalloc
from pathlib import Path

from test_sql_results import run_sql

from flowc.rowkind import kind_of

TABLE = """
CREATE TABLE clicks (user_id STRING, article_id STRING, action STRING, ts TIMESTAMP(3),
  WATERMARK FOR ts AS ts - INTERVAL '1' SECOND)
  WITH ('connector' = 'filesystem', 'path' = 'many.csv', 'format' = 'csv');
"""


def test_rolling_count_distinct_memory(tmp_path: Path) -> None:
    n = 5000
    lines = ["user_id,article_id,action,ts"] + [
        f"u1,a{i},appclick,2024-05-01T10:{i // 60000:02d}:{i // 1000 % 60:02d}.{i % 1000:03d}Z"
        for i in range(n)]
    (tmp_path / "many.csv").write_text("\n".join(lines) + "\n", encoding="utf-8")
    tracemalloc.start()
    try:
        _, rows = run_sql(tmp_path, "SELECT user_id, COUNT(DISTINCT article_id) AS n, COUNT(*) "
                          "AS c FROM clicks GROUP BY user_id;", parallelism=1, tables=TABLE)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    # +I, then -U old / +U new per record
    assert rows[-1] == ("u1", n, n) and len(rows) == 2 * n - 1
    assert [r[1] for r in rows if kind_of(r) != "-U"] == list(range(1, n + 1))
    assert [r[1] for r in rows if kind_of(r) == "-U"] == list(range(1, n))
    # one set of n values shared by n rows; a copy per row would be ~n^2/2 entries (>300 MB)
    assert peak < 60 * 1024 * 1024, peak
