"""Interval joins, inner and LEFT / RIGHT / FULL, against Flink 2.3, recorded once
(changelog/record_interval_joins.py, not run here). An outer interval join emits the rows
that joined nothing null-padded when the watermark passes the last time they could join;
its output is insert-only, and the rows are Flink's (the reference executor reads the two
inputs in another interleaving than Flink did, so the order of the padded rows may differ:
the rows are compared as a multiset), at parallelism 1 and 2."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from flowc.executor import run_reference
from flowc.sql import compile_sql

HERE = Path(__file__).parent / "changelog"
sys.path.insert(0, str(HERE))
from data import ORDERS, ORDERS_COLUMNS  # noqa: E402
from interval_data import SHIPMENTS, SHIPMENTS_COLUMNS, WATERMARK  # noqa: E402

CASES = json.loads((HERE / "interval_joins.json").read_text())["cases"]


def compiled(tmp: Path, query: str, parallelism: int):  # type: ignore[no-untyped-def]
    ddl = []
    for name, cols, text in (("orders", ORDERS_COLUMNS, ORDERS),
                             ("shipments", SHIPMENTS_COLUMNS, SHIPMENTS)):
        (tmp / f"{name}.csv").write_text(text, encoding="utf-8")
        ddl.append(f"CREATE TABLE {name} ({cols}{WATERMARK}) WITH ('connector' = "
                   f"'filesystem', 'path' = '{tmp / name}.csv', 'format' = 'csv', "
                   "'csv.header' = 'false', 'csv.null-literal' = '');")
    return compile_sql(f"SET 'parallelism' = '{parallelism}';\n" + "\n".join(ddl) +
                       f"\n{query};\n", "q.sql")


def test_the_fixtures_cover_every_kind() -> None:
    assert all("error" not in c for c in CASES)
    for kind in ("InnerJoin", "LeftOuterJoin", "RightOuterJoin", "FullOuterJoin"):
        assert any(f"joinType=[{kind}]" in " ".join(c["plan"]) for c in CASES), kind
    assert all("IntervalJoin" in " ".join(c["plan"]) for c in CASES)


@pytest.mark.parametrize("parallelism", [1, 2])
@pytest.mark.parametrize("query", [c["query"] for c in CASES])
def test_rows_are_flinks(tmp_path: Path, query: str, parallelism: int) -> None:
    flink = next(c for c in CASES if c["query"] == query)["print"]
    graph = compiled(tmp_path, query, parallelism).env.get_job_graph()
    lines = [line.split("> ", 1)[-1] for line in run_reference(graph).printed]
    assert all(line.startswith("+I[") for line in lines)
    assert sorted(lines) == sorted(flink)


def test_outer_interval_joins_run_row_by_row_on_spark(tmp_path: Path) -> None:
    # the columnar interval join has no padding: the planner says why it is not used
    from flowc.executor.arrow.plan import plan_members

    query = next(c["query"] for c in CASES if "LEFT JOIN" in c["query"])
    reason = plan_members(compiled(tmp_path, query, 2).env.get_job_graph())
    assert isinstance(reason, str) and "outer interval join" in reason


@pytest.mark.spark
def test_full_interval_join_on_spark(tmp_path: Path) -> None:
    from flowc.executor import get_spark, run_job_graph

    get_spark("local[2]")  # the test session's master (tests/executor/conftest.py)
    case = next(c for c in CASES if "FULL JOIN" in c["query"])
    graph = compiled(tmp_path, case["query"], 2).env.get_job_graph()
    lines = [line.split("> ", 1)[-1] for line in run_job_graph(graph).printed]
    assert sorted(lines) == sorted(case["print"])
