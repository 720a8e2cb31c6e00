"""Executors: the Spark executor (``run_job_graph``) and the pure-Python reference one."""

from __future__ import annotations

from typing import Any

from flowc.executor.reference import run_reference
from flowc.executor.result import JobResult, VertexMetrics


def run_job_graph(job_graph: Any, *, master: str | None = None, verbose: bool = False,
                  progress: bool = False, job_name: str | None = None) -> JobResult:
    """Run a JobGraph on Spark (local[*] unless ``master`` says otherwise): columnar
    (Arrow batches) when the job allows it, row by row otherwise (``arrow/plan.py``; the
    option ``flowc.executor = auto | columnar | row`` chooses)."""
    from flowc.errors import ConfigError
    from flowc.executor.arrow.plan import CHOICES, OPTION, executor_choice, plan_members
    from flowc.executor.spark import run_on_spark
    from flowc.executor.streaming import refuse_unbounded

    refuse_unbounded(job_graph, "Spark batch executor")
    choice = executor_choice(job_graph)
    if choice not in CHOICES:
        raise ConfigError(f"unknown value '{choice}' for {OPTION} (use auto, columnar or row)")
    if choice != "row":
        members = plan_members(job_graph)
        if isinstance(members, dict):
            from flowc.executor.arrow.runner import run_columnar

            return run_columnar(job_graph, members, master=master, verbose=verbose,
                                progress=progress, job_name=job_name)
        if choice == "columnar":
            raise ConfigError(f"{OPTION} = columnar, but this job cannot run columnar: "
                              f"{members}")
        if verbose:
            import sys

            print(f"flowc: row executor: {members}", file=sys.stderr)
    return run_on_spark(job_graph, master=master, verbose=verbose, progress=progress,
                        job_name=job_name)


def get_spark(master: str | None = None, verbose: bool = False) -> Any:
    """The one SparkSession flowc uses (created on first call)."""
    from flowc.executor.spark.session import get_spark as _get

    return _get(master, verbose)


__all__ = ["JobResult", "VertexMetrics", "get_spark", "run_job_graph", "run_reference"]
