"""The same pipelines written in SQL, .flow and Python build identical transformations and
JobGraphs (SQL is translated to the .flow AST, so this holds by construction; these tests
keep it so)."""

from __future__ import annotations

import pytest
from sql_graphs import job_graph_dump, structure

from flowc.datastream import (
    Duration,
    EventTimeSessionWindows,
    SlidingEventTimeWindows,
    StreamExecutionEnvironment,
    TumblingEventTimeWindows,
    WatermarkStrategy,
)
from flowc.operators import FileSource
from flowc.parser import compile_source
from flowc.parser.aggregates import (
    AggSpec,
    JoinRows,
    RowAggregate,
    WindowRow,
)
from flowc.parser.changes import RollingChanges, RollingMerge, RollingStart
from flowc.sql import compile_sql
from flowc.transformations import KeySelector
from flowc.types import INT, STRING, TIMESTAMP, Schema

CLICKS = Schema.of(("user_id", STRING), ("article_id", STRING), ("action", STRING),
                   ("ts", TIMESTAMP))
IMPRESSIONS = Schema.of(("user_id", STRING), ("article_id", STRING), ("position", INT),
                        ("ts", TIMESTAMP))

SQL_TABLES = """
CREATE TABLE clicks (user_id STRING, article_id STRING, action STRING, ts TIMESTAMP(3),
  WATERMARK FOR ts AS ts - INTERVAL '2' SECOND)
  WITH ('connector' = 'filesystem', 'path' = 'data/clicks.csv', 'format' = 'csv');
CREATE TABLE impressions (user_id STRING, article_id STRING, position BIGINT, ts TIMESTAMP(3),
  WATERMARK FOR ts AS ts - INTERVAL '1' SECOND)
  WITH ('connector' = 'filesystem', 'path' = 'data/impressions.csv', 'format' = 'csv');
"""
FLOW_SOURCES = {
    "clicks": "source clicks (user_id string, article_id string, action string, ts timestamp)"
              " from csv 'data/clicks.csv' watermark ts - 2s;\n",
    "impressions": "source impressions (user_id string, article_id string, position int, "
                   "ts timestamp) from csv 'data/impressions.csv' watermark ts - 1s;\n",
}


def flow_script(pipelines: str) -> str:
    """The pipelines with the sources they read (an unread .flow source still takes a
    transformation id; an unread SQL table does not)."""
    return "".join(text for name, text in FLOW_SOURCES.items() if name in pipelines) + \
        pipelines


def key(*fields: str, pos: tuple[int, ...] = (0,)) -> KeySelector:
    if len(pos) == 1:
        return KeySelector(lambda r: r[pos[0]], fields)
    return KeySelector(lambda r: tuple(r[p] for p in pos), fields)


def source(env: StreamExecutionEnvironment, name: str, schema: Schema, delay_s: int):
    strategy = WatermarkStrategy.for_bounded_out_of_orderness(Duration.of_seconds(delay_s)) \
        .with_timestamp_assigner(lambda r, t: r[3])
    return env.from_source(FileSource(f"data/{name}.csv", "csv", schema.as_pairs(),
                                      (("header", "true"),)), strategy, name, type_info=schema)


def py_window(kind: str) -> StreamExecutionEnvironment:
    env = StreamExecutionEnvironment.get_execution_environment()
    s = source(env, "clicks", CLICKS, 2).filter(lambda r: r[2] == "appclick")
    out = Schema.of(("user_id", STRING), ("window_start", TIMESTAMP),
                    ("window_end", TIMESTAMP), ("clicks", INT))
    agg = RowAggregate([AggSpec("count_star", None, "clicks", INT)])
    assigner = TumblingEventTimeWindows.of(Duration.of_seconds(5)) if kind == "tumble" else \
        EventTimeSessionWindows.with_gap(Duration.of_seconds(30)) if kind == "session" else \
        SlidingEventTimeWindows.of(Duration.of_seconds(10), Duration.of_seconds(5))
    s.key_by(key("user_id")).window(assigner).aggregate(
        agg, window_function=WindowRow(1), output_type=out).print()
    return env


def py_projection() -> StreamExecutionEnvironment:
    env = StreamExecutionEnvironment.get_execution_environment()
    s = source(env, "clicks", CLICKS, 2)
    s = s.filter(lambda r: r[0] is not None)
    s.map(lambda r: (r[0], r[2].lower()), output_type=Schema.of(
        ("user_id", STRING), ("action", STRING))).print()
    return env


def py_rolling() -> StreamExecutionEnvironment:
    env = StreamExecutionEnvironment.get_execution_environment()
    s = source(env, "clicks", CLICKS, 2)
    agg = RowAggregate([AggSpec("count_star", None, "n", INT)])
    acc = s.map(RollingStart((0,), agg, False))
    reduced = acc.key_by(key("user_id")).reduce(RollingMerge(1, agg))
    reduced.flat_map(RollingChanges(1, agg, False), output_type=Schema.of(
        ("user_id", STRING), ("n", INT))).name("Map").print()
    return env


def py_interval_join() -> StreamExecutionEnvironment:
    env = StreamExecutionEnvironment.get_execution_environment()
    c = source(env, "clicks", CLICKS, 2)
    i = source(env, "impressions", IMPRESSIONS, 1)
    # SQL drops null keys on both sides first (a null key equals nothing)
    i = i.filter(lambda r: r[0] is not None)
    c = c.filter(lambda r: r[0] is not None)
    out = Schema(CLICKS.fields + Schema.of(
        ("impressions_user_id", STRING), ("impressions_article_id", STRING),
        ("position", INT), ("impressions_ts", TIMESTAMP)).fields)
    # SELECT * names repeated columns as Flink (Calcite) does: user_id0, article_id0, ts0
    named = Schema(CLICKS.fields + Schema.of(
        ("user_id0", STRING), ("article_id0", STRING), ("position", INT),
        ("ts0", TIMESTAMP)).fields)
    c.key_by(key("user_id")).interval_join(i.key_by(key("user_id"))).between(
        -10_000, 0).process(JoinRows(), output_type=out).map(
        lambda r: r, output_type=named).print()
    return env


def py_union() -> StreamExecutionEnvironment:
    env = StreamExecutionEnvironment.get_execution_environment()
    c = source(env, "clicks", CLICKS, 2)
    i = source(env, "impressions", IMPRESSIONS, 1)
    pair = Schema.of(("user_id", STRING), ("ts", TIMESTAMP))
    a = c.map(lambda r: (r[0], r[3]), output_type=pair)
    b = i.map(lambda r: (r[0], r[3]), output_type=pair)
    a.union(b).print()
    return env


def py_window_join() -> StreamExecutionEnvironment:
    env = StreamExecutionEnvironment.get_execution_environment()
    c = source(env, "clicks", CLICKS, 2)
    i = source(env, "impressions", IMPRESSIONS, 1)
    # null keys never join in SQL: both sides are filtered first (impressions is named first)
    i = i.filter(lambda r: r[0] is not None and r[1] is not None)
    c = c.filter(lambda r: r[0] is not None and r[1] is not None)
    out = Schema(CLICKS.fields + Schema.of(
        ("imp_user_id", STRING), ("imp_article_id", STRING), ("position", INT),
        ("imp_ts", TIMESTAMP)).fields)
    named = Schema(CLICKS.fields + Schema.of(
        ("user_id0", STRING), ("article_id0", STRING), ("position", INT),
        ("ts0", TIMESTAMP)).fields)
    c.join(i).where(key("user_id", "article_id", pos=(0, 1))).equal_to(
        key("user_id", "article_id", pos=(0, 1))).window(
        TumblingEventTimeWindows.of(Duration.of_minutes(1))).apply(
        lambda a, b: a + b, output_type=out).map(lambda r: r, output_type=named).print()
    return env


CASES = {
    "tumble_tvf": (
        "SELECT user_id, window_start, window_end, COUNT(*) AS clicks "
        "FROM TABLE(TUMBLE(TABLE clicks, DESCRIPTOR(ts), INTERVAL '5' SECOND)) "
        "WHERE action = 'appclick' GROUP BY window_start, window_end, user_id;",
        "clicks | filter action = 'appclick' | key by user_id | window tumbling 5s "
        "| aggregate count(*) as clicks | print;",
        lambda: py_window("tumble")),
    "tumble_legacy": (
        "SELECT user_id, TUMBLE_START(ts, INTERVAL '5' SECOND) AS window_start, "
        "TUMBLE_END(ts, INTERVAL '5' SECOND) AS window_end, COUNT(*) AS clicks FROM clicks "
        "WHERE action = 'appclick' GROUP BY TUMBLE(ts, INTERVAL '5' SECOND), user_id;",
        "clicks | filter action = 'appclick' | key by user_id | window tumbling 5s "
        "| aggregate count(*) as clicks | print;",
        lambda: py_window("tumble")),
    "hop_tvf": (
        "SELECT user_id, window_start, window_end, COUNT(*) AS clicks "
        "FROM TABLE(HOP(TABLE clicks, DESCRIPTOR(ts), INTERVAL '5' SECOND, INTERVAL '10' "
        "SECOND)) WHERE action = 'appclick' GROUP BY user_id, window_start, window_end;",
        "clicks | filter action = 'appclick' | key by user_id | window sliding 10s every 5s "
        "| aggregate count(*) as clicks | print;",
        lambda: py_window("hop")),
    "hop_legacy": (
        "SELECT user_id, HOP_START(ts, INTERVAL '5' SECOND, INTERVAL '10' SECOND) AS "
        "window_start, HOP_END(ts, INTERVAL '5' SECOND, INTERVAL '10' SECOND) AS window_end, "
        "COUNT(*) AS clicks FROM clicks WHERE action = 'appclick' "
        "GROUP BY HOP(ts, INTERVAL '5' SECOND, INTERVAL '10' SECOND), user_id;",
        "clicks | filter action = 'appclick' | key by user_id | window sliding 10s every 5s "
        "| aggregate count(*) as clicks | print;",
        lambda: py_window("hop")),
    "session_tvf": (
        "SELECT user_id, window_start, window_end, COUNT(*) AS clicks "
        "FROM TABLE(SESSION(TABLE clicks PARTITION BY user_id, DESCRIPTOR(ts), "
        "INTERVAL '30' SECOND)) WHERE action = 'appclick' "
        "GROUP BY window_start, window_end, user_id;",
        "clicks | filter action = 'appclick' | key by user_id | window session gap 30s "
        "| aggregate count(*) as clicks | print;",
        lambda: py_window("session")),
    "session_legacy": (
        "SELECT user_id, SESSION_START(ts, INTERVAL '30' SECOND) AS window_start, "
        "SESSION_END(ts, INTERVAL '30' SECOND) AS window_end, COUNT(*) AS clicks FROM clicks "
        "WHERE action = 'appclick' GROUP BY SESSION(ts, INTERVAL '30' SECOND), user_id;",
        "clicks | filter action = 'appclick' | key by user_id | window session gap 30s "
        "| aggregate count(*) as clicks | print;",
        lambda: py_window("session")),
    "projection": (
        "SELECT user_id, lower(action) AS action FROM clicks WHERE user_id IS NOT NULL;",
        "clicks | filter user_id is not null | map user_id, lower(action) as action | print;",
        py_projection),
    "rolling": (
        "SELECT user_id, COUNT(*) AS n FROM clicks GROUP BY user_id;",
        "clicks | key by user_id | aggregate count(*) as n | print;",
        py_rolling),
    "interval_join": (
        "SELECT * FROM clicks JOIN impressions ON clicks.user_id = impressions.user_id "
        "AND impressions.ts BETWEEN clicks.ts - INTERVAL '10' SECOND AND clicks.ts;",
        "let imps = impressions | filter user_id is not null;\n"
        "clicks | filter user_id is not null "
        "| interval join imps as impressions on user_id between -10s and 0s | map user_id, "
        "article_id, action, ts, impressions_user_id as user_id0, impressions_article_id as "
        "article_id0, position, impressions_ts as ts0 | print;",
        py_interval_join),
    "union_all": (
        "SELECT user_id, ts FROM clicks UNION ALL SELECT user_id, ts FROM impressions;",
        "let a = clicks | map user_id, ts;\nlet b = impressions | map user_id, ts;\n"
        "union a, b | print;",
        py_union),
}


@pytest.mark.parametrize("name", list(CASES))
def test_sql_flow_python_identical(name: str) -> None:
    sql, flow, python = CASES[name]
    from_sql = compile_sql(SQL_TABLES + sql, "q.sql").env
    from_flow = compile_source(flow_script(flow), "q.flow").env
    from_python = python()
    assert structure(from_sql) == structure(from_flow)
    assert job_graph_dump(from_sql) == job_graph_dump(from_flow) == job_graph_dump(from_python)


def test_sql_window_join_matches_flow() -> None:
    sql = ("SELECT * FROM TABLE(TUMBLE(TABLE clicks, DESCRIPTOR(ts), INTERVAL '1' MINUTE)) c "
           "JOIN TABLE(TUMBLE(TABLE impressions, DESCRIPTOR(ts), INTERVAL '1' MINUTE)) imp "
           "ON c.user_id = imp.user_id AND c.article_id = imp.article_id "
           "AND c.window_start = imp.window_start AND c.window_end = imp.window_end;")
    flow = ("let i = impressions | filter user_id is not null and article_id is not null;\n"
            "clicks | filter user_id is not null and article_id is not null "
            "| join i as imp on clicks.user_id = imp.user_id and "
            "clicks.article_id = imp.article_id window tumbling 1m | map user_id, article_id, "
            "action, ts, imp_user_id as user_id0, imp_article_id as article_id0, position, "
            "imp_ts as ts0 | print;")
    a = compile_sql(SQL_TABLES + sql, "q.sql")
    b = compile_source(flow_script(flow), "q.flow")
    assert structure(a.env) == structure(b.env)
    assert job_graph_dump(a.env) == job_graph_dump(b.env) == job_graph_dump(py_window_join())
    assert a.sinks[0].schema == b.sinks[0].schema
    assert a.sinks[0].schema.names == ("user_id", "article_id", "action", "ts", "user_id0",
                                       "article_id0", "position", "ts0")


def test_unread_tables_make_no_operators() -> None:
    sql = SQL_TABLES + "SELECT user_id FROM impressions;"
    flow = ("source impressions (user_id string, article_id string, position int, "
            "ts timestamp) from csv 'data/impressions.csv' watermark ts - 1s;\n"
            "impressions | map user_id | print;")
    assert job_graph_dump(compile_sql(sql, "q.sql").env) == \
        job_graph_dump(compile_source(flow, "q.flow").env)
