"""benchmarks/streaming_designs.py's transformWithState design routes as Flink does: its
``mapInArrow`` chain filters like the clicks job, sends each record to the state group of
its Flink key group / subtask and closes with one watermark row per group; its chosen
grouping values land on the wanted Spark shuffle partitions (Spark's own ``hash()``)."""

from __future__ import annotations

import datetime as dt
import sys
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from flowc.keygroups import assign_key_to_parallel_operator, assign_to_key_group

BENCH = Path(__file__).resolve().parent.parent / "benchmarks"


@pytest.fixture(scope="module")
def designs() -> Any:
    sys.path.insert(0, str(BENCH))
    try:
        import streaming_designs
    finally:
        sys.path.remove(str(BENCH))
    return streaming_designs


def _batch(rows: list[tuple[str | None, str | None, str, int]]) -> pa.RecordBatch:
    ts = [dt.datetime.fromtimestamp(ms / 1000, dt.UTC) for *_, ms in rows]
    return pa.RecordBatch.from_arrays(
        [pa.array([r[0] for r in rows], pa.string()), pa.array([r[1] for r in rows], pa.string()),
         pa.array([r[2] for r in rows], pa.string()), pa.array(ts, pa.timestamp("us", "UTC"))],
        names=["user_id", "article_id", "action", "ts"])


@pytest.mark.parametrize("groups", ["subtask", "keygroup", "naive"])
def test_chain_filters_routes_and_ends_with_watermarks(designs: Any, groups: str) -> None:
    values, _ = designs.group_values(groups)
    users = [f"u{i}" for i in range(300)] + ["Zoë"]  # a non-ASCII key: hashed one by one
    rows = [(u, "a1", "AppClick" if i % 3 else "view", 1_000_000 + i)
            for i, u in enumerate(users)]
    rows += [(None, "a1", "appclick", 5_000_000), ("u1", None, "appclick", 1)]
    out = pa.Table.from_batches(list(designs.make_chain(values)(iter(
        [_batch(rows[:150]), _batch(rows[150:])]))))
    data = out.filter(out.column("wm").is_null())
    marks = out.filter(out.column("wm").is_valid())
    kept = [(u, ms) for u, a, act, ms in rows if u and a and act.lower() == "appclick"]
    assert list(zip(data.column("user_id").to_pylist(), data.column("ts").to_pylist())) == kept
    for u, g in zip(data.column("user_id").to_pylist(), data.column("g").to_pylist()):
        assert g == values[assign_to_key_group(u, designs.MAX_PAR)]
        if groups != "keygroup":  # a group is a subtask: Flink's subtask of the key
            subtask = assign_key_to_parallel_operator(u, designs.MAX_PAR, designs.P)
            assert g == (subtask if groups == "naive" else
                         designs.placed_values(list(range(designs.P)), designs.P)[subtask])
    # the watermark of every record read (the filtered ones too), to every group, last
    assert sorted(marks.column("g").to_pylist()) == sorted(set(values.tolist()))
    assert set(marks.column("wm").to_pylist()) == {5_000_000 - designs.DELAY - 1}
    assert out.slice(len(data)).equals(marks)


@pytest.mark.spark
def test_placed_values_land_on_their_partitions(designs: Any) -> None:
    from flowc.executor import get_spark

    spark = get_spark("local[2]")
    for n in (2, 3, 8):
        wanted = [i % n for i in range(2 * n)]
        values = designs.placed_values(wanted, n)
        assert len(set(values)) == len(values)
        got = spark.createDataFrame([(v,) for v in values], "v int") \
            .selectExpr(f"pmod(hash(v), {n}) AS p").collect()
        assert [r.p for r in got] == wanted
