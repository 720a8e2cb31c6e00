"""``pyflink.datastream.connectors.kafka``: the Kafka source.

``KafkaSource.builder().set_bootstrap_servers(...).set_topics(...)
.set_group_id(...).set_starting_offsets(KafkaOffsetsInitializer.earliest())
.set_value_only_deserializer(SimpleStringSchema()).build()`` gives an unbounded source of
the message values as strings; ``env.from_source(source, strategy, name)`` reads it on the
streaming executor through Spark's Kafka connector (the jar comes with ``--packages``; the
option mapping: ``flowc.executor.streaming.sources.kafka_options``). Records carry their
Kafka timestamps, as in Flink. Absent: bounded reading (``set_bounded``), deserializers
other than ``SimpleStringSchema``, the Kafka sink.
"""

from __future__ import annotations

from typing import Any

from flowc.common.serialization import SimpleStringSchema
from flowc.errors import ApiError
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


__all__ = ["KafkaOffsetResetStrategy", "KafkaOffsetsInitializer", "KafkaSource",
           "KafkaSourceBuilder", "KafkaTopicPartition"]
