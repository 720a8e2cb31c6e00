"""``pyflink.datastream.connectors.file_system``: ``FileSource`` with the text-line stream
format, spelt as PyFlink spells it::

    source = FileSource.for_record_stream_format(StreamFormat.text_line_format(), path).build()
    env.from_source(source, WatermarkStrategy.no_watermarks(), "lines")

``monitor_continuously(Duration)`` makes it unbounded (a directory watched for new files).
PyFlink's FileSink (row formats, OutputFileConfig, RollingPolicy) and bulk formats are not
in flowc yet (docs/flink-differences.md); ``.flow`` / SQL file
sinks and ``flowc.datastream.FileSink`` write csv, json and parquet."""

from __future__ import annotations

from flowc.errors import ApiError
from flowc.operators import TextLineFileSource
from flowc.windowing import Duration


class StreamFormat:
    """A record format of a file source; flowc has PyFlink's ``text_line_format``."""

    def __init__(self, charset: str) -> None:
        self.charset = charset

    @staticmethod
    def text_line_format(charset_name: str = "UTF-8") -> StreamFormat:
        if charset_name.replace("-", "").upper() != "UTF8":
            raise ApiError(f"flowc reads text files as UTF-8, not {charset_name}")
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
            raise ApiError(f"for_record_stream_format needs a StreamFormat, got {stream_format!r}")
        if not paths or not all(isinstance(p, str) for p in paths):
            raise ApiError("for_record_stream_format needs at least one path (a string)")
        return FileSourceBuilder(stream_format, tuple(paths))


__all__ = ["FileSource", "FileSourceBuilder", "StreamFormat"]
