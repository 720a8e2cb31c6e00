"""Shared by the columnar executor's job tests (tests/executor/test_columnar_*.py): a .flow
script compiled for one executor with its streams collected, and the differential step
they all take - the row job on the reference executor against the columnar job on Spark,
where a failing reference run must fail Spark's with the same text."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

from flowc.chaining.job_graph import JobGraph
from flowc.errors import ExecutionError
from flowc.executor import run_job_graph, run_reference
from flowc.executor.result import JobResult
from flowc.operators import CollectSink
from flowc.parser import compile_source


def collect_job(text: str, where: Path, executor: str, mode: str = "batch", *,
                options: Mapping[str, str] | None = None,
                sinks: Mapping[str, str] | None = None) -> JobGraph:
    """The job graph of ``text`` (compiled as ``where/job.flow``) for ``executor`` in
    ``mode`` with more ``options``; each stream of ``sinks`` goes to the CollectSink it
    names (default: stream ``result`` to ``result``)."""
    script = compile_source(text, str(where / "job.flow"),
                            options={"mode": mode, "flowc.executor": executor,
                                     **(options or {})})
    for stream, name in (sinks or {"result": "result"}).items():
        script.streams[stream].stream.sink_to(CollectSink(name))
    return script.env.get_job_graph()


def write_csv(path: Path, header: str, rows: Iterable[Sequence[Any]],
              bad: str | None = None) -> Path:
    """``rows`` as csv lines under ``header`` at ``path`` (an empty field: null), with the
    line ``bad`` in the middle when given."""
    lines = [header] + [",".join(map(str, r)) for r in rows]
    if bad is not None:
        lines.insert(len(lines) // 2 + 1, bad)
    path.write_text("\n".join(lines) + "\n")
    return path


def timing(prog: Mapping[str, Any]) -> dict[str, str]:
    """A generated program's watermark timing option (``prog["timing"]``: a pair or
    None) as compile options."""
    return dict([prog["timing"]]) if prog["timing"] is not None else {}


def run_both(row_job: JobGraph, columnar_job: JobGraph) -> tuple[JobResult, JobResult] | None:
    """``(expected, actual)``: the reference executor's run of ``row_job`` and Spark's of
    ``columnar_job``; None when the reference run fails (a bad row, a null key) and
    Spark's fails with the same message."""
    try:
        expected = run_reference(row_job)
    except ExecutionError as e:
        with pytest.raises(ExecutionError) as info:
            run_job_graph(columnar_job)
        assert str(info.value) == str(e)
        return None
    return expected, run_job_graph(columnar_job)


def vertex_counts(result: JobResult) -> list[tuple[str, int, int]]:
    """Each vertex's name and records in / out, as compared between the executors."""
    return [(v.name, v.records_in, v.records_out) for v in result.vertices]
