"""A partitioned file sink of an unbounded job: each micro-batch's part of a partition
lands in that partition's directory (``k=v/part-<batch>.<ext>``) with its success file,
and the streamed partitions hold what the bounded run writes (the first batch with two
partitions used to fail: the staged ``k=v`` directories were renamed as part files)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from flowc.executor import run_reference
from flowc.parser import compile_file

from .multi_harness import stream

JOB = """source clicks (user_id string, action string, n int, ts timestamp)
  from csv 'in/'{monitor} watermark ts;
clicks | write csv '{out}/by_action' partitioned by action options (success_file = '_SUCCESS');
"""
FILES = [
    "user_id,action,n,ts\na,view,1,2024-01-01 10:00:00\nb,share,2,2024-01-01 10:00:01\n"
    "c,view,3,2024-01-01 10:00:02\n",
    "user_id,action,n,ts\nd,a/b=c,4,2024-01-01 10:00:03\ne,,5,2024-01-01 10:00:04\n"
    "f,share,6,2024-01-01 10:00:05\n",
]


def _partitions(root: Path) -> dict[str, list[str]]:
    """Per partition directory: its data lines (csv headers left out), sorted."""
    out: dict[str, list[str]] = {}
    for d in sorted(p for p in root.iterdir() if p.is_dir()):
        lines: list[str] = []
        for f in sorted(d.glob("part-*")):
            lines += f.read_text().splitlines()[1:]
        out[d.name] = sorted(lines)
    return out


@pytest.mark.spark
def test_streamed_partitions_hold_what_the_bounded_run_writes(spark: Any,
                                                              tmp_path: Path) -> None:
    (tmp_path / "in").mkdir()
    (tmp_path / "job.flow").write_text(JOB.format(monitor=" monitor every 100ms",
                                                  out="streamed"))
    (tmp_path / "reference.flow").write_text(JOB.format(monitor="", out="reference"))

    def feed(wait: Callable[[int], int]) -> None:
        for i, text in enumerate(FILES):
            tmp = tmp_path / "in" / f".f{i}.csv"
            tmp.write_text(text)
            tmp.rename(tmp_path / "in" / f"f{i}.csv")
            wait(i + 1)

    stream(tmp_path, compile_file(str(tmp_path / "job.flow")).env.get_job_graph(), feed)
    for i, text in enumerate(FILES):  # the reference reads all files at once
        (tmp_path / "in" / f"f{i}.csv").write_text(text)
    run_reference(compile_file(str(tmp_path / "reference.flow")).env.get_job_graph())
    streamed = tmp_path / "streamed" / "by_action"
    got = _partitions(streamed)
    assert got == _partitions(tmp_path / "reference" / "by_action")
    assert set(got) == {"action=view", "action=share", "action=a%2Fb%3Dc",
                        "action=__DEFAULT_PARTITION__"}
    # two batches wrote 'share' (one file each): one part per batch, named by the batch
    share = sorted(p.name for p in (streamed / "action=share").iterdir())
    assert share == ["_SUCCESS", "part-00000000.csv", "part-00000001.csv"], share
    assert all((streamed / d / "_SUCCESS").exists() for d in got)
