"""A .flow script and the Python program a user would write build identical graphs."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import job_graph_dump, structure
from flowc.datastream import (
    Duration,
    EventTimeSessionWindows,
    FileSink,
    OutputTag,
    StreamExecutionEnvironment,
    TumblingEventTimeWindows,
    WatermarkStrategy,
)
from flowc.operators import FileSource
from flowc.parser import compile_file, compile_source
from flowc.parser.aggregates import (
    AggSpec,
    JoinRows,
    RollingMerge,
    RollingResult,
    RollingStart,
    RowAggregate,
    WindowRow,
)
from flowc.transformations import KeySelector
from flowc.types import INT, STRING, TIMESTAMP, Schema

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
    assert structure(script.env) == structure(env)
    assert job_graph_dump(script.env) == job_graph_dump(env)
    assert script.env.get_stream_graph() is not None


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
    start = s.map(RollingStart((0, 1), agg)).set_parallelism(3)
    reduced = start.key_by(key("user_id", "article_id", pos=(0, 1))).reduce(
        RollingMerge(2, agg)).set_parallelism(3).uid("agg")
    out = Schema.of(("user_id", STRING), ("article_id", STRING), ("n", INT))
    reduced.map(RollingResult(2, agg), output_type=out).set_parallelism(3) \
        .print().set_parallelism(1).disable_chaining()
    assert structure(script.env) == structure(env)
    assert job_graph_dump(script.env) == job_graph_dump(env)


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
    assert structure(script.env) == structure(env)
    assert job_graph_dump(script.env) == job_graph_dump(env)


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
    assert structure(script.env) == structure(env)
    assert job_graph_dump(script.env) == job_graph_dump(env)
