"""DATE and TIMESTAMP_LTZ(3) in csv / json files as Flink 2.3's filesystem connector writes
and reads them, recorded once by dates_files/record_dates_files.py (not run here): INSERT
INTO a csv / json table writes a DATE as ``2024-05-01`` and a TIMESTAMP_LTZ as
``2024-05-01 10:00:02.5Z``; a DATE read from text with a time of day is a bad row (Flink
fails the job: ``Fail to deserialize at field: d.``)."""

from __future__ import annotations

import csv
import datetime as dt
import json
from pathlib import Path
from typing import Any

import pytest

from flowc.errors import ExecutionError
from flowc.executor import run_job_graph, run_reference
from flowc.sql import compile_sql

UTC = dt.timezone.utc
HERE = Path(__file__).resolve().parent / "dates_files" / "flink"
# The rows of record_dates_files.py: (k, d, epoch ms of lt)
ROWS = "k,d,ms\n1,2024-05-01,1714557601000\n2,1969-12-31,1714557602500\n3,,\n4,2024-02-29,-1500\n"


def insert_sql(tmp: Path, fmt: str, extra: str = "") -> str:
    (tmp / "in").mkdir(exist_ok=True)
    (tmp / "in" / "rows.csv").write_text(ROWS)
    return (f"{extra}CREATE TABLE src (k INT, d DATE, ms BIGINT) WITH ('connector' = "
            f"'filesystem', 'path' = '{tmp / 'in'}', 'format' = 'csv');\n"
            f"CREATE TABLE out (k INT, d DATE, lt TIMESTAMP_LTZ(3)) WITH ('connector' = "
            f"'filesystem', 'path' = '{tmp / 'out'}', 'format' = '{fmt}');\n"
            "INSERT INTO out SELECT k, d, TO_TIMESTAMP_LTZ(ms, 3) FROM src;\n")


def written(tmp: Path, fmt: str) -> list[list[str | None]]:
    parts = sorted(p for p in (tmp / "out").rglob("*") if p.is_file()
                   and not p.name.startswith((".", "_")))
    text = "".join(p.read_text() for p in parts)
    return parsed(text, fmt, header=True)


def parsed(text: str, fmt: str, header: bool = False) -> list[list[str | None]]:
    if fmt == "csv":
        rows = list(csv.reader(text.splitlines()))[1 if header else 0:]
        return sorted([[v or None for v in r] for r in rows])
    return sorted([[str(v) if v is not None else None for v in json.loads(line).values()]
                   for line in text.splitlines() if line.strip()])


def flink_rows(fmt: str) -> list[list[str | None]]:
    return parsed((HERE / f"written.{fmt}").read_text(), fmt)


@pytest.mark.parametrize("fmt", ["csv", "json"])
def test_insert_writes_date_and_ltz_as_flink(tmp_path: Path, fmt: str) -> None:
    graph = compile_sql(insert_sql(tmp_path, fmt), "q.sql").env.get_job_graph()
    run_reference(graph)
    assert written(tmp_path, fmt) == flink_rows(fmt)


def test_the_fixture_holds_flinks_ltz_text() -> None:
    assert ["2", "1969-12-31", "2024-05-01 10:00:02.5Z"] in flink_rows("csv")


def date_source_sql(tmp: Path, fmt: str, dead: bool = False) -> str:
    (tmp / "in").mkdir(exist_ok=True)
    if fmt == "csv":
        text = "k,d\n1,2024-05-01\n2,2024-05-01 10:00:01\n3,2024-05-02\n"
    else:
        text = ('{"k":1,"d":"2024-05-01"}\n{"k":2,"d":"2024-05-01 10:00:01"}\n'
                '{"k":3,"d":"2024-05-02"}\n')
    (tmp / "in" / f"in.{fmt}").write_text(text)
    opt = f", 'dead-letter' = '{tmp / 'dead'}'" if dead else ""
    return (f"CREATE TABLE src (k INT, d DATE) WITH ('connector' = 'filesystem', 'path' = "
            f"'{tmp / 'in'}', 'format' = '{fmt}'{opt});\n"
            "CREATE TABLE p (k INT, d STRING) WITH ('connector' = 'print');\n"
            "INSERT INTO p SELECT k, CAST(d AS STRING) FROM src;\n")


@pytest.mark.parametrize("fmt", ["csv", "json"])
def test_a_date_with_a_time_of_day_fails_the_job_as_in_flink(tmp_path: Path, fmt: str) -> None:
    recorded = json.loads((HERE / "read_text.json").read_text())[fmt]
    assert "Fail to deserialize at field: d." in " ".join(recorded["error"])
    graph = compile_sql(date_source_sql(tmp_path, fmt), "q.sql").env.get_job_graph()
    with pytest.raises(ExecutionError) as e:
        run_reference(graph)
    text = str(e.value)
    line = 3 if fmt == "csv" else 2  # the csv file's first line is its header
    assert f"in.{fmt} (line {line})" in text and "time of day" in text, text


@pytest.mark.parametrize("fmt", ["csv", "json"])
def test_a_date_with_a_time_of_day_goes_to_the_dead_letters(tmp_path: Path, fmt: str) -> None:
    graph = compile_sql(date_source_sql(tmp_path, fmt, dead=True), "q.sql").env.get_job_graph()
    lines = [ln.split("> ", 1)[-1] for ln in run_reference(graph).printed]
    assert sorted(lines) == ["+I[1, 2024-05-01]", "+I[3, 2024-05-02]"]
    dead = "".join(p.read_text() for p in (tmp_path / "dead").rglob("*") if p.is_file())
    assert "2024-05-01 10:00:01" in dead


@pytest.mark.spark
@pytest.mark.parametrize("executor", ["row", "columnar"])
@pytest.mark.parametrize("fmt", ["csv", "json"])
def test_spark_writes_the_same_bytes(tmp_path: Path, fmt: str, executor: str) -> None:
    ref = tmp_path / "ref"
    ref.mkdir()
    run_reference(compile_sql(insert_sql(ref, fmt), "q.sql").env.get_job_graph())
    text = insert_sql(tmp_path, fmt, f"SET 'flowc.executor' = '{executor}';\n")
    run_job_graph(compile_sql(text, "q.sql").env.get_job_graph())
    assert written(tmp_path, fmt) == flink_rows(fmt)
    assert data_lines(tmp_path / "out") == data_lines(ref / "out")


def data_lines(out: Path) -> list[bytes]:
    """The part files' lines but their csv headers, sorted (Spark writes a part a task)."""
    lines = [ln for p in out.rglob("part-*") if not p.name.endswith(".crc")
             for ln in p.read_bytes().splitlines()]
    return sorted(ln for ln in lines if ln != b"k,d,lt")


@pytest.mark.spark
@pytest.mark.parametrize("executor", ["row", "columnar"])
@pytest.mark.parametrize("fmt", ["csv", "json"])
def test_spark_fails_on_a_date_with_a_time_of_day(tmp_path: Path, fmt: str,
                                                   executor: str) -> None:
    text = f"SET 'flowc.executor' = '{executor}';\n" + date_source_sql(tmp_path, fmt)
    with pytest.raises(ExecutionError) as e:
        run_job_graph(compile_sql(text, "q.sql").env.get_job_graph())
    assert "time of day" in str(e.value)


def parquet_columns(out: Path) -> tuple[Any, list[dict[str, Any]]]:
    import pyarrow.parquet as pq

    parts = sorted(p for p in out.rglob("*.parquet"))
    tables = [pq.read_table(p) for p in parts]
    rows = sorted((r for t in tables for r in t.to_pylist()), key=lambda r: r["k"])
    return tables[0].schema, rows


PARQUET_ROWS = [
    {"k": 1, "d": dt.date(2024, 5, 1), "lt": dt.datetime(2024, 5, 1, 10, 0, 1, tzinfo=UTC)},
    {"k": 2, "d": dt.date(1969, 12, 31),
     "lt": dt.datetime(2024, 5, 1, 10, 0, 2, 500_000, tzinfo=UTC)},
    {"k": 3, "d": None, "lt": None},
    {"k": 4, "d": dt.date(2024, 2, 29),
     "lt": dt.datetime(1969, 12, 31, 23, 59, 58, 500_000, tzinfo=UTC)}]


def test_parquet_holds_a_date_as_date32(tmp_path: Path) -> None:
    """Flink's parquet format writes a DATE as INT32 (DATE): date32 (its documented type
    mapping; the venv has no flink-sql-parquet jar to record a file with)."""
    import pyarrow as pa

    run_reference(compile_sql(insert_sql(tmp_path, "parquet"), "q.sql").env.get_job_graph())
    schema, rows = parquet_columns(tmp_path / "out")
    assert schema.field("d").type == pa.date32()
    assert schema.field("lt").type == pa.timestamp("ms", tz="UTC")
    assert rows == PARQUET_ROWS
    # and it reads back into a DATE column
    back = (f"CREATE TABLE b (k INT, d DATE) WITH ('connector' = 'filesystem', 'path' = "
            f"'{tmp_path / 'out'}', 'format' = 'parquet');\n"
            "CREATE TABLE p (k INT, d DATE) WITH ('connector' = 'print');\n"
            "INSERT INTO p SELECT k, d FROM b;\n")
    lines = [ln.split("> ", 1)[-1] for ln in
             run_reference(compile_sql(back, "b.sql").env.get_job_graph()).printed]
    assert sorted(lines) == ["+I[1, 2024-05-01]", "+I[2, 1969-12-31]", "+I[3, null]",
                             "+I[4, 2024-02-29]"]


def test_a_micro_batch_writes_the_same_parquet_bytes_on_both_paths(tmp_path: Path) -> None:
    """The streaming executor's file sinks: the part staged from a columnar micro-batch's
    chunks is byte for byte the row path's (``stage_arrow_part`` vs ``stage_python``)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from flowc.executor.arrow import convert
    from flowc.executor.sinks import abort, declared_columns, row_checker, shaper, stage_python
    from flowc.executor.streaming.commit import stage_arrow_part
    from flowc.operators import FileSink
    from flowc.types import DATE, TIMESTAMP_LTZ, Schema, type_from_name

    declared = Schema.of(("k", type_from_name("int")), ("d", DATE), ("lt", TIMESTAMP_LTZ))
    spec = FileSink(str(tmp_path / "out"), "parquet")
    records = [(1, 1714521600000, 1714557601000), (2, -86400000, 1714557602500),
               (3, None, None), (4, 1709164800000, -1500)]
    columns = declared_columns(spec, declared)
    assert columns == [("k", "int"), ("d", "date"), ("lt", "timestamp")]
    check = row_checker(spec.path, columns, shaper([c for c, _ in columns]))
    want = stage_python(spec, columns, [check(r) for r in records])
    schema = convert.arrow_schema(declared)
    parts = [(0, convert.to_ipc(convert.from_rows(records[:2], [None] * 2, schema))),
             (1, convert.to_ipc(convert.from_rows(records[2:], [None] * 2, schema)))]
    got = stage_arrow_part(spec, columns, parts, declared)
    assert got is not None
    data = [Path(d, "part-00000.parquet").read_bytes() for d in (want, got)]
    table = pq.read_table(Path(want, "part-00000.parquet"))
    for d in (want, got):
        abort(d)
    assert data[0] == data[1]
    assert table.schema.field("d").type == pa.date32()
    assert table.to_pylist() == PARQUET_ROWS


@pytest.mark.spark
@pytest.mark.parametrize("executor", ["row", "columnar"])
def test_spark_writes_a_date_to_parquet_as_date32(tmp_path: Path, executor: str) -> None:
    import pyarrow as pa

    text = insert_sql(tmp_path, "parquet", f"SET 'flowc.executor' = '{executor}';\n")
    run_job_graph(compile_sql(text, "q.sql").env.get_job_graph())
    schema, rows = parquet_columns(tmp_path / "out")
    assert schema.field("d").type == pa.date32()
    assert rows == PARQUET_ROWS


@pytest.mark.parametrize("fmt", ["csv", "json"])
def test_flinks_files_read_back(tmp_path: Path, fmt: str) -> None:
    """The files Flink wrote read into the same table's types (its LTZ text included)."""
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / f"part.{fmt}").write_bytes((HERE / f"written.{fmt}").read_bytes())
    header = ", 'csv.header' = 'false'" if fmt == "csv" else ""
    text = (f"CREATE TABLE f (k INT, d DATE, lt TIMESTAMP_LTZ(3)) WITH ('connector' = "
            f"'filesystem', 'path' = '{tmp_path / 'in'}', 'format' = '{fmt}'{header});\n"
            "CREATE TABLE p (k INT, d DATE, lt TIMESTAMP_LTZ(3)) WITH ('connector' = 'print');\n"
            "INSERT INTO p SELECT * FROM f;\n")
    lines = [ln.split("> ", 1)[-1] for ln in
             run_reference(compile_sql(text, "f.sql").env.get_job_graph()).printed]
    assert sorted(lines) == ["+I[1, 2024-05-01, 2024-05-01T10:00:01Z]",
                             "+I[2, 1969-12-31, 2024-05-01T10:00:02.500Z]",
                             "+I[3, null, null]",
                             "+I[4, 2024-02-29, 1969-12-31T23:59:58.500Z]"]
