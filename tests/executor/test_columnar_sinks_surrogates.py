"""A lone surrogate in a json string (``"\\ud800"``) is read as ``?`` by both executors -
what Flink's sinks write for the Java String Jackson reads (Java's UTF-8 encoder writes
``?`` for it) - so the columnar executor no longer fails converting it to Arrow, and print,
collect and file sinks agree."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from flowc.executor import run_job_graph, run_reference
from flowc.executor.runtime import files
from flowc.operators import CollectSink, FileSource
from flowc.parser import compile_source

LINES = [r'{"k":"a","s":"\ud800","t":["x\udfffy","\ud83d\ude00"]}',
         r'{"k":"b","s":"\ude00\ud83d","t":null}',
         r'{"k":"c","s":"\\ud800 is text","t":["\u00fc"]}',
         r'{"k":"d","s":"fine","t":[]}']
WANT = [("a", "?", ["x?y", "\U0001F600"]), ("b", "??", None), ("c", "\\ud800 is text", ["ü"]),
        ("d", "fine", [])]


def _data(where: Path) -> Path:
    path = where / "in.json"
    path.write_text("\n".join(LINES) + "\n")
    return path


def test_row_reader_reads_a_lone_surrogate_as_question_mark(tmp_path: Path) -> None:
    path = _data(tmp_path)
    spec = FileSource(str(path), "json", (("k", "string"), ("s", "string"),
                                          ("t", "array<string>")), ())
    [split] = files.plan_splits("json", files.list_files(str(path)), 1)
    bad = files.BadRows(spec)
    assert list(files.read_local(spec, [split], bad)) == [tuple(w) for w in WANT]
    assert not bad.lines


@pytest.mark.spark
def test_both_executors_and_the_sinks_agree(spark: Any, tmp_path: Path) -> None:
    data = _data(tmp_path)

    def run(executor: str) -> tuple[Any, bytes]:
        out = tmp_path / f"out-{executor}"
        text = (f"set parallelism = 2;\nsource src (k string, s string, t array<string>) "
                f"from json '{data}';\nlet result = src | map k, s, t;\n"
                f"result | map k, s | write csv '{out}';\n")
        script = compile_source(text, str(tmp_path / "job.flow"),
                                options={"mode": "batch", "flowc.executor": executor})
        script.streams["result"].stream.sink_to(CollectSink("result"))
        jg = script.env.get_job_graph()
        result = run_job_graph(jg) if executor == "columnar" else run_reference(jg)
        written = b"".join(f.read_bytes() for f in sorted(out.glob("part-*")))
        return result.collected["result"], written
    got, written = run("columnar")
    want, reference_written = run("row")
    assert got == want == WANT
    assert written.decode("utf-8").splitlines() == \
        reference_written.decode("utf-8").splitlines() == \
        ["k,s", "a,?", "b,??", "c,\\ud800 is text", "d,fine"]
