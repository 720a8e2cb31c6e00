"""``pyflink.datastream.connectors.kafka``: the Kafka source and sink.

``KafkaSource.builder().set_bootstrap_servers(...).set_topics(...)
.set_group_id(...).set_starting_offsets(KafkaOffsetsInitializer.earliest())
.set_value_only_deserializer(SimpleStringSchema()).build()`` gives an unbounded source of
the message values as strings; ``env.from_source(source, strategy, name)`` reads it on the
streaming executor through Spark's Kafka connector (the jar comes with ``--packages``; the
option mapping: ``flowc.executor.streaming.sources.kafka_options``). Records carry their
Kafka timestamps, as in Flink. Absent: bounded reading (``set_bounded``), deserializers
other than ``SimpleStringSchema``.

``KafkaSink.builder().set_bootstrap_servers(...).set_record_serializer(
KafkaRecordSerializationSchema.builder().set_topic(...).set_value_serialization_schema(
SimpleStringSchema()).build()).build()`` with ``ds.sink_to(sink)`` writes each string record
as one message (its key, with ``set_key_serialization_schema(SimpleStringSchema())``, the
same string), per micro-batch through Spark's Kafka writer: at least once
(``set_delivery_guarantee(DeliveryGuarantee.EXACTLY_ONCE)`` is refused, Spark's writer has
no transactions; ``flowc.executor.streaming.kafka_sink``).
"""

from __future__ import annotations

from typing import Any

from flowc.common.serialization import SimpleStringSchema
from flowc.datastream.connectors.base import DeliveryGuarantee
from flowc.errors import ApiError
from flowc.operators import KafkaSink as KafkaSinkSpec
from flowc.operators import KafkaSource as KafkaSourceSpec


def _error(message: str) -> ApiError:
    from flowc.api.environment import user_call_span

    return ApiError(message, user_call_span())


class KafkaTopicPartition:
    def __init__(self, topic: str, partition: int) -> None:
        self.topic = topic
        self.partition = partition


class KafkaOffsetResetStrategy:
    """Where a group without committed offsets starts (``committed_offsets``'s argument)."""

    LATEST = "latest"
    EARLIEST = "earliest"
    NONE = "none"


class KafkaOffsetsInitializer:
    """Where the source starts: Flink SQL's ``scan.startup.mode`` values."""

    def __init__(self, mode: str, timestamp: int | None = None,
                 offsets: tuple[tuple[str, int, int], ...] = ()) -> None:
        self.mode = mode
        self.timestamp = timestamp
        self.offsets = offsets

    @staticmethod
    def earliest() -> KafkaOffsetsInitializer:
        return KafkaOffsetsInitializer("earliest-offset")

    @staticmethod
    def latest() -> KafkaOffsetsInitializer:
        return KafkaOffsetsInitializer("latest-offset")

    @staticmethod
    def timestamp(timestamp: int) -> KafkaOffsetsInitializer:
        if isinstance(timestamp, bool) or not isinstance(timestamp, int) or timestamp < 0:
            raise _error(f"timestamp() needs milliseconds since the epoch, got {timestamp!r}")
        return KafkaOffsetsInitializer("timestamp", timestamp)

    @staticmethod
    def committed_offsets(offset_reset_strategy: str = KafkaOffsetResetStrategy.NONE
                          ) -> KafkaOffsetsInitializer:
        if offset_reset_strategy == KafkaOffsetResetStrategy.EARLIEST:
            # Spark's source has no committed-offsets start: state the difference.
            raise _error("committed_offsets(EARLIEST) is not supported (Spark's Kafka source "
                         "does not read a group's committed offsets); use earliest()")
        return KafkaOffsetsInitializer("group-offsets")

    @staticmethod
    def offsets(offsets: dict[KafkaTopicPartition, int]) -> KafkaOffsetsInitializer:
        if not isinstance(offsets, dict) or not all(
                isinstance(k, KafkaTopicPartition) for k in offsets):
            raise _error("offsets() needs a dict of KafkaTopicPartition -> offset")
        return KafkaOffsetsInitializer("specific-offsets", None, tuple(sorted(
            (k.topic, k.partition, int(v)) for k, v in offsets.items())))


class KafkaSourceBuilder:
    def __init__(self) -> None:
        self._servers: str | None = None
        self._topics: tuple[str, ...] = ()
        self._pattern: str | None = None
        self._group: str | None = None
        self._start = KafkaOffsetsInitializer.committed_offsets()
        self._deserializer: Any = None
        self._properties: dict[str, str] = {}

    def set_bootstrap_servers(self, bootstrap_servers: str) -> KafkaSourceBuilder:
        self._servers = bootstrap_servers
        return self

    def set_topics(self, *topics: str) -> KafkaSourceBuilder:
        self._topics = tuple(topics)
        return self

    def set_topic_pattern(self, topic_pattern: str) -> KafkaSourceBuilder:
        self._pattern = topic_pattern
        return self

    def set_group_id(self, group_id: str) -> KafkaSourceBuilder:
        self._group = group_id
        return self

    def set_starting_offsets(self, starting_offsets_initializer: KafkaOffsetsInitializer
                             ) -> KafkaSourceBuilder:
        if not isinstance(starting_offsets_initializer, KafkaOffsetsInitializer):
            raise _error("set_starting_offsets needs a KafkaOffsetsInitializer, got "
                         f"{starting_offsets_initializer!r}")
        self._start = starting_offsets_initializer
        return self

    def set_unbounded(self, stopping_offsets_initializer: Any) -> KafkaSourceBuilder:
        raise _error("a Kafka source with stopping offsets is not supported (flowc reads "
                     "Kafka unbounded only)")

    set_bounded = set_unbounded

    def set_value_only_deserializer(self, deserialization_schema: Any) -> KafkaSourceBuilder:
        if not isinstance(deserialization_schema, SimpleStringSchema):
            raise _error("flowc's Kafka source reads values with SimpleStringSchema only, got "
                         f"{deserialization_schema!r}")
        self._deserializer = deserialization_schema
        return self

    def set_property(self, key: str, value: str) -> KafkaSourceBuilder:
        self._properties[str(key)] = str(value)
        return self

    def set_properties(self, props: dict[str, str]) -> KafkaSourceBuilder:
        for k, v in props.items():
            self.set_property(k, v)
        return self

    def set_client_id_prefix(self, prefix: str) -> KafkaSourceBuilder:
        return self.set_property("client.id.prefix", prefix)

    def build(self) -> KafkaSourceSpec:
        # Flink's KafkaSourceBuilder.sanityCheck texts
        servers = self._servers or self._properties.get("bootstrap.servers")
        if servers is None:
            raise _error("Property bootstrap.servers is required but not provided")
        if not self._topics and self._pattern is None:
            raise _error("No subscribe mode is specified, should be one of topics, topic "
                         "pattern and partition set.")
        if self._topics and self._pattern is not None:
            raise _error("Cannot use topics for consumption because topic pattern is already "
                         "set for consumption.")
        if self._deserializer is None:
            raise _error("Deserialization schema is required but not provided.")
        props = {k: v for k, v in self._properties.items()
                 if k not in ("bootstrap.servers", "group.id")}
        return KafkaSourceSpec(servers, self._topics, self._pattern,
                               self._group or self._properties.get("group.id"),
                               self._start.mode, self._start.timestamp, self._start.offsets,
                               properties=tuple(sorted(props.items())))


class KafkaSource:
    @staticmethod
    def builder() -> KafkaSourceBuilder:
        return KafkaSourceBuilder()


class KafkaRecordSerializationSchema:
    """What a record becomes: the topic and the value's (and key's) serialization schema."""

    def __init__(self, topic: str, key: bool) -> None:
        self.topic = topic
        self.key = key

    @staticmethod
    def builder() -> KafkaRecordSerializationSchemaBuilder:
        return KafkaRecordSerializationSchemaBuilder()


class KafkaRecordSerializationSchemaBuilder:
    def __init__(self) -> None:
        self._topic: str | None = None
        self._value: Any = None
        self._key: Any = None

    def set_topic(self, topic: str) -> KafkaRecordSerializationSchemaBuilder:
        self._topic = topic
        return self

    def set_topic_selector(self, topic_selector: Any) -> KafkaRecordSerializationSchemaBuilder:
        raise _error("a topic selector is not supported: flowc's Kafka sink writes one "
                     "topic (set_topic)")

    def _string_schema(self, schema: Any, what: str) -> Any:
        if not isinstance(schema, SimpleStringSchema):
            raise _error(f"flowc's Kafka sink writes {what}s with SimpleStringSchema only, "
                         f"got {schema!r}")
        return schema

    def set_value_serialization_schema(self, value_serialization_schema: Any
                                       ) -> KafkaRecordSerializationSchemaBuilder:
        self._value = self._string_schema(value_serialization_schema, "value")
        return self

    def set_key_serialization_schema(self, key_serialization_schema: Any
                                     ) -> KafkaRecordSerializationSchemaBuilder:
        self._key = self._string_schema(key_serialization_schema, "key")
        return self

    def build(self) -> KafkaRecordSerializationSchema:
        # KafkaRecordSerializationSchemaBuilder.build's checks, in its order and words
        if self._value is None:
            raise _error("No value serializer is configured.")
        if self._topic is None:
            raise _error("No topic selector is configured.")
        return KafkaRecordSerializationSchema(self._topic, self._key is not None)


class KafkaSinkBuilder:
    def __init__(self) -> None:
        self._servers: str | None = None
        self._serializer: KafkaRecordSerializationSchema | None = None
        self._guarantee = DeliveryGuarantee.NONE  # Flink's KafkaSinkBuilder default
        self._prefix: str | None = None
        self._properties: dict[str, str] = {}

    def set_bootstrap_servers(self, bootstrap_servers: str) -> KafkaSinkBuilder:
        self._servers = bootstrap_servers
        return self

    def set_record_serializer(self, record_serializer: KafkaRecordSerializationSchema
                              ) -> KafkaSinkBuilder:
        if not isinstance(record_serializer, KafkaRecordSerializationSchema):
            raise _error("set_record_serializer needs a KafkaRecordSerializationSchema, got "
                         f"{record_serializer!r}")
        self._serializer = record_serializer
        return self

    def set_delivery_guarantee(self, delivery_guarantee: DeliveryGuarantee
                               ) -> KafkaSinkBuilder:
        if not isinstance(delivery_guarantee, DeliveryGuarantee):
            raise _error(f"set_delivery_guarantee needs a DeliveryGuarantee, got "
                         f"{delivery_guarantee!r}")
        self._guarantee = delivery_guarantee
        return self

    def set_transactional_id_prefix(self, transactional_id_prefix: str) -> KafkaSinkBuilder:
        self._prefix = transactional_id_prefix
        return self

    def set_property(self, key: str, value: str) -> KafkaSinkBuilder:
        self._properties[str(key)] = str(value)
        return self

    def build(self) -> KafkaSinkSpec:
        # Flink's KafkaSinkBuilder.sanityCheck, in its order and words
        servers = self._servers or self._properties.get("bootstrap.servers")
        if servers is None:
            raise _error("bootstrapServers")
        if self._guarantee is DeliveryGuarantee.EXACTLY_ONCE:
            if self._prefix is None:
                raise _error("EXACTLY_ONCE delivery guarantee requires a transactionalIdPrefix "
                             "to be set to provide unique transaction names across multiple "
                             "KafkaSinks writing to the same Kafka cluster.")
            raise _error("DeliveryGuarantee.EXACTLY_ONCE is not supported: Spark's Kafka "
                         "writer is at least once; use DeliveryGuarantee.AT_LEAST_ONCE")
        if self._serializer is None:
            raise _error("recordSerializer")
        props = tuple(sorted((k, v) for k, v in self._properties.items()
                             if k != "bootstrap.servers"))
        return KafkaSinkSpec(servers, self._serializer.topic, "raw",
                             key_format="raw" if self._serializer.key else None,
                             delivery_guarantee=self._guarantee.value, properties=props)


class KafkaSink:
    @staticmethod
    def builder() -> KafkaSinkBuilder:
        return KafkaSinkBuilder()


__all__ = ["DeliveryGuarantee", "KafkaOffsetResetStrategy", "KafkaOffsetsInitializer",
           "KafkaRecordSerializationSchema", "KafkaRecordSerializationSchemaBuilder",
           "KafkaSink", "KafkaSinkBuilder", "KafkaSource", "KafkaSourceBuilder",
           "KafkaTopicPartition"]
