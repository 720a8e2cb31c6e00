"""Inner SQL interval joins over rows behind the watermark, against Flink 2.3 (recorded by
changelog/record_interval_late.py, not run here). Flink SQL runs them with its table
runtime's RowTimeIntervalJoin: a late row joins the other side's rows still cached (the
DataStream IntervalJoinOperator, which .flow's interval join keeps, drops it), a row is
cached only while the watermark is before the last time it can join, and the cache is
cleaned by timers at the rows' times + the window + 1 ms.

Flink took the table's rows one at a time, each with the watermark after it (see
interval_late_data.py); flowc gets the same order from one file per micro-batch: the
reference executor's micro-batch model and the streaming executor's micro-batch tasks
(driven without Spark, as tests/streaming/test_streaming_columnar.py does) must print one
of Flink's results line for line. BATCH has no late rows: every pair within the bounds
joins (Flink plans a regular join), on the row and on the columnar executor."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from flowc.executor import run_reference
from flowc.executor.reference_batches import MicroBatches
from flowc.planner.stream_graph import NodeKind
from flowc.sql import compile_sql

HERE = Path(__file__).parent / "changelog"
sys.path.insert(0, str(HERE))
from interval_late_data import COLUMNS, EVENTS, ROWS  # noqa: E402

RECORDED = json.loads((HERE / "interval_late.json").read_text())
CASES = RECORDED["cases"]
QUERIES = [c["query"] for c in CASES]


def _flink(query: str) -> list[list[str]]:
    return next(c for c in CASES if c["query"] == query)["prints"]


def _script(d: Path, query: str, parallelism: int, monitored: bool, batch: bool = False) -> str:
    monitor = ", 'source.monitor-interval' = '100ms'" if monitored else ""
    mode = "SET 'execution.runtime-mode' = 'batch';\n" if batch else ""
    return (f"SET 'parallelism' = '{parallelism}';\n{mode}"
            "SET 'pipeline.auto-watermark-interval' = '0';\n"
            f"CREATE TABLE events ({COLUMNS}) WITH ('connector' = 'filesystem', 'path' = "
            f"'{d}/', 'format' = 'csv', 'csv.header' = 'false'{monitor});\n{query};\n")


def _row_files(d: Path) -> list[list[str]]:
    """One file per row of the table, in its order: a micro-batch each."""
    d.mkdir(exist_ok=True)
    files = []
    for i, line in enumerate(EVENTS.splitlines()):
        (d / f"f{i:03d}.csv").write_text(line + "\n", encoding="utf-8")
        files.append([str(d / f"f{i:03d}.csv")])
    return files


def _lines(printed: list[str]) -> list[str]:
    return [line.split("> ", 1)[-1] for line in printed]


def _model(tmp: Path, query: str, parallelism: int) -> list[str]:
    files = _row_files(tmp / "in")
    jg = compile_sql(_script(tmp / "in", query, parallelism, True), "q.sql").env.get_job_graph()
    sources = [n.id for n in jg.stream_graph.nodes.values() if n.kind is NodeKind.SOURCE]
    result = run_reference(jg, micro_batches=MicroBatches({s: files for s in sources}))
    assert result.late_records_dropped == 0  # the table operator drops no row
    return _lines(result.printed)


def _bounded(tmp: Path, query: str, parallelism: int, batch: bool) -> Any:
    d = tmp / "in"
    d.mkdir(parents=True, exist_ok=True)
    (d / "events.csv").write_text(EVENTS, encoding="utf-8")
    return compile_sql(_script(d, query, parallelism, False, batch), "q.sql").env \
        .get_job_graph()


def test_the_fixtures_join_late_rows() -> None:
    assert "2.3.0" in RECORDED["flink"] and "runs" in RECORDED["flink"]
    assert len(CASES) >= 5
    for c in CASES:
        assert any("IntervalJoin(joinType=[InnerJoin]" in line for line in c["plan"]), c
        assert sum(c["runs"]) >= 3
    # v=4 (R, b, 10:00:01) comes after the watermark reached 10:00:02 and joins v=3 (at
    # the bound l.ts - 1 s): in every run (the DataStream rule drops it); v=13 comes late
    # too but joins nothing (11 and 12 were never cached)
    first = _flink(QUERIES[0])
    assert all("+I[3, 4]" in p and "+I[11, 13]" not in p for p in first)
    # strict bounds: none of the pairs exactly 1 s apart
    assert all("+I[3, 4]" not in p for p in _flink(QUERIES[1]))


@pytest.mark.parametrize("query", QUERIES)
def test_micro_batches_print_flinks_lines(tmp_path: Path, query: str) -> None:
    assert _model(tmp_path, query, 1) in _flink(query)


class _RowBatches:
    """The streaming executor's micro-batch tasks, row by row, one file a batch (the
    columnar streaming path does not take this join)."""

    def __init__(self, tmp: Path, query: str, parallelism: int) -> None:
        from flowc.executor.streaming.columnar import plan_columnar
        from flowc.executor.streaming.plan import plan_streaming
        from streaming.test_streaming_columnar import Driver

        self.files = _row_files(tmp / "in")
        jg = compile_sql(_script(tmp / "in", query, parallelism, True), "q.sql").env \
            .get_job_graph()
        # the Driver's batch() on the row path; its __init__ wants a columnar plan
        self.driver = Driver.__new__(Driver)
        self.driver.work, self.driver.sg = tmp, jg.stream_graph
        self.driver.plan = plan_streaming(jg)
        reason = plan_columnar(jg, self.driver.plan)
        assert isinstance(reason, str) and "SQL interval join in STREAMING" in reason

    def lines(self) -> list[str]:
        from flowc.executor.sinks import print_text

        out: list[str] = []
        for b, files in enumerate(self.files):
            sinks = self.driver.batch(self.driver.work / "state", b, files, False)["sinks"]
            for key in sorted(sinks):  # (sink node, subtask)
                spec = self.driver.sg.nodes[key[0]].operator
                out += [print_text(spec, x) for x in sinks[key]]
        return out


@pytest.mark.parametrize("query", QUERIES)
def test_streaming_executor_batches_print_flinks_lines(tmp_path: Path, query: str) -> None:
    lines = _RowBatches(tmp_path, query, 1).lines()
    assert _lines(lines) in _flink(query)


def _all_pairs(query: str) -> list[tuple[int, int]]:
    """BATCH: every (left v, right v) of equal keys within the query's bounds (ms)."""
    bounds = {0: (-1000, 1000), 1: (-999, 999), 2: (0, 1000), 3: (-2000, -1000),
              4: (-2000, 1000)}[QUERIES.index(query)]
    swap = QUERIES.index(query) == 4  # the right table first: l.ts - r.ts in the bounds

    def ms(t: float) -> int:
        return round(t * 1000)
    left = [(k, v, ms(t)) for s, k, v, t in ROWS if s == ("R" if swap else "L")]
    right = [(k, v, ms(t)) for s, k, v, t in ROWS if s == ("L" if swap else "R")]
    return sorted((a[1], b[1]) for a in left for b in right
                  if a[0] == b[0] and bounds[0] <= b[2] - a[2] <= bounds[1])


def _pairs(lines: list[str]) -> list[tuple[int, ...]]:
    """``+I[1, 2]`` -> (1, 2)."""
    return sorted(tuple(int(v) for v in x[3:-1].split(", ")) for x in lines)


@pytest.mark.parametrize("query", [q for q in QUERIES if "l.ts, r.ts" not in q])
def test_batch_joins_every_pair_within_the_bounds(tmp_path: Path, query: str) -> None:
    from flowc.executor.arrow.plan import plan_members

    jg = _bounded(tmp_path, query, 2, batch=True)
    assert not isinstance(plan_members(jg), str)  # columnar: no late rows in BATCH
    assert _pairs(_lines(run_reference(jg).printed)) == _all_pairs(query)


def test_the_late_rows_made_pairs_the_datastream_operator_misses() -> None:
    # the streaming results differ from BATCH's only by rows never cached (11 and 12) and
    # the row 20 whose partner was cleaned up: every other late pair joined
    streamed = set(_pairs(_flink(QUERIES[0])[0]))
    assert set(_all_pairs(QUERIES[0])) - streamed == {(11, 13), (12, 13), (20, 14)}


def test_sql_inner_interval_join_state_is_the_table_operators(tmp_path: Path) -> None:
    from flowc.operators import IntervalJoinOp
    from flowc.savepoint.stateful import state_names

    jg = _bounded(tmp_path, QUERIES[0], 1, batch=False)
    node = next(n for n in jg.stream_graph.nodes.values()
                if isinstance(n.operator, IntervalJoinOp))
    assert node.operator.table and node.operator.pad == (None, None)
    assert state_names(node) == ("IntervalJoinLeftCache", "IntervalJoinRightCache",
                                 "IntervalJoinLeftTimerState", "IntervalJoinRightTimerState")


@pytest.mark.spark
def test_spark_row_and_columnar_runs_equal_the_reference(tmp_path: Path) -> None:
    from flowc.executor import get_spark, run_job_graph
    from flowc.executor.arrow.plan import plan_members

    get_spark("local[2]")
    for batch in (False, True):
        jg = _bounded(tmp_path / str(batch), QUERIES[0], 2, batch)
        # STREAMING: row by row (late rows join the cache); BATCH: columnar
        assert isinstance(plan_members(jg), str) != batch
        assert sorted(_lines(run_job_graph(jg).printed)) == \
            sorted(_lines(run_reference(jg).printed)), batch


@pytest.mark.parametrize("kind, expected", [
    ("", ["+I[1, 2]"]), ("LEFT", ["+I[1, 2]", "+I[3, null]"]),
    ("FULL", ["+I[1, 2]", "+I[3, null]", "+I[null, 4]"])])
def test_batch_joins_rows_before_1970(tmp_path: Path, kind: str, expected: list[str]) -> None:
    # BATCH has no watermark: Flink plans a regular join, every pair within the bounds
    # joins whatever its time (the streaming operator's time starts at 0: it would cache
    # no row before 1970 and pad them all)
    (tmp_path / "e.csv").write_text("L,a,1,1969-12-31 23:59:58.000\n"
                                    "R,a,2,1969-12-31 23:59:58.500\n"
                                    "L,b,3,1969-12-31 23:00:00.000\n"
                                    "R,c,4,1969-12-31 23:00:00.000\n", encoding="utf-8")
    query = (f"SELECT l.v, r.v AS rv FROM (SELECT k, v, ts FROM events WHERE side = 'L') l "
             f"{kind} JOIN (SELECT k, v, ts FROM events WHERE side = 'R') r ON l.k = r.k "
             "AND r.ts BETWEEN l.ts - INTERVAL '1' SECOND AND l.ts + INTERVAL '1' SECOND")
    text = (f"SET 'execution.runtime-mode' = 'batch';\nCREATE TABLE events ({COLUMNS}) WITH "
            f"('connector' = 'filesystem', 'path' = '{tmp_path / 'e.csv'}', 'format' = 'csv', "
            f"'csv.header' = 'false');\n{query};\n")
    printed = run_reference(compile_sql(text, "q.sql").env.get_job_graph()).printed
    assert sorted(_lines(printed)) == expected


def test_a_savepoint_splits_the_join_caches_by_key() -> None:
    # the table operator's caches and timer states are keyed state (Flink's names): a
    # restore at another parallelism hands each key's rows to the subtask owning its group
    from flowc.executor.runtime.time_interval_join import TimeIntervalJoinOperator
    from flowc.keygroups import assign_to_key_group
    from flowc.savepoint.state import OperatorState, split_subtask, subtask_state

    classes = tuple(k.__name__ for k in TimeIntervalJoinOperator.__mro__)
    keys = [f"k{i}" for i in range(20)]
    state: dict[str, Any] = {
        "left_cache": {k: {1000 + i: [[(k, i), False]]} for i, k in enumerate(keys)},
        "right_cache": {k: {2000: [[(k, -i), True]]} for i, k in enumerate(keys)},
        "left_timer": {k: 2001 + i for i, k in enumerate(keys)},
        "right_timer": {k: 3001 for k in keys}, "left_expiration": 5}
    into = OperatorState()
    split_subtask(into, 0, state, {"left_expiration": 0}, classes, 128)
    assert {line["state"] for lines in into.keyed.values() for line in lines} == {
        "IntervalJoinLeftCache", "IntervalJoinRightCache", "IntervalJoinLeftTimerState",
        "IntervalJoinRightTimerState"}
    assert into.operator[0] == {"left_expiration": 5}
    halves = [subtask_state(into, (0, 63), 0, 2, "sp"), subtask_state(into, (64, 127), 1, 2,
                                                                        "sp")]
    for k in keys:
        mine = assign_to_key_group(k, 128) // 64
        for attr in ("left_cache", "right_cache", "left_timer", "right_timer"):
            assert halves[mine][attr][k] == state[attr][k]
            assert k not in halves[1 - mine].get(attr, {})


@pytest.mark.spark
@pytest.mark.slow
def test_streamed_on_spark_one_row_a_micro_batch(tmp_path: Path) -> None:
    # the real streaming query (Spark Structured Streaming), a file landed per micro-batch
    from flowc.executor import get_spark
    from streaming.harness import stream_files

    get_spark("local[2]")  # the test session's master (tests/executor/conftest.py)

    rows = EVENTS.splitlines()

    def make(work: Path, k: int) -> str:
        path = work / f"row{k:03d}.csv"
        path.write_text(rows[k] + "\n", encoding="utf-8")
        return str(path)
    (tmp_path / "in").mkdir()
    jg = compile_sql(_script(tmp_path / "in", QUERIES[0], 1, True), "q.sql").env \
        .get_job_graph()
    stats = stream_files(jg, tmp_path, make, len(rows))
    assert _lines(stats.printed) in _flink(QUERIES[0])
