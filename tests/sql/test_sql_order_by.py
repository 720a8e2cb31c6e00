"""ORDER BY / LIMIT / OFFSET in BATCH mode (SQL) and .flow's order by / limit: results as
recorded once from a real Flink 2.3 batch job (PyFlink TableEnvironment, parallelism 2,
the same csv with 'csv.null-literal' = ''), one sort operator at parallelism 1 in the plan,
and positioned errors for what stays unsupported."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from flowc.errors import FlowcError
from flowc.executor import run_job_graph, run_reference
from flowc.parser import compile_source
from flowc.sql import compile_sql
from printed import rows as printed_rows

DATA = "3,x\n,y\n1,z\n2,\n3,a\n"
# query -> rows, as Flink 2.3 returned them
FLINK = {
    "SELECT a, b FROM s ORDER BY a DESC, b NULLS LAST LIMIT 3 OFFSET 1":
        [(3, "x"), (2, None), (1, "z")],
    "SELECT b, a FROM s ORDER BY 2 LIMIT 2": [("y", None), ("z", 1)],
    "SELECT a, COUNT(*) AS n FROM s GROUP BY a ORDER BY n DESC, a":
        [(3, 2), (None, 1), (1, 1), (2, 1)],
    "SELECT a, b FROM s ORDER BY b DESC, a":
        [(1, "z"), (None, "y"), (3, "x"), (3, "a"), (2, None)],
}


def _sql(tmp_path: Path, query: str, mode: str = "batch") -> Any:
    (tmp_path / "s.csv").write_text("a,b\n" + DATA)  # flowc's csv tables have a header line
    text = (f"SET 'execution.runtime-mode' = '{mode}';\nSET 'parallelism.default' = '2';\n"
            f"CREATE TABLE s (a INT, b STRING) WITH ('connector' = 'filesystem', "
            f"'path' = '{tmp_path / 's.csv'}', 'format' = 'csv', 'csv.null-literal' = '');\n"
            f"{query};\n")
    return compile_sql(text, str(tmp_path / "q.sql"))


def _rows(printed: list[str]) -> list[Any]:
    return printed_rows(printed)


@pytest.mark.parametrize("query", list(FLINK))
def test_order_by_matches_flink(tmp_path: Path, query: str) -> None:
    script = _sql(tmp_path, query)
    jg = script.env.get_job_graph()
    sort = [v for v in jg.vertices_sorted() if v.name.startswith(("Sort", "Limit"))]
    assert len(sort) == 1 and sort[0].parallelism == 1
    assert _rows(run_reference(jg).printed) == FLINK[query]


@pytest.mark.spark
def test_order_by_on_spark(tmp_path: Path) -> None:
    from flowc.executor import get_spark

    get_spark("local[2]")  # the test session's master (tests/executor/conftest.py)
    query = "SELECT a, b FROM s ORDER BY b DESC, a"
    assert _rows(run_job_graph(_sql(tmp_path, query).env.get_job_graph()).printed) == \
        FLINK[query]


def test_flow_order_by_and_limit(tmp_path: Path) -> None:
    (tmp_path / "s.csv").write_text("a,b\n" + DATA)
    text = (f"set mode = batch;\nsource s (a int, b string) from csv '{tmp_path / 's.csv'}';\n"
            "s | order by a desc, b nulls last | limit 3 offset 1 | print;\n"
            "s | order by b desc, a | print;\n")
    script = compile_source(text, str(tmp_path / "t.flow"))
    printed = run_reference(script.env.get_job_graph()).printed
    assert _rows(printed) == FLINK["SELECT a, b FROM s ORDER BY a DESC, b NULLS LAST "
                                   "LIMIT 3 OFFSET 1"] + FLINK["SELECT a, b FROM s ORDER BY "
                                                              "b DESC, a"]


@pytest.mark.parametrize(("query", "message"), [
    ("SELECT a FROM s ORDER BY a + 1", "ORDER BY takes output column names or positions"),
    ("SELECT a FROM s ORDER BY c", "ORDER BY 'c': not a column of the query's result"),
    ("SELECT a FROM s ORDER BY 3", "ORDER BY 3: there is no output column 3"),
    ("SELECT a FROM s LIMIT x", "LIMIT takes a whole number"),
])
def test_order_by_errors(tmp_path: Path, query: str, message: str) -> None:
    with pytest.raises(FlowcError) as info:
        _sql(tmp_path, query)
    assert message in str(info.value)
    assert info.value.span is not None and info.value.span.line == 4


def test_order_by_in_streaming_is_refused(tmp_path: Path) -> None:
    with pytest.raises(FlowcError, match="only supported in BATCH mode"):
        _sql(tmp_path, "SELECT a FROM s ORDER BY a", mode="streaming")


@pytest.mark.parametrize(("step", "message"), [
    ("order by a | map a", "only 'limit' or a sink may follow"),
    ("order by c", "unknown field 'c' in 'order by'"),
])
def test_flow_order_by_errors(tmp_path: Path, step: str, message: str) -> None:
    text = f"set mode = batch;\nsource s (a int, b string) from csv 'x.csv';\ns | {step} | print;\n"
    with pytest.raises(FlowcError, match=message):
        compile_source(text, str(tmp_path / "t.flow"))


def test_flow_order_by_needs_batch(tmp_path: Path) -> None:
    text = "set mode = streaming;\nsource s (a int) from csv 'x.csv';\ns | order by a | print;\n"
    with pytest.raises(FlowcError, match="needs BATCH mode") as info:
        compile_source(text, str(tmp_path / "t.flow"))
    assert info.value.span.line == 3


def test_limit_alone_works_in_streaming(tmp_path: Path) -> None:
    """Flink's streaming LIMIT without ORDER BY: the first rows, as they come."""
    script = _sql(tmp_path, "SELECT a, b FROM s LIMIT 2 OFFSET 1", mode="streaming")
    assert _rows(run_reference(script.env.get_job_graph()).printed) == [(None, "y"), (1, "z")]
