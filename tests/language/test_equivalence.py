"""A .flow script and the Python program a user would write build identical graphs."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import assert_same_graphs, stream_graph_dump
from flowc.datastream import (
    Duration,
    EventTimeSessionWindows,
    FileSink,
    OutputTag,
    RuntimeExecutionMode,
    SlidingEventTimeWindows,
    StreamExecutionEnvironment,
    TumblingEventTimeWindows,
    WatermarkStrategy,
)
from flowc.operators import DatagenSource, FileSource
from flowc.parser import compile_file, compile_source
from flowc.parser.aggregates import (
    AggSpec,
    JoinRows,
    RowAggregate,
    WindowRow,
)
from flowc.parser.changes import RollingChanges, RollingMerge, RollingStart
from flowc.transformations import KeySelector
from flowc.types import DOUBLE, INT, STRING, TIMESTAMP, Schema, array_of

EXAMPLES = Path(__file__).parents[2] / "examples"
CLICKS = Schema.of(("user_id", STRING), ("article_id", STRING), ("action", STRING),
                   ("ts", TIMESTAMP))


def key(*fields: str, pos: tuple[int, ...] = (0,)) -> KeySelector:
    if len(pos) == 1:
        return KeySelector(lambda r: r[pos[0]], fields)
    return KeySelector(lambda r: tuple(r[p] for p in pos), fields)


def clicks_source(env: StreamExecutionEnvironment, path: str = "data/clicks.csv"):
    strategy = WatermarkStrategy.for_bounded_out_of_orderness(Duration.of_seconds(2)) \
        .with_timestamp_assigner(lambda r, t: r[3])
    return env.from_source(FileSource(path, "csv", CLICKS.as_pairs(), (("header", "true"),)),
                           strategy, "clicks",
                           type_info=CLICKS)


def test_clicks_matches_python_program() -> None:
    script = compile_file(str(EXAMPLES / "clicks.flow"))
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(2)
    s = clicks_source(env, str(EXAMPLES / "data/clicks.csv"))
    s = s.map(lambda r: (r[0], r[1], r[2].lower(), r[3]), output_type=CLICKS)
    s = s.filter(lambda r: r[0] is not None and r[1] is not None and r[2] == "appclick")
    out = Schema.of(("user_id", STRING), ("window_start", TIMESTAMP), ("window_end", TIMESTAMP),
                    ("clicks", INT), ("articles", INT))
    agg = RowAggregate([AggSpec("count_star", None, "clicks", INT),
                        AggSpec("count_distinct", None, "articles", INT)])
    s.key_by(key("user_id")).window(TumblingEventTimeWindows.of(Duration.of_seconds(5))) \
        .aggregate(agg, window_function=WindowRow(1), output_type=out).print()
    assert_same_graphs(script.env, env)


def test_hints_rolling_aggregate_and_partitioning() -> None:
    text = """
set parallelism = 4;
source clicks (user_id string, article_id string, action string, ts timestamp)
  from csv 'data/clicks.csv' watermark ts - 2s with (parallelism = 2, uid = 'src');
clicks
  | rebalance
  | filter action = 'x' with (name = 'only x', slot_group = 'g', chain = new)
  | key by user_id, article_id
  | aggregate count(*) as n with (parallelism = 3, uid = 'agg')
  | print with (parallelism = 1, chain = never);
"""
    script = compile_source(text, "t.flow")
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(4)
    src = env.from_source(FileSource("data/clicks.csv", "csv", CLICKS.as_pairs()),
                          WatermarkStrategy.for_bounded_out_of_orderness(2000)
                          .with_timestamp_assigner(lambda r, t: r[3]), "clicks", type_info=CLICKS)
    s = src.set_parallelism(2).uid("src")
    s = s.rebalance().filter(lambda r: r[2] == "x").name("only x").slot_sharing_group("g")
    s.start_new_chain()
    agg = RowAggregate([AggSpec("count_star", None, "n", INT)])
    start = s.map(RollingStart((0, 1), agg, False)).set_parallelism(3)
    reduced = start.key_by(key("user_id", "article_id", pos=(0, 1))).reduce(
        RollingMerge(2, agg)).set_parallelism(3).uid("agg")
    out = Schema.of(("user_id", STRING), ("article_id", STRING), ("n", INT))
    reduced.flat_map(RollingChanges(2, agg, False), output_type=out).name("Map") \
        .set_parallelism(3) \
        .print().set_parallelism(1).disable_chaining()
    assert_same_graphs(script.env, env)


def test_session_window_with_late_side_output_and_file_sink() -> None:
    text = """
source clicks (user_id string, article_id string, action string, ts timestamp)
  from csv 'data/clicks.csv' watermark ts - 2s;
clicks | key by user_id
  | window session gap 30s allowed lateness 2s late into late
  | aggregate count(*) as n
  | print;
late | write csv 'late.csv';
"""
    script = compile_source(text, "t.flow")
    assert script.streams["late"].schema == CLICKS
    env = StreamExecutionEnvironment.get_execution_environment()
    tag = OutputTag("late", CLICKS)
    agg = RowAggregate([AggSpec("count_star", None, "n", INT)])
    out = Schema.of(("user_id", STRING), ("window_start", TIMESTAMP), ("window_end", TIMESTAMP),
                    ("n", INT))
    win = clicks_source(env).key_by(key("user_id")).window(
        EventTimeSessionWindows.with_gap(Duration.of_seconds(30))).allowed_lateness(2000) \
        .side_output_late_data(tag).aggregate(agg, window_function=WindowRow(1),
                                              output_type=out)
    late = win.get_side_output(tag)
    win.print()
    late.sink_to(FileSink("late.csv", "csv", CLICKS.names))
    assert_same_graphs(script.env, env)


@pytest.mark.parametrize("kind", ["interval", "window"])
def test_joins(kind: str) -> None:
    join = ("interval join other on user_id between -2s and 3s" if kind == "interval"
            else "join other on clicks.user_id = other.user_id window tumbling 5s")
    text = f"""
source clicks (user_id string, article_id string, action string, ts timestamp)
  from csv 'data/clicks.csv' watermark ts - 2s;
let other = clicks | filter action = 'view';
clicks | {join} | blackhole;
"""
    script = compile_source(text, "t.flow")
    schema = script.sinks[0].schema
    assert schema.names[4:] == ("other_user_id", "other_article_id", "other_action", "other_ts")
    env = StreamExecutionEnvironment.get_execution_environment()
    clicks = clicks_source(env)
    other = clicks.filter(lambda r: r[2] == "view")
    if kind == "interval":
        joined = clicks.key_by(key("user_id")).interval_join(other.key_by(key("user_id"))) \
            .between(-2000, 3000).process(JoinRows(), output_type=schema)
    else:
        joined = clicks.join(other).where(key("user_id")).equal_to(key("user_id")).window(
            TumblingEventTimeWindows.of(5000)).apply(lambda a, b: a + b, output_type=schema)
    joined.add_discarding_sink()
    assert_same_graphs(script.env, env)


# ---------------------------------------------------------------- every construct of the docs

IMPRESSIONS = Schema.of(("user_id", STRING), ("article_id", STRING), ("position", INT),
                        ("ts", TIMESTAMP))
PRELUDE = """
source clicks (user_id string, article_id string, action string, ts timestamp)
  from csv 'data/clicks.csv' watermark ts - 2s;
source impressions (user_id string, article_id string, position int, ts timestamp)
  from csv 'data/impressions.csv' watermark ts - 1s;
"""


def impressions_source(env: StreamExecutionEnvironment):
    strategy = WatermarkStrategy.for_bounded_out_of_orderness(1000) \
        .with_timestamp_assigner(lambda r, t: r[3])
    return env.from_source(FileSource("data/impressions.csv", "csv", IMPRESSIONS.as_pairs(),
                                      (("header", "true"),)), strategy, "impressions",
                           type_info=IMPRESSIONS)


def both(env: StreamExecutionEnvironment):
    return clicks_source(env), impressions_source(env)


def test_stream_graph_is_compared() -> None:
    """The StreamGraph dump sees what the JobGraph may hide (descriptions, state keys)."""
    a = StreamExecutionEnvironment.get_execution_environment()
    clicks_source(a).filter(lambda r: True).set_description("x").print()
    b = StreamExecutionEnvironment.get_execution_environment()
    clicks_source(b).filter(lambda r: True).print()
    assert stream_graph_dump(a) != stream_graph_dump(b)


def test_settings() -> None:
    script = compile_source("""
set parallelism = 3;
set max_parallelism = 64;
set chaining = off;
set mode = batch;
set job_name = 'clicks per user';
set spark.sql.shuffle.partitions = 8;
""" + PRELUDE + "clicks | print;", "t.flow")
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(3)
    env.set_max_parallelism(64)
    env.disable_operator_chaining()
    env.set_runtime_mode(RuntimeExecutionMode.BATCH)
    env.set_job_name("clicks per user")
    env.set_option("spark.sql.shuffle.partitions", "8")
    both(env)[0].print()
    assert_same_graphs(script.env, env)


def test_sources() -> None:
    script = compile_source("""
set parallelism = 2;
source views (user_id string, article_id string, ts timestamp)
  from json 'data/views.jsonl' watermark ts - 5s dead letter 'out/bad_views.jsonl';
source orders (id int, amount double, tags array<string>) from parquet 'data/orders.parquet';
source events (user_id string, n int)
  from csv 'data/events.csv' options (header = false, delimiter = ';', null_value = 'NA')
  with (parallelism = 1, name = 'events reader');
source users (user_id string, country string, signup timestamp)
  values ('user_1', 'NL', timestamp '2024-01-01'), ('user_2', 'DE', timestamp '2024-02-01')
  watermark signup with (uid = 'users');
source load (id int, amount double, ts timestamp)
  from datagen rows 1000 (ts = timestamp '2024-05-01' + index * 100ms) watermark ts
  with (parallelism = 3);
source numbers (n int) from sequence 1 to 100 with (parallelism = 4);
views | print;
orders | print;
events | print;
users | print;
load | print;
numbers | print;
""", "t.flow")
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(2)
    views = Schema.of(("user_id", STRING), ("article_id", STRING), ("ts", TIMESTAMP))
    orders = Schema.of(("id", INT), ("amount", DOUBLE), ("tags", array_of(STRING)))
    events = Schema.of(("user_id", STRING), ("n", INT))
    users = Schema.of(("user_id", STRING), ("country", STRING), ("signup", TIMESTAMP))
    load = Schema.of(("id", INT), ("amount", DOUBLE), ("ts", TIMESTAMP))
    numbers = Schema.of(("n", INT))

    def wm(delay: int, pos: int) -> WatermarkStrategy:
        return WatermarkStrategy.for_bounded_out_of_orderness(delay) \
            .with_timestamp_assigner(lambda r, t: r[pos])

    made = [
        env.from_source(FileSource("data/views.jsonl", "json", views.as_pairs(), (),
                                   "out/bad_views.jsonl"), wm(5000, 2), "views",
                        type_info=views),
        env.from_source(FileSource("data/orders.parquet", "parquet", orders.as_pairs()),
                        WatermarkStrategy.no_watermarks(), "orders", type_info=orders),
        env.from_source(FileSource("data/events.csv", "csv", events.as_pairs(),
                                   (("header", "false"), ("delimiter", ";"),
                                    ("null_value", "NA"))),
                        WatermarkStrategy.no_watermarks(), "events", type_info=events)
        .set_parallelism(1).name("events reader"),
        env.from_collection([("user_1", "NL", 1704067200000), ("user_2", "DE", 1706745600000)],
                            type_info=users).name("users").uid("users")
        .assign_timestamps_and_watermarks(wm(0, 2)),
        env.from_source(DatagenSource(1000, lambda i: (i, float(i), 1714521600000 + i * 100)),
                        wm(0, 2), "load", type_info=load).set_parallelism(3),
        # Flink's fromSequence: one parallel source, no operator after it.
        env.from_source(DatagenSource(100, lambda i: (1 + i,)),
                        WatermarkStrategy.no_watermarks(), "numbers", type_info=numbers)
        .set_parallelism(4),
    ]
    for stream in made:
        stream.print()
    assert_same_graphs(script.env, env)


def test_one_input_steps_partitionings_and_sinks() -> None:
    script = compile_source(PRELUDE + """
let good = clicks | filter user_id is not null;
good
  | map user_id, upper(action) as action, ts
  | select *, length(action) as len
  | where len > 3
  | flat_map split(action, 'C') as part
  | rebalance | map user_id | rescale | map user_id | shuffle | map user_id
  | broadcast | map user_id | global | map user_id | forward
  | print 'parts';
good | key by user_id | map user_id, ts | write csv 'out/a.csv' options (delimiter = ';');
good | write json 'out/b.jsonl';
good | write parquet 'out/c.parquet';
good | key by user_id | filter true | blackhole;
""", "t.flow")
    env = StreamExecutionEnvironment.get_execution_environment()
    clicks = both(env)[0]
    good = clicks.filter(lambda r: r[0] is not None)
    s1 = Schema.of(("user_id", STRING), ("action", STRING), ("ts", TIMESTAMP))
    s2 = Schema.of(("user_id", STRING), ("action", STRING), ("ts", TIMESTAMP), ("len", INT))
    s3 = Schema.of(("user_id", STRING), ("action", STRING), ("ts", TIMESTAMP), ("len", INT),
                   ("part", STRING))
    u = Schema.of(("user_id", STRING))
    s = good.map(lambda r: r, output_type=s1).map(lambda r: r, output_type=s2) \
        .filter(lambda r: True).flat_map(lambda r: [r], output_type=s3)
    s = s.rebalance().map(lambda r: r, output_type=u).rescale().map(lambda r: r, output_type=u)
    s = s.shuffle().map(lambda r: r, output_type=u).broadcast().map(lambda r: r, output_type=u)
    s = s.global_().map(lambda r: r, output_type=u).forward()
    s.print("parts")
    ut = Schema.of(("user_id", STRING), ("ts", TIMESTAMP))
    good.key_by(key("user_id")).map(lambda r: r, output_type=ut) \
        .sink_to(FileSink("out/a.csv", "csv", ut.names, (("delimiter", ";"),)))
    good.sink_to(FileSink("out/b.jsonl", "json", CLICKS.names))
    good.sink_to(FileSink("out/c.parquet", "parquet", CLICKS.names))
    good.key_by(key("user_id")).filter(lambda r: True).add_discarding_sink()
    assert_same_graphs(script.env, env)


@pytest.mark.parametrize("window,assigner", [
    ("tumbling 1h offset 15m", TumblingEventTimeWindows.of(3_600_000, 900_000)),
    ("sliding 10s every 5s", SlidingEventTimeWindows.of(10_000, 5_000)),
    ("sliding 10s every 5s offset 1s", SlidingEventTimeWindows.of(10_000, 5_000, 1_000)),
    ("session gap 30s", EventTimeSessionWindows.with_gap(30_000)),
])
def test_window_kinds_with_hints(window: str, assigner: object) -> None:
    script = compile_source(PRELUDE + f"""
clicks | key by user_id, action | window {window} allowed lateness 1s
  | aggregate count(*) as n, sum(1) as s, avg(1) as a, min(ts) as lo, max(ts) as hi,
              first(article_id) as f, last(article_id) as l, count(distinct article_id)
    with (parallelism = 3, uid = 'w', name = 'per user', slot_group = 'win')
  | print;
""", "t.flow")
    env = StreamExecutionEnvironment.get_execution_environment()
    out = Schema.of(("user_id", STRING), ("action", STRING), ("window_start", TIMESTAMP),
                    ("window_end", TIMESTAMP), ("n", INT), ("s", INT), ("a", DOUBLE),
                    ("lo", TIMESTAMP), ("hi", TIMESTAMP), ("f", STRING), ("l", STRING),
                    ("count_distinct_article_id", INT))
    agg = RowAggregate([AggSpec(k, None, n, INT) for k, n in (
        ("count_star", "n"), ("sum", "s"), ("avg", "a"), ("min", "lo"), ("max", "hi"),
        ("first", "f"), ("last", "l"), ("count_distinct", "c"))])
    both(env)[0].key_by(key("user_id", "action", pos=(0, 2))).window(assigner) \
        .allowed_lateness(1000).aggregate(agg, window_function=WindowRow(2), output_type=out) \
        .set_parallelism(3).uid("w").name("per user").slot_sharing_group("win").print()
    assert_same_graphs(script.env, env)


def test_unions_and_fan_out() -> None:
    script = compile_source(PRELUDE + """
let a = clicks | filter action = 'share';
let b = clicks | filter action = 'appclick';
a | union b | print;
union a, b, clicks | map user_id | print;
""", "t.flow")
    env = StreamExecutionEnvironment.get_execution_environment()
    clicks = both(env)[0]
    a = clicks.filter(lambda r: r[2] == "share")
    b = clicks.filter(lambda r: r[2] == "appclick")
    a.union(b).print()
    a.union(b, clicks).map(lambda r: (r[0],), output_type=Schema.of(("user_id", STRING))) \
        .print()
    assert_same_graphs(script.env, env)


def test_window_join_with_lateness_alias_and_hints() -> None:
    script = compile_source(PRELUDE + """
clicks
  | join impressions as imp on clicks.user_id = imp.user_id and article_id
      window sliding 1m every 30s allowed lateness 5s with (parallelism = 2, name = 'j')
  | map user_id, imp.position
  | print;
""", "t.flow")
    env = StreamExecutionEnvironment.get_execution_environment()
    clicks, imps = both(env)
    joined_schema = Schema(CLICKS.fields + tuple(
        f if f.name not in CLICKS.names else type(f)(f"imp_{f.name}", f.type)
        for f in IMPRESSIONS.fields))
    joined = clicks.join(imps).where(key("user_id", "article_id", pos=(0, 1))) \
        .equal_to(key("user_id", "article_id", pos=(0, 1))) \
        .window(SlidingEventTimeWindows.of(60_000, 30_000)).allowed_lateness(5000) \
        .apply(lambda a, b: a + b, output_type=joined_schema).set_parallelism(2).name("j")
    joined.map(lambda r: (r[0], r[6]), output_type=Schema.of(("user_id", STRING),
                                                             ("position", INT))).print()
    assert_same_graphs(script.env, env)


def test_interval_join_after_key_by_and_udf(tmp_path: Path) -> None:
    (tmp_path / "eq_udfs.py").write_text("def score(a, p):\n    return 1.0\n", encoding="utf-8")
    script = compile_source("import udf eq_udfs.score(string, int) -> double;\n" + PRELUDE + """
clicks | key by user_id
  | interval join impressions on user_id between -10s and 0s with (uid = 'ij')
  | map user_id, score(impressions_article_id, position) as s
  | print;
""", "t.flow", base_dir=str(tmp_path))
    env = StreamExecutionEnvironment.get_execution_environment()
    clicks, imps = both(env)
    joined_schema = Schema(CLICKS.fields + tuple(
        f if f.name not in CLICKS.names else type(f)(f"impressions_{f.name}", f.type)
        for f in IMPRESSIONS.fields))
    clicks.key_by(key("user_id")).interval_join(imps.key_by(key("user_id"))) \
        .between(-10_000, 0).process(JoinRows(), output_type=joined_schema).uid("ij") \
        .map(lambda r: (r[0], 1.0), output_type=Schema.of(("user_id", STRING), ("s", DOUBLE))) \
        .print()
    assert_same_graphs(script.env, env)
