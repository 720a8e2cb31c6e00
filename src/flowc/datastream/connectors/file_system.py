"""``pyflink.datastream.connectors.file_system``: ``FileSource`` with the text-line stream
format, spelt as PyFlink spells it::

    source = FileSource.for_record_stream_format(StreamFormat.text_line_format(), path).build()
    env.from_source(source, WatermarkStrategy.no_watermarks(), "lines")

and ``FileSink`` with a row format, as PyFlink spells it::

    sink = (FileSink.for_row_format(path, Encoder.simple_string_encoder())
            .with_output_file_config(OutputFileConfig.builder().with_part_prefix("p").build())
            .with_rolling_policy(RollingPolicy.default_rolling_policy(part_size=1 << 20))
            .with_bucket_assigner(BucketAssigner.base_path_bucket_assigner())
            .build())
    stream.sink_to(sink)

``monitor_continuously(Duration)`` makes a source unbounded (a directory watched for new
files). Bulk formats and compaction are not in flowc yet
(docs/flink-differences.md); ``.flow`` / SQL file sinks and ``flowc.datastream.FileSink``
write csv, json and parquet."""

from __future__ import annotations

import dataclasses
from typing import Any

from flowc.api.environment import user_call_span
from flowc.common.serialization import Encoder
from flowc.errors import ApiError
from flowc.operators import RowFormatFileSink, TextLineFileSource
from flowc.windowing import Duration


class StreamFormat:
    """A record format of a file source; flowc has PyFlink's ``text_line_format``."""

    def __init__(self, charset: str) -> None:
        self.charset = charset

    @staticmethod
    def text_line_format(charset_name: str = "UTF-8") -> StreamFormat:
        if charset_name.replace("-", "").upper() != "UTF8":
            raise _error(f"flowc reads text files as UTF-8, not {charset_name}")
        return StreamFormat("UTF-8")


class FileSourceBuilder:
    def __init__(self, stream_format: StreamFormat, paths: tuple[str, ...]) -> None:
        self._format = stream_format
        self._paths = paths
        self._monitor: int | None = None

    def monitor_continuously(self, discovery_interval: Duration) -> FileSourceBuilder:
        """Keep watching the paths for new files, listing them every ``discovery_interval``:
        the source becomes unbounded (Flink's CONTINUOUS_UNBOUNDED)."""
        if not isinstance(discovery_interval, Duration):
            raise ApiError("monitor_continuously needs a Duration, got "
                           f"{discovery_interval!r}")
        if discovery_interval.millis <= 0:
            # Flink's ContinuousEnumerationSettings check
            raise ApiError("discoveryInterval must be > 0")
        self._monitor = discovery_interval.millis
        return self

    def process_static_file_set(self) -> FileSourceBuilder:
        """Read the files there once (the default): a bounded source."""
        self._monitor = None
        return self

    def build(self) -> TextLineFileSource:
        return TextLineFileSource(self._paths, self._monitor)


class FileSource:
    @staticmethod
    def for_record_stream_format(stream_format: StreamFormat, *paths: str) -> FileSourceBuilder:
        if not isinstance(stream_format, StreamFormat):
            raise _error(f"for_record_stream_format needs a StreamFormat, got {stream_format!r}")
        if not paths or not all(isinstance(p, str) for p in paths):
            raise _error("for_record_stream_format needs at least one path (a string)")
        return FileSourceBuilder(stream_format, tuple(paths))


def _error(message: str) -> ApiError:
    """An API error at the user's call (file, line, column)."""
    return ApiError(message, user_call_span())


def _int(name: str, value: Any, minimum: int = 0) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise _error(f"{name} must be an int >= {minimum}, got {value!r}")
    return value


class BucketAssigner:
    """Which bucket directory a record goes to: the base path, or the processing time
    formatted (``DateTimeBucketAssigner``, the default)."""

    def __init__(self, format_str: str | None, timezone_id: str | None) -> None:
        self.format_str = format_str
        self.timezone_id = timezone_id

    @staticmethod
    def base_path_bucket_assigner() -> BucketAssigner:
        return BucketAssigner(None, None)

    @staticmethod
    def date_time_bucket_assigner(format_str: str = "yyyy-MM-dd--HH",
                                  timezone_id: str | None = None) -> BucketAssigner:
        from flowc.executor.runtime.row_files import _zone, strftime_pattern

        if not isinstance(format_str, str):
            raise _error(f"date_time_bucket_assigner needs a format string, got {format_str!r}")
        strftime_pattern(format_str)  # a pattern flowc cannot format fails here
        if timezone_id is not None:
            _zone(timezone_id)
        return BucketAssigner(format_str, timezone_id)


class RollingPolicy:
    """When a part file rolls: ``default_rolling_policy`` (size, age, inactivity) or
    ``on_checkpoint_rolling_policy`` (at the end of input only, in a bounded flowc run)."""

    def __init__(self, part_size: int, rollover_interval: int, inactivity_interval: int,
                 on_checkpoint: bool) -> None:
        self.part_size = part_size
        self.rollover_interval = rollover_interval
        self.inactivity_interval = inactivity_interval
        self.on_checkpoint = on_checkpoint

    @staticmethod
    def default_rolling_policy(part_size: int = 1024 * 1024 * 128,
                               rollover_interval: int = 60 * 1000,
                               inactivity_interval: int = 60 * 1000) -> DefaultRollingPolicy:
        return DefaultRollingPolicy(_int("part_size", part_size, 1),
                                    _int("rollover_interval", rollover_interval, 1),
                                    _int("inactivity_interval", inactivity_interval, 1), False)

    @staticmethod
    def on_checkpoint_rolling_policy() -> OnCheckpointRollingPolicy:
        return OnCheckpointRollingPolicy(0, 0, 0, True)


class DefaultRollingPolicy(RollingPolicy):
    pass


class OnCheckpointRollingPolicy(RollingPolicy):
    pass


class OutputFileConfig:
    """Part file names: ``<prefix>-<uuid>-<counter><suffix>``."""

    def __init__(self, part_prefix: str, part_suffix: str) -> None:
        self._prefix = part_prefix
        self._suffix = part_suffix

    @staticmethod
    def builder() -> OutputFileConfig.OutputFileConfigBuilder:
        return OutputFileConfig.OutputFileConfigBuilder()

    def get_part_prefix(self) -> str:
        return self._prefix

    def get_part_suffix(self) -> str:
        return self._suffix

    class OutputFileConfigBuilder:
        def __init__(self) -> None:
            self.part_prefix = "part"
            self.part_suffix = ""

        def with_part_prefix(self, prefix: str) -> OutputFileConfig.OutputFileConfigBuilder:
            if not isinstance(prefix, str):
                raise _error(f"with_part_prefix needs a string, got {prefix!r}")
            self.part_prefix = prefix
            return self

        def with_part_suffix(self, suffix: str) -> OutputFileConfig.OutputFileConfigBuilder:
            if not isinstance(suffix, str):
                raise _error(f"with_part_suffix needs a string, got {suffix!r}")
            self.part_suffix = suffix
            return self

        def build(self) -> OutputFileConfig:
            return OutputFileConfig(self.part_prefix, self.part_suffix)


class FileSink:
    """PyFlink's ``FileSink``: flowc has the row format with ``Encoder.simple_string_encoder``;
    ``build()`` gives the sink ``DataStream.sink_to`` takes."""

    class RowFormatBuilder:
        def __init__(self, spec: RowFormatFileSink) -> None:
            self._spec = spec

        def _with(self, **changes: Any) -> FileSink.RowFormatBuilder:
            self._spec = dataclasses.replace(self._spec, **changes)
            return self

        def with_bucket_check_interval(self, interval: int) -> FileSink.RowFormatBuilder:
            return self._with(bucket_check_interval=_int("bucket check interval", interval, 1))

        def with_bucket_assigner(self, bucket_assigner: BucketAssigner
                                 ) -> FileSink.RowFormatBuilder:
            if not isinstance(bucket_assigner, BucketAssigner):
                raise _error(f"with_bucket_assigner needs a BucketAssigner, got "
                               f"{bucket_assigner!r}")
            return self._with(bucket_format=bucket_assigner.format_str,
                              bucket_timezone=bucket_assigner.timezone_id)

        def with_output_file_config(self, output_file_config: OutputFileConfig
                                    ) -> FileSink.RowFormatBuilder:
            if not isinstance(output_file_config, OutputFileConfig):
                raise _error(f"with_output_file_config needs an OutputFileConfig, got "
                               f"{output_file_config!r}")
            return self._with(part_prefix=output_file_config.get_part_prefix(),
                              part_suffix=output_file_config.get_part_suffix())

        def with_rolling_policy(self, rolling_policy: RollingPolicy) -> FileSink.RowFormatBuilder:
            if not isinstance(rolling_policy, RollingPolicy):
                raise _error(f"with_rolling_policy needs a RollingPolicy, got "
                               f"{rolling_policy!r}")
            if rolling_policy.on_checkpoint:
                return self._with(on_checkpoint=True)
            return self._with(part_size=rolling_policy.part_size,
                              rollover_interval=rolling_policy.rollover_interval,
                              inactivity_interval=rolling_policy.inactivity_interval,
                              on_checkpoint=False)

        def build(self) -> RowFormatFileSink:
            return self._spec

    @staticmethod
    def for_row_format(base_path: str, encoder: Encoder) -> FileSink.RowFormatBuilder:
        if not isinstance(base_path, str) or not base_path:
            raise _error(f"for_row_format needs a base path (a string), got {base_path!r}")
        if not isinstance(encoder, Encoder):
            raise _error(f"for_row_format needs an Encoder "
                           f"(Encoder.simple_string_encoder()), got {encoder!r}")
        return FileSink.RowFormatBuilder(RowFormatFileSink(base_path))


__all__ = ["BucketAssigner", "DefaultRollingPolicy", "FileSink", "FileSource",
           "FileSourceBuilder", "OnCheckpointRollingPolicy", "OutputFileConfig",
           "RollingPolicy", "StreamFormat"]
