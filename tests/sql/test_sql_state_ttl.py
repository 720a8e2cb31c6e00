"""``SET 'table.exec.state.ttl'``: the state of GroupAggregate, regular joins, Top-N and
deduplication expires as Flink's (processing time, OnCreateAndWrite, NeverReturnExpired),
on the runtime clock (flowc.executor.runtime.clock). A manual clock moves 1 ms per
reading: a key idle for many records has expired under a 10 ms TTL and not under 1 h."""

from __future__ import annotations

from pathlib import Path

import pytest

from flowc.errors import FlowcError
from flowc.executor import run_reference
from flowc.executor.runtime.clock import ManualClock, using_clock
from flowc.sql import compile_sql

# 'a' once, then 12 rows of 'b' (b's state is written by every one of them), then 'a' again
ROWS = ["a,1"] + [f"b,{i}" for i in range(2, 14)] + ["a,20"]


def run(tmp: Path, query: str, ttl: str | None, right: list[str] | None = None) -> list[str]:
    (tmp / "t.csv").write_text("\n".join(ROWS) + "\n")
    (tmp / "r.csv").write_text("\n".join(right or []) + "\n")
    setting = f"SET 'table.exec.state.ttl' = '{ttl}';\n" if ttl else ""
    script = compile_sql(
        setting + "SET 'parallelism' = '1';\n"
        f"CREATE TABLE t (k STRING, v INT) WITH ('connector' = 'filesystem', "
        f"'path' = '{tmp / 't.csv'}', 'format' = 'csv', 'csv.header' = 'false');\n"
        f"CREATE TABLE r (k STRING, w INT) WITH ('connector' = 'filesystem', "
        f"'path' = '{tmp / 'r.csv'}', 'format' = 'csv', 'csv.header' = 'false');\n"
        f"{query};\n", "q.sql")
    with using_clock(ManualClock(0, step=1)):
        return list(run_reference(script.env.get_job_graph()).printed)


def a_rows(lines: list[str]) -> list[str]:
    return [line for line in lines if "[a," in line]


def test_group_aggregate_restarts_an_expired_key(tmp_path: Path) -> None:
    query = "SELECT k, COUNT(*) AS n, SUM(v) AS s FROM t GROUP BY k"
    assert a_rows(run(tmp_path, query, None)) == ["+I[a, 1, 1]", "-U[a, 1, 1]", "+U[a, 2, 21]"]
    assert a_rows(run(tmp_path, query, "1 h")) == a_rows(run(tmp_path, query, None))
    # Flink: the expired accumulator is gone, the next row is the key's first again (+I,
    # the old row is not retracted)
    assert a_rows(run(tmp_path, query, "10 ms")) == ["+I[a, 1, 1]", "+I[a, 1, 20]"]
    # b, written by every record, never expires
    assert run(tmp_path, query, "10 ms")[-2] == "+U[b, 12, 90]"


def test_top_n_forgets_an_expired_key(tmp_path: Path) -> None:
    query = ("SELECT * FROM (SELECT k, v, ROW_NUMBER() OVER (PARTITION BY k ORDER BY v DESC) "
             "AS rn FROM t) WHERE rn <= 1")
    assert a_rows(run(tmp_path, query, None)) == ["+I[a, 1, 1]", "-U[a, 1, 1]", "+U[a, 20, 1]"]
    assert a_rows(run(tmp_path, query, "10 ms")) == ["+I[a, 1, 1]", "+I[a, 20, 1]"]


def test_retracting_top_n_forgets_an_expired_key(tmp_path: Path) -> None:
    query = ("SELECT * FROM (SELECT k, n, ROW_NUMBER() OVER (PARTITION BY k ORDER BY n DESC) "
             "AS rn FROM (SELECT k, v % 2 AS m, COUNT(*) AS n FROM t GROUP BY k, v % 2)) "
             "WHERE rn <= 1")
    # a's second group ties with its first (n = 1) and ranks 2: nothing to emit; once a's
    # Top-N state has expired it is the only row and ranks 1 again
    assert a_rows(run(tmp_path, query, None)) == ["+I[a, 1, 1]"]
    assert a_rows(run(tmp_path, query, "10 ms")) == ["+I[a, 1, 1]", "+I[a, 1, 1]"]


def test_regular_join_forgets_expired_rows(tmp_path: Path) -> None:
    query = "SELECT t.k, t.v, r.w FROM t JOIN r ON t.k = r.k"
    right = [f"c,{i}" for i in range(12)] + ["a,7"]
    assert a_rows(run(tmp_path, query, None, right)) == ["+I[a, 1, 7]", "+I[a, 20, 7]"]
    # the left 'a' row is long expired when the right one arrives
    assert a_rows(run(tmp_path, query, "10 ms", right)) == ["+I[a, 20, 7]"]


def test_a_bad_ttl_is_a_positioned_error(tmp_path: Path) -> None:
    with pytest.raises(FlowcError) as info:
        compile_sql("SET 'table.exec.state.ttl' = '10 parsecs';\n", "q.sql")
    assert info.value.span is not None and info.value.span.line == 1
    assert "not a duration" in info.value.message


def test_flow_sets_the_same_ttl(tmp_path: Path) -> None:
    from flowc.parser import compile_source

    (tmp_path / "t.csv").write_text("\n".join(ROWS) + "\n")
    script = compile_source(
        "set table.exec.state.ttl = 10ms;\n"
        f"source t (k string, v int) from csv '{tmp_path / 't.csv'}' "
        "options (header = false);\n"
        "t | key by k | aggregate count(*) as n, sum(v) as s | print;\n", "t.flow")
    with using_clock(ManualClock(0, step=1)):
        lines = list(run_reference(script.env.get_job_graph()).printed)
    assert a_rows(lines) == ["+I[a, 1, 1]", "+I[a, 1, 20]"]
