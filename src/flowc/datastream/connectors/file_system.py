"""``pyflink.datastream.connectors.file_system``: ``FileSource`` with the text-line stream
format, spelt as PyFlink spells it::

    source = FileSource.for_record_stream_format(StreamFormat.text_line_format(), path).build()
    env.from_source(source, WatermarkStrategy.no_watermarks(), "lines")

PyFlink's FileSink (row formats, OutputFileConfig, RollingPolicy), bulk formats and
continuous monitoring are not in flowc yet (docs/flink-differences.md); ``.flow`` / SQL file
sinks and ``flowc.datastream.FileSink`` write csv, json and parquet."""

from __future__ import annotations

from flowc.errors import ApiError
from flowc.operators import TextLineFileSource


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

    def build(self) -> TextLineFileSource:
        return TextLineFileSource(self._paths)


class FileSource:
    @staticmethod
    def for_record_stream_format(stream_format: StreamFormat, *paths: str) -> FileSourceBuilder:
        if not isinstance(stream_format, StreamFormat):
            raise ApiError(f"for_record_stream_format needs a StreamFormat, got {stream_format!r}")
        if not paths or not all(isinstance(p, str) for p in paths):
            raise ApiError("for_record_stream_format needs at least one path (a string)")
        return FileSourceBuilder(stream_format, tuple(paths))


__all__ = ["FileSource", "FileSourceBuilder", "StreamFormat"]
