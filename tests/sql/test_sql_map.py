"""MAP and STR_TO_MAP against results recorded from Flink 2.3 (flink_results/map.json, made
by record_map.py there): STR_TO_MAP with default and regex delimiters, ``m['k']``,
CARDINALITY, and maps printed as Flink prints them (``{a=1, b=2}`` in Java's HashMap order)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from flowc.errors import FlowcError
from flowc.executor import run_reference
from flowc.maps import hash_order, str_to_map
from flowc.rowkind import row_text, value_text
from flowc.sql import Unit, collect_query, compile_sql
from flowc.sql.source import split_sql

RECORDED = json.loads((Path(__file__).parent / "flink_results" / "map.json")
                      .read_text(encoding="utf-8"))
TABLES = ("CREATE TABLE texts (id BIGINT, s STRING) WITH ('connector' = 'filesystem', "
          "'path' = 'texts.csv', 'format' = 'csv', 'csv.null-literal' = '<null>', "
          "'csv.header' = 'false');\n")


def _rows(tmp_path: Path, query: str, run: Any = run_reference) -> list[list[str | None]]:
    texts = RECORDED["texts"]
    (tmp_path / "texts.csv").write_text(
        "".join(f'{i},"{s}"\n' for i, s in enumerate(texts)) + f"{len(texts)},<null>\n",
        encoding="utf-8")
    text = TABLES + query + ";"
    unit = Unit("q.sql", text, str(tmp_path))
    chunks = split_sql(text, "q.sql")
    unit.add_sql(chunks[0])
    assert not unit.errors, [e.format() for e in unit.errors]
    lets, pipeline = unit.query(chunks[-1])
    script = collect_query(unit, pipeline, lets)[0]
    rows = run(script.env.get_job_graph())["result"]
    return sorted(([None if v is None else value_text(v, "") for v in r] for r in rows),
                  key=lambda r: int(r[0] or 0))


@pytest.mark.parametrize("case", RECORDED["cases"], ids=[c["query"][:50]
                                                          for c in RECORDED["cases"]])
def test_map_matches_flink(tmp_path: Path, case: dict[str, Any]) -> None:
    assert _rows(tmp_path, case["query"]) == case["rows"]


@pytest.mark.spark
def test_map_on_spark(tmp_path: Path) -> None:
    from flowc.executor import get_spark, run_job_graph

    get_spark("local[2]")  # the test session's master (tests/executor/conftest.py)
    for case in RECORDED["cases"][:2]:
        assert _rows(tmp_path, case["query"], run_job_graph) == case["rows"]


def test_hash_order_is_javas() -> None:
    # "Aa" and "BB" share Java's String hashCode (2112): one bucket, insertion order
    assert list(hash_order({"BB": 1, "Aa": 2, "c": 3})) == ["BB", "Aa", "c"]
    assert list(str_to_map("b=1,a=2")) == ["a", "b"]
    assert str_to_map(None) is None and str_to_map("a") == {"a": None}


def test_printed_as_flink() -> None:
    assert row_text((1, str_to_map("b=x,a=y,zz")), ("int", "map")) == \
        "+I[1, {zz=null, a=y, b=x}]"


def test_map_key_type_checked(tmp_path: Path) -> None:
    text = TABLES + "SELECT STR_TO_MAP(s)[1] FROM texts;"
    unit = Unit("q.sql", text, str(tmp_path))
    chunks = split_sql(text, "q.sql")
    unit.add_sql(chunks[0])
    with pytest.raises(Exception, match="the key must be string, not int"):
        lets, pipeline = unit.query(chunks[-1])
        collect_query(unit, pipeline, lets)


def test_map_column_in_a_file_is_an_error(tmp_path: Path) -> None:
    text = ("CREATE TABLE t (id BIGINT, m MAP<STRING, STRING>) WITH ('connector' = "
            "'filesystem', 'path' = 't.csv', 'format' = 'csv');\n"
            "CREATE TABLE o (id BIGINT) WITH ('connector' = 'print');\n"
            "INSERT INTO o SELECT id FROM t;\n")
    with pytest.raises(FlowcError, match=r"field type 'map<string, string>' \(supported: "):
        run_reference(compile_sql(text, "q.sql", base_dir=str(tmp_path)).env.get_job_graph())
