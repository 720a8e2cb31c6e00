"""Computed columns as time attributes (``ts AS TO_TIMESTAMP_LTZ(epoch_ms, 3)``, ``ts AS
TO_TIMESTAMP(FROM_UNIXTIME(s))``, ``ts AS CAST(s AS TIMESTAMP(3))``), a declared
TIMESTAMP_LTZ(3) time attribute, DATE columns and their casts, against Flink 2.3 recorded
once (changelog/record_timeattr.py, not run here): the printed lines on the reference
executor, the plan (a map computing the columns chained between the source and the
watermark, as Flink's Calc before its WatermarkAssigner), and positioned errors."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from flowc.errors import FlowcError
from flowc.executor import run_reference
from flowc.sql import compile_sql

HERE = Path(__file__).parent / "changelog"
sys.path.insert(0, str(HERE))
from timeattr_data import EVENTS, TABLES, ddl, json_lines  # noqa: E402

FIXTURE = HERE / "timeattr.json"
CASES = json.loads(FIXTURE.read_text())["cases"] if FIXTURE.exists() else []
RUNS = [c for c in CASES if "error" not in c]


def sql_text(tmp: Path, query: str, parallelism: int = 1, extra: str = "") -> str:
    (tmp / "events.csv").write_text(EVENTS, encoding="utf-8")
    (tmp / "events.json").write_text(json_lines(), encoding="utf-8")
    tables = [ddl(n, str(tmp)).replace("'format' = 'csv'", "'format' = 'csv', "
                                        "'csv.header' = 'false'") for n in TABLES]
    tables.append(ddl("ev", str(tmp), "json").replace("TABLE ev ", "TABLE evj ", 1))
    return (f"SET 'parallelism' = '{parallelism}';\n{extra}" + ";\n".join(tables)
            + f";\n{query};\n")


def printed(tmp: Path, query: str, parallelism: int = 1) -> list[str]:
    graph = compile_sql(sql_text(tmp, query, parallelism), "q.sql").env.get_job_graph()
    return [line.split("> ", 1)[-1] for line in run_reference(graph).printed]


def test_the_fixtures_compute_the_column_before_the_watermark() -> None:
    assert len(RUNS) >= 7
    window = RUNS[0]["plan"]
    assert any("Calc(select=[" in line and "TO_TIMESTAMP_LTZ(epoch_ms, 3) AS ts" in line
               for line in window), window
    assert any("WatermarkAssigner(rowtime=[ts]" in line for line in window), window


@pytest.mark.parametrize("query", [c["query"] for c in RUNS])
def test_printed_lines_are_flinks(tmp_path: Path, query: str) -> None:
    flink = next(c for c in RUNS if c["query"] == query)
    assert printed(tmp_path, query) == flink["print"]


@pytest.mark.parametrize("query", [c["query"] for c in RUNS])
def test_rows_at_parallelism_2_are_flinks(tmp_path: Path, query: str) -> None:
    flink = next(c for c in RUNS if c["query"] == query)
    if "GROUP BY d" in query:  # an updating result: its final table (the order differs)
        assert final_table(printed(tmp_path, query, 2)) == final_table(flink["print"])
        return
    assert sorted(printed(tmp_path, query, 2)) == sorted(flink["print"])


def final_table(lines: list[str]) -> list[str]:
    """The rows a printed changelog leaves: +I / +U add a row, -U / -D take one out."""
    counts: dict[str, int] = {}
    for line in lines:
        counts[line[3:-1]] = counts.get(line[3:-1], 0) + (1 if line[0] == "+" else -1)
    return sorted(r for r, n in counts.items() for _ in range(n))


def test_the_source_chain_is_source_map_watermarks(tmp_path: Path) -> None:
    query = ("SELECT k, window_start, COUNT(*) AS n FROM TABLE(TUMBLE(TABLE ev, "
             "DESCRIPTOR(ts), INTERVAL '5' SECOND)) GROUP BY k, window_start, window_end")
    graph = compile_sql(sql_text(tmp_path, query), "q.sql").env.get_job_graph()
    names = [v.name for v in graph.vertices.values() if "Source" in v.name]
    assert names == ["Source: ev -> Map -> Timestamps/Watermarks"], names


def error_of(tmp: Path, columns: str, query: str = "SELECT * FROM t") -> FlowcError:
    (tmp / "e.csv").write_text("1,2\n", encoding="utf-8")
    text = (f"CREATE TABLE t ({columns}) WITH ('connector' = 'filesystem', 'path' = "
            f"'{tmp / 'e.csv'}', 'format' = 'csv');\n{query};\n")
    with pytest.raises(FlowcError) as info:
        compile_sql(text, "q.sql")
    return info.value


def test_a_computed_time_attribute_of_another_type_is_flinks_error(tmp_path: Path) -> None:
    err = error_of(tmp_path, "a BIGINT, b BIGINT, ts AS a + b, WATERMARK FOR ts AS ts")
    text = err.format()
    assert ("Invalid data type of time field for watermark definition. The field must be of "
            "type TIMESTAMP(p) or TIMESTAMP_LTZ(p), the supported precision 'p' is from 0 to "
            "3, but the time field type is BIGINT") in text
    assert "q.sql:1:" in text
    err = error_of(tmp_path, "a BIGINT, s STRING, ts AS CAST(s AS TIMESTAMP), "
                             "WATERMARK FOR ts AS ts")
    assert "but the time field type is TIMESTAMP(6)" in err.format()


def test_unknown_columns_and_computed_references_are_positioned(tmp_path: Path) -> None:
    text = error_of(tmp_path, "a BIGINT, b BIGINT, ts AS TO_TIMESTAMP_LTZ(aa, 3)").format()
    assert "unknown column 'aa' in computed column 'ts'" in text
    assert "q.sql:1:" in text and "did you mean 'a'" in text
    text = error_of(tmp_path, "a BIGINT, b BIGINT, c AS a + 1, e AS c * 2").format()
    assert "computed column 'e' refers to another computed column, 'c'" in text
    text = error_of(tmp_path, "a BIGINT, b BIGINT, c AS SUM(a)").format()
    assert "computed column 'c' cannot use an aggregate" in text


def test_computed_columns_keep_their_declared_order_and_proctime(tmp_path: Path) -> None:
    (tmp_path / "e.csv").write_text("1,2\n3,4\n", encoding="utf-8")
    text = (f"CREATE TABLE t (a BIGINT, s AS a * 10, pt AS PROCTIME(), b BIGINT, "
            f"d AS CAST(DATE '2024-05-01' AS DATE)) WITH ('connector' = 'filesystem', "
            f"'path' = '{tmp_path / 'e.csv'}', 'format' = 'csv', 'csv.header' = 'false');\n"
            "SELECT a, s, b, d FROM t;\n")
    graph = compile_sql(text, "q.sql").env.get_job_graph()
    assert list(run_reference(graph).printed) == ["+I[1, 10, 2, 2024-05-01]",
                                                  "+I[3, 30, 4, 2024-05-01]"]


def test_a_sink_table_writes_its_physical_columns(tmp_path: Path) -> None:
    (tmp_path / "e.csv").write_text("1,2\n", encoding="utf-8")
    text = (f"CREATE TABLE e (a BIGINT, b BIGINT) WITH ('connector' = 'filesystem', 'path' = "
            f"'{tmp_path / 'e.csv'}', 'format' = 'csv', 'csv.header' = 'false');\n"
            "CREATE TABLE o (a BIGINT, c AS a + 1, b BIGINT) WITH ('connector' = 'print');\n"
            "INSERT INTO o SELECT a, b FROM e;\n")
    graph = compile_sql(text, "q.sql").env.get_job_graph()
    assert list(run_reference(graph).printed) == ["+I[1, 2]"]


def test_the_session_time_zone_is_utc(tmp_path: Path) -> None:
    query = "SELECT k, d FROM ev WHERE d >= DATE '2024-05-01'"
    for zone in ("UTC", "Z"):
        text = sql_text(tmp_path, query, extra=f"SET 'table.local-time-zone' = '{zone}';\n")
        compile_sql(text, "q.sql")
    text = sql_text(tmp_path, query, extra="SET 'table.local-time-zone' = 'Asia/Tokyo';\n")
    with pytest.raises(FlowcError) as info:
        compile_sql(text, "q.sql")
    assert "'table.local-time-zone' = 'Asia/Tokyo' is not supported" in info.value.format()


def test_dates_and_ltz_read_from_parquet(tmp_path: Path) -> None:
    import datetime as dt

    import pyarrow as pa
    import pyarrow.parquet as pq

    pq.write_table(pa.table({
        "d": pa.array([dt.date(2024, 5, 1), dt.date(1969, 12, 31)], pa.date32()),
        "lt": pa.array([1714557601000, 1714557602500], pa.timestamp("ms", tz="UTC"))}),
        tmp_path / "p.parquet")
    text = (f"CREATE TABLE p (d DATE, lt TIMESTAMP_LTZ(3)) WITH ('connector' = 'filesystem', "
            f"'path' = '{tmp_path / 'p.parquet'}', 'format' = 'parquet');\n"
            "SELECT d, lt, CAST(d AS STRING) AS s FROM p;\n")
    graph = compile_sql(text, "q.sql").env.get_job_graph()
    assert list(run_reference(graph).printed) == [
        "+I[2024-05-01, 2024-05-01T10:00:01Z, 2024-05-01]",
        "+I[1969-12-31, 2024-05-01T10:00:02.500Z, 1969-12-31]"]


def test_window_time_of_a_tvf_keeps_the_ltz_type(tmp_path: Path) -> None:
    # Flink's TUMBLE(TABLE ev, DESCRIPTOR(ts), ...) row type: window_start / window_end
    # TIMESTAMP(3), window_time TIMESTAMP_LTZ(3) *ROWTIME* (the time attribute's type)
    query = ("SELECT k, window_start, window_time FROM TABLE(TUMBLE(TABLE ev, "
             "DESCRIPTOR(ts), INTERVAL '5' SECOND)) WHERE k = 'a' AND epoch_ms < "
             "1714557610000")  # no row behind the watermark
    assert printed(tmp_path, query) == ["+I[a, 2024-05-01T10:00, 2024-05-01T10:00:04.999Z]"] * 3


def test_an_interval_keeps_the_flavour(tmp_path: Path) -> None:
    # Flink: DATE + INTERVAL DAY is a DATE, TIMESTAMP_LTZ - INTERVAL a TIMESTAMP_LTZ
    query = ("SELECT d + INTERVAL '1' DAY AS d1, ts - INTERVAL '1' SECOND AS t1, "
             "CAST(ts AS TIMESTAMP(3)) + INTERVAL '1' SECOND AS t2 FROM ev WHERE k = 'b' "
             "AND epoch_ms < 1714557603000")
    assert printed(tmp_path, query) == ["+I[2024-05-02, 2024-05-01T10:00:01.500Z, "
                                        "2024-05-01T10:00:03.500]"]


def test_flow_to_timestamp_ltz_prints_as_an_instant() -> None:
    from flowc.parser import compile_source

    script = compile_source("source nums (n int) values (1714557602500);\n"
                            "nums | map to_timestamp_ltz(n) as t, to_timestamp(n) as u "
                            "| print;\n", "f.flow")
    assert list(run_reference(script.env.get_job_graph()).printed) == [
        "+I[2024-05-01T10:00:02.500Z, 2024-05-01T10:00:02.500]"]


@pytest.mark.parametrize("fmt", ["csv", "json"])
def test_dates_are_written_as_flink_writes_them(tmp_path: Path, fmt: str) -> None:
    (tmp_path / "e.csv").write_text("a,2024-05-01\nb,1969-12-31\n", encoding="utf-8")
    out = tmp_path / "out"
    text = (f"CREATE TABLE e (k STRING, d DATE) WITH ('connector' = 'filesystem', 'path' = "
            f"'{tmp_path / 'e.csv'}', 'format' = 'csv', 'csv.header' = 'false');\n"
            f"CREATE TABLE o (k STRING, d DATE) WITH ('connector' = 'filesystem', 'path' = "
            f"'{out}', 'format' = '{fmt}'{', ' + repr('csv.header') + ' = ' + repr('false') if fmt == 'csv' else ''});\n"
            "INSERT INTO o SELECT k, d FROM e;\n")
    run_reference(compile_sql(text, "q.sql").env.get_job_graph())
    written = "".join(p.read_text() for p in sorted(out.iterdir()) if not p.name.startswith("."))
    if fmt == "csv":
        assert sorted(written.split()) == ["a,2024-05-01", "b,1969-12-31"]
    else:
        assert sorted(json.loads(x)["d"] for x in written.split("\n") if x) == [
            "1969-12-31", "2024-05-01"]
    back = (f"CREATE TABLE b (k STRING, d DATE) WITH ('connector' = 'filesystem', 'path' = "
            f"'{out}', 'format' = '{fmt}'{', ' + repr('csv.header') + ' = ' + repr('false') if fmt == 'csv' else ''});\n"
            "SELECT k, d FROM b;\n")
    lines = run_reference(compile_sql(back, "q.sql").env.get_job_graph()).printed
    assert sorted(lines) == ["+I[a, 2024-05-01]", "+I[b, 1969-12-31]"]
