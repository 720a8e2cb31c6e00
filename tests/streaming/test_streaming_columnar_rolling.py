"""Rolling aggregates in columnar micro-batches (``arrow/rolling.py`` on the streaming
executor, its state converted to and from the row ReduceOperator's snapshot by
``streaming/rolling_state.py``): the same multi-batch jobs on the columnar and the row
path give the same outputs, stats and row-format snapshots after every batch, a
checkpoint resumes across the paths, and the printed changelog is the reference
executor's micro-batch model's. No Spark: the batches run in this process
(``test_streaming_columnar.Driver``)."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from .columnar_paths import (
    Driver,
    SqlDriver,
    job_graph,
    model_lines,
    printed,
    random_click,
    row_and_columnar,
    same_on_every_path,
    write_batches,
)

ROLLING = """set parallelism = 2;
source clicks (user_id string, action string, score double, n int, ts timestamp)
  from csv '{src}' monitor every 100ms
  watermark ts - 2s;
let totals = clicks | filter action <> 'skip' | key by user_id
  | aggregate count(*) as c, count(score) as cs, count(distinct action) as d,
      sum(score) as s, sum(n) as sn, avg(score) as a, avg(n) as an, min(ts) as lo,
      max(action) as hi, first(action) as f, last(score) as l;
totals | print 'totals';
totals | key by c | aggregate count(*) as k, sum(sn) as t, max(lo) as m, min(s) as ms
  | print 'levels';
"""
SQL = """SET 'parallelism.default' = '2';
CREATE TABLE clicks (user_id STRING, action STRING, score DOUBLE, n INT, ts TIMESTAMP(3),
  WATERMARK FOR ts AS ts - INTERVAL '2' SECOND)
  WITH ('connector' = 'filesystem', 'path' = '{src}', 'format' = 'csv',
        'source.monitor-interval' = '100ms');
CREATE TABLE out (user_id STRING, c BIGINT, s DOUBLE, d BIGINT, lo TIMESTAMP(3))
  WITH ('connector' = 'print');
CREATE TABLE levels (c BIGINT, k BIGINT) WITH ('connector' = 'print');
INSERT INTO out SELECT user_id, COUNT(*), SUM(score), COUNT(DISTINCT action), MIN(ts)
  FROM clicks GROUP BY user_id;
INSERT INTO levels SELECT c, COUNT(*) FROM (
  SELECT user_id, COUNT(*) AS c FROM clicks GROUP BY user_id) GROUP BY c;
"""


def _files(d: Driver, batches: int, seed: int, iso: bool = False) -> list[list[str]]:
    """One csv file per batch: random users, actions, nullable scores and counts."""
    rnd = random.Random(seed)
    return write_batches(d, [
        [random_click(rnd, 3000 * b, (-4000, 3000), 5, ["click", "buy", "view", "skip"], iso)
         for _ in range(rnd.randrange(0, 25))] for b in range(batches)])


@pytest.mark.parametrize("seed", range(4))
def test_rolling_aggregates_equal_on_both_paths_and_the_model(tmp_path: Path,
                                                              seed: int) -> None:
    d = Driver(ROLLING, tmp_path)
    files = _files(d, 6, seed)
    runs = row_and_columnar(d, files)
    same_on_every_path(runs)
    lines = printed(d, runs["col"])
    assert any(line.startswith("levels") and "-U[" in line for line in lines)
    assert lines == model_lines(job_graph(d, ROLLING), files).printed


def test_the_rolling_members_run_columnar(tmp_path: Path) -> None:
    """Not row by row: the insert-only aggregate is the vectorised ``RollingAggregate``,
    the one over the changelog the row ReduceOperator inside the chain."""
    from flowc.executor.arrow.rolling import RollingAggregate
    from flowc.executor.arrow.rowop import RollingRows
    from flowc.executor.streaming.columnar import ColumnarRun

    d = Driver(ROLLING, tmp_path)
    kinds = {v.id: [m.kind for m in d.chains[v.id].members] for v in d.plan.vertices}
    assert sum(k.count("rolling") for k in kinds.values()) == 2
    members = []
    for v in d.plan.vertices:
        run = ColumnarRun(v, d.chains[v.id], 0)
        members += [type(w) for w in run.program.windows.values()]
        run.close()
    assert sorted(t.__name__ for t in members) == sorted(
        [RollingAggregate.__name__, RollingRows.__name__])


@pytest.mark.parametrize("seed", range(2))
def test_sql_group_by_changelogs_equal_on_both_paths_and_the_model(tmp_path: Path,
                                                                  seed: int) -> None:
    d = SqlDriver(SQL, tmp_path)
    files = _files(d, 5, seed, iso=True)
    runs = row_and_columnar(d, files)
    same_on_every_path(runs)
    lines = printed(d, runs["col"])
    assert any("-U[" in line for line in lines)
    assert lines == model_lines(d.jg, files).printed


def test_a_state_ttl_keeps_the_rolling_aggregate_row_by_row(tmp_path: Path) -> None:
    from flowc.executor.streaming.columnar import plan_columnar
    from flowc.executor.streaming.plan import plan_streaming
    from flowc.parser import compile_source

    text = ROLLING.format(src=str(tmp_path) + "/").replace(
        "set parallelism = 2;", "set parallelism = 2;\nset table.exec.state.ttl = '1 h';")
    jg = compile_source(text, "job.flow").env.get_job_graph()
    why = plan_columnar(jg, plan_streaming(jg))
    assert isinstance(why, str) and "state TTL" in why, why
