"""``explain --format json`` shows each operator's changelog mode as the text explain does:
Flink's plan JSON (``--level stream``) gets ``changelogMode`` on updating nodes only, the
job graph's operators a ``changelog_mode`` each (docs/plan-format.md)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from flowc.cli import main

SQL = """CREATE TABLE orders (user_id STRING, amount INT) WITH ('connector' = 'datagen',
  'number-of-rows' = '10');
CREATE TABLE out (user_id STRING, n BIGINT) WITH ('connector' = 'print');
INSERT INTO out SELECT user_id, COUNT(*) AS n FROM orders GROUP BY user_id;
"""


def explain(tmp_path: Path, capsys: pytest.CaptureFixture[str], *args: str) -> str:
    path = tmp_path / "q.sql"
    path.write_text(SQL)
    assert main(["explain", str(path), *args]) == 0
    return capsys.readouterr().out


def test_stream_level_json_marks_the_updating_nodes(tmp_path: Path,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    nodes = json.loads(explain(tmp_path, capsys, "--level", "stream", "--format", "json"))[
        "nodes"]
    marked = {n["id"]: n["changelogMode"] for n in nodes if "changelogMode" in n}
    text = explain(tmp_path, capsys, "--level", "stream")
    text_ids = {int(m.group(1)) for m in re.finditer(r"^\[(\d+)\].*changelogMode=\[I,UB,UA,D\]",
                                                     text, re.M)}
    assert marked and set(marked) == text_ids
    assert set(marked.values()) == {"[I,UB,UA,D]"}


def test_job_level_json_gives_every_operator_its_mode(tmp_path: Path,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    job = json.loads(explain(tmp_path, capsys, "--format", "json"))
    ops = [o for v in job["vertices"] for o in v["operators"]]
    modes = {o["id"]: o["changelog_mode"] for o in ops}
    text = explain(tmp_path, capsys)
    updating = set(re.findall(r"^\s+([0-9a-f]{32})  .*changelogMode=\[I,UB,UA,D\]", text, re.M))
    assert updating and {i for i, m in modes.items() if m == "[I,UB,UA,D]"} == updating
    assert "[I]" in modes.values()  # the source and the map before the key_by
    assert None in modes.values()  # the sink
