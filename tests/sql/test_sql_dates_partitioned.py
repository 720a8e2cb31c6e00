"""A DATE column of a partitioned parquet filesystem sink (SQL ``PARTITIONED BY``) is
written as ``date32`` (Flink's INT32 DATE), as an unpartitioned one's
(tests/sql/test_sql_dates_files.py): the reference executor, Spark row and columnar, and the
streaming executor's part files (its micro-batch chunks and decoded records alike)."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

import pytest

from flowc.executor import run_job_graph, run_reference
from flowc.sql import compile_sql

UTC = dt.timezone.utc
ROWS = "k,d,ms\n1,2024-05-01,1714557601000\n2,1969-12-31,1714557602500\n3,,\n4,2024-02-29,-1500\n"
# the files' rows (k % 2 is the partition column g, left out of the files)
WANT = [
    {"k": 1, "d": dt.date(2024, 5, 1), "lt": dt.datetime(2024, 5, 1, 10, 0, 1, tzinfo=UTC)},
    {"k": 2, "d": dt.date(1969, 12, 31),
     "lt": dt.datetime(2024, 5, 1, 10, 0, 2, 500_000, tzinfo=UTC)},
    {"k": 3, "d": None, "lt": None},
    {"k": 4, "d": dt.date(2024, 2, 29),
     "lt": dt.datetime(1969, 12, 31, 23, 59, 58, 500_000, tzinfo=UTC)}]


def insert_sql(tmp: Path, extra: str = "") -> str:
    (tmp / "in").mkdir(exist_ok=True)
    (tmp / "in" / "rows.csv").write_text(ROWS)
    return (f"{extra}CREATE TABLE src (k INT, d DATE, ms BIGINT) WITH ('connector' = "
            f"'filesystem', 'path' = '{tmp / 'in'}', 'format' = 'csv');\n"
            "CREATE TABLE out (k INT, d DATE, lt TIMESTAMP_LTZ(3), g INT) PARTITIONED BY (g) "
            f"WITH ('connector' = 'filesystem', 'path' = '{tmp / 'out'}', "
            "'format' = 'parquet');\n"
            "INSERT INTO out SELECT k, d, TO_TIMESTAMP_LTZ(ms, 3), k % 2 FROM src;\n")


def parquet_files(out: Path) -> tuple[list[Any], list[dict[str, Any]], list[str]]:
    import pyarrow.parquet as pq

    parts = sorted(p for p in out.rglob("*.parquet"))
    tables = [pq.read_table(p, partitioning=None) for p in parts]
    rows = sorted((r for t in tables for r in t.to_pylist()), key=lambda r: r["k"])
    dirs = sorted({p.parent.name for p in parts})
    return [t.schema for t in tables], rows, dirs


def check(out: Path) -> None:
    import pyarrow as pa

    schemas, rows, dirs = parquet_files(out)
    assert dirs == ["g=0", "g=1"]
    for schema in schemas:
        assert schema.names == ["k", "d", "lt"]
        assert schema.field("d").type == pa.date32()
        assert schema.field("lt").type == pa.timestamp("ms", tz="UTC")
    assert rows == WANT


def test_the_reference_executor_writes_a_partitioned_date_as_date32(tmp_path: Path) -> None:
    run_reference(compile_sql(insert_sql(tmp_path), "q.sql").env.get_job_graph())
    check(tmp_path / "out")
    # and a partition's files read back into a DATE column (flowc reads no partitioned
    # table: one partition's directory, as docs/sql.md says)
    back = (f"CREATE TABLE b (k INT, d DATE) WITH ('connector' = 'filesystem', 'path' = "
            f"'{tmp_path / 'out' / 'g=0'}', 'format' = 'parquet');\n"
            "CREATE TABLE p (k INT, d DATE) WITH ('connector' = 'print');\n"
            "INSERT INTO p SELECT k, d FROM b;\n")
    lines = [ln.split("> ", 1)[-1] for ln in
             run_reference(compile_sql(back, "b.sql").env.get_job_graph()).printed]
    assert sorted(lines) == ["+I[2, 1969-12-31]", "+I[4, 2024-02-29]"]


def test_a_micro_batch_writes_the_same_partitioned_bytes_on_both_paths(tmp_path: Path) -> None:
    """The streaming executor's partitioned file sink: the part staged from a columnar
    micro-batch's chunks is byte for byte the row path's, DATE as date32."""
    from flowc.executor.arrow import convert
    from flowc.executor.sinks import abort, declared_columns, row_checker, shaper, stage_python
    from flowc.executor.streaming.commit import stage_arrow_part
    from flowc.operators import FileSink
    from flowc.types import DATE, TIMESTAMP_LTZ, Schema, type_from_name

    int_t = type_from_name("int")
    declared = Schema.of(("k", int_t), ("d", DATE), ("lt", TIMESTAMP_LTZ), ("g", int_t))
    spec = FileSink(str(tmp_path / "out"), "parquet", partition_by=("g",))
    records = [(1, 1714521600000, 1714557601000, 1), (2, -86400000, 1714557602500, 0),
               (3, None, None, 1), (4, 1709164800000, -1500, 0)]
    columns = declared_columns(spec, declared)
    assert columns == [("k", "int"), ("d", "date"), ("lt", "timestamp"), ("g", "int")]
    checker = row_checker(spec.path, columns, shaper([c for c, _ in columns]))
    want = stage_python(spec, columns, [checker(r) for r in records])
    schema = convert.arrow_schema(declared)
    parts = [(0, convert.to_ipc(convert.from_rows(records[:2], [None] * 2, schema))),
             (1, convert.to_ipc(convert.from_rows(records[2:], [None] * 2, schema)))]
    got = stage_arrow_part(spec, columns, parts, declared)
    assert got is not None
    try:
        files = [sorted(p.relative_to(d) for p in Path(d).rglob("*.parquet"))
                 for d in (want, got)]
        assert files[0] == files[1] == [Path("g=0/part-00000.parquet"),
                                        Path("g=1/part-00000.parquet")]
        for f in files[0]:
            assert Path(want, f).read_bytes() == Path(got, f).read_bytes()
        check(Path(want))
    finally:
        for d in (want, got):
            abort(d)


@pytest.mark.spark
@pytest.mark.parametrize("executor", ["row", "columnar"])
def test_spark_writes_a_partitioned_date_as_date32(tmp_path: Path, executor: str) -> None:
    text = insert_sql(tmp_path, f"SET 'flowc.executor' = '{executor}';\n")
    run_job_graph(compile_sql(text, "q.sql").env.get_job_graph())
    check(tmp_path / "out")


def test_spark_columnar_writes_the_partitioned_date_columns_itself() -> None:
    """The columnar executor's partitioned writer (not the row route) holds the DATE."""
    import pyarrow as pa

    from flowc.executor.arrow import partitioned_sinks
    from flowc.operators import FileSink
    from flowc.types import DATE, TIMESTAMP_LTZ, Schema, type_from_name

    int_t = type_from_name("int")
    declared = Schema.of(("k", int_t), ("d", DATE), ("lt", TIMESTAMP_LTZ), ("g", int_t))
    plan = partitioned_sinks.plan(FileSink("out", "parquet", partition_by=("g",)), declared)
    assert plan is not None
    assert plan.parquet.field("d").type == pa.date32()

