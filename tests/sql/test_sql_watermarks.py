"""A SQL table's WATERMARK against Flink 2.3 (recorded by changelog/record_watermarks.py, not
run here). Flink SQL's WatermarkAssignerOperator emits the expression's value, ``max(ts) -
d`` (no -1 ms as the DataStream BoundedOutOfOrdernessWatermarks), never at or below 0, and
emits it at once after a record that raised it by more than ``pipeline.auto-watermark-
interval``; the rows of watermark_data.py are late or not by exactly that. The .flow /
DataStream generator keeps its -1 ms."""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pytest

from flowc.errors import FlowcError
from flowc.executor import run_reference
from flowc.executor.arrow.chain import Watermarks
from flowc.executor.arrow.convert import Chunk
from flowc.executor.runtime import TaskInfo, create_operator
from flowc.operators import TimestampsAndWatermarksOp
from flowc.parser import compile_source
from flowc.sql import compile_sql
from flowc.windowing import WatermarkStrategy

HERE = Path(__file__).parent / "changelog"
sys.path.insert(0, str(HERE))
from watermark_data import COLUMNS, EVENTS  # noqa: E402

RECORDED = json.loads((HERE / "watermarks.json").read_text())
CASES = [c for c in RECORDED["cases"] if "error" not in c]
IDS = [f"{c['mode']}-{c['watermark']}-{c['interval']}-{c['query'][:30]}" for c in CASES]


def sql_text(tmp: Path, case: dict[str, Any], parallelism: int = 1, settings: str = "") -> str:
    (tmp / "events.csv").write_text(EVENTS, encoding="utf-8")
    interval = case["interval"]
    return (f"SET 'parallelism' = '{parallelism}';\n"
            f"SET 'execution.runtime-mode' = '{case['mode']}';\n{settings}"
            + ("" if interval is None else
               f"SET 'pipeline.auto-watermark-interval' = '{interval}';\n")
            + f"CREATE TABLE events ({COLUMNS}, WATERMARK FOR ts AS {case['watermark']}) WITH ("
              f"'connector' = 'filesystem', 'path' = '{tmp / 'events.csv'}', 'format' = 'csv', "
              f"'csv.header' = 'false');\n{case['query']};\n")


def lines(tmp: Path, case: dict[str, Any], parallelism: int = 1) -> list[str]:
    graph = compile_sql(sql_text(tmp, case, parallelism), "q.sql").env.get_job_graph()
    return [line.split("> ", 1)[-1] for line in run_reference(graph).printed]


def test_the_fixtures_decide_lateness_at_the_boundary() -> None:
    assert len(CASES) == len(RECORDED["cases"]) >= 10
    first = CASES[0]  # ts - 1 s: row 2 (5.999) lets [0 s, 5 s) fire, row 3 (4.5) is late
    assert first["watermark"] == "ts - INTERVAL '1' SECOND" and first["mode"] == "streaming"
    assert any("watermark=[-(ts, 1000:INTERVAL SECOND)]" in p for p in first["plan"])
    assert first["print"][0] == "+I[2024-01-01T00:00, 2024-01-01T00:00:05, 1, 1]"
    batch = next(c for c in CASES if c["mode"] == "batch")  # BATCH: no watermark, none late
    assert batch["print"][0] == "+I[2024-01-01T00:00, 2024-01-01T00:00:05, 2, 4]"
    # a rise of 199 ms (row 11) is emitted at once only with interval 0: row 12 late or not
    eager = [c for c in CASES if c["watermark"] == "ts" and c["query"] == first["query"]]
    assert {c["interval"] for c in eager} == {None, "0"}
    assert eager[0]["print"][-2] != eager[1]["print"][-2]


def keyed(case: dict[str, Any]) -> bool:
    """Windows of several keys that fire together print in an order neither Flink (its timer
    heap) nor flowc fixes."""
    return "GROUP BY" in case["query"] and " k" in case["query"].split("GROUP BY")[1]


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_printed_lines_are_flinks(tmp_path: Path, case: dict[str, Any]) -> None:
    got = lines(tmp_path, case)
    if keyed(case):
        assert sorted(got) == sorted(case["print"])
    else:
        assert got == case["print"]


@pytest.mark.parametrize("case", [c for c in CASES if "OVER" not in c["query"]],
                         ids=[i for i, c in zip(IDS, CASES) if "OVER" not in c["query"]])
def test_parallelism_2_gives_flinks_rows(tmp_path: Path, case: dict[str, Any]) -> None:
    # one source subtask reads the whole (small) file: its watermarks are the same
    assert sorted(lines(tmp_path, case, 2)) == sorted(case["print"])


def test_flow_watermark_keeps_the_datastream_minus_one(tmp_path: Path) -> None:
    """.flow's ``watermark ts - 1s`` is BoundedOutOfOrdernessWatermarks: after row 2 (5.999)
    the watermark is 4.998, so [0 s, 5 s) has not fired and row 3 (4.5) is counted."""
    (tmp_path / "events.csv").write_text(EVENTS, encoding="utf-8")
    flow = compile_source(
        "set flowc.watermarks = 'per-record';\n"
        "source events (v int, k string, ts timestamp)\n"
        f"  from csv '{tmp_path / 'events.csv'}' options (header = false)\n"
        "  watermark ts - 1s;\n"
        "events | window tumbling 5s | aggregate count(*) as n, sum(v) as s | print;\n",
        "w.flow")
    out = list(run_reference(flow.env.get_job_graph()).printed)
    assert out[0] == "+I[2024-01-01T00:00, 2024-01-01T00:00:05, 2, 4]"
    assert CASES[0]["print"][0] != out[0]


def strategies() -> list[WatermarkStrategy]:
    return [WatermarkStrategy(lag, exact=exact, emit_every=every, eager_ms=eager)
            for lag in (0, 7, -3) for exact in (False, True) for every in (0, 1, 3, 10)
            for eager in ((None, 0, 5, 40) if exact else (None,))
            if lag >= 0 or exact if every or eager is not None]


def operator_marks(strategy: WatermarkStrategy, ts: list[int]) -> list[tuple[int, int]]:
    op = create_operator(TimestampsAndWatermarksOp(strategy), TaskInfo("t", 0, 1, 128, False))
    marks: list[tuple[int, int]] = []
    seen = [0]

    def out(value: Any, t: int | None) -> None:
        seen[0] += 1

    op.out = out
    op.out_wm = lambda wm: marks.append((seen[0], wm))
    op.open()
    for t in ts:
        op.process(t, t)
    return marks


def columnar_marks(strategy: WatermarkStrategy, ts: list[int],
                   cuts: list[int]) -> list[tuple[int, int]]:
    gen = Watermarks(strategy)
    marks: list[tuple[int, int]] = []
    lo = 0
    for hi in [*cuts, len(ts)]:
        part = pa.array(ts[lo:hi], pa.int64())
        c = gen.place(Chunk(pa.record_batch([part], names=["t"]), part))
        assert c.marks is not None
        marks += [(lo + int(p), int(w)) for p, w in zip(*c.marks)]
        lo = hi
    return marks


def test_the_columnar_generator_is_the_row_generator() -> None:
    """Differential: the vectorised generator (arrow/chain.py Watermarks) places the same
    watermarks after the same records as the row operator, for every rule (-1 or exact,
    record counts, eager emission), timestamps around 0 (the exact floor) and any chunking."""
    rng = random.Random(11)
    for strategy in strategies():
        for _ in range(12):
            n = rng.randint(1, 60)
            base = rng.choice([-50, 0, 10_000])
            ts = [base + rng.randint(0, 120) for _ in range(n)]
            cuts = sorted(rng.sample(range(1, n), min(n - 1, rng.randint(0, 3))))
            expected = operator_marks(strategy, ts)
            assert columnar_marks(strategy, ts, cuts) == expected, (strategy, ts, cuts)


def test_exact_generator_rules() -> None:
    sql = WatermarkStrategy.for_sql_watermark(1000)
    assert (sql.lag, sql.floor) == (1000, 0)
    assert WatermarkStrategy.for_bounded_out_of_orderness(1000).lag == 1001
    # eager rule with Flink's default interval: +150 ms is not emitted, +250 ms is
    s = WatermarkStrategy(0, exact=True, emit_every=0, eager_ms=200)
    assert operator_marks(s, [5000, 5150, 5250, 5300]) == [(1, 5000), (3, 5250)]
    # nothing at or below 0 (Flink SQL's assigner starts at 0)
    s = WatermarkStrategy(100, exact=True, emit_every=1, eager_ms=200)
    assert operator_marks(s, [50, 100, 101]) == [(3, 1)]
    assert operator_marks(WatermarkStrategy(100, emit_every=1), [50])[0] == (1, -51)


@pytest.mark.parametrize("columns, watermark, message", [
    ("v INT, ts BIGINT", "ts", "but the time field type is BIGINT"),
    ("v INT, ts TIMESTAMP(6)", "ts", "but the time field type is TIMESTAMP(6)"),
    ("v INT, ts TIMESTAMP", "ts", "but the time field type is TIMESTAMP(6)"),
    ("v INT, ts STRING", "ts", "but the time field type is STRING"),
    ("v INT, ts TIMESTAMP(3), t2 TIMESTAMP(3)", "t2 - INTERVAL '1' SECOND",
     "WATERMARK supports '<column>' or '<column> - INTERVAL ...' of its own column"),
])
def test_watermark_errors(tmp_path: Path, columns: str, watermark: str, message: str) -> None:
    (tmp_path / "e.csv").write_text("", encoding="utf-8")
    text = (f"CREATE TABLE e ({columns}, WATERMARK FOR ts AS {watermark}) WITH ("
            f"'connector' = 'filesystem', 'path' = '{tmp_path / 'e.csv'}', 'format' = 'csv');\n"
            "SELECT * FROM e;\n")
    with pytest.raises(FlowcError) as err:
        compile_sql(text, "q.sql")
    assert message in str(err.value)
    assert err.value.span is not None and err.value.span.line == 1


def test_plain_timestamp_precisions_up_to_3_are_time_attributes(tmp_path: Path) -> None:
    (tmp_path / "e.csv").write_text("1,2024-01-01 00:00:01\n", encoding="utf-8")
    for ty in ("TIMESTAMP(0)", "TIMESTAMP(3)", "TIMESTAMP_LTZ(3)"):
        text = (f"CREATE TABLE e (v INT, ts {ty}, WATERMARK FOR ts AS ts) WITH ("
                f"'connector' = 'filesystem', 'path' = '{tmp_path / 'e.csv'}', "
                "'format' = 'csv', 'csv.header' = 'false');\nSELECT v FROM e;\n")
        graph = compile_sql(text, "q.sql").env.get_job_graph()
        assert list(run_reference(graph).printed) == ["+I[1]"]


def test_marks_are_numpy_int64() -> None:
    s = WatermarkStrategy(0, exact=True, emit_every=0, eager_ms=0)
    part = pa.array([10, 20], pa.int64())
    c = Watermarks(s).place(Chunk(pa.record_batch([part], names=["t"]), part))
    assert c.marks is not None and c.marks[0].dtype == np.int64
    assert list(c.marks[1]) == [10, 20]
