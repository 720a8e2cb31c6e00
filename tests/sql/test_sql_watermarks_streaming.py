"""A SQL table's exact watermark on the streaming executor's micro-batches, without Spark
(tests/streaming/test_streaming_columnar.py's Driver): the row and the columnar path give
the same outputs, stats and snapshots batch by batch, with Flink's default interval (eager
emission) and with ``pipeline.auto-watermark-interval`` 0 (no periodic count, every rise
emitted); the files' timestamps start near 0, below the exact generator's floor."""

from __future__ import annotations

from pathlib import Path

import pytest

from streaming.columnar_paths import SqlDriver
from streaming.test_streaming_columnar import _file

SQL = """SET 'parallelism' = '2';
{setting}CREATE TABLE clicks (user_id STRING, action STRING, score DOUBLE, ts TIMESTAMP(3),
  WATERMARK FOR ts AS ts - INTERVAL '1' SECOND
) WITH ('connector' = 'filesystem', 'path' = '{src}', 'format' = 'csv',
        'source.monitor-interval' = '100ms', 'dead-letter' = '{src}../bad/');
CREATE TABLE out (user_id STRING, window_end TIMESTAMP(3), n BIGINT, s DOUBLE)
  WITH ('connector' = 'print');
INSERT INTO out SELECT user_id, window_end, COUNT(*), SUM(score)
FROM TABLE(TUMBLE(TABLE clicks, DESCRIPTOR(ts), INTERVAL '2' SECOND))
GROUP BY window_start, window_end, user_id;
"""


@pytest.mark.parametrize("setting", ["", "SET 'pipeline.auto-watermark-interval' = '0';\n"],
                         ids=["default", "interval-0"])
def test_exact_watermarks_on_both_streaming_paths(tmp_path: Path, setting: str) -> None:
    d = SqlDriver(SQL.replace("{setting}", setting), tmp_path)
    row = d.run("row", 6, lambda b: False)
    col = d.run("col", 6, lambda b: True)
    for b, (r, c) in enumerate(zip(row, col)):
        assert c["sinks"] == r["sinks"], b
        assert c["stats"] == r["stats"], b
        assert c["snapshots"] == r["snapshots"], b
    assert any(r["sinks"] for r in row[:-1])  # windows fired before the last batch
    assert sum(s["late"] for r in row for s in r["stats"].values()) > 0
    assert _file  # the Driver's files: records within [3000k, 3000k + 2500), late ones
