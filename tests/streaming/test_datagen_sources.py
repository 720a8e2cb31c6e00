"""Datagen without a row limit (Flink's rule: no 'number-of-rows' = unbounded, at
'rows-per-second'): AUTOMATIC = STREAMING, the bounded executors refuse it, and on the
streaming executor the rows are numbered by Spark's offsets log, so a restart on the same
checkpoint continues exactly after the last committed row (no gap, no duplicate)."""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Any

import pytest

from flowc.errors import UnsupportedError
from flowc.executor import run_reference
from flowc.executor.streaming.sources import datagen_rows_per_batch
from flowc.operators import DatagenSource, RateDatagenSource
from flowc.sql import compile_sql
from flowc.transformations import RuntimeExecutionMode

from .harness import DATAGEN_TRIGGER_MS, last_batch, run_feeding

SQL = """SET 'parallelism.default' = '2';
CREATE TABLE g (id BIGINT, v BIGINT) WITH ('connector' = 'datagen'{rate},
  'fields.id.kind' = 'sequence', 'fields.id.start' = '100',
  'fields.v.min' = '1', 'fields.v.max' = '9');
CREATE TABLE out (id BIGINT, v BIGINT)
  WITH ('connector' = 'filesystem', 'path' = '{out}', 'format' = 'csv');
INSERT INTO out SELECT id, v FROM g;
"""


def _env(rate: str, out: str = "out/", mode: str = "") -> Any:
    return compile_sql(mode + SQL.format(rate=rate, out=out), "job.sql").env


def _spec(env: Any) -> Any:
    sg = env.get_stream_graph()
    return sg.nodes[sg.source_ids[0]].operator


def test_datagen_without_a_row_limit_is_unbounded_and_streams() -> None:
    auto = "SET 'execution.runtime-mode' = 'automatic';\n"
    env = _env(", 'rows-per-second' = '50'", mode=auto)
    spec = _spec(env)
    assert isinstance(spec, RateDatagenSource) and spec.rows_per_second == 50
    assert not spec.bounded
    assert env.get_stream_graph().config.mode is RuntimeExecutionMode.STREAMING
    # Flink's default rate: 10000 rows a second
    assert _spec(_env("")).rows_per_second == 10_000
    bounded = _env(", 'number-of-rows' = '5'", mode=auto)
    assert isinstance(_spec(bounded), DatagenSource)
    assert bounded.get_stream_graph().config.mode is RuntimeExecutionMode.BATCH
    # the generators are the bounded source's: the same rows for the same indexes
    assert [spec.generator(i) for i in range(5)] == \
        [_spec(bounded).generator(i) for i in range(5)]


def test_the_unbounded_datagen_plan_equals_the_bounded_ones_in_streaming_mode() -> None:
    mode = "SET 'execution.runtime-mode' = 'streaming';\n"
    unbounded = compile_sql(mode + SQL.format(rate="", out="out/"), "job.sql").env
    bounded = compile_sql(mode + SQL.format(rate=", 'number-of-rows' = '9'", out="out/"),
                          "job.sql").env
    assert unbounded.get_job_graph().to_dict() == bounded.get_job_graph().to_dict()


def test_the_reference_executor_refuses_it() -> None:
    with pytest.raises(UnsupportedError, match="'Source: g' is unbounded "
                                               r"\(it generates rows without a row limit\)"):
        run_reference(_env("").get_job_graph())


def test_rows_per_batch_follow_the_rate_and_the_trigger() -> None:
    spec = _spec(_env(", 'rows-per-second' = '50'"))
    assert datagen_rows_per_batch(spec, 1000) == 50
    assert datagen_rows_per_batch(spec, 200) == 10
    assert datagen_rows_per_batch(spec, 0) == 50  # as fast as possible: a second's rows
    assert datagen_rows_per_batch(spec, 1) == 1  # at least one


def _rows(d: Path) -> list[tuple[int, int]]:
    out = []
    for f in sorted(d.glob("part-*.csv")):
        with open(f, newline="") as fh:
            r = csv.reader(fh)
            next(r)
            out.extend((int(a), int(b)) for a, b in r)
    return out


def _run_batches(env: Any, ckpt: Path, n: int) -> None:
    """Run until ``n`` more micro-batches completed on ``ckpt``."""
    start = last_batch(ckpt)
    run_feeding(env.get_job_graph(), ckpt, lambda progress: progress.batch(start + n),
                trigger_ms=DATAGEN_TRIGGER_MS)


@pytest.mark.spark
def test_a_restart_continues_after_the_last_committed_row(spark: Any, tmp_path: Path) -> None:
    env = _env(", 'rows-per-second' = '30'", str(tmp_path / "out") + "/")
    _run_batches(env, tmp_path / "ck", 3)
    first = _rows(tmp_path / "out")
    _run_batches(env, tmp_path / "ck", 2)
    rows = _rows(tmp_path / "out")
    per_batch = datagen_rows_per_batch(_spec(env), DATAGEN_TRIGGER_MS)
    assert len(first) >= 3 * per_batch and len(rows) > len(first)
    ids = sorted(i for i, _ in rows)
    # every row once: ids 100, 101, ... without a gap or a duplicate across the restart
    assert ids == list(range(100, 100 + len(ids)))
    gen = _spec(env).generator
    assert sorted(rows) == [gen(i) for i in range(len(ids))]


def test_flow_datagen_rows_every_duration_is_the_unbounded_datagen() -> None:
    from flowc.errors import FlowTypeError
    from flowc.parser import compile_source

    text = "source t (id int, v double) from datagen rows 20 every 2s{gens};\nt | print;\n"
    env = compile_source(text.format(gens=" (v = 0.5)"), "job.flow").env
    spec = _spec(env)
    assert isinstance(spec, RateDatagenSource) and spec.rows_per_second == 10
    assert spec.generator(3) == (3, 0.5)
    assert env.get_stream_graph().config.mode is RuntimeExecutionMode.STREAMING
    bounded = compile_source("source t (id int) from datagen rows 5;\nt | print;\n",
                             "job.flow").env
    assert isinstance(_spec(bounded), DatagenSource)
    with pytest.raises(FlowTypeError, match="at least one row per second") as info:
        compile_source("source t (id int) from datagen rows 1 every 2s;\nt | print;\n",
                       "job.flow")
    assert info.value.span is not None and info.value.span.line == 1
