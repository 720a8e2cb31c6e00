"""benchmarks/executor.py's join job: flowc (columnar), the DataFrame program and the RDD
program produce the same rows on a small input, and flowc runs it columnar."""

from __future__ import annotations

import collections
import sys
from pathlib import Path
from typing import Any

import pytest

from flowc.executor import run_job_graph
from flowc.executor.arrow.plan import plan_members

pytestmark = pytest.mark.spark
BENCH = Path(__file__).resolve().parent.parent / "benchmarks"


def test_join_benchmark_contenders_agree(tmp_path: Path) -> None:
    from flowc.executor import get_spark

    sys.path.insert(0, str(BENCH))
    try:
        import join_job
    finally:
        sys.path.remove(str(BENCH))
    spark = get_spark("local[2]")
    clicks, impressions = join_job.generate(str(tmp_path), 3000)
    jg = join_job.flowc_job(clicks, impressions, 2)
    members = plan_members(jg)
    assert isinstance(members, dict), members
    assert {"window_join", "window"} <= {m.kind for ms in members.values() for m in ms}
    flowc_rows: list[Any] = run_job_graph(jg)["result"]
    df_rows = join_job.dataframe_job(spark, clicks, impressions)
    rdd_rows = join_job.rdd_job(spark, clicks, impressions, 2)
    assert len(flowc_rows) > 50
    counted = collections.Counter(map(tuple, flowc_rows))
    assert counted == collections.Counter(map(tuple, df_rows))
    assert counted == collections.Counter(map(tuple, rdd_rows))
