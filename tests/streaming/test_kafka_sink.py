"""The Kafka sink: no broker can run here, so these test what flowc decides itself - Flink
SQL's sink options and PyFlink's KafkaSink builder mapped onto Spark's Kafka writer, the
messages (key and value in csv / json / raw), Flink's checks - and, with Spark, the clear
error naming the missing connector jar before any micro-batch runs."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from flowc.common import SimpleStringSchema
from flowc.datastream import StreamExecutionEnvironment
from flowc.datastream.connectors.base import DeliveryGuarantee
from flowc.datastream.connectors.kafka import KafkaRecordSerializationSchema, KafkaSink
from flowc.errors import ApiError, ConfigError, ExecutionError, FlowcError, UnsupportedError
from flowc.executor import run_reference
from flowc.executor.streaming.kafka_sink import kafka_messages, kafka_sink_options
from flowc.executor.streaming.sources import kafka_packages
from flowc.operators import KafkaSink as KafkaSinkSpec
from flowc.sql import compile_sql

SQL = """CREATE TABLE clicks (user_id STRING, action STRING, ts TIMESTAMP(3),
  WATERMARK FOR ts AS ts - INTERVAL '2' SECOND) WITH (
  'connector' = 'filesystem', 'path' = '{src}', 'format' = 'csv'{monitor});
CREATE TABLE counts (user_id STRING, n BIGINT, window_end TIMESTAMP(3)) WITH (
  'connector' = 'kafka', 'properties.bootstrap.servers' = 'b1:9092,b2:9092',
  {options});
INSERT INTO counts SELECT user_id, COUNT(*), window_end
  FROM TABLE(TUMBLE(TABLE clicks, DESCRIPTOR(ts), INTERVAL '5' SECOND))
  GROUP BY user_id, window_start, window_end;
"""
MONITOR = ", 'source.monitor-interval' = '1s'"


def _compile(options: str, src: str = "in/", monitor: str = MONITOR) -> Any:
    return compile_sql(SQL.format(options=options, src=src, monitor=monitor), "job.sql")


def _sink(options: str) -> KafkaSinkSpec:
    sg = _compile(options).env.get_stream_graph()
    specs = [n.operator for n in sg.nodes.values() if isinstance(n.operator, KafkaSinkSpec)]
    assert len(specs) == 1
    return specs[0]


def test_sql_sink_options_map_onto_sparks_kafka_writer() -> None:
    spec = _sink("'topic' = 'counts', 'format' = 'json', 'properties.acks' = 'all', "
                 "'key.format' = 'csv', 'key.fields' = 'user_id', "
                 "'sink.delivery-guarantee' = 'at-least-once'")
    assert kafka_sink_options(spec) == {"kafka.bootstrap.servers": "b1:9092,b2:9092",
                                        "topic": "counts", "kafka.acks": "all"}
    assert (spec.format, spec.key_format, spec.key_fields) == ("json", "csv", ("user_id",))
    assert spec.columns == ("user_id", "n", "window_end")
    # window_end is a TIMESTAMP: Flink's json / csv formats write its SQL text
    rows = [("u1", 3, 1_704_067_205_000), ("a,b", 1, 1_704_067_210_000)]
    assert kafka_messages(spec, rows) == [
        ("u1", '{"user_id":"u1","n":3,"window_end":"2024-01-01 00:00:05.000"}'),
        ('"a,b"', '{"user_id":"a,b","n":1,"window_end":"2024-01-01 00:00:10.000"}')]


def test_except_key_leaves_the_key_fields_out_of_a_csv_value() -> None:
    spec = _sink("'topic' = 'counts', 'value.format' = 'csv', 'key.format' = 'json', "
                 "'key.fields' = 'user_id;n', 'value.fields-include' = 'EXCEPT_KEY'")
    assert kafka_messages(spec, [("u1", 3, 0), (None, 2, 5)]) == [
        ('{"user_id":"u1","n":3}', "1970-01-01 00:00:00.000"),
        ('{"user_id":null,"n":2}', "1970-01-01 00:00:00.005")]
    no_key = _sink("'topic' = 'counts', 'format' = 'csv'")
    assert kafka_messages(no_key, [("u1", 3, 0)]) == [(None, "u1,3,1970-01-01 00:00:00.000")]


@pytest.mark.parametrize("options, message", [
    ("'topic' = 'a;b', 'format' = 'csv'", "writing to kafka table 'counts' needs one 'topic'"),
    ("'topic' = 'c', 'format' = 'csv', 'key.format' = 'csv'",
     "A key format 'key.format' requires the declaration of one or more of key fields"),
    ("'topic' = 'c', 'format' = 'csv', 'key.fields' = 'user_id'",
     "The option 'key.fields' can only be declared if a key format is defined"),
    ("'topic' = 'c', 'format' = 'csv', 'key.format' = 'csv', 'key.fields' = 'usr_id'",
     "Could not find the field 'usr_id' in the table schema"),
    ("'topic' = 'c', 'format' = 'csv', 'sink.delivery-guarantee' = 'exactly-once'",
     "'sink.delivery-guarantee' = 'exactly-once' is not supported: Spark's Kafka writer is "
     "at least once"),
])
def test_bad_sink_options_are_positioned_errors(options: str, message: str) -> None:
    with pytest.raises(FlowcError) as err:
        _compile(options)
    text = err.value.format()
    assert message in text
    assert "job.sql:" in text and "^" in text


def test_an_updating_query_cannot_be_written_to_kafka() -> None:
    sql = SQL.replace("FROM TABLE(TUMBLE(TABLE clicks, DESCRIPTOR(ts), INTERVAL '5' SECOND))"
                      "\n  GROUP BY user_id, window_start, window_end",
                      "FROM clicks GROUP BY user_id").replace(", window_end\n", ", "
                                                              "MAX(ts)\n")
    with pytest.raises(FlowcError) as err:
        compile_sql(sql.format(options="'topic' = 'c', 'format' = 'csv'", src="in/",
                               monitor=MONITOR), "job.sql")
    assert "doesn't support consuming update changes" in err.value.format()


def test_a_bounded_job_writing_kafka_is_refused_naming_the_sink(tmp_path: Path) -> None:
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "a.csv").write_text("user_id,action,ts\nu1,click,1000\n")
    jg = _compile("'topic' = 'c', 'format' = 'csv'", str(tmp_path / "in"), "") \
        .env.get_job_graph()
    with pytest.raises(UnsupportedError) as err:
        run_reference(jg)
    assert "'kafka c: Writer' writes to Kafka; flowc writes Kafka from unbounded jobs only" \
        in err.value.format()
    assert "job.sql:7:" in err.value.format()


def _pyflink_sink(**kw: Any) -> Any:
    b = KafkaSink.builder().set_bootstrap_servers("b:9092")
    record = KafkaRecordSerializationSchema.builder().set_topic("words") \
        .set_value_serialization_schema(SimpleStringSchema())
    if kw.get("key"):
        record = record.set_key_serialization_schema(SimpleStringSchema())
    b = b.set_record_serializer(record.build()).set_property("linger.ms", "5")
    if "guarantee" in kw:
        b = b.set_delivery_guarantee(kw["guarantee"])
    return b.build()


def test_pyflink_kafka_sink_builder_maps_onto_sparks_writer() -> None:
    spec = _pyflink_sink(guarantee=DeliveryGuarantee.AT_LEAST_ONCE)
    assert kafka_sink_options(spec) == {"kafka.bootstrap.servers": "b:9092",
                                        "topic": "words", "kafka.linger.ms": "5"}
    assert kafka_messages(spec, ["a", "b c"]) == [(None, "a"), (None, "b c")]
    assert kafka_messages(_pyflink_sink(key=True), ["a"]) == [("a", "a")]
    with pytest.raises(ExecutionError, match="writes strings \\(SimpleStringSchema\\), got int"):
        kafka_messages(spec, [5])
    env = StreamExecutionEnvironment.get_execution_environment()
    env.from_collection(["a"]).sink_to(spec)
    names = [n.name for n in env.get_stream_graph().nodes.values()]
    assert "Sink: Writer" in names  # DataStream.sinkTo's name, as in Flink


def test_pyflink_kafka_sink_builder_checks_as_flink() -> None:
    with pytest.raises(ApiError, match="No value serializer is configured."):
        KafkaRecordSerializationSchema.builder().set_topic("t").build()
    with pytest.raises(ApiError, match="No topic selector is configured."):
        KafkaRecordSerializationSchema.builder() \
            .set_value_serialization_schema(SimpleStringSchema()).build()
    with pytest.raises(ApiError, match="EXACTLY_ONCE delivery guarantee requires a "
                                       "transactionalIdPrefix"):
        _pyflink_sink(guarantee=DeliveryGuarantee.EXACTLY_ONCE)
    with pytest.raises(ApiError, match="recordSerializer"):
        KafkaSink.builder().set_bootstrap_servers("b:9092").build()
    with pytest.raises(ApiError, match="EXACTLY_ONCE is not supported: Spark's Kafka writer "
                                       "is at least once"):
        KafkaSink.builder().set_bootstrap_servers("b:9092") \
            .set_delivery_guarantee(DeliveryGuarantee.EXACTLY_ONCE) \
            .set_transactional_id_prefix("x").build()


@pytest.mark.spark
def test_a_run_without_the_connector_jar_stops_before_any_batch(spark: Any,
                                                                tmp_path: Path) -> None:
    """The test environment has no spark-sql-kafka jar: the run stops with the sink's line
    and the exact --packages coordinates, before the query starts (no checkpoint)."""
    from flowc.executor.streaming.runner import run_streaming

    (tmp_path / "in").mkdir()
    jg = _compile("'topic' = 'c', 'format' = 'csv'", str(tmp_path / "in")).env.get_job_graph()
    with pytest.raises(ConfigError) as err:
        run_streaming(jg, checkpoint=str(tmp_path / "ck"))
    text = err.value.format()
    assert "job.sql:7:1: error: the Kafka connector is not on Spark's class path" in text
    assert f"--packages {kafka_packages()}" in text
    assert not (tmp_path / "ck" / "spark" / "offsets").exists()
