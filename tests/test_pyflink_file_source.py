"""PyFlink's FileSource with the text-line format (flowc.datastream.connectors.file_system)."""

from __future__ import annotations

from pathlib import Path

import pytest

from flowc.common import WatermarkStrategy
from flowc.datastream import CollectSink, StreamExecutionEnvironment
from flowc.datastream.connectors.file_system import FileSource, StreamFormat
from flowc.errors import ApiError, FlowcError
from flowc.executor import run_reference
from flowc.executor.runtime.sources import read_lines, text_files
from flowc.operators import TextLineFileSource


def _tree(tmp_path: Path) -> Path:
    (tmp_path / "d" / "sub").mkdir(parents=True)
    (tmp_path / "d" / "b.txt").write_bytes(b"one\r\ntwo\rthree\n\nfour")
    (tmp_path / "d" / "sub" / "a.txt").write_bytes("caf\u00e9\n".encode())
    (tmp_path / "d" / ".hidden").write_text("no\n")
    (tmp_path / "d" / "_SUCCESS").write_text("no\n")
    (tmp_path / "d" / "_tmp").mkdir()
    (tmp_path / "d" / "_tmp" / "x.txt").write_text("no\n")
    return tmp_path / "d"


def test_lines_end_as_javas_readline_and_hidden_files_are_skipped(tmp_path: Path) -> None:
    d = _tree(tmp_path)
    assert list(read_lines(str(d / "b.txt"))) == ["one", "two", "three", "", "four"]
    files = text_files(TextLineFileSource((str(d),)))
    assert [Path(f).relative_to(d).as_posix() for f in files] == ["b.txt", "sub/a.txt"]


def test_file_source_reads_every_line_once_across_readers(tmp_path: Path) -> None:
    d = _tree(tmp_path)
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(2)
    source = FileSource.for_record_stream_format(StreamFormat.text_line_format(), str(d)).build()
    stream = env.from_source(source, WatermarkStrategy.no_watermarks(), "lines")
    assert stream.get_type() is not None  # Strings, as Flink's TextLineInputFormat
    stream.sink_to(CollectSink("out"))
    out = run_reference(env.get_job_graph()).collected["out"]
    assert sorted(out) == sorted(["one", "two", "three", "", "four", "caf\u00e9"])


def test_missing_path_and_bad_arguments_are_user_errors(tmp_path: Path) -> None:
    env = StreamExecutionEnvironment.get_execution_environment()
    source = FileSource.for_record_stream_format(StreamFormat.text_line_format(),
                                                 str(tmp_path / "nope")).build()
    env.from_source(source, WatermarkStrategy.no_watermarks(), "lines").sink_to(CollectSink("o"))
    with pytest.raises(FlowcError, match="does not exist"):
        run_reference(env.get_job_graph())
    with pytest.raises(ApiError, match="at least one path"):
        FileSource.for_record_stream_format(StreamFormat.text_line_format())
    with pytest.raises(ApiError, match="UTF-8"):
        StreamFormat.text_line_format("ISO-8859-1")
