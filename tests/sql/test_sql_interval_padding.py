"""Outer interval joins over rows that arrive behind the watermark, against Flink 2.3
(recorded by changelog/record_interval_padding.py, not run here). Flink SQL runs them with
its table runtime's RowTimeIntervalJoin, not the DataStream operator that drops late rows: a
late row joins the other side's rows still cached, and one whose window has passed is emitted
null-padded at once (flowc.executor.runtime.time_interval_join).

Flink emitted a watermark after every row (``pipeline.auto-watermark-interval`` 0) and read
the file once for both sides; how its join then took the two channels varied from run to
run, so the fixture keeps every distinct result of three runs. flowc reads the file per side
with ``flowc.watermarks = per-record`` and merges the channels round-robin: its lines must be
one of Flink's results, line for line."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from flowc.executor import run_reference
from flowc.sql import compile_sql

HERE = Path(__file__).parent / "changelog"
sys.path.insert(0, str(HERE))
from interval_padding_data import COLUMNS, EVENTS  # noqa: E402

RECORDED = json.loads((HERE / "interval_padding.json").read_text())
CASES = RECORDED["cases"]
OUTER = [c["query"] for c in CASES if "InnerJoin" not in " ".join(c["plan"])]
# the fixture's inner join: every run joined a row that came behind the watermark
INNER = [c["query"] for c in CASES if c["query"] not in OUTER]


def _lines(tmp: Path, query: str, parallelism: int = 1) -> list[str]:
    (tmp / "events.csv").write_text(EVENTS, encoding="utf-8")
    text = (f"SET 'parallelism' = '{parallelism}';\nSET 'flowc.watermarks' = 'per-record';\n"
            f"CREATE TABLE events ({COLUMNS}) WITH ('connector' = 'filesystem', 'path' = "
            f"'{tmp / 'events.csv'}', 'format' = 'csv', 'csv.header' = 'false');\n{query};\n")
    graph = compile_sql(text, "q.sql").env.get_job_graph()
    return [line.split("> ", 1)[-1] for line in run_reference(graph).printed]


def _flink(query: str) -> list[list[str]]:
    return next(c for c in CASES if c["query"] == query)["prints"]


def test_the_fixtures_pad_late_rows_at_once() -> None:
    assert "3 runs each" in RECORDED["flink"]
    kinds = " ".join(" ".join(c["plan"]) for c in CASES)
    for kind in ("LeftOuterJoin", "RightOuterJoin", "FullOuterJoin", "InnerJoin"):
        assert f"joinType=[{kind}]" in kinds
    # v=5 (L, b, 10:00:01.2) comes after the watermark reached 10:00:05 and joins nothing:
    # padded at once in every run (the DataStream rule drops it)
    left = next(q for q in OUTER if "LEFT JOIN" in q)
    assert all("+I[5, null]" in lines for lines in _flink(left))


@pytest.mark.parametrize("query", OUTER)
def test_outer_join_lines_are_flinks(tmp_path: Path, query: str) -> None:
    assert _lines(tmp_path, query) in _flink(query)


@pytest.mark.parametrize("query", OUTER)
def test_outer_join_rows_at_parallelism_2(tmp_path: Path, query: str) -> None:
    # keyed by k: each key's rows meet as at parallelism 1, only their mix differs
    assert sorted(_lines(tmp_path, query, 2)) in [sorted(p) for p in _flink(query)]


@pytest.mark.parametrize("query", INNER)
def test_inner_join_lines_are_flinks(tmp_path: Path, query: str) -> None:
    # the inner interval join runs the table operator too: a late row joins the other
    # side's cached rows (the DataStream IntervalJoinOperator dropped it)
    assert _lines(tmp_path, query) in _flink(query)
