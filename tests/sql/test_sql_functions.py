"""SQL arithmetic and functions with Flink's semantics, run on the reference executor:
integer division, division by zero failing the job, POSITION / LOCATE, NULLIF, DATE_FORMAT,
TO_TIMESTAMP_LTZ; and source tables in the json and parquet formats."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_sql_results import run_sql

from flowc.errors import ExecutionError
from flowc.parser.runtime import date_format, sql_div, sql_mod

NUMS = """
CREATE TABLE nums (a BIGINT, b BIGINT, x DOUBLE, s STRING, ts TIMESTAMP(3))
  WITH ('connector' = 'filesystem', 'path' = 'nums.csv', 'format' = 'csv');
"""
NUMS_CSV = """a,b,x,s,ts
7,2,7.0,abcabc,2024-05-01T10:00:01.021Z
-7,2,-7.5,xyz,2024-05-01T23:59:59Z
7,-2,0.0,,1970-01-01T00:00:00Z
"""


def run_nums(tmp_path: Path, query: str, csv: str = NUMS_CSV) -> list[tuple[object, ...]]:
    (tmp_path / "nums.csv").write_text(csv, encoding="utf-8")
    _, rows = run_sql(tmp_path, query, parallelism=1, tables=NUMS)
    return rows


def test_integer_division_truncates_toward_zero(tmp_path: Path) -> None:
    rows = run_nums(tmp_path, "SELECT a / b AS q, a % b AS r, MOD(a, b) AS m, x / 2 AS d, "
                              "a / 2.0 AS e, 7 / 2 AS k FROM nums;")
    assert rows == [(3, 1, 1, 3.5, 3.5, 3), (-3, -1, -1, -3.75, -3.5, 3),
                    (-3, 1, 1, 0.0, 3.5, 3)]


def test_integer_division_by_zero_fails_the_job(tmp_path: Path) -> None:
    with pytest.raises(ExecutionError) as info:
        run_nums(tmp_path, "SELECT a / (b - b) AS q FROM nums;")
    text = info.value.format()
    assert "/ by zero" in text and "ArithmeticException" in text
    assert "q.sql:" in text  # the operator's line
    with pytest.raises(ExecutionError, match="/ by zero"):
        run_nums(tmp_path, "SELECT MOD(a, 0) AS m FROM nums;")


def test_double_division_by_zero_is_ieee(tmp_path: Path) -> None:
    rows = run_nums(tmp_path, "SELECT x / 0 AS d, CAST(a AS DOUBLE) / 0 AS e FROM nums;")
    assert rows[0] == (float("inf"), float("inf"))
    assert rows[1] == (float("-inf"), float("-inf"))
    assert rows[2][0] != rows[2][0]  # 0.0 / 0: NaN


def test_division_helpers() -> None:
    assert sql_div(-(2**63), -1) == -(2**63)  # Java's long overflow
    assert sql_div(None, 0) is None and sql_mod(5, None) is None
    assert sql_mod(-7, 3) == -1 and sql_mod(7.5, 0) != sql_mod(7.5, 0)


def test_position_locate_nullif(tmp_path: Path) -> None:
    rows = run_nums(tmp_path, "SELECT POSITION('c' IN s) AS p, LOCATE('c', s, 4) AS l, "
                              "POSITION('q' IN s) AS z, NULLIF(a, 7) AS n FROM nums;")
    assert rows == [(3, 6, 0, None), (0, 0, 0, -7), (None, None, None, None)]


def test_date_format_and_to_timestamp_ltz(tmp_path: Path) -> None:
    rows = run_nums(tmp_path, "SELECT DATE_FORMAT(ts, 'yyyy-MM-dd HH:mm:ss.SSS') AS f, "
                              "DATE_FORMAT(ts) AS g, DATE_FORMAT(ts, 'EEE d MMM yy, h a') AS h, "
                              "TO_TIMESTAMP_LTZ(a, 0) AS t0, TO_TIMESTAMP_LTZ(a, 3) AS t3 "
                              "FROM nums;")
    assert rows[0] == ("2024-05-01 10:00:01.021", "2024-05-01 10:00:01",
                       "Wed 1 May 24, 10 AM", 7000, 7)
    assert rows[1][:3] == ("2024-05-01 23:59:59.000", "2024-05-01 23:59:59",
                           "Wed 1 May 24, 11 PM")
    assert date_format(0, "yyyy'T'''") == "1970T'"
    with pytest.raises(ValueError, match="Unknown pattern letter: b"):
        date_format(0, "b")  # java.time's letters: 'q' is the quarter there


def test_sql_source_in_json_and_parquet(tmp_path: Path) -> None:
    rows = [{"user_id": "u1", "n": 3, "ts": "2024-05-01T10:00:01Z"},
            {"user_id": "u2", "n": 4, "ts": "2024-05-01T10:00:02Z"},
            {"user_id": "u1", "n": 5, "ts": "2024-05-01T10:00:07Z"}]
    (tmp_path / "in.json").write_text("".join(json.dumps(r) + "\n" for r in rows),
                                      encoding="utf-8")
    import pyarrow as pa
    import pyarrow.parquet as pq

    table = pa.table({"user_id": [r["user_id"] for r in rows], "n": [r["n"] for r in rows],
                      "ts": pa.array([1714557601000, 1714557602000, 1714557607000],
                                     pa.timestamp("ms", tz="UTC"))})
    pq.write_table(table, tmp_path / "in.parquet")
    for fmt in ("json", "parquet"):
        tables = f"""
CREATE TABLE t (user_id STRING, n BIGINT, ts TIMESTAMP(3),
  WATERMARK FOR ts AS ts - INTERVAL '1' SECOND)
  WITH ('connector' = 'filesystem', 'path' = 'in.{fmt}', 'format' = '{fmt}');
"""
        names, out = run_sql(tmp_path, """
            SELECT user_id, window_start, SUM(n) AS total
            FROM TABLE(TUMBLE(TABLE t, DESCRIPTOR(ts), INTERVAL '5' SECOND))
            GROUP BY window_start, window_end, user_id;""", tables=tables)
        assert names == ["user_id", "window_start", "total"]
        t0 = 1714557600000
        assert sorted(out) == [("u1", t0, 3), ("u1", t0 + 5000, 5), ("u2", t0, 4)], fmt


def test_avg_keeps_the_integer_type(tmp_path: Path) -> None:
    # Flink: AVG of a BIGINT is a BIGINT (sum / count, truncated toward zero); of a DOUBLE,
    # a DOUBLE. -7 and 2 average to -2 (not -2.5, nor the floor -3)
    csv = NUMS_CSV + "2,1,2.0,xyz,2024-05-01T23:59:59.5Z\n"
    rows = run_nums(tmp_path, "SELECT s, AVG(a) AS ia, AVG(x) AS da, AVG(a) * 10 AS e, "
                              "CAST(AVG(a) AS DOUBLE) AS f FROM nums WHERE s = 'xyz' "
                              "GROUP BY s;", csv)
    assert rows[-1] == ("xyz", -2, -2.75, -20, -2.0)
    assert isinstance(rows[-1][1], int) and isinstance(rows[-1][2], float)
