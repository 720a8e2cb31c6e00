"""The REPL's result modes for updating results (Flink SQL client's
'sql-client.execution.result-mode'): the changelog with its row kinds, or the final
table."""

from __future__ import annotations

import io
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


def _session() -> tuple[Session, io.StringIO]:
    out = io.StringIO()
    s = Session(out=out, width=100)
    s.execute("set parallelism = 1;")
    s.execute("source nums (k string, n int) values ('a', 1), ('b', 2), ('a', 3);")
    return s, out


def _lines(out: io.StringIO) -> list[str]:
    return [" ".join(line.replace("│", " ").split()) for line in out.getvalue().splitlines()
            if line.startswith("│")]


def test_changelog_is_the_default(reference: None) -> None:
    s, out = _session()
    s.execute("SELECT k, SUM(n) AS s FROM nums GROUP BY k;")
    assert _lines(out) == ["+I a 1", "+I b 2", "-U a 1", "+U a 4"]
    assert "4 rows of changelog" in out.getvalue()


def test_table_mode_shows_the_final_rows(reference: None) -> None:
    s, out = _session()
    s.execute("SET 'sql-client.execution.result-mode' = 'table';")
    s.execute("SELECT k, SUM(n) AS s FROM nums GROUP BY k;")
    assert _lines(out) == ["b 2", "a 4"]
    s.execute("RESET 'sql-client.execution.result-mode';")
    out.truncate(0)
    s.execute("nums | key by k | top 1 by n desc;")  # .flow updating results too
    assert _lines(out) == ["+I a 1", "+I b 2", "-U a 1", "+U a 3"]


def test_an_unknown_mode_is_an_error(reference: None) -> None:
    s, out = _session()
    s.execute("SET 'sql-client.execution.result-mode' = 'tabel';")
    assert "unknown result mode 'tabel'" in out.getvalue()
    assert "did you mean 'table'" in out.getvalue()
