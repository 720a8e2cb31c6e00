"""BATCH Top-N / deduplication vectorised (``arrow/rank.py``): random .flow ``top`` steps
on the columnar executor equal the reference executor (record for record, in order, with
the row numbers); the member fed in chunks, its state folded every few records, equals
the row operator's ``BatchTopN`` run record by record (no Spark); the SQL Top-N and dedup
recorded from Flink 2.3 in BATCH run columnar on Spark with Flink's rows.

Ties (few distinct values), nulls first / last, ascending and descending, keys of one or
two fields, null keys, keyless Top-N (parallelism 1), parallelism 1-3.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from tests.executor.columnar_jobs import collect_job, run_both, vertex_counts

from flowc.executor import run_job_graph
from flowc.executor.arrow.plan import plan_members

cells = st.tuples(
    st.sampled_from(["u1", "u2", "ü3", "", "u1", "u2"]),   # k (empty: null)
    st.sampled_from(["1", "2", "", "-4"]),                 # n int, nullable
    st.sampled_from(["a", "B", "", "b"]),                  # s string, nullable
    st.integers(0, 5).map(lambda i: i * 1000),             # ts millis (ties)
)
ITEM = st.sampled_from(["n", "n desc", "n nulls last", "n desc nulls first", "s", "s desc",
                        "ts", "ts desc", "k desc"])
programs = st.fixed_dictionaries({
    "rows": st.lists(cells, max_size=40),
    "p": st.integers(1, 3),
    "key": st.sampled_from(["key by k |", "key by k, n |", "key by s |", ""]),
    "n": st.integers(1, 4),
    "items": st.lists(ITEM, min_size=1, max_size=3, unique=True),
    "rank": st.booleans(),
    "post": st.sampled_from(["", "| filter n > 0 or n is null", "| map k, bump(n) as b"]),
})


def _script(prog: dict[str, Any], where: Path) -> str:
    rank = " as rnk" if prog["rank"] else ""
    return (f"set parallelism = {prog['p']};\n"
            "import udf tests.executor.columnar_udfs.bump(int) -> int;\n"
            f"source a (k string, n int, s string, ts timestamp) from csv '{where}/a.csv';\n"
            f"let result = a | {prog['key']} top {prog['n']} by {', '.join(prog['items'])}"
            f"{rank} {prog['post']};\n")


@pytest.mark.spark
@settings(max_examples=int(os.environ.get("FLOWC_DIFF_EXAMPLES", "25")), deadline=None,
          suppress_health_check=list(HealthCheck),
          phases=[Phase.explicit, Phase.reuse, Phase.generate])
@given(programs)
def test_batch_top_n_matches_reference(spark: Any, tmp_path_factory: Any,
                                       prog: dict[str, Any]) -> None:
    where = tmp_path_factory.mktemp("rank")
    (where / "a.csv").write_text("k,n,s,ts\n" + "".join(
        f"{k},{n},{s},{ts}\n" for k, n, s, ts in prog["rows"]))
    text = _script(prog, where)
    columnar = collect_job(text, where, "columnar")
    kinds = [m.kind for ms in plan_members(columnar).values()  # type: ignore[union-attr]
             for m in ms]
    assert "rank" in kinds, kinds
    runs = run_both(collect_job(text, where, "row"), columnar)
    if runs is None:  # .flow's key by refuses a null key: both executors alike
        return
    expected, actual = runs
    assert [repr(r) for r in actual.collected["result"]] == \
        [repr(r) for r in expected.collected["result"]], text
    assert vertex_counts(actual) == vertex_counts(expected)


class _State:
    def __init__(self) -> None:
        self.v: Any = None

    def value(self) -> Any:
        return self.v

    def update(self, v: Any) -> None:
        self.v = v


@settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
@given(rows=st.lists(cells, max_size=60), cuts=st.lists(st.integers(0, 60), max_size=5),
       n=st.integers(1, 3), items=st.lists(ITEM, min_size=1, max_size=3, unique=True),
       rank=st.booleans(), fold=st.integers(1, 8), two=st.booleans())
def test_folded_rank_equals_the_row_operator(rows: list[Any], cuts: list[int], n: int,
                                             items: list[str], rank: bool, fold: int,
                                             two: bool, monkeypatch: Any) -> None:
    """Chunks of any size, the state folded every ``fold`` records: the rows, their order
    (keys by first arrival), row numbers and timestamps of ``BatchTopN`` run row by row."""
    from flowc.executor.arrow import convert
    from flowc.executor.arrow import rank as rank_mod
    from flowc.executor.runtime.core import LONG_MAX
    from flowc.parser.topn import BatchTopN, TopN
    from flowc.types import INT, STRING, TIMESTAMP, Field, Schema

    monkeypatch.setattr(rank_mod, "FOLD", fold)
    names = ["k", "n", "s", "ts"]
    order = []
    for item in items:
        words = item.split()
        desc = "desc" in words
        nulls = (not desc) if "nulls" not in words else words[-1] == "first"
        order.append((names.index(words[0]), desc, nulls))
    keys = (0, 1) if two else (0,)
    values = [(k or None, None if x == "" else int(x), s or None, ts) for k, x, s, ts in rows]
    schema = Schema((Field("k", STRING), Field("n", INT), Field("s", STRING),
                     Field("ts", TIMESTAMP)))
    out = Schema(schema.fields + ((Field("rnk", INT),) if rank else ()))
    member = rank_mod.BatchRank(rank_mod.RankPlan(n, tuple(order), rank, keys),
                                convert.arrow_schema(schema), convert.arrow_schema(out))
    bounds = sorted({0, len(values), *(c % (len(values) + 1) for c in cuts)})
    in_schema = convert.arrow_schema(schema)
    for lo, hi in zip(bounds, bounds[1:]):
        member.add(convert.from_rows(values[lo:hi], [r[3] for r in values[lo:hi]], in_schema))
    fired = member.fire()
    got = [] if fired is None else list(zip(fired.rows(), fired.timestamps()))
    # The row operator's rule: TopN's insertion per key; keys fire in first-seen order.
    fn = BatchTopN(n, tuple(order), rank)
    states: dict[Any, _State] = {}
    for r in values:
        fn.state = states.setdefault(tuple(r[i] for i in keys), _State())
        list(TopN.process_element(fn, r, None))
    want = [(row + (i + 1,) if rank else row, LONG_MAX) for st_ in states.values()
            for i, row in enumerate(st_.v)]
    assert got == want


@pytest.mark.spark
@pytest.mark.parametrize("parallelism", [1, 2])
def test_sql_batch_rank_runs_columnar_with_flinks_rows(spark: Any, tmp_path: Path,
                                                       parallelism: int) -> None:
    """tests/sql/test_sql_batch_topn.py's queries and Flink 2.3's recorded rows, on Spark
    with the vectorised Rank."""
    import importlib.util

    from flowc.sql import compile_sql

    path = Path(__file__).parent.parent / "sql" / "test_sql_batch_topn.py"
    spec = importlib.util.spec_from_file_location("batch_topn_cases", path)
    assert spec is not None and spec.loader is not None
    cases = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(cases)
    FLINK, _script = cases.FLINK, cases._script

    for query, rows in FLINK.items():
        text = _script(tmp_path, query, parallelism).replace(
            "SET 'execution.runtime-mode' = 'batch';",
            "SET 'execution.runtime-mode' = 'batch';\nSET 'flowc.executor' = 'columnar';")
        job = compile_sql(text, "q.sql").env.get_job_graph()
        kinds = [m.kind for ms in plan_members(job).values() for m in ms]  # type: ignore[union-attr]
        assert "rank" in kinds, kinds
        lines = [x.split("> ", 1)[-1] for x in run_job_graph(job).printed]
        assert sorted(lines) == rows
