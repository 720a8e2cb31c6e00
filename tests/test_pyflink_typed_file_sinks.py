"""Declared PyFlink ``Types`` end to end into flowc's csv / json / parquet FileSink: the
columns are ROW_NAMED's names (else f0, f1, ...) and a parquet file has the Arrow types of
``flowc.common.arrow_types`` (INT int32, FLOAT float32, ...); read back with pyarrow."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from flowc.common import Row, Types
from flowc.common.arrow_types import UnsupportedArrowType, arrow_schema, arrow_type
from flowc.datastream import FileSink, StreamExecutionEnvironment
from flowc.errors import FlowcError
from flowc.executor import run_reference

ROW = Types.ROW_NAMED(
    ["name", "n", "big", "ratio", "score", "ok", "at", "tags", "small"],
    [Types.STRING(), Types.INT(), Types.LONG(), Types.FLOAT(), Types.DOUBLE(), Types.BOOLEAN(),
     Types.SQL_TIMESTAMP(), Types.LIST(Types.INT()), Types.SHORT()])
AT = dt.datetime(2026, 3, 1, 12, 30, 0, 250000)
DATA = [("a", 1, 2**40, 1 / 3, 0.5, True, AT, [1, 2], 7),
        ("b", -5, None, 2.5, None, False, None, [], -3)]
ARROW = pa.schema([("name", pa.string()), ("n", pa.int32()), ("big", pa.int64()),
                   ("ratio", pa.float32()), ("score", pa.float64()), ("ok", pa.bool_()),
                   ("at", pa.timestamp("ms", tz="UTC")), ("tags", pa.list_(pa.int32())),
                   ("small", pa.int16())])


def test_types_map_to_arrow_types() -> None:
    assert arrow_schema(ROW) == ARROW
    assert arrow_schema(Types.TUPLE([Types.STRING(), Types.BYTE()])) == pa.schema(
        [("f0", pa.string()), ("f1", pa.int8())])
    assert arrow_schema(Types.LONG()) == pa.schema([("f0", pa.int64())])
    assert arrow_type(Types.ROW([Types.INT()])) == pa.struct([("f0", pa.int32())])
    for t in (Types.MAP(Types.STRING(), Types.INT()), Types.SQL_DATE(), Types.BIG_DEC(),
              Types.PICKLED_BYTE_ARRAY()):
        with pytest.raises(UnsupportedArrowType):
            arrow_type(t)


def _job(tmp_path: Path, fmt: str, type_info: Any = ROW, data: Any = None,
         columns: tuple[str, ...] = ()) -> Any:
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(1)
    rows = env.from_collection(data if data is not None else DATA, type_info=type_info)
    rows.map(lambda r: r, output_type=type_info).sink_to(
        FileSink(str(tmp_path / f"out.{fmt}"), fmt, columns))
    return env.get_job_graph()


def test_parquet_has_the_declared_names_and_arrow_types(tmp_path: Path) -> None:
    run_reference(_job(tmp_path, "parquet"))
    table = pq.read_table(tmp_path / "out.parquet")
    assert table.schema == ARROW
    rows = table.to_pylist()
    assert rows[0]["ratio"] == pytest.approx(1 / 3, rel=1e-7) and rows[0]["n"] == 1
    assert rows[0]["at"] == AT.replace(tzinfo=dt.timezone.utc)  # a naive datetime is UTC
    assert rows[1] == {"name": "b", "n": -5, "big": None, "ratio": 2.5, "score": None,
                       "ok": False, "at": None, "tags": [], "small": -3}


def test_csv_and_json_have_the_declared_names(tmp_path: Path) -> None:
    run_reference(_job(tmp_path, "csv"))
    (part,) = (tmp_path / "out.csv").iterdir()
    lines = part.read_text().splitlines()
    assert lines[0] == "name,n,big,ratio,score,ok,at,tags,small"
    assert lines[2].startswith("b,-5,,2.5,,false,,")
    run_reference(_job(tmp_path, "json", Types.TUPLE([Types.STRING(), Types.INT()]),
                       [("x", 1), ("y", 2)]))
    (part,) = (tmp_path / "out.json").iterdir()
    assert [json.loads(x) for x in part.read_text().splitlines()] == [
        {"f0": "x", "f1": 1}, {"f0": "y", "f1": 2}]


def test_rows_and_sink_columns(tmp_path: Path) -> None:
    t = Types.ROW([Types.STRING(), Types.DOUBLE()])
    run_reference(_job(tmp_path, "parquet", t, [Row("a", 1.5)], columns=("k", "v")))
    table = pq.read_table(tmp_path / "out.parquet")
    assert table.schema == pa.schema([("k", pa.string()), ("v", pa.float64())])
    assert table.to_pylist() == [{"k": "a", "v": 1.5}]


def test_out_of_range_int_and_unsupported_types_are_errors(tmp_path: Path) -> None:
    t = Types.TUPLE([Types.STRING(), Types.INT()])
    with pytest.raises(FlowcError, match="column 'f1': 2147483648 is out of range for int32"):
        run_reference(_job(tmp_path, "parquet", t, [("a", 2**31)]))
    m = Types.TUPLE([Types.STRING(), Types.MAP(Types.STRING(), Types.INT())])
    with pytest.raises(FlowcError, match="column 'f1': MapTypeInfo"):
        run_reference(_job(tmp_path, "csv", m, [("a", {"k": 1})]))
    assert not (tmp_path / "out.parquet").exists() and not (tmp_path / "out.csv").exists()


def test_map_and_list_records_are_rows_of_their_entries_as_without_a_type(
        tmp_path: Path) -> None:
    m = Types.MAP(Types.STRING(), Types.INT())
    run_reference(_job(tmp_path, "json", m, [{"a": 1, "b": 2}]))
    (part,) = (tmp_path / "out.json").iterdir()
    assert json.loads(part.read_text()) == {"a": 1, "b": 2}
    run_reference(_job(tmp_path, "csv", Types.LIST(Types.INT()), [[1, 2], [3, 4]]))
    (part,) = (tmp_path / "out.csv").iterdir()
    assert part.read_text().splitlines() == ["f0,f1", "1,2", "3,4"]


@pytest.mark.spark
@pytest.mark.slow
def test_spark_writes_the_same_typed_files(tmp_path: Path, spark: Any) -> None:
    from flowc.executor import run_job_graph

    run_job_graph(_job(tmp_path, "parquet"))
    table = pq.read_table(tmp_path / "out.parquet")
    assert table.schema.remove_metadata() == ARROW
    ref = tmp_path / "ref"
    ref.mkdir()
    run_reference(_job(ref, "parquet"))
    assert table.to_pylist() == pq.read_table(ref / "out.parquet").to_pylist()
    # (Spark's csv writer takes no array column; the reference one does.)
    flat = Types.ROW_NAMED(["name", "n", "ratio"], [Types.STRING(), Types.INT(), Types.FLOAT()])
    run_job_graph(_job(tmp_path, "csv", flat, [Row("a", 1, 0.5)]))
    text = next(p for p in (tmp_path / "out.csv").iterdir()
                if p.name.endswith(".csv")).read_text()
    assert text.splitlines() == ["name,n,ratio", "a,1,0.5"]


@pytest.fixture(scope="module")
def spark() -> Any:
    from flowc.executor import get_spark

    return get_spark("local[2]")
