"""Query results: SQL queries run on the reference executor, compared with expected rows.

The data is small and written out here, so each expectation can be checked by hand. Rows are
compared per key in arrival order (a rolling aggregate's updates for one key are ordered;
different keys may interleave differently across subtasks).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from flowc.executor import run_reference
from flowc.rowkind import kind_of
from flowc.sql import Unit, collect_query
from flowc.sql.source import split_sql

T0 = 1714557600000  # 2024-05-01T10:00:00Z in epoch milliseconds

CLICKS_CSV = """user_id,article_id,action,ts
,a1,appclick,2024-05-01T10:00:00.500Z
u1,a1,appclick,2024-05-01T10:00:01Z
u2,a2,scroll,2024-05-01T10:00:02Z
,a2,appclick,2024-05-01T10:00:03Z
u1,a3,appclick,2024-05-01T10:00:06Z
,a3,share,2024-05-01T10:00:07Z
u2,a1,appclick,2024-05-01T10:00:12Z
"""

TABLES = """
CREATE TABLE clicks (user_id STRING, article_id STRING, action STRING, ts TIMESTAMP(3),
  WATERMARK FOR ts AS ts - INTERVAL '1' SECOND)
  WITH ('connector' = 'filesystem', 'path' = 'clicks.csv', 'format' = 'csv');
"""


def run_sql(tmp_path: Path, query: str, parallelism: int = 2,
            tables: str = TABLES) -> tuple[list[str], list[tuple[Any, ...]]]:
    """Column names and rows of ``query`` (the last statement of the text) on the reference
    executor, with ``clicks.csv`` in ``tmp_path``."""
    (tmp_path / "clicks.csv").write_text(CLICKS_CSV, encoding="utf-8")
    text = f"SET 'parallelism' = '{parallelism}';\n" + tables + query
    unit = Unit("q.sql", text, str(tmp_path))
    chunks = split_sql(text, "q.sql")
    for chunk in chunks[:-1]:
        unit.add_sql(chunk)
    assert not unit.errors, [e.format() for e in unit.errors]
    lets, pipeline = unit.query(chunks[-1])
    script, names, _ = collect_query(unit, pipeline, lets)
    result = run_reference(script.env.get_job_graph())
    return names, [r if isinstance(r, tuple) else tuple(r) for r in result["result"]]


def by_key(rows: list[tuple[Any, ...]], width: int = 1) -> dict[tuple[Any, ...], list[Any]]:
    out: dict[tuple[Any, ...], list[Any]] = {}
    for r in rows:
        out.setdefault(r[:width], []).append(r)
    return out


@pytest.mark.parametrize("parallelism", [1, 2, 3])
def test_group_by_a_null_key(tmp_path: Path, parallelism: int) -> None:
    # Flink SQL groups null keys like any other value (its keys are rows); .flow's
    # single-field `key by` fails on null like the DataStream API.
    names, rows = run_sql(tmp_path, "SELECT user_id, COUNT(*) AS n, MAX(article_id) AS m "
                          "FROM clicks GROUP BY user_id;", parallelism)
    assert names == ["user_id", "n", "m"]
    changes = {k: [(kind_of(r), r) for r in v] for k, v in by_key(rows).items()}
    assert changes == {
        (None,): [("+I", (None, 1, "a1")), ("-U", (None, 1, "a1")), ("+U", (None, 2, "a2")),
                  ("-U", (None, 2, "a2")), ("+U", (None, 3, "a3"))],
        ("u1",): [("+I", ("u1", 1, "a1")), ("-U", ("u1", 1, "a1")), ("+U", ("u1", 2, "a3"))],
        ("u2",): [("+I", ("u2", 1, "a2")), ("-U", ("u2", 1, "a2")), ("+U", ("u2", 2, "a2"))],
    }


def test_null_key_in_a_window(tmp_path: Path) -> None:
    _, rows = run_sql(tmp_path, """
        SELECT user_id, window_start, COUNT(*) AS n
        FROM TABLE(TUMBLE(TABLE clicks, DESCRIPTOR(ts), INTERVAL '5' SECOND))
        GROUP BY window_start, window_end, user_id;""")
    assert sorted(rows, key=repr) == sorted([
        (None, T0, 2), ("u1", T0, 1), ("u2", T0, 1),
        ("u1", T0 + 5000, 1), (None, T0 + 5000, 1),
        ("u2", T0 + 10000, 1),
    ], key=repr)


def test_null_in_one_of_two_keys(tmp_path: Path) -> None:
    _, rows = run_sql(tmp_path, "SELECT user_id, action, COUNT(*) AS n FROM clicks "
                                "WHERE action = 'appclick' GROUP BY user_id, action;")
    assert {k: v[-1] for k, v in by_key(rows, 2).items()} == {
        (None, "appclick"): (None, "appclick", 2),
        ("u1", "appclick"): ("u1", "appclick", 2),
        ("u2", "appclick"): ("u2", "appclick", 1),
    }


def test_projection_and_filter(tmp_path: Path) -> None:
    names, rows = run_sql(tmp_path, "SELECT upper(user_id) AS u, article_id FROM clicks "
                                    "WHERE user_id IS NOT NULL AND action <> 'share';", 1)
    assert names == ["u", "article_id"]
    assert rows == [("U1", "a1"), ("U2", "a2"), ("U1", "a3"), ("U2", "a1")]


def test_monotone_having_on_an_updating_result(tmp_path: Path) -> None:
    # COUNT(*) >= 2 stays true once true: the rows are exactly Flink's +I/+U rows
    _, rows = run_sql(tmp_path, "SELECT user_id, COUNT(*) AS n FROM clicks GROUP BY user_id "
                                "HAVING COUNT(*) >= 2 AND user_id IS NOT NULL;")
    assert by_key(rows) == {("u1",): [("u1", 2)], ("u2",): [("u2", 2)]}


def test_filter_clause_and_time_functions(tmp_path: Path) -> None:
    _, rows = run_sql(tmp_path, """
        SELECT user_id, COUNT(*) FILTER (WHERE action = 'appclick') AS clicks,
               COUNT(DISTINCT article_id) FILTER (WHERE action <> 'appclick') AS other,
               MAX(ts) FILTER (WHERE action = 'scroll') AS last_scroll
        FROM clicks WHERE user_id IS NOT NULL GROUP BY user_id;""", 1)
    assert {k: v[-1] for k, v in by_key(rows).items()} == {
        ("u1",): ("u1", 2, 0, None), ("u2",): ("u2", 1, 1, T0 + 2000)}
    _, rows = run_sql(tmp_path, """
        SELECT TIMESTAMPDIFF(SECOND, TIMESTAMP '2024-05-01 10:00:00', ts) AS s,
               TIMESTAMPDIFF(MINUTE, ts, TIMESTAMP '2024-05-01 09:58:00') AS m,
               TIMESTAMPADD(MINUTE, 2, ts) AS plus2,
               FLOOR(ts TO SECOND) AS f, CEIL(ts TO SECOND) AS c
        FROM clicks WHERE user_id IS NULL;""", 1)
    assert rows == [
        (0, -2, T0 + 500 + 120_000, T0, T0 + 1000),          # 10:00:00.5
        (3, -2, T0 + 3000 + 120_000, T0 + 3000, T0 + 3000),  # 10:00:03
        (7, -2, T0 + 7000 + 120_000, T0 + 7000, T0 + 7000),  # 10:00:07
    ]


def test_legacy_window_properties(tmp_path: Path) -> None:
    _, rows = run_sql(tmp_path, """
        SELECT user_id, TUMBLE_START(ts, INTERVAL '5' SECOND) AS ws,
               TUMBLE_ROWTIME(ts, INTERVAL '5' SECOND) AS rt, COUNT(*) AS n
        FROM clicks WHERE user_id = 'u1' GROUP BY TUMBLE(ts, INTERVAL '5' SECOND), user_id;""")
    assert sorted(rows) == [("u1", T0, T0 + 4999, 1), ("u1", T0 + 5000, T0 + 9999, 1)]


def test_backticks_and_named_window_arguments(tmp_path: Path) -> None:
    _, rows = run_sql(tmp_path, """
        SELECT `user_id`, window_start, COUNT(*) AS `n`
        FROM TABLE(TUMBLE(DATA => TABLE clicks, TIMECOL => DESCRIPTOR(ts),
                          SIZE => INTERVAL '5' SECONDS))
        WHERE `user_id` = 'u2' GROUP BY window_start, window_end, `user_id`;""")
    assert sorted(rows) == [("u2", T0, 1), ("u2", T0 + 10000, 1)]


IMPRESSIONS = TABLES + """CREATE TABLE imps (user_id STRING, article_id STRING, kind STRING,
  ts TIMESTAMP(3), WATERMARK FOR ts AS ts)
  WITH ('connector' = 'filesystem', 'path' = 'clicks.csv', 'format' = 'csv');
"""


def test_output_names_follow_calcite(tmp_path: Path) -> None:
    # a repeated name gets 0, 1, ... (Calcite's uniquify), as Flink names the columns
    names, rows = run_sql(tmp_path, """
        SELECT * FROM clicks c JOIN imps i ON c.user_id = i.user_id
          AND i.ts BETWEEN c.ts AND c.ts WHERE c.user_id = 'u1';""", 1, IMPRESSIONS)
    assert names == ["user_id", "article_id", "action", "ts", "user_id0", "article_id0",
                     "kind", "ts0"]
    assert rows == [("u1", "a1", "appclick", T0 + 1000, "u1", "a1", "appclick", T0 + 1000),
                    ("u1", "a3", "appclick", T0 + 6000, "u1", "a3", "appclick", T0 + 6000)]
    names, _ = run_sql(tmp_path, "SELECT c.user_id, i.user_id, c.ts + INTERVAL '1' SECOND, "
                       "i.*, c.article_id AS article_id FROM clicks c JOIN imps i ON "
                       "c.user_id = i.user_id AND i.ts BETWEEN c.ts AND c.ts;", 1, IMPRESSIONS)
    assert names == ["user_id", "user_id0", "EXPR$2", "user_id1", "article_id", "kind", "ts",
                     "article_id0"]
    names, _ = run_sql(tmp_path, "SELECT user_id AS a, action AS a, COUNT(*) AS a FROM clicks "
                       "GROUP BY user_id, action;")
    assert names == ["a", "a0", "a1"]


def test_null_join_keys_never_match(tmp_path: Path) -> None:
    # SQL: NULL = NULL is not true; the null user_id rows of both sides are dropped
    _, rows = run_sql(tmp_path, """
        SELECT c.user_id, c.article_id, i.article_id FROM clicks c JOIN imps i
          ON c.user_id = i.user_id AND i.ts BETWEEN c.ts - INTERVAL '10' SECOND AND c.ts;""",
                      2, IMPRESSIONS)
    assert sorted(rows) == [("u1", "a1", "a1"), ("u1", "a3", "a1"), ("u1", "a3", "a3"),
                            ("u2", "a1", "a1"), ("u2", "a1", "a2"), ("u2", "a2", "a2")]


def test_union_all_matches_columns_by_position(tmp_path: Path) -> None:
    # Flink: the first input names the columns; the types widen (BIGINT and DOUBLE: DOUBLE)
    names, rows = run_sql(tmp_path, """
        SELECT user_id AS who, 1 AS n FROM clicks WHERE user_id IS NOT NULL
        UNION ALL SELECT action, 2.5 FROM clicks WHERE action = 'share';""")
    assert names == ["who", "n"]
    assert sorted(rows) == [("share", 2.5), ("u1", 1.0), ("u1", 1.0), ("u2", 1.0),
                            ("u2", 1.0)]
    assert all(isinstance(r[1], float) for r in rows)


def test_window_tvf_without_aggregation(tmp_path: Path) -> None:
    # Flink appends window_start, window_end, window_time (end - 1 ms) to each row; TUMBLE
    # gives one row per input row, HOP one per window the row is in
    names, rows = run_sql(tmp_path, """
        SELECT * FROM TABLE(TUMBLE(TABLE clicks, DESCRIPTOR(ts), INTERVAL '5' SECOND));""")
    assert names == ["user_id", "article_id", "action", "ts", "window_start", "window_end",
                     "window_time"]
    starts = sorted((r[3] - T0, r[4] - T0, r[5] - T0, r[6] - T0) for r in rows)
    assert starts == [(500, 0, 5000, 4999), (1000, 0, 5000, 4999), (2000, 0, 5000, 4999),
                      (3000, 0, 5000, 4999), (6000, 5000, 10000, 9999),
                      (7000, 5000, 10000, 9999), (12000, 10000, 15000, 14999)]
    names, rows = run_sql(tmp_path, """
        SELECT article_id, window_start, window_end
        FROM TABLE(HOP(TABLE clicks, DESCRIPTOR(ts), INTERVAL '2' SECOND, INTERVAL '5' SECOND))
        WHERE user_id = 'u1';""")
    assert names == ["article_id", "window_start", "window_end"]
    assert sorted((a, s - T0, e - T0) for a, s, e in rows) == [
        ("a1", -2000, 3000), ("a1", 0, 5000),
        ("a3", 2000, 7000), ("a3", 4000, 9000), ("a3", 6000, 11000)]
