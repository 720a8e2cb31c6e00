"""The Kafka sink on the streaming executor: each micro-batch's records as (key, value)
messages, written by Spark's Kafka writer (``DataFrame.write.format("kafka")``) inside the
job's one query, when the runner commits the batch.

Spark's Kafka writer is at least once (a task retried, or a kill between the write and the
batch's commit marker, writes the batch's messages again; Spark's docs say so and offer no
transactional writer), so the sink is at least once where flowc's file sinks are exactly
once (docs/flink-differences.md, "Kafka").
"""

from __future__ import annotations

import csv
import datetime as dt
import io
import json
from collections.abc import Callable
from typing import Any

from flowc.errors import ConfigError, ExecutionError, Span
from flowc.operators import KafkaSink

MISSING = "Failed to find data source: kafka"


def kafka_sink_options(spec: KafkaSink) -> dict[str, str]:
    """Flink's sink settings as Spark's Kafka sink options (``properties.*`` become
    ``kafka.*``)."""
    out = {"kafka.bootstrap.servers": spec.bootstrap_servers, "topic": spec.topic}
    for key, value in spec.properties:
        if key != "bootstrap.servers":
            out[f"kafka.{key}"] = value
    return out


def _timestamp(ms: int) -> str:
    """Flink's csv / json TIMESTAMP(3) text ('SQL' standard: ``2024-01-01 10:00:03.250``)."""
    t = dt.datetime(1970, 1, 1) + dt.timedelta(milliseconds=ms)
    return t.strftime("%Y-%m-%d %H:%M:%S.%f")[:-3]


def _cell(value: Any, type_name: str) -> Any:
    if value is None:
        return None
    if type_name == "timestamp" and isinstance(value, int) and not isinstance(value, bool):
        return _timestamp(value)
    if isinstance(value, dt.datetime):
        return value.strftime("%Y-%m-%d %H:%M:%S.%f")[:-3]
    return value


def _csv_line(values: list[Any]) -> str:
    """Flink's csv format: no header, null as an empty field, booleans true / false."""
    buf = io.StringIO()
    csv.writer(buf, lineterminator="").writerow(
        ["" if v is None else ("true" if v else "false") if isinstance(v, bool) else v
         for v in values])
    return buf.getvalue()


def _encoder(fmt: str | None, fields: tuple[str, ...], spec: KafkaSink
             ) -> Callable[[Any], str]:
    """A record -> the message text of ``fields`` in ``fmt`` (raw: the record's string)."""
    if fmt == "raw":
        def raw(record: Any) -> str:
            if not isinstance(record, str):
                # Flink's SimpleStringSchema is a SerializationSchema<String>
                raise ExecutionError(f"the Kafka sink of topic '{spec.topic}' writes strings "
                                     f"(SimpleStringSchema), got {type(record).__name__} "
                                     f"{record!r}")
            return record
        return raw
    index = {c: i for i, c in enumerate(spec.columns)}
    picks = [(f, index[f], spec.types[index[f]] if spec.types else "") for f in fields]

    def row_of(record: Any) -> list[Any]:
        row = tuple(record) if isinstance(record, (tuple, list)) else (record,)
        if len(row) != len(spec.columns):
            raise ExecutionError(f"the Kafka sink of topic '{spec.topic}' writes "
                                 f"{len(spec.columns)} columns ({', '.join(spec.columns)}), "
                                 f"got {record!r}")
        return [_cell(row[i], t) for _, i, t in picks]
    if fmt == "json":
        names = [f for f, _, _ in picks]
        return lambda r: json.dumps(dict(zip(names, row_of(r))), separators=(",", ":"),
                                    ensure_ascii=False)
    return lambda r: _csv_line(row_of(r))


def kafka_messages(spec: KafkaSink, records: list[Any]) -> list[tuple[str | None, str]]:
    """The (key, value) messages of a batch's records, in their order."""
    value = _encoder(spec.format, spec.value_fields or spec.columns, spec)
    if spec.key_format is None:
        return [(None, value(r)) for r in records]
    key = _encoder(spec.key_format, spec.key_fields, spec)
    return [(key(r), value(r)) for r in records]


def missing_connector(span: Span | None) -> ConfigError:
    """The error of a Kafka source or sink without Spark's connector on the class path."""
    from flowc.executor.streaming.sources import kafka_packages

    return ConfigError(
        "the Kafka connector is not on Spark's class path (Spark's 'kafka' data source "
        "is missing)", span,
        hint=f"run with `flowc run --packages {kafka_packages()} ...` (the same as "
             f"--conf spark.jars.packages={kafka_packages()}), or give the jar and its "
             "kafka-clients dependency with --jars / spark.jars")


def check_connector(spark: Any, span: Span | None) -> None:
    """Fail before the first micro-batch when Spark has no 'kafka' data source (asks
    Spark's own lookup, which the writer uses)."""
    jvm = spark._jvm
    try:
        jvm.org.apache.spark.sql.execution.datasources.DataSource.lookupDataSource(
            "kafka", spark._jsparkSession.sessionState().conf())
    except Exception as e:  # noqa: BLE001 - py4j's error carries Spark's message
        if MISSING in str(e):
            raise missing_connector(span) from None
        raise


def write_kafka(spark: Any, spec: KafkaSink, records: list[Any], span: Span | None = None
                ) -> None:
    """Write a micro-batch's records (no job when there are none); a failed write (a
    broker unreachable, a topic refused) is a user error naming the sink's topic."""
    if not records:
        return
    from pyspark.sql import types as T  # noqa: N812

    schema = T.StructType([T.StructField("key", T.StringType()),
                           T.StructField("value", T.StringType())])
    writer = spark.createDataFrame(kafka_messages(spec, records), schema).write.format("kafka")
    for k, v in kafka_sink_options(spec).items():
        writer = writer.option(k, v)
    try:
        writer.save()
    except Exception as e:  # noqa: BLE001 - Spark's error, reworded
        reason = str(e).strip().split("\n", 1)[0].split(" SQLSTATE:", 1)[0]
        raise ExecutionError(f"writing to Kafka topic '{spec.topic}' failed: {reason}",
                             span) from None
