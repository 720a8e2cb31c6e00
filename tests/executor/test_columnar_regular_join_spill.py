"""Bounded BATCH regular joins (``arrow/joinspill.py`` with ``arrow/regular_join.py``): past
``flowc.executor.state-memory`` a regular join subtask's input spills to runs sorted by key
hash, is joined key range by key range, and its output records go to runs of their own
merged back in the in-memory join's order - records, kinds (``-D`` of padded rows),
timestamps and order all equal; memory holds a range, not the input. End to end on Spark
the result equals the reference executor's."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.executor.columnar_jobs import collect_job
from tests.executor.join_spill import add_all, run_batch_rows, side_runs, spilled_peak

from flowc.executor import run_job_graph, run_reference
from flowc.executor.arrow import convert
from flowc.executor.arrow.joinspill import JoinPart, SpillingJoin
from flowc.executor.arrow.plan import plan_members
from flowc.executor.arrow.regular_join import RegularJoinTask
from flowc.parser import compile_source

KINDS = ("join", "left join", "right join", "full join")


def _task(kind: str, on: str = "k") -> tuple[RegularJoinTask, tuple[pa.Schema, pa.Schema]]:
    """The columnar executor's join of ``a | <kind> b on <on>`` (as the planner makes it)."""
    script = compile_source(
        "source a (k string, n int, v double) from csv 'a.csv';\n"
        "source b (k string, n int, v double) from csv 'b.csv';\n"
        f"a | {kind} b on {on} | print;\n", "t.flow", options={"mode": "batch"})
    members = plan_members(script.env.get_job_graph())
    assert isinstance(members, dict)
    m = next(m for ms in members.values() for m in ms if m.kind == "regular_join")
    schemas = (convert.arrow_schema(m.spec.schemas[0]), convert.arrow_schema(m.spec.schemas[1]))
    return RegularJoinTask(m.spec, convert.arrow_schema(m.out_schema)), schemas


rows = st.lists(st.tuples(st.integers(0, 1),                                  # side
                          st.sampled_from(["a", "b", None, "ü", "c"]),        # k
                          st.sampled_from([1, 2, None]),                      # n
                          st.sampled_from([0.5, None, -0.0, 0.0, float("nan")]),  # v
                          st.integers(0, 5)), max_size=60)                    # ts


def _add(sj: SpillingJoin, seq: list[Any], cuts: list[int],
         schemas: tuple[pa.Schema, pa.Schema]) -> None:
    """``seq`` added as parts (runs of one side, also cut at ``cuts``)."""
    for lo, hi in side_runs([r[0] for r in seq], cuts):
        part, s = seq[lo:hi], seq[lo][0]
        sj.add(JoinPart(s, convert.from_rows([r[1:4] for r in part], [r[4] for r in part],
                                             schemas[s])))


def _feed(sj: SpillingJoin, seq: list[Any], cuts: list[int],
          schemas: tuple[pa.Schema, pa.Schema]) -> list[Any]:
    """``seq`` as parts (runs of one side, also cut at ``cuts``), then fired: the output
    as (repr of the row, kind, timestamp), in order."""
    _add(sj, seq, cuts, schemas)
    out = []
    for c in sj.fired():
        kinds = c.batch.column(convert.KIND).to_pylist() if convert.KIND in \
            c.batch.schema.names else [0] * c.num_rows
        out += [(repr(r), k, t) for r, k, t in zip(c.rows(), kinds, c.timestamps())]
    return out


@settings(max_examples=200, deadline=None, suppress_health_check=list(HealthCheck))
@given(seq=rows, kind=st.sampled_from(KINDS), on=st.sampled_from(["k", "v", "k and a.n = b.n"]),
       cuts=st.lists(st.integers(0, 60), max_size=8), limit=st.sampled_from([1, 300]),
       batch_rows=st.integers(1, 5))
def test_spilled_regular_join_equals_in_memory(seq: list[Any], kind: str, on: str,
                                               cuts: list[int], limit: int,
                                               batch_rows: int) -> None:
    """Spilled (a limit of 1 byte: every part is a run; 300: some) against the same
    parts joined in memory: equal output, order, kinds and timestamps included."""
    on = "a.k = b.k and a.n = b.n" if on.startswith("k and") else on
    task, schemas = _task(kind, on)
    expected = _feed(SpillingJoin(task, schemas, 1 << 40), seq, cuts, schemas)
    with run_batch_rows(batch_rows):
        sj = SpillingJoin(task, schemas, limit)
        actual = _feed(sj, seq, cuts, schemas)
    assert actual == expected
    if limit == 1 and seq:
        assert sj.spilled_bytes > 0
    assert sj.directory is None


@pytest.mark.parametrize("kind", ["join", "full join"])
def test_spilled_regular_join_holds_a_range(kind: str) -> None:
    """300k records of 3000 keys (~6 MB of Arrow input, ~15 MB of output) through a
    256 kB state memory: the Arrow bytes held while adding and firing (sampled per part and
    per output chunk) stay a fraction of the input, every record comes out, and the runs'
    directory is gone after."""
    n, keys = 300_000, 3000
    rng = np.random.default_rng(11)
    key = np.array([f"k{i}" for i in range(keys)], dtype=object)[rng.integers(0, keys, n)]
    # The right side is the small one (a dimension table's shape): ~3% of the records.
    side = (rng.random(n) < 0.03).astype(np.int64)
    task, schemas = _task(kind)
    step = 4096

    def parts() -> Any:
        for i in range(0, n, step):
            for s in (0, 1):
                m = side[i:i + step] == s
                yield JoinPart(s, convert.Chunk(pa.record_batch(
                    [pa.array(key[i:i + step][m], pa.string()),
                     pa.array(np.arange(i, i + len(m))[m] % 7, pa.int32()),
                     pa.array(np.arange(i, i + len(m))[m] * 0.5, pa.float64())],
                    schema=schemas[s]), pa.array(np.arange(i, i + len(m))[m], pa.int64())))
    whole = SpillingJoin(task, schemas, 1 << 40)
    total = add_all(whole, parts())
    expected = [out for out in whole.fired()]
    expected_rows = sum(out.num_rows for out in expected)
    head = expected[0].batch.slice(0, 1000)
    del expected
    sj = SpillingJoin(task, schemas, 256 << 10)
    rows: list[int] = []
    first: list[pa.RecordBatch] = []  # the first output chunk's first 1000 records

    def seen(out: convert.Chunk) -> None:
        rows.append(out.num_rows)
        if not first:
            first.append(out.batch.slice(0, 1000))
    peak, directory = spilled_peak(sj, parts(), seen)
    assert sum(rows) == expected_rows > n / 2
    assert first and first[0].equals(head.slice(0, first[0].num_rows))
    assert peak < total / 4, (peak, total)
    assert sj.spilled_bytes > total
    assert not os.path.exists(directory)


@pytest.mark.spark
@pytest.mark.parametrize("kind", ["join", "full join"])
def test_spilled_regular_join_job_equals_reference(spark: Any, tmp_path: Path,
                                                   kind: str) -> None:
    """A 1 kB state memory: every BATCH regular join subtask spills its input and its
    output; the result is the reference executor's, list for list (``-D`` kinds
    included)."""
    for name, mul, keys in (("a", 31, 13), ("b", 17, 11)):
        lines = ["k,n,ts"] + [f"u{i % keys},{i % 7},{i * mul % 16_000}" for i in range(400)]
        (tmp_path / f"{name}.csv").write_text("\n".join(lines) + "\n")
    text = ("set parallelism = 2;\nset flowc.executor.state_memory = '1k';\n"
            f"source a (k string, n int, ts timestamp) from csv '{tmp_path}/a.csv';\n"
            f"source b (k string, n int, ts timestamp) from csv '{tmp_path}/b.csv';\n"
            f"let result = a | {kind} b on k | map a.k, a.n, b.n as m;\n")
    actual = run_job_graph(collect_job(text, tmp_path, "columnar"))
    expected = run_reference(collect_job(text, tmp_path, "row"))
    assert len(expected.collected["result"]) > 5000
    assert [repr(r) for r in actual.collected["result"]] == \
        [repr(r) for r in expected.collected["result"]]


@given(values=st.lists(st.one_of(st.none(), st.integers(-(1 << 63), (1 << 63) - 1),
                                 st.integers(-5, 5)), max_size=30))
def test_no_repeats_counts_like_count_distinct(values: list[Any]) -> None:
    """The join's unique-column check (dense integers by counting, else a hash count)."""
    import pyarrow.compute as pc

    from flowc.executor.arrow.regular_join import _no_repeats

    col = pa.array(values, pa.int64())
    assert _no_repeats(col, len(values)) == \
        (pc.count_distinct(col, mode="all").as_py() == len(values))


@settings(max_examples=200, deadline=None, suppress_health_check=list(HealthCheck))
@given(seq=rows, kind=st.sampled_from(KINDS), cuts=st.lists(st.integers(0, 60), max_size=8))
def test_records_made_in_order_need_no_sort(seq: list[Any], kind: str,
                                            cuts: list[int]) -> None:
    """When ``records`` says its output is made in order, sorting it by its places
    changes nothing; an inner join with one side's records all before the other's is made
    in order (the sort is skipped: the check's ``min(initial=0)`` never allowed it)."""
    from flowc.executor.arrow.joins import JoinInput

    task, schemas = _task(kind)
    for separated in (False, True):
        parts = sorted(seq, key=lambda r: r[0]) if separated else seq
        sj = SpillingJoin(task, schemas, 1 << 40)
        _add(sj, parts, cuts, schemas)
        made = task.records(JoinInput((sj._side(0), sj._side(1))))
        if made is None:
            continue
        _, place, ordered = made
        if ordered:
            assert list(np.lexsort(place[::-1])) == list(range(len(place[0])))
        if separated and kind == "join":
            assert ordered
