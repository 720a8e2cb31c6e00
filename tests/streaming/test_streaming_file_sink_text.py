"""The streaming executor's file sinks write values as the bounded executors' sinks do
(docs/executor.md, "Written values": timestamps as epoch milliseconds in csv and json), so
the part files of a streamed run read back like a bounded run's output."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from flowc.executor import run_job_graph, run_reference
from flowc.parser import compile_file

from .multi_harness import stream

JOB = """source clicks (user_id string, n int, ok bool, ts timestamp)
  from csv 'in/'{monitor} watermark ts;
clicks | write csv '{out}/all.csv';
clicks | write json '{out}/all.json';
clicks | key by user_id | window tumbling 1s | aggregate count(*) as c | write csv '{out}/w.csv';
"""
ROWS = "user_id,n,ok,ts\na,1,true,2024-01-01 10:00:00.250\nb,,false,2024-01-01T10:00:01Z\n" \
       "a,3,true,1704103202000\n"


def _lines(d: Path) -> list[str]:
    """The data lines of every part file (csv headers left out), sorted."""
    out = []
    for f in sorted(p for p in d.iterdir() if p.name.startswith("part-")):
        lines = f.read_text().splitlines()
        out.extend(lines[1:] if f.suffix == ".csv" else lines)
    return sorted(out)


@pytest.mark.spark
def test_streamed_csv_and_json_parts_hold_what_the_bounded_sinks_write(
        spark: Any, tmp_path: Path) -> None:
    (tmp_path / "in").mkdir()
    (tmp_path / "job.flow").write_text(JOB.format(monitor=" monitor every 100ms",
                                                  out="streamed"))
    (tmp_path / "bounded.flow").write_text(JOB.format(monitor="", out="bounded"))
    (tmp_path / "reference.flow").write_text(JOB.format(monitor="", out="reference"))

    def feed(wait: Callable[[int], None]) -> None:
        tmp = tmp_path / "in" / ".f.csv"
        tmp.write_text(ROWS)
        tmp.rename(tmp_path / "in" / "f.csv")
        wait(1)

    stream(tmp_path, compile_file(str(tmp_path / "job.flow")).env.get_job_graph(), feed)
    run_job_graph(compile_file(str(tmp_path / "bounded.flow")).env.get_job_graph())
    run_reference(compile_file(str(tmp_path / "reference.flow")).env.get_job_graph())
    for name in ("all.csv", "all.json"):
        streamed = _lines(tmp_path / "streamed" / name)
        assert streamed == _lines(tmp_path / "bounded" / name) == \
            _lines(tmp_path / "reference" / name), name
    assert "a,1,true,1704103200250" in _lines(tmp_path / "streamed" / "all.csv")
    # the windows that closed in the batch (the watermark reached 2 s past 10:00)
    assert _lines(tmp_path / "streamed" / "w.csv") == [
        "a,1704103200000,1704103201000,1", "b,1704103201000,1704103202000,1"]
