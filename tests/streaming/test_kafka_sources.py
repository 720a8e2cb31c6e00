"""Kafka: no broker can run here, so these test what flowc decides itself - Flink SQL's
'kafka' options and PyFlink's KafkaSource builder mapped onto Spark's Kafka source options,
the partition -> reader assignment (Flink's KafkaSourceEnumerator), value parsing, the
plan - and, with a real Spark run, the clear exit-1 error when the connector jar is
missing (the test environment has no spark-sql-kafka jar)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from flowc.common import SimpleStringSchema, WatermarkStrategy
from flowc.datastream import StreamExecutionEnvironment
from flowc.datastream.connectors.kafka import (
    KafkaOffsetsInitializer,
    KafkaSource,
    KafkaTopicPartition,
)
from flowc.errors import ApiError, ExecutionError, FlowcError
from flowc.executor.runtime import files
from flowc.executor.streaming.sources import (
    bad_rows,
    kafka_options,
    kafka_packages,
    kafka_split_owner,
    source_records,
)
from flowc.operators import KafkaSource as KafkaSpec
from flowc.sql import compile_sql
from flowc.transformations import RuntimeExecutionMode

SQL = """CREATE TABLE clicks (user_id STRING, n INT) WITH (
  'connector' = 'kafka', 'properties.bootstrap.servers' = 'b1:9092,b2:9092',
  {options});
SELECT user_id, n FROM clicks WHERE n > 1;
"""


def _sql_spec(options: str) -> KafkaSpec:
    sg = compile_sql(SQL.format(options=options), "job.sql").env.get_stream_graph()
    spec = sg.nodes[sg.source_ids[0]].operator
    assert isinstance(spec, KafkaSpec)
    return spec


@pytest.mark.parametrize("options, expected", [
    ("'topic' = 'clicks', 'format' = 'csv', 'scan.startup.mode' = 'earliest-offset'",
     {"subscribe": "clicks", "startingOffsets": "earliest"}),
    ("'topic' = 'a;b', 'value.format' = 'json', 'scan.startup.mode' = 'latest-offset'",
     {"subscribe": "a,b", "startingOffsets": "latest"}),
    ("'topic-pattern' = 'clicks-.*', 'format' = 'csv'",  # group-offsets, the default
     {"subscribePattern": "clicks-.*", "startingOffsets": "latest"}),
    ("'topic' = 'clicks', 'format' = 'csv', 'scan.startup.mode' = 'timestamp', "
     "'scan.startup.timestamp-millis' = '1700000000000'",
     {"subscribe": "clicks", "startingTimestamp": "1700000000000"}),
    ("'topic' = 'clicks', 'format' = 'csv', 'scan.startup.mode' = 'specific-offsets', "
     "'scan.startup.specific-offsets' = 'partition:0,offset:42;partition:1,offset:300'",
     {"subscribe": "clicks",
      "startingOffsets": json.dumps({"clicks": {"0": 42, "1": 300}}, sort_keys=True)}),
    ("'topic' = 'clicks', 'format' = 'csv', 'properties.group.id' = 'g1', "
     "'properties.security.protocol' = 'SSL', 'scan.startup.mode' = 'earliest-offset'",
     {"subscribe": "clicks", "startingOffsets": "earliest", "kafka.group.id": "g1",
      "kafka.security.protocol": "SSL"}),
])
def test_flink_sql_options_map_onto_sparks(options: str, expected: dict[str, str]) -> None:
    got = kafka_options(_sql_spec(options))
    assert got == {"kafka.bootstrap.servers": "b1:9092,b2:9092", "failOnDataLoss": "true",
                   **expected}


@pytest.mark.parametrize("options, message", [
    ("'format' = 'csv'", "needs 'topic' or 'topic-pattern'"),
    ("'topic' = 't', 'topic-pattern' = 't.*', 'format' = 'csv'",
     "Option 'topic' and 'topic-pattern' shouldn't be set together."),
    ("'topic' = 't', 'format' = 'avro'", "format 'avro' is not supported for 'kafka'"),
    ("'topic' = 't', 'format' = 'csv', 'scan.startup.mode' = 'earliest'",
     "'scan.startup.mode' 'earliest' is not one of"),
    ("'topic' = 't', 'format' = 'csv', 'scan.startup.mode' = 'timestamp'",
     "needs 'scan.startup.timestamp-millis'"),
    ("'topic' = 't', 'format' = 'csv', 'scan.startup.mode' = 'specific-offsets', "
     "'scan.startup.specific-offsets' = 'p0:42'", "Invalid properties 'p0:42'"),
    ("'topic' = 't', 'format' = 'csv', 'scan.startup.mod' = 'earliest-offset'",
     "table option 'scan.startup.mod' is not supported"),
])
def test_bad_kafka_tables_are_positioned_errors(options: str, message: str) -> None:
    with pytest.raises(FlowcError, match=message) as info:
        _sql_spec(options)
    assert info.value.span is not None and info.value.span.file == "job.sql"
    text = info.value.format()
    assert "job.sql:" in text and "^" in text


def test_the_sql_kafka_table_is_an_unbounded_source() -> None:
    env = compile_sql(SQL.format(options="'topic' = 'clicks', 'format' = 'csv'"),
                      "job.sql").env
    sg = env.get_stream_graph()
    assert sg.nodes[sg.source_ids[0]].name == "Source: clicks"
    assert sg.config.mode is RuntimeExecutionMode.STREAMING


def _builder() -> Any:
    return KafkaSource.builder().set_bootstrap_servers("b:9092").set_topics("t1", "t2") \
        .set_group_id("g").set_value_only_deserializer(SimpleStringSchema())


@pytest.mark.parametrize("start, expected", [
    (KafkaOffsetsInitializer.earliest(), {"startingOffsets": "earliest"}),
    (KafkaOffsetsInitializer.latest(), {"startingOffsets": "latest"}),
    (KafkaOffsetsInitializer.timestamp(1700000000000),
     {"startingTimestamp": "1700000000000"}),
    (KafkaOffsetsInitializer.committed_offsets(), {"startingOffsets": "latest"}),
    (KafkaOffsetsInitializer.offsets({KafkaTopicPartition("t1", 1): 5,
                                      KafkaTopicPartition("t2", 0): 7}),
     {"startingOffsets": json.dumps({"t1": {"1": 5}, "t2": {"0": 7}}, sort_keys=True)}),
])
def test_pyflink_kafka_source_builder_maps_onto_sparks_options(start: Any,
                                                               expected: dict[str, str]) -> None:
    spec = _builder().set_starting_offsets(start).set_property("fetch.min.bytes", "1").build()
    assert kafka_options(spec) == {"kafka.bootstrap.servers": "b:9092", "subscribe": "t1,t2",
                                   "kafka.group.id": "g", "kafka.fetch.min.bytes": "1",
                                   "failOnDataLoss": "true", **expected}
    pattern = KafkaSource.builder().set_bootstrap_servers("b:9092") \
        .set_topic_pattern("t.*").set_value_only_deserializer(SimpleStringSchema()).build()
    assert kafka_options(pattern)["subscribePattern"] == "t.*"


def test_pyflink_kafka_source_builder_checks_as_flink() -> None:
    with pytest.raises(ApiError, match="Property bootstrap.servers is required"):
        KafkaSource.builder().set_topics("t").build()
    with pytest.raises(ApiError, match="No subscribe mode is specified"):
        KafkaSource.builder().set_bootstrap_servers("b:1").build()
    with pytest.raises(ApiError, match="Deserialization schema is required"):
        KafkaSource.builder().set_bootstrap_servers("b:1").set_topics("t").build()
    with pytest.raises(ApiError, match="stopping offsets is not supported"):
        _builder().set_bounded(KafkaOffsetsInitializer.latest())


def test_pyflink_from_source_plans_a_string_stream_named_as_given() -> None:
    env = StreamExecutionEnvironment.get_execution_environment()
    env.from_source(_builder().build(), WatermarkStrategy.no_watermarks(), "Kafka Source") \
        .map(str.upper).print()
    sg = env.get_stream_graph()
    node = sg.nodes[sg.source_ids[0]]
    assert node.name == "Source: Kafka Source" and not node.operator.bounded
    assert sg.config.mode is RuntimeExecutionMode.STREAMING
    assert str(node.output_type) in ("String", "STRING", "Types.STRING()") or \
        "str" in str(node.output_type).lower()


def test_partitions_go_to_readers_as_flinks_enumerator_assigns_them() -> None:
    # KafkaSourceEnumerator.getSplitOwner: start = ((topic.hashCode() * 31) & 0x7FFFFFFF)
    # % readers, then partition p to (start + p) % readers. "clicks".hashCode() is
    # -1357714453 in Java.
    start = ((-1357714453 * 31) & 0x7FFFFFFF) % 3
    assert [kafka_split_owner("clicks", p, 3) for p in range(4)] == \
        [(start + p) % 3 for p in range(4)]
    assert {kafka_split_owner("t", p, 4) for p in range(4)} == {0, 1, 2, 3}


def test_message_values_parse_with_the_table_format_and_keep_their_timestamps() -> None:
    spec = _sql_spec("'topic' = 'clicks', 'format' = 'csv'")
    share = [("u1,1", 1000), ("u2,2", 2000)]
    assert list(source_records(spec, share, bad_rows(spec))) == [(("u1", 1), 1000),
                                                                 (("u2", 2), 2000)]
    with pytest.raises(ExecutionError, match="bad row in kafka clicks .*'u3,x'"):
        list(source_records(spec, [("u3,x", 3)], bad_rows(spec)))
    js = _sql_spec("'topic' = 'clicks', 'value.format' = 'json'")
    assert list(source_records(js, [('{"user_id": "u", "n": 4}', 5)], bad_rows(js))) == \
        [(("u", 4), 5)]
    text = _builder().build()
    assert bad_rows(text) is None
    assert list(source_records(text, [("a,b", 1)], None)) == [("a,b", 1)]
    assert isinstance(bad_rows(spec), files.BadRows)


@pytest.mark.spark
def test_a_run_without_the_connector_jar_is_a_clear_user_error(tmp_path: Path) -> None:
    """A real `flowc run` (its own Spark, without the jar): exit 1, the source's line,
    the missing connector and the exact --packages coordinates."""
    job = tmp_path / "job.sql"
    job.write_text(SQL.format(options="'topic' = 'clicks', 'format' = 'csv'"))
    src = str(Path(__file__).resolve().parents[2] / "src")
    proc = subprocess.run([sys.executable, "-m", "flowc.cli", "run", str(job)],
                          capture_output=True, text=True, timeout=300,
                          env={**__import__("os").environ, "PYTHONPATH": src})
    assert proc.returncode == 1, proc.stderr
    assert "Traceback" not in proc.stderr
    assert "job.sql:1:1: error: the Kafka connector is not on Spark's class path" \
        in proc.stderr
    assert f"--packages {kafka_packages()}" in proc.stderr
    assert kafka_packages().startswith("org.apache.spark:spark-sql-kafka-0-10_2.13:4.")
