"""CUMULATE windows (``TABLE(CUMULATE(TABLE t, DESCRIPTOR(ts), step, size [, offset]))``)
against Flink 2.3, recorded once (changelog/record_sqla.py, not run here): window
aggregates with and without a key, the TVF's rows, window Top-N / deduplication and window
joins over it. The output is insert-only, as Flink's (``changelogMode=[I]``): flowc prints
Flink's lines, in Flink's order where the order is Flink's by construction (one key per
window end, the TVF's rows) and as the same multiset otherwise (windows of several keys
ending together fire in an order Flink leaves to its state backend), at parallelism 1 and
2. A .flow ``window cumulating`` is the same operator."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from sqla_tables import cases, final_table, printed, sql_text

from flowc.errors import FlowcError
from flowc.executor import run_reference
from flowc.parser import compile_source
from flowc.sql import compile_sql
from flowc.windowing import CumulativeEventTimeWindows, TimeWindow

CASES = cases("cumulate")
RUNS = [c for c in CASES if "error" not in c]
ERRORS = [c for c in CASES if "error" in c and "integral multiple" in str(c.get("cause"))]
# Flink's print order is deterministic here: one group per window (no key), or the TVF's rows
ORDERED = [c["query"] for c in RUNS if not re.search(
    r"(GROUP|PARTITION) BY window_start, window_end, |JOIN", c["query"])]


def test_the_fixtures_are_flinks_cumulate_windows() -> None:
    assert len(RUNS) >= 12 and len(ERRORS) == 2
    for case in RUNS:
        assert any("CUMULATE(" in line for line in case["plan"]), case["query"]
        assert all(line.startswith("+I[") for line in case["print"])
        assert all(m == "changelogMode=[I]" for line in case["plan"]
                   for m in [line.rsplit(", ", 1)[-1].rstrip(")")] if "changelogMode" in m)


@pytest.mark.parametrize("parallelism", [1, 2])
@pytest.mark.parametrize("case", RUNS, ids=[c["query"][:90] for c in RUNS])
def test_rows_are_flinks(tmp_path: Path, case: dict[str, Any], parallelism: int) -> None:
    lines = printed(tmp_path, case["query"], parallelism)
    assert sorted(lines) == sorted(case["print"])
    assert final_table(lines) == final_table(case["print"])


@pytest.mark.parametrize("query", ORDERED)
def test_printed_lines_are_flinks_in_order(tmp_path: Path, query: str) -> None:
    flink = next(c for c in RUNS if c["query"] == query)
    assert printed(tmp_path, query, 1) == flink["print"]


@pytest.mark.parametrize("case", ERRORS, ids=["not-a-multiple", "step-above-size"])
def test_a_size_not_a_multiple_of_the_step_is_flinks_error(tmp_path: Path,
                                                          case: dict[str, Any]) -> None:
    with pytest.raises(FlowcError) as info:
        printed(tmp_path, case["query"], 1)
    flink = case["cause"][-1].split("ValidationException: ", 1)[1]
    assert info.value.message == flink
    span = info.value.span
    assert span is not None and span.line == 5 and span.column > 40  # at the CUMULATE call


def test_the_tvf_rows_without_aggregation_check_the_sizes_too(tmp_path: Path) -> None:
    # Flink 2.3 (EXPLAIN, checked by hand) gives the aggregate's text here too
    query = ("SELECT user_id, amount FROM TABLE(CUMULATE(TABLE events, DESCRIPTOR(ts), "
             "INTERVAL '4' SECOND, INTERVAL '6' SECOND)) WHERE amount > 3")
    with pytest.raises(FlowcError) as info:
        printed(tmp_path, query, 1)
    assert info.value.message == ERRORS[0]["cause"][-1].split("ValidationException: ", 1)[1]


def test_the_assigner_is_flinks() -> None:
    """CumulativeWindowAssigner: the max-size epoch's windows ending after the timestamp,
    earliest end first; an offset shifts both the epochs and the steps."""
    a = CumulativeEventTimeWindows.of(6000, 2000)
    assert a.assign_windows(3500) == [TimeWindow(0, 4000), TimeWindow(0, 6000)]
    assert a.assign_windows(0) == [TimeWindow(0, 2000), TimeWindow(0, 4000),
                                   TimeWindow(0, 6000)]
    assert a.assign_windows(-1) == [TimeWindow(-6000, 0)]
    b = CumulativeEventTimeWindows.of(6000, 2000, 3000)
    assert b.assign_windows(0) == [TimeWindow(-3000, 1000), TimeWindow(-3000, 3000)]
    with pytest.raises(ValueError, match="integral multiple"):
        CumulativeEventTimeWindows.of(6000, 4000)


def test_the_plan_names_the_cumulative_window(tmp_path: Path) -> None:
    script = compile_sql(sql_text(tmp_path, RUNS[0]["query"], 2), "q.sql")
    names = [v.name for v in script.env.get_job_graph().vertices.values()]
    assert any("CumulativeEventTimeWindows" in n for n in names), names


@pytest.mark.parametrize("mode", ["streaming", "batch"])
def test_the_columnar_executor_runs_the_window_itself(tmp_path: Path, mode: str) -> None:
    """A CUMULATE aggregate is a columnar window member (not the row operator inside the
    columnar chain); its rows on Spark: test_sql_cumulate_spark.py."""
    from flowc.executor.arrow.plan import plan_members

    settings = f"SET 'execution.runtime-mode' = '{mode}';\n"
    script = compile_sql(sql_text(tmp_path, RUNS[0]["query"], 2, settings), "q.sql")
    members = plan_members(script.env.get_job_graph())
    assert isinstance(members, dict), members
    kinds = [getattr(m, "kind", None) for ms in members.values() for m in ms]
    assert "window" in kinds and "row_op" not in kinds, kinds


FLOW = """source events (user_id string, amount int, ts timestamp) from csv '{path}'
  options (header = false, null_value = '') watermark ts - 1s;
events | key by user_id | window cumulating 6s every 2s
  | aggregate sum(amount) as total, count(*) as n | print;
"""


def test_flow_window_cumulating_is_the_sql_window(tmp_path: Path) -> None:
    """.flow's ``window cumulating 6s every 2s`` gives Flink's rows of the SQL CUMULATE
    aggregate (RUNS[0]: window_start, window_end, user_id, total, n)."""
    sql_text(tmp_path, "SELECT 1", 1)  # writes events.csv
    script = compile_source(FLOW.format(path=tmp_path / "events.csv"), "t.flow")
    lines = list(run_reference(script.env.get_job_graph()).printed)

    def reordered(line: str) -> str:  # .flow: key first, then the window columns
        f = line[3:-1].split(", ")
        return "+I[" + ", ".join([f[1], f[2], f[0], *f[3:]]) + "]"

    assert sorted(map(reordered, lines)) == sorted(RUNS[0]["print"])


def test_flow_cumulating_errors(tmp_path: Path) -> None:
    sql_text(tmp_path, "SELECT 1", 1)
    text = FLOW.format(path=tmp_path / "events.csv").replace("every 2s", "every 4s")
    with pytest.raises(FlowcError) as info:
        compile_source(text, "t.flow")
    assert "integral multiple of step" in info.value.message
    assert info.value.span is not None and info.value.span.line == 3


def test_cumulate_over_processing_time(tmp_path: Path) -> None:
    """CUMULATE over a ``PROCTIME()`` column plans CumulativeProcessingTimeWindows; in BATCH
    every window fires at the end of input (all rows at processing time 12.345 s: the 10 s
    epoch's windows ending at 14 s, 16 s, ... 20 s)."""
    from test_sql_proctime import _job, _printed

    jg = _job(tmp_path, "SELECT user_id, window_start, window_end, COUNT(*) AS n FROM TABLE("
                        "CUMULATE(TABLE clicks, DESCRIPTOR(pt), INTERVAL '2' SECOND, "
                        "INTERVAL '10' SECOND)) GROUP BY window_start, window_end, user_id;")
    names = [n.name for n in jg.stream_graph.nodes.values()]  # type: ignore[attr-defined]
    assert "CumulativeProcessingTimeWindows" in names
    assert _printed(jg) == [f"+I[{u}, 1970-01-01T00:00:10, 1970-01-01T00:00:{e}, {n}]"
                            for u, n in (("a", 2), ("b", 1)) for e in (14, 16, 18, 20)]
