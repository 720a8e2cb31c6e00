"""DECIMAL jobs on the columnar executor (Spark, Arrow) equal the reference executor.

Random BATCH and STREAMING .flow programs over csv files with DECIMAL columns - values
rounded HALF_UP on reading (``1.005``), too wide for their type (NULL), negative, zero,
empty (null), a bad row - through vectorised DECIMAL maps and filters, a Python UDF map
(row by row inside the chain), a shuffle, and a window or rolling aggregate (sum, avg,
min, max, count, first, last: exact, vectorised); parallelism
1-3. Records are compared with their DECIMAL texts, so the scale counts. The job must run
columnar (``flowc.executor = columnar`` fails otherwise). Then the SQL currency
conversion cases recorded from Flink 2.3 (tests/sql/flink_results/decimal.json) and the
MAP cases (map.json) run columnar on Spark.
"""

from __future__ import annotations

import json
import os
import sys
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, example, given, settings
from hypothesis import strategies as st
from tests.executor.columnar_jobs import collect_job, run_both, vertex_counts, write_csv

from flowc.errors import ExecutionError
from flowc.executor import run_job_graph, run_reference
from flowc.executor.arrow.plan import plan_members
from flowc.parser import compile_source

pytestmark = pytest.mark.spark

AMOUNTS = ["1.005", "-2.50", "", "99999999.99", "123456789.1", "0", "-0.004", "0.5",
           "12.345", "-99999999.995", "7"]
RATES = ["1.00005", "0.9", "", "-3.1416", "999999.99995", "0.0001", "2"]
cells = st.tuples(st.sampled_from(["x", "y", "z", ""]), st.sampled_from(AMOUNTS),
                  st.sampled_from(RATES), st.integers(0, 20_000))
programs = st.fixed_dictionaries({
    "mode": st.sampled_from(["batch", "streaming"]),
    "rows": st.lists(cells, min_size=1, max_size=50),
    "bad": st.booleans(),
    "p": st.integers(1, 3),
    "map": st.sampled_from([
        "k, a, b, ts",
        "k, a * b as a, b - a as b, ts",
        "k, cast(a / b as decimal(12, 3)) as a, -b as b, ts",
        "k, coalesce(a, 0) + 1.5 as a, case when b > a then b else a end as b, ts",
        "k, a, third(b) as b, ts"]),
    "filter": st.sampled_from(["", "| filter a > b or b is null", "| filter a * 2 <= 100.5"]),
    "agg": st.sampled_from([
        "| key by k | window tumbling 5s | aggregate sum(a) as s, avg(b) as av, min(a) as mn, "
        "max(b) as mx, count(a) as c",
        "| key by k | aggregate sum(a) as s, max(b) as mx, avg(a) as av",
        # BATCH windows vectorised: DECIMAL min / max / count / count(distinct)
        "| key by k | window tumbling 5s | aggregate min(a) as mn, max(b) as mx, count(a) as c,"
        " count(distinct b) as d",
        "| key by k | window sliding 10s every 5s allowed lateness 2s | aggregate min(a) as mn,"
        " max(b) as mx, first(b) as f",
        "| key by k | window session gap 2s | aggregate min(a) as mn, max(b) as mx,"
        " count(*) as c",
        # sums, averages, first / last vectorised in every window kind (exact, HALF_UP)
        "| key by k | window session gap 2s | aggregate sum(a) as s, avg(b) as av,"
        " first(a) as f, last(b) as l",
        "| key by k | window sliding 10s every 5s allowed lateness 2s | aggregate sum(b) as s,"
        " avg(a) as av, last(a) as l",
        "| key by k | aggregate first(a) as f, last(b) as l, min(b) as mn, count(*) as c",
        "| map k, cast(a as string) as t, cast(b as double) as d, ts"]),
})


def _script(prog: dict[str, Any], data: Path) -> str:
    return (f"set parallelism = {prog['p']};\n"
            "import udf tests.executor.columnar_dec_udfs.third(decimal(10, 4)) "
            "-> decimal(10, 4);\n"
            "source s (k string, a decimal(10, 2), b decimal(10, 4), ts timestamp) "
            f"from csv '{data}' watermark ts - 1s;\n"
            f"let result = s | filter k is not null | map {prog['map']} {prog['filter']}\n"
            f"  {prog['agg']};\n")


def _texts(records: list[Any]) -> list[Any]:
    """Records with their kinds and DECIMAL texts (the scale counts)."""
    return [(type(r).__name__, *[str(v) if isinstance(v, Decimal) else v for v in r])
            for r in records]


@settings(max_examples=int(os.environ.get("FLOWC_DIFF_EXAMPLES", "15")), deadline=None,
          suppress_health_check=list(HealthCheck),
          phases=[Phase.explicit, Phase.reuse, Phase.generate])
@given(programs)
@example(prog={"mode": "batch", "rows": [("x", "1.005", "0.9", 10), ("x", "-2.50", "", 20),
                                         ("y", "", "2", 6000), ("x", "1.005", "0.9", 30)],
               "bad": False, "p": 2, "map": "k, a * b as a, b - a as b, ts", "filter": "",
               "agg": "| key by k | window tumbling 5s | aggregate min(a) as mn, max(b) as mx, "
                      "count(a) as c, count(distinct b) as d"})
def test_columnar_decimal_jobs_match_reference(spark: Any, tmp_path_factory: Any,
                                               prog: dict[str, Any]) -> None:
    where = tmp_path_factory.mktemp("coldec")
    text = _script(prog, write_csv(where / "data.csv", "k,a,b,ts", prog["rows"],
                                   "x,notanumber,1,5" if prog["bad"] else None))
    row_job = collect_job(text, where, "row", prog["mode"])
    columnar_job = collect_job(text, where, "columnar", prog["mode"])
    assert not isinstance(plan_members(columnar_job), str)
    runs = run_both(row_job, columnar_job)
    if runs is None:  # a bad row fails both executors alike
        return
    expected, actual = runs
    assert _texts(actual.collected["result"]) == _texts(expected.collected["result"]), text
    assert vertex_counts(actual) == vertex_counts(expected)


def test_a_zero_divisor_fails_as_on_the_row_executor(spark: Any, tmp_path: Path) -> None:
    # Java's BigDecimal.divide by zero fails Flink's job; both executors name the operator
    (tmp_path / "data.csv").write_text("k,a,b,ts\nx,1.5,0,1\n")
    text = ("source s (k string, a decimal(10, 2), b decimal(10, 4), ts timestamp) "
            f"from csv '{tmp_path / 'data.csv'}';\nlet result = s | map a / b as q;\n")
    errors = []
    for executor, run in (("row", run_reference), ("columnar", run_job_graph)):
        with pytest.raises(ExecutionError) as info:
            run(collect_job(text, tmp_path, executor))
        errors.append(str(info.value))
    assert errors[0] == errors[1] and "Division by zero" in errors[0]


SQL = Path(__file__).parents[1] / "sql"


def _sql_module(name: str) -> Any:
    for p in (str(SQL), str(SQL / "flink_results")):
        if p not in sys.path:
            sys.path.insert(0, p)
    return __import__(name)


def test_sql_currency_conversion_runs_columnar(spark: Any, tmp_path: Path) -> None:
    # Every recorded Flink 2.3 case with a key runs columnar and equals Flink's rows.
    t = _sql_module("test_sql_decimal")
    tables = t.TABLES.replace("SET 'execution.runtime-mode' = 'batch';",
                              "SET 'execution.runtime-mode' = 'batch';\n"
                              "SET 'flowc.executor' = 'columnar';")
    for case in t.CASES[:10]:  # case 10 has no GROUP BY key: the row executor's
        script = t._compile(tmp_path, case["query"], tables)
        job = script.env.get_job_graph()
        assert not isinstance(plan_members(job), str), case["query"]
        rows = sorted(([None if v is None else str(v) for v in r]
                       for r in run_job_graph(job)["result"]),
                      key=lambda r: [x or "" for x in r])
        assert rows == case["rows"], case["query"]


def test_sql_currency_conversion_streaming(spark: Any, tmp_path: Path) -> None:
    # STREAMING: the GROUP BY's changelog, the same as the reference executor's
    t = _sql_module("test_sql_decimal")
    tables = t.TABLES.replace("SET 'execution.runtime-mode' = 'batch';",
                              "SET 'execution.runtime-mode' = 'streaming';\n"
                              "SET 'parallelism.default' = '2';")
    query = "SELECT cur, SUM(amount * rate), AVG(rate), MAX(amount) FROM orders GROUP BY cur"
    expected = run_reference(t._compile(tmp_path, query, tables).env.get_job_graph())
    columnar = tables + "SET 'flowc.executor' = 'columnar';\n"
    actual = run_job_graph(t._compile(tmp_path, query, columnar).env.get_job_graph())
    assert _texts(actual["result"]) == _texts(expected["result"])


def test_sql_maps_run_columnar(spark: Any, tmp_path: Path) -> None:
    # MAP columns ride in Arrow map columns; the map functions run row by row in the chain
    t = _sql_module("test_sql_map")
    recorded = json.loads((SQL / "flink_results" / "map.json").read_text(encoding="utf-8"))

    def run(job: Any) -> Any:
        assert not isinstance(plan_members(job), str)
        return run_job_graph(job)
    for case in recorded["cases"]:
        assert t._rows(tmp_path, case["query"], run) == case["rows"], case["query"]


@pytest.mark.parametrize("p,mode", [(1, "batch"), (2, "streaming")])
def test_decimal_file_sinks_equal_row_files(spark: Any, tmp_path: Path, p: int,
                                            mode: str) -> None:
    # csv / json byte for byte (Spark writes Java's BigDecimal.toString: 1E-7, 0E-7),
    # parquet with the same schema and values; every sink written from Arrow
    from tests.executor.test_columnar_sinks import _check_same

    from flowc.executor.arrow import sinks

    values = ["0.0000001", "-1.5", "0", "", "1234567890123456789012345678901.1234567",
              "0.00001", "-0.0000005", "99.995", "1e-9", "7"]
    (tmp_path / "in.csv").write_text("k,a\n" + "".join(f"k{i},{v}\n" for i, v in
                                                       enumerate(values * 20)))
    text = (f"set parallelism = {p};\n"
            f"source s (k string, a decimal(38, 7)) from csv '{tmp_path / 'in.csv'}' "
            "options (header = true);\n"
            "let m = s | rebalance | map k, a, cast(a as decimal(10, 0)) as b, a * 3 as c;\n")
    for fmt in ("csv", "json", "parquet"):
        text += f"m | write {fmt} '{{out}}/{fmt}';\n"
    written: list[str] = []
    stage = sinks.stage

    def counting(*args: Any) -> str:
        written.append(args[3].path)
        return stage(*args)
    for executor in ("row", "columnar"):
        out = tmp_path / executor
        script = compile_source(text.replace("{out}", str(out)), str(tmp_path / "job.flow"),
                                options={"mode": mode, "flowc.executor": executor})
        sinks.stage = counting  # type: ignore[assignment]
        try:
            run_job_graph(script.env.get_job_graph())
        finally:
            sinks.stage = stage  # type: ignore[assignment]
    assert len(written) == 3  # the columnar run wrote all three from Arrow
    _check_same(tmp_path / "row", tmp_path / "columnar")
    assert b"1E-7" in b"".join(f.read_bytes() for f in (tmp_path / "row" / "csv").glob("part-*"))
