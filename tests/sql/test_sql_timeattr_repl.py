"""The REPL's result table shows a DATE as ``2024-05-01`` and a TIMESTAMP_LTZ as a
timestamp (``2024-05-01 10:00:01.500``, as Flink's SQL client with the UTC zone)."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import pytest

import flowc.executor
from flowc.executor import run_reference
from flowc.repl import Session


@pytest.fixture
def reference(monkeypatch: pytest.MonkeyPatch) -> None:
    def run(job_graph: Any, **_: Any) -> Any:
        return run_reference(job_graph)

    monkeypatch.setattr(flowc.executor, "run_job_graph", run)


def test_dates_and_ltz_in_the_result_table(reference: None, tmp_path: Path) -> None:
    (tmp_path / "e.csv").write_text("2024-05-01,1714557601500\n", encoding="utf-8")
    out = io.StringIO()
    s = Session(out=out, width=120)
    s.execute("SET 'parallelism' = '1';")
    s.execute(f"CREATE TABLE e (d DATE, ms BIGINT, ts AS TO_TIMESTAMP_LTZ(ms, 3)) WITH ("
              f"'connector' = 'filesystem', 'path' = '{tmp_path / 'e.csv'}', "
              "'format' = 'csv', 'csv.header' = 'false');")
    s.execute("SELECT d, ts FROM e;")
    text = out.getvalue()
    assert "2024-05-01 10:00:01.500" in text, text
    assert "2024-05-01 00:00" not in text.replace("2024-05-01 10:00", ""), text
