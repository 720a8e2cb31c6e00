"""Executors: the Spark executor (``run_job_graph``) and the pure-Python reference one."""

from __future__ import annotations

from typing import Any

from flowc.executor.reference import run_reference
from flowc.executor.result import JobResult, VertexMetrics


def run_job_graph(job_graph: Any, *, master: str | None = None, verbose: bool = False,
                  progress: bool = False, job_name: str | None = None) -> JobResult:
    """Run a JobGraph on Spark (local[*] unless ``master`` says otherwise)."""
    from flowc.executor.spark import run_on_spark

    return run_on_spark(job_graph, master=master, verbose=verbose, progress=progress,
                        job_name=job_name)


def get_spark(master: str | None = None, verbose: bool = False) -> Any:
    """The one SparkSession flowc uses (created on first call)."""
    from flowc.executor.spark.session import get_spark as _get

    return _get(master, verbose)


__all__ = ["JobResult", "VertexMetrics", "get_spark", "run_job_graph", "run_reference"]
