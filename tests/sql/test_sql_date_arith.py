"""DATE +/- a day-time interval as Flink 2.3 computes it (recorded once by
date_arith/record_date_arith.py, not run here): Flink adds the interval's whole days,
truncated toward zero, so the result is a DATE with no time of day
(``DATE '2024-05-01' + INTERVAL '25' HOUR`` is 2024-05-02, ``- INTERVAL '1' SECOND`` stays
2024-05-01); a comparison or a GROUP BY sees that DATE. On the reference executor and on
Spark row and columnar."""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

import pytest
from tests.sql.test_sql_results import run_sql

from flowc.dates import DAY_MS, date_text, text_date, whole_days
from flowc.errors import FlowcError
from flowc.executor import run_job_graph, run_reference
from flowc.rowkind import is_retract
from flowc.sql import compile_sql

FLINK = json.loads((Path(__file__).resolve().parent / "date_arith" / "flink.json").read_text())
# The rows of record_date_arith.py under a header line (flowc's csv source reads one)
ROWS = "k,d,h\n1,2024-05-01,1\n2,2024-05-01,25\n3,2024-05-01,-1\n4,2024-05-01,-25\n5,,3\n6,1969-12-31,30\n"
# Flink's recorded query casts each DATE to STRING; here the csv sink writes the DATEs
# themselves (the same text), so the projection has a vector form (the columnar kernels)
ARITH = ("k, d + INTERVAL '1' HOUR, d + INTERVAL '25' HOUR, d - INTERVAL '1' SECOND, "
         "d - INTERVAL '25' HOUR, d + h * INTERVAL '1' HOUR, d - h * INTERVAL '1' HOUR, "
         "INTERVAL '25' HOUR + d, d + INTERVAL '1' HOUR = d")
GROUPED = ("CAST(d + h * INTERVAL '1' HOUR AS STRING), COUNT(*) FROM src "
           "GROUP BY d + h * INTERVAL '1' HOUR")


def sql(tmp: Path, select: str, columns: str, executor: str = "") -> str:
    (tmp / "in").mkdir(exist_ok=True)
    (tmp / "in" / "rows.csv").write_text(ROWS)
    setting = "SET 'execution.runtime-mode' = 'batch';\n"  # as recorded: a GROUP BY's final rows
    setting += f"SET 'flowc.executor' = '{executor}';\n" if executor else ""
    return (f"{setting}CREATE TABLE src (k INT, d DATE, h INT) WITH ('connector' = "
            f"'filesystem', 'path' = '{tmp / 'in'}', 'format' = 'csv');\n"
            f"CREATE TABLE out ({columns}) WITH ('connector' = 'filesystem', "
            f"'path' = '{tmp / 'out'}', 'format' = 'csv');\n"
            f"INSERT INTO out SELECT {select};\n")


def arith_sql(tmp: Path, executor: str = "") -> str:
    cols = "k INT, " + ", ".join(f"c{i} DATE" for i in range(7)) + ", same BOOLEAN"
    return sql(tmp, ARITH + " FROM src", cols, executor)


def written(tmp: Path) -> list[list[str | None]]:
    parts = sorted(p for p in (tmp / "out").rglob("*") if p.is_file()
                   and not p.name.startswith((".", "_")))
    rows = [r for p in parts for r in list(csv.reader(p.read_text().splitlines()))[1:]]
    return sorted(([v or None for v in r] for r in rows), key=str)  # [1:]: the header


def flink(key: str) -> list[list[Any]]:
    return sorted(([None if v is None else v.lower() if v in ("True", "False") else v
                    for v in r] for r in FLINK[key]["rows"]), key=str)


def as_text(rows: list[list[str | None]]) -> list[list[str | None]]:
    return [[v.lower() if v in ("true", "false") else v for v in r] for r in rows]


def test_whole_days_truncates_toward_zero() -> None:
    assert [whole_days(v) for v in (3_600_000, 25 * 3_600_000, -1000, -25 * 3_600_000, None)] \
        == [0, DAY_MS, 0, -DAY_MS, None]


def test_date_plus_interval_as_flink_reference(tmp_path: Path) -> None:
    run_reference(compile_sql(arith_sql(tmp_path), "q.sql").env.get_job_graph())
    assert as_text(written(tmp_path)) == flink("arith")


def test_date_plus_interval_groups_as_flink(tmp_path: Path) -> None:
    """The GROUP BY key is the DATE itself: rows 1 and 3 (an hour either way) meet."""
    (tmp_path / "rows.csv").write_text(ROWS)
    tables = ("CREATE TABLE src (k INT, d DATE, h INT) WITH ('connector' = 'filesystem', "
              "'path' = 'rows.csv', 'format' = 'csv');\n")
    _, changes = run_sql(tmp_path, f"SELECT {GROUPED};", 1, tables)
    final: dict[Any, Any] = {}  # the changelog folded to its final rows
    for r in changes:
        if is_retract(r):
            final.pop(r[0])
        else:
            final[r[0]] = str(r[1])
    assert sorted(([k, n] for k, n in final.items()), key=str) == flink("grouped")


@pytest.mark.spark
@pytest.mark.parametrize("executor", ["row", "columnar"])
def test_date_plus_interval_as_flink_spark(tmp_path: Path, executor: str) -> None:
    graph = compile_sql(arith_sql(tmp_path, executor), "q.sql").env.get_job_graph()
    if executor == "columnar":  # the projection runs as Arrow kernels, whole_days among them
        from flowc.executor.arrow.plan import plan_members

        members = plan_members(graph)
        assert not isinstance(members, str), members
        maps = [m.spec.fn.vector for ms in members.values() for m in ms if m.kind == "map"]
        assert any("whole_days" in repr(v) for v in maps if v is not None)
    run_job_graph(graph)
    assert as_text(written(tmp_path)) == flink("arith")


def test_whole_days_kernel_equals_the_row_helper() -> None:
    """The columnar kernel of DATE + h * INTERVAL (vector op ``whole_days``) truncates as
    the row helper does, negative intervals and NULL included."""
    import pyarrow as pa

    from flowc.executor.arrow.kernels import compile_expr
    from flowc.types import DURATION
    from flowc.vector import VCall, VCol

    values = [3_600_000, 25 * 3_600_000, -1000, -25 * 3_600_000, -DAY_MS, None]
    kernel = compile_expr(VCall("whole_days", (VCol(0, DURATION),), DURATION))
    assert kernel is not None
    batch = pa.RecordBatch.from_arrays([pa.array(values, pa.int64())], ["h"])
    assert kernel(batch).to_pylist() == [whole_days(v) for v in values]


# ---------------------------------------------------------------- casts of text to DATE

def test_text_date_reads_text_as_flinks_cast() -> None:
    """CAST / TRY_CAST of text to DATE (flowc.dates.text_date) gives Flink's day or NULL
    for each recorded text: ``'12'`` is 0012-01-01, ``'2024-05-01 10:00:00'`` its day,
    ``'2024-05-01T10:00:00'`` and ``'2024-02-30'`` none."""
    got = {t: None if (ms := text_date(t)) is None else date_text(ms) for t in FLINK["texts"]}
    assert got == FLINK["texts"]


def cast_rows(tmp_path: Path, select: str) -> list[tuple[Any, ...]]:
    (tmp_path / "t.csv").write_text("s\n" + "\n".join(f'"{t}"' for t in FLINK["texts"]) + "\n")
    tables = ("CREATE TABLE t (s STRING) WITH ('connector' = 'filesystem', "
              "'path' = 't.csv', 'format' = 'csv');\n")
    return run_sql(tmp_path, f"SELECT {select} FROM t;", 1, tables)[1]


def test_cast_literals_to_date_as_flink(tmp_path: Path) -> None:
    rows = cast_rows(tmp_path, "CAST(CAST('12' AS DATE) AS STRING), CAST(CAST("
                               "'2024-05-01 10:00:00' AS DATE) AS STRING), CAST(TRY_CAST("
                               "'xx' AS DATE) AS STRING), CAST(TRY_CAST('12' AS DATE) AS STRING)")
    want = [FLINK[k]["rows"][0][0] for k in ("cast_12", "cast_ts_text", "try_cast_xx",
                                              "try_cast_12")]
    assert set(rows) == {tuple(want)}


@pytest.mark.parametrize("fn", ["CAST", "TRY_CAST"])
def test_cast_text_columns_to_date(tmp_path: Path, fn: str) -> None:
    """A column's text: Flink's day, or NULL where Flink's TRY_CAST is NULL (Flink's CAST
    fails the job there: docs/flink-differences.md)."""
    rows = cast_rows(tmp_path, f"s, CAST({fn}(s AS DATE) AS STRING)")
    # flowc's csv reads the empty text as NULL (its null_value): the text_date test has it
    assert {"" if s is None else s: d for s, d in rows} == FLINK["texts"]


def test_date_literal_with_a_time_is_rejected_as_flink() -> None:
    text = ("CREATE TABLE t (s STRING) WITH ('connector' = 'filesystem', 'path' = 't.csv', "
            "'format' = 'csv');\nSELECT DATE '{}' FROM t;\n")
    for lit, recorded in FLINK["literals"].items():
        if "rows" in recorded:
            continue  # accepted: DATE '2024-5-1' (test_cast_literals... covers the value)
        with pytest.raises(FlowcError) as e:
            compile_sql(text.format(lit), "q.sql")
        flink_text = f"Illegal DATE literal '{lit}': not in format 'yyyy-MM-dd'"
        assert any(flink_text in line for line in recorded["error"])
        assert flink_text in e.value.format()


def test_cast_of_a_text_literal_that_is_no_date_names_it() -> None:
    """Flink fails the job (recorded: ``For input string: 'xx'.``); the literal is known
    before the job runs, so flowc says so at once, pointing at it."""
    assert any("For input string: 'xx'." in line for line in FLINK["cast_xx"]["error"])
    text = ("CREATE TABLE t (s STRING) WITH ('connector' = 'filesystem', 'path' = 't.csv', "
            "'format' = 'csv');\nSELECT CAST('xx' AS DATE) FROM t;\n")
    with pytest.raises(FlowcError) as e:
        compile_sql(text, "q.sql")
    assert "'xx' is not a date" in e.value.format() and "TRY_CAST" in e.value.format()
