"""Datagen without a row limit and socket sources in columnar micro-batches
(``streaming/columnar.py`` puts a source subtask's records of the batch - the row path's
``streaming.sources.source_records`` - into columns): the same multi-batch jobs on the
columnar and the row path give the same outputs, stats and row-format snapshots after
every batch, also switching paths between batches, idleness timeouts included. No Spark: the batches run in this process
(``test_streaming_columnar.Driver``; a share is what the driver hands the source subtask:
a datagen subtask's row numbers [lo, hi), a socket subtask's lines)."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

from .columnar_paths import Driver, row_and_columnar

DATAGEN = """set parallelism = 2;
source g (k int, v int, ts timestamp) from datagen rows 50 every 1s (
    k = random_int(0, 3), v = random_int(-5, 50),
    ts = timestamp '2024-05-01' + index * 37ms - random_int(0, 1500) * 1ms)
  watermark ts - 1s;
g | key by k | window tumbling 1s | aggregate count(*) as n, sum(v) as s, max(ts) as hi
  | print 'dg';
g | key by k | aggregate count(*) as n, min(v) as lo | print 'roll';
"""
SOCKET = """set parallelism = 2;
source s (k string, v int, ts timestamp) from socket 'localhost:9' options (format = csv)
  watermark ts - 500ms;
s | filter v > 0 | key by k | window tumbling 2s allowed lateness 2s
  | aggregate count(*) as n, avg(v) as a | print 'sock';
"""


def _same(runs: dict[str, list[Any]]) -> None:
    for name in ("col", "col-row", "row-col"):
        for b, (r, c) in enumerate(zip(runs["row"], runs[name])):
            assert c["sinks"] == r["sinks"], (name, b)
            assert c["stats"] == r["stats"], (name, b)
            assert c["snapshots"] == r["snapshots"], (name, b)


def test_datagen_batches_equal_on_both_paths(tmp_path: Path) -> None:
    d = Driver(DATAGEN, tmp_path)
    shares = [[0, 40], [40, 80], [80, 80], [80, 200], [200, 230]]  # rows [lo, hi) a batch
    runs = row_and_columnar(d, shares)
    _same(runs)
    assert sum(len(v) for r in runs["col"] for v in r["sinks"].values()) > 100


def test_socket_batches_equal_on_both_paths(tmp_path: Path) -> None:
    rnd = random.Random(3)
    d = Driver(SOCKET, tmp_path)
    lines = [[f"{rnd.choice('abc')},{rnd.randrange(-3, 20)},"
              f"{max(0, 1500 * b + rnd.randrange(-4000, 2000))}"
              for _ in range(rnd.randrange(0, 12))] for b in range(7)]
    runs = row_and_columnar(d, lines)
    _same(runs)
    assert any(r["sinks"] for r in runs["col"])


def test_an_idleness_timeout_runs_columnar_too(tmp_path: Path) -> None:
    """A job with an idleness timeout plans columnar (``columnar_idle.py``; channels
    going idle are tested in test_streaming_columnar_idleness.py): the same on both
    paths."""
    text = DATAGEN.format().replace("watermark ts - 1s;", "watermark ts - 1s idle after 1s;")
    d = Driver(text, tmp_path)
    assert all(c.statuses for c in d.chains.values())
    shares = [[0, 40], [40, 40], [40, 40], [40, 120], [120, 120], [120, 120], [120, 160]]
    runs = row_and_columnar(d, shares)
    _same(runs)
    assert any(r["sinks"] for r in runs["col"])
