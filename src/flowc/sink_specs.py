"""Typed sink specifications carried by sink transformations (split out of
flowc.operators, which re-exports them): what a sink writes and where; the executors
interpret them."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, eq=False)
class SinkSpec:
    @property
    def default_name(self) -> str:
        return "Sink"


@dataclass(frozen=True, eq=False)
class KafkaSink(SinkSpec):
    """Flink's Kafka sink (SQL ``'connector' = 'kafka'`` tables written to, PyFlink's
    ``KafkaSink``): each record one message of ``topic``, its value in ``format`` (``csv`` /
    ``json`` of ``columns`` typed ``types``; ``raw``: the record's string), its key the
    ``key_fields`` in ``key_format`` (none: no key). Written per micro-batch by Spark's Kafka
    writer, at least once (``executor/streaming/kafka_sink.py``)."""

    bootstrap_servers: str
    topic: str
    format: str = "raw"
    columns: tuple[str, ...] = ()
    types: tuple[str, ...] = ()
    key_fields: tuple[str, ...] = ()
    key_format: str | None = None
    value_fields: tuple[str, ...] = ()  # 'value.fields-include' = 'EXCEPT_KEY': not the key
    delivery_guarantee: str = "at-least-once"
    properties: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True, eq=False)
class PrintSink(SinkSpec):
    """Flink's print: ``<subtask+1>> record`` when parallelism > 1, else ``record``."""

    sink_identifier: str | None = None
    stderr: bool = False
    # The stream's declared type (a flowc.common TypeInformation): records print as PyFlink
    # prints them (``(a,1)``, ``+I[a,1]``); anything else prints with ``str()``.
    record_type: Any = None

    @property
    def default_name(self) -> str:
        return "Print to Std. Out" if not self.stderr else "Print to Std. Err"


@dataclass(frozen=True, eq=False)
class DiscardingSink(SinkSpec):
    @property
    def default_name(self) -> str:
        return "Sink"


@dataclass(frozen=True, eq=False)
class CollectSink(SinkSpec):
    """Records returned to the driver (REPL, tests): ``env.execute()`` result by ``name``."""

    name: str = "collect"

    @property
    def default_name(self) -> str:
        return "Collect Sink"


DEFAULT_PARTITION = "__DEFAULT_PARTITION__"  # Flink's 'partition.default-name'


@dataclass(frozen=True, eq=False)
class FileSink(SinkSpec):
    path: str
    format: str
    columns: Sequence[str] = ()
    options: tuple[tuple[str, str], ...] = ()
    # Hive-style partition directories (``dt=2024-05-01/``), as Flink's filesystem sink:
    # these columns name the directories and are left out of the files
    partition_by: tuple[str, ...] = ()
    success_file: str | None = None  # an empty file written into each partition directory
    default_partition: str = DEFAULT_PARTITION  # the directory of a null / blank value

    @property
    def default_name(self) -> str:
        return f"{self.format} {self.path}"


@dataclass(frozen=True, eq=False)
class RowFormatFileSink(SinkSpec):
    """PyFlink's ``FileSink.for_row_format(path, Encoder.simple_string_encoder())``: each
    record's Java ``toString()`` (under the stream's declared type) on a line of its own, in
    part files ``<prefix>-<uuid>-<counter><suffix>`` of bucket directories under ``path``
    (flowc.executor.runtime.row_files). ``bucket_format`` is a ``DateTimeBucketAssigner``
    pattern (None: ``BasePathBucketAssigner``); a part file rolls before a record when it
    holds more than ``part_size`` bytes, or on processing time (``rollover_interval`` /
    ``inactivity_interval`` milliseconds, checked every ``bucket_check_interval``) unless
    ``on_checkpoint`` (OnCheckpointRollingPolicy: only at the end of input)."""

    path: str
    part_prefix: str = "part"
    part_suffix: str = ""
    part_size: int = 128 * 1024 * 1024
    rollover_interval: int = 60_000
    inactivity_interval: int = 60_000
    on_checkpoint: bool = False
    bucket_format: str | None = "yyyy-MM-dd--HH"
    bucket_timezone: str | None = None
    bucket_check_interval: int = 60_000

    @property
    def default_name(self) -> str:
        return "Sink"  # DataStream.sinkTo's transformation name
