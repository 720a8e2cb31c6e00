"""Window aggregates without a key (TVFs and legacy group windows) against Flink 2.3,
recorded once (changelog/record_keyless_windows.py, not run here): the printed lines at
parallelism 1 are Flink's, the window runs at parallelism 1 whatever the job's (Flink's
global window aggregate behind a single exchange), and at parallelism 2 the rows are
Flink's. A .flow window without ``key by`` is the same operator."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from flowc.executor import run_reference
from flowc.parser import compile_source
from flowc.sql import compile_sql

HERE = Path(__file__).parent / "changelog"
sys.path.insert(0, str(HERE))
from data import ORDERS, ORDERS_COLUMNS  # noqa: E402

CASES = json.loads((HERE / "keyless_windows.json").read_text())["cases"]
RUNS = [c for c in CASES if "error" not in c]


def compiled(tmp: Path, query: str, parallelism: int):  # type: ignore[no-untyped-def]
    (tmp / "orders.csv").write_text(ORDERS, encoding="utf-8")
    return compile_sql(
        f"SET 'parallelism' = '{parallelism}';\n"
        f"CREATE TABLE orders ({ORDERS_COLUMNS}, WATERMARK FOR ts AS ts - INTERVAL '1' SECOND)"
        f" WITH ('connector' = 'filesystem', 'path' = '{tmp / 'orders.csv'}', "
        "'format' = 'csv', 'csv.header' = 'false', 'csv.null-literal' = '');\n"
        f"{query};\n", "q.sql")


def printed(tmp: Path, query: str, parallelism: int) -> list[str]:
    return list(run_reference(compiled(tmp, query, parallelism).env.get_job_graph()).printed)


def test_the_fixtures_are_global_window_aggregates() -> None:
    assert len(RUNS) >= 5
    for case in RUNS:
        assert any("Exchange(distribution=[single])" in line for line in case["plan"]), case


@pytest.mark.parametrize("query", [c["query"] for c in RUNS])
def test_printed_lines_are_flinks(tmp_path: Path, query: str) -> None:
    flink = next(c for c in RUNS if c["query"] == query)
    assert printed(tmp_path, query, 1) == flink["print"]


@pytest.mark.parametrize("query", [c["query"] for c in RUNS])
def test_the_window_runs_at_parallelism_1(tmp_path: Path, query: str) -> None:
    flink = next(c for c in RUNS if c["query"] == query)
    graph = compiled(tmp_path, query, 2).env.get_job_graph()
    windows = [v for v in graph.vertices.values() if "Windows" in v.name]
    assert len(windows) == 1 and windows[0].parallelism == 1
    lines = [line.split("> ", 1)[-1] for line in run_reference(graph).printed]
    assert sorted(lines) == sorted(flink["print"])


def test_flow_window_without_a_key_is_the_sql_one(tmp_path: Path) -> None:
    query = next(c["query"] for c in RUNS if "TUMBLE(TABLE" in c["query"])
    (tmp_path / "orders.csv").write_text(ORDERS)
    flow = compile_source(
        "source orders (order_id int, user_id string, product string, amount int,\n"
        "  price double, vip bool, ts timestamp)\n"
        f"  from csv '{tmp_path / 'orders.csv'}' options (header = false, null_value = '')\n"
        "  watermark ts - 1s;\n"
        "orders | window tumbling 5s | aggregate count(*) as n, sum(amount) as s | print;\n",
        "w.flow")
    graph = flow.env.get_job_graph()
    assert [v.parallelism for v in graph.vertices.values() if "Windows" in v.name] == [1]
    assert list(run_reference(graph).printed) == \
        next(c for c in RUNS if c["query"] == query)["print"]


@pytest.mark.spark
@pytest.mark.parametrize("query", [c["query"] for c in RUNS
                                   if "TUMBLE(TABLE" in c["query"] or "SESSION" in c["query"]])
def test_keyless_windows_on_spark(tmp_path: Path, query: str) -> None:
    from flowc.executor import get_spark, run_job_graph

    get_spark("local[2]")  # the test session's master (tests/executor/conftest.py)
    flink = next(c for c in RUNS if c["query"] == query)
    graph = compiled(tmp_path, query, 2).env.get_job_graph()
    lines = [line.split("> ", 1)[-1] for line in run_job_graph(graph).printed]
    assert sorted(lines) == sorted(flink["print"])
