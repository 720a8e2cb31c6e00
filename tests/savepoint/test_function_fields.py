"""A user function's plain fields: they live as long as the task in Flink, so across the
streaming executor's micro-batches; a savepoint keeps them as per-subtask operator state
(state name ``attributes``, a documented difference: Flink saves only registered state) and
a restored job continues with them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from flowc.common import WatermarkStrategy
from flowc.datastream import Duration, StreamExecutionEnvironment
from flowc.datastream.connectors.file_system import FileSource, StreamFormat
from flowc.datastream.functions import MapFunction
from flowc.savepoint.restore import restore_savepoint
from flowc.savepoint.take import take_savepoint
from streaming.harness import Progress, run_feeding

pytestmark = pytest.mark.spark


def _env(directory: Path) -> StreamExecutionEnvironment:
    class Numbered(MapFunction):  # local: shipped to Spark's workers by value
        def __init__(self) -> None:
            self.n = 0

        def map(self, value: Any) -> str:
            self.n += 1
            return f"{self.n}:{value}"

    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(1)
    source = FileSource.for_record_stream_format(StreamFormat.text_line_format(),
                                                 str(directory)) \
        .monitor_continuously(Duration.of_millis(100)).build()
    env.from_source(source, WatermarkStrategy.no_watermarks(), "lines") \
        .map(Numbered()).print()
    return env


def _run(env: StreamExecutionEnvironment, ckpt: Path, land: list[tuple[Path, str]],
         base: int = 0) -> None:
    """Land the files one micro-batch after another, then stop."""
    def feed(progress: Progress) -> None:
        for n, (path, text) in enumerate(land, base + 1):
            path.write_text(text)
            progress.files(n)
    run_feeding(env.get_job_graph(), ckpt, feed)


def test_fields_persist_across_batches_and_savepoints(tmp_path: Path,
                                                      capsys: pytest.CaptureFixture[str]
                                                      ) -> None:
    src = tmp_path / "in"
    src.mkdir()
    env = _env(src)
    _run(env, tmp_path / "ck1", [(src / "a.txt", "a\nb\nc\n"), (src / "b.txt", "d\ne\n")])
    assert capsys.readouterr().out.split() == ["1:a", "2:b", "3:c", "4:d", "5:e"]

    graph = env.get_execution_graph()
    take_savepoint(str(tmp_path / "ck1"), graph, "prog", str(tmp_path / "sp"))
    meta = json.loads((tmp_path / "sp" / "_metadata.json").read_text())
    numbered = next(o for o in meta["operators"] if o["name"] == "Map")
    assert numbered["state_names"] == ["attributes"] and not numbered["keyed"]

    env2 = _env(src)
    restored = restore_savepoint(str(tmp_path / "sp"), env2.get_execution_graph(), "prog",
                                 str(tmp_path / "ck2"), False)
    assert restored is not None and restored.files_read == 2
    _run(env2, tmp_path / "ck2", [(src / "c.txt", "f\ng\n")], base=2)
    assert capsys.readouterr().out.split() == ["6:f", "7:g"]  # a.txt, b.txt not reread
