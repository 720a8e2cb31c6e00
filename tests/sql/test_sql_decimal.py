"""Exact DECIMAL(p, s) against results recorded from Flink 2.3 (flink_results/decimal.json,
made by record_decimal.py there): arithmetic result types and rounding, casts, comparisons
and aggregates over a currency conversion's orders, on the reference executor and on Spark;
and the type rules themselves (flowc.decimals)."""

from __future__ import annotations

import json
import sys
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from flowc.decimals import arith, avg_type, literal, sum_type
from flowc.errors import FlowcError
from flowc.executor import run_reference
from flowc.parser import CompiledScript
from flowc.rowkind import row_text
from flowc.sql import Unit, collect_query, compile_sql
from flowc.sql.source import split_sql

HERE = Path(__file__).parent / "flink_results"
sys.path.insert(0, str(HERE))
from decimal_data import DDL, orders_csv  # noqa: E402

RECORDED = json.loads((HERE / "decimal.json").read_text(encoding="utf-8"))
CASES, TYPES = RECORDED["cases"], RECORDED["types"]
TABLES = (f"SET 'execution.runtime-mode' = 'batch';\n{DDL} WITH ('connector' = 'filesystem', "
          "'path' = 'orders.csv', 'format' = 'csv', 'csv.null-literal' = '', "
          "'csv.header' = 'false');\n")


def _compile(tmp_path: Path, query: str, tables: str = TABLES) -> CompiledScript:
    (tmp_path / "orders.csv").write_text(orders_csv(), encoding="utf-8")
    text = tables + query + ";"
    unit = Unit("q.sql", text, str(tmp_path))
    chunks = split_sql(text, "q.sql")
    for chunk in chunks[:-1]:
        unit.add_sql(chunk)
    assert not unit.errors, [e.format() for e in unit.errors]
    lets, pipeline = unit.query(chunks[-1])
    return collect_query(unit, pipeline, lets)[0]


def _rows(tmp_path: Path, query: str, run: Any = run_reference) -> list[list[str | None]]:
    script = _compile(tmp_path, query)
    result = run(script.env.get_job_graph())["result"]
    return sorted(([None if v is None else str(v) for v in r] for r in result),
                  key=lambda r: [x or "" for x in r])


@pytest.mark.parametrize("case", CASES, ids=[c["query"][:60] for c in CASES])
def test_decimal_matches_flink(tmp_path: Path, case: dict[str, Any]) -> None:
    if "error" in case:
        with pytest.raises(FlowcError):
            _rows(tmp_path, case["query"])
        return
    assert _rows(tmp_path, case["query"]) == case["rows"]


def test_double_would_differ_from_flink(tmp_path: Path) -> None:
    # Why DECIMAL must be exact: the currency conversion in DOUBLE differs from Flink's exact
    # DECIMAL(21, 6) on many rows (the exact run above agrees on every row).
    flink = {r[0]: r[2] for r in CASES[0]["rows"]}
    rows = _rows(tmp_path, "SELECT id, CAST(amount AS DOUBLE) * CAST(rate AS DOUBLE) FROM orders")
    differ = [i for i, v in rows if v is not None and Decimal(v) != Decimal(flink[i])]
    assert len(differ) > len(rows) // 10, len(differ)


@pytest.mark.spark
def test_decimal_on_spark(tmp_path: Path) -> None:
    from flowc.executor import get_spark, run_job_graph

    get_spark("local[2]")  # the test session's master (tests/executor/conftest.py)
    for case in (CASES[0], CASES[3], CASES[8]):
        assert _rows(tmp_path, case["query"], run_job_graph) == case["rows"]


@pytest.mark.parametrize("expr", list(TYPES))
def test_result_type_matches_flink(tmp_path: Path, expr: str) -> None:
    # The view's columns as Flink's TYPEOF view has them (flowc has no FROM-less SELECT).
    view = ("CREATE TEMPORARY VIEW one_row AS SELECT CAST(amount AS DECIMAL(10, 2)) AS amount, "
            "rate, id, CAST(amount AS DECIMAL(38, 10)) AS big FROM orders;\n")
    script = _compile(tmp_path, f"SELECT {expr} AS v FROM one_row", TABLES + view)
    [t] = script.streams["_result"].schema.types
    assert str(t).upper() == TYPES[expr].removesuffix(" NOT NULL")


def test_result_types() -> None:
    # Flink's LogicalTypeMerging, as the recorded results' scales show
    assert arith("*", (10, 2), (10, 4)) == (21, 6)
    assert arith("/", (10, 2), (10, 4)) == (25, 13)
    assert arith("/", (19, 0), (10, 2)) == (32, 11)
    assert arith("+", (10, 2), (10, 4)) == (13, 4)
    assert arith("%", (10, 2), (10, 4)) == (10, 4)
    assert arith("*", (38, 10), (38, 10)) == (38, 6)  # adjusted: integer digits first
    assert sum_type((10, 2)) == (38, 2) and avg_type((10, 2)) == (38, 6)
    assert avg_type((20, 8)) == (38, 8)
    assert literal(1.10) == (Decimal("1.1"), 2, 1) and literal(3) == (Decimal(3), 10, 0)
    assert literal(1 << 40)[1:] == (19, 0)  # type: ignore[index]


def test_printed_with_scale() -> None:
    assert row_text((Decimal("12.30"), Decimal("0E-6"), None), ("decimal",) * 3) == \
        "+I[12.30, 0.000000, null]"


def test_bad_decimal_type(tmp_path: Path) -> None:
    (tmp_path / "orders.csv").write_text("", encoding="utf-8")
    text = ("CREATE TABLE t (a DECIMAL(40, 2)) WITH ('connector' = 'filesystem', "
            "'path' = 'orders.csv', 'format' = 'csv');\n")
    unit = Unit("q.sql", text, str(tmp_path))
    unit.add_sql(split_sql(text, "q.sql")[0])
    assert [e.message for e in unit.errors] == [
        "the precision of DECIMAL must be between 1 and 38, not 40"]


@pytest.mark.parametrize("fmt", ["csv", "json", "parquet"])
def test_decimal_file_sink_round_trip(tmp_path: Path, fmt: str) -> None:
    # A DECIMAL column written by a filesystem table and read back by another: csv and
    # parquet (decimal128) keep every digit and the scale; json writes a number.
    (tmp_path / "orders.csv").write_text(orders_csv(20), encoding="utf-8")
    opts = "'csv.header' = 'false', " if fmt == "csv" else ""
    text = (TABLES +
            f"CREATE TABLE o (id BIGINT, usd DECIMAL(21, 6)) WITH ('connector' = 'filesystem', "
            f"{opts}'path' = 'out', 'format' = '{fmt}');\n"
            "INSERT INTO o SELECT id, amount * rate FROM orders;\n")
    run_reference(compile_sql(text, "q.sql", base_dir=str(tmp_path)).env.get_job_graph())
    back = (f"CREATE TABLE o (id BIGINT, usd DECIMAL(21, 6)) WITH ('connector' = "
            f"'filesystem', {opts}'path' = 'out', 'format' = '{fmt}');\n")
    rows = _rows_of(tmp_path, back + "SELECT id, usd FROM o")
    flink = sorted((r[0], r[2]) for r in CASES[0]["rows"] if int(r[0]) <= 20)
    assert sorted((r[0], r[1]) for r in rows) == flink


def _rows_of(tmp_path: Path, text: str) -> list[list[str | None]]:
    unit = Unit("q.sql", text, str(tmp_path))
    chunks = split_sql(text, "q.sql")
    for chunk in chunks[:-1]:
        unit.add_sql(chunk)
    lets, pipeline = unit.query(chunks[-1])
    script = collect_query(unit, pipeline, lets)[0]
    return [[None if v is None else str(v) for v in r]
            for r in run_reference(script.env.get_job_graph())["result"]]


@pytest.mark.parametrize("expr", ["CASE WHEN id > 1 THEN amount ELSE rate END",
                                  "COALESCE(CASE WHEN id > 1 THEN amount END, rate)"])
def test_case_branches_take_the_common_scale(tmp_path: Path, expr: str) -> None:
    # CASE over DECIMAL(10, 2) and DECIMAL(10, 4) is DECIMAL(12, 4) (Flink's TYPEOF above):
    # every value has four fraction digits, as Flink prints them.
    rows = _rows(tmp_path, f"SELECT id, {expr} FROM orders")
    amounts = {r[0]: r[1] for r in CASES[7]["rows"]}  # id, amount, rate of some rows
    assert all(len(v.split(".")[1]) == 4 for _, v in rows if v is not None)
    assert all(Decimal(v) == Decimal(amounts[i]) for i, v in rows if i in amounts and i != "1")
