"""Flink's ``/*+ STATE_TTL('name' = 'duration', ...) */`` query hint: the idle state retention
of one query block's regular join (per side) or group aggregate, over the job's
``table.exec.state.ttl``. Against Flink 2.3, recorded once (changelog/record_sqla.py, not run
here): the hinted queries print Flink's lines (a day's TTL expires nothing in either run),
Flink's plan puts the hint on the same operator and side, and a bad hint is Flink's error.
The expiry itself runs on a manual clock, as tests/sql/test_sql_state_ttl.py's (1 ms per
clock reading: the first 'a' row is idle for many readings before the second)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from sqla_tables import cases, final_table, printed
from test_sql_state_ttl import a_rows, run

from flowc.errors import FlowcError
from flowc.executor import run_reference
from flowc.executor.runtime.clock import ManualClock, using_clock
from flowc.parser import compile_source

CASES = cases("state_ttl_hint")
RUNS = [c for c in CASES if "error" not in c]
ERRORS = [c for c in CASES if "error" in c]
AGG = "SELECT /*+ STATE_TTL({}) */ k, COUNT(*) AS n, SUM(v) AS s FROM t GROUP BY k"
RIGHT = [f"c,{i}" for i in range(12)] + ["a,7"]  # r's 'a' arrives after all of t


def test_the_fixtures_put_the_hint_on_the_join_or_aggregate() -> None:
    assert len(RUNS) >= 6 and len(ERRORS) >= 5
    hinted = [line for c in RUNS for line in c["plan"] if "stateTtlHints" in line]
    assert any("GroupAggregate(" in line for line in hinted)
    assert any("Join(" in line and "LEFT=" in line and "RIGHT=" in line for line in hinted)
    # a block without a join or aggregate: Flink accepts the hint and has nowhere to put it
    assert any(not any("stateTtlHints" in line for line in c["plan"]) for c in RUNS)


@pytest.mark.parametrize("case", RUNS, ids=[c["query"][:80] for c in RUNS])
def test_hinted_queries_print_flinks_rows(tmp_path: Path, case: dict[str, Any]) -> None:
    lines = printed(tmp_path, case["query"], 1)
    if " JOIN " in case["query"]:  # the changelog depends on how the two sources interleave
        assert final_table(lines) == final_table(case["print"])
    else:
        assert lines == case["print"]


@pytest.mark.parametrize("case", ERRORS, ids=[c["query"][:80] for c in ERRORS])
def test_bad_hints_are_flinks_errors(tmp_path: Path, case: dict[str, Any]) -> None:
    with pytest.raises(FlowcError) as info:
        printed(tmp_path, case["query"], 1)
    assert info.value.message == case["message"]
    assert info.value.span is not None and info.value.span.line == 5


def test_the_hint_expires_a_group_aggregates_state(tmp_path: Path) -> None:
    assert a_rows(run(tmp_path, AGG.format("'t' = '10 ms'"), None)) == [
        "+I[a, 1, 1]", "+I[a, 1, 20]"]
    # the hint wins over table.exec.state.ttl, both ways
    assert a_rows(run(tmp_path, AGG.format("'t' = '1 h'"), "10 ms")) == [
        "+I[a, 1, 1]", "-U[a, 1, 1]", "+U[a, 2, 21]"]
    assert a_rows(run(tmp_path, AGG.format("'t' = '10 ms'"), "1 h")) == [
        "+I[a, 1, 1]", "+I[a, 1, 20]"]
    # an alias is the input's name
    query = "SELECT /*+ STATE_TTL('x' = '10 ms') */ k, COUNT(*) AS n, SUM(v) AS s FROM t x " \
            "GROUP BY k"
    assert a_rows(run(tmp_path, query, None)) == ["+I[a, 1, 1]", "+I[a, 1, 20]"]


@pytest.mark.parametrize(("query", "expired"), [
    ("SELECT /*+ STATE_TTL('t' = '10 ms') */ t.k, t.v, r.w FROM t JOIN r ON t.k = r.k", True),
    ("SELECT /*+ STATE_TTL('r' = '10 ms') */ t.k, t.v, r.w FROM t JOIN r ON t.k = r.k", False),
    ("SELECT /*+ STATE_TTL('t' = '1 h', 'r' = '10 ms') */ t.k, t.v, r.w FROM t JOIN r "
     "ON t.k = r.k", False),
    # the right side's TTL: t is the right input here
    ("SELECT /*+ STATE_TTL('t' = '10 ms') */ t.k, t.v, r.w FROM r JOIN t ON t.k = r.k", True),
    ("SELECT /*+ STATE_TTL('r' = '10 ms') */ t.k, t.v, r.w FROM r JOIN t ON t.k = r.k", False),
])
def test_the_hint_expires_one_side_of_a_join(tmp_path: Path, query: str, expired: bool) -> None:
    """t's first 'a' row waits for r's 'a' (which comes after all of t): it has expired
    under a 10 ms TTL on t's side only."""
    rows = sorted(a_rows(run(tmp_path, query, None, RIGHT)))
    assert rows == (["+I[a, 20, 7]"] if expired else ["+I[a, 1, 7]", "+I[a, 20, 7]"])


def test_a_side_without_a_hint_keeps_the_jobs_ttl(tmp_path: Path) -> None:
    query = "SELECT /*+ STATE_TTL('r' = '1 h') */ t.k, t.v, r.w FROM t JOIN r ON t.k = r.k"
    assert a_rows(run(tmp_path, query, "10 ms", RIGHT)) == ["+I[a, 20, 7]"]


def test_an_unknown_name_is_flinks_error_with_the_inputs(tmp_path: Path) -> None:
    with pytest.raises(FlowcError) as info:
        run(tmp_path, AGG.format("'x' = '1 h'"), None)
    assert info.value.message.endswith("`x` in `STATE_TTL`")
    assert info.value.hint == "this query's inputs are `t`"
    with pytest.raises(FlowcError) as info:
        run(tmp_path, AGG.format("'tt' = '1 h'"), None)
    assert info.value.hint == "did you mean 't'?"


FLOW = """source t (k string, v int) from csv '{path}' options (header = false);
t | key by k | aggregate count(*) as n, sum(v) as s with (state_ttl = {ttl}) | print;
"""


@pytest.mark.parametrize(("ttl", "expired"), [("10ms", True), ("1h", False), ("0s", False)])
def test_flow_aggregate_state_ttl_hint(tmp_path: Path, ttl: str, expired: bool) -> None:
    run(tmp_path, AGG.format("'t' = '1 h'"), None)  # writes t.csv
    text = "set table.exec.state.ttl = 10ms;\n" if not expired else ""
    script = compile_source(text + FLOW.format(path=tmp_path / "t.csv", ttl=ttl), "t.flow")
    with using_clock(ManualClock(0, step=1)):
        lines = list(run_reference(script.env.get_job_graph()).printed)
    assert a_rows(lines) == (["+I[a, 1, 1]", "+I[a, 1, 20]"] if expired else
                             ["+I[a, 1, 1]", "-U[a, 1, 1]", "+U[a, 2, 21]"])


@pytest.mark.parametrize(("step", "message"), [
    ("key by k | window tumbling 5s | aggregate count(*) as n with (state_ttl = 1h)",
     "the 'state_ttl' hint belongs on a rolling 'aggregate'"),
    ("key by k | aggregate count(*) as n with (left_state_ttl = 1h)",
     "'left_state_ttl' is a join's hint"),
    ("map k with (state_ttl = 1h)", "the 'state_ttl' hint belongs on a rolling 'aggregate'"),
])
def test_flow_state_ttl_hint_elsewhere_is_an_error(tmp_path: Path, step: str,
                                                   message: str) -> None:
    text = (f"source t (k string, v int, ts timestamp) from csv '{tmp_path / 't.csv'}' "
            f"watermark ts - 1s;\nt | {step} | print;\n")
    with pytest.raises(FlowcError) as info:
        compile_source(text, "t.flow")
    assert message in info.value.message and info.value.span is not None
