"""Shared by the test_streaming_columnar_* tests of the columnar micro-batches' newer
members (rolling aggregates, allowed lateness, ...): ``test_streaming_columnar.Driver``
runs a job's micro-batches in this process on either path; these helpers add SQL jobs,
the printed lines of a run (as the streaming executor prints them: batch by batch, then
sink, subtask and arrival order) and the reference executor's micro-batch model over the
same files."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from flowc.executor import run_reference
from flowc.executor.reference_batches import MicroBatches
from flowc.executor.sinks import print_prefix, print_text
from flowc.executor.streaming.columnar import plan_columnar
from flowc.executor.streaming.plan import plan_streaming
from flowc.operators import PrintSink
from flowc.parser import compile_source

from .test_streaming_columnar import Driver, _norm

__all__ = ["Driver", "RowDriver", "SqlDriver", "batch_time", "model_lines", "printed", "_norm",
           "row_and_columnar"]


class SqlDriver(Driver):
    """``Driver`` for a Flink SQL script."""

    def __init__(self, text: str, work: Path, sp: int = 1) -> None:
        from flowc.sql import compile_sql

        self.work = work
        (work / "in").mkdir(exist_ok=True)
        self.text = text.format(src=str(work / "in") + "/")
        jg = compile_sql(self.text, str(work / "job.sql")).env.get_job_graph()
        self.jg = jg
        self.sg = jg.stream_graph
        self.plan = plan_streaming(jg)
        chains = plan_columnar(jg, self.plan)
        assert not isinstance(chains, str), chains
        self.chains = chains


class RowDriver(Driver):
    """``Driver`` for a job whose micro-batches may run row by row only (``chains``: the
    reason, a str, when they do)."""

    def __init__(self, text: str, work: Path, sp: int = 1) -> None:
        self.work = work
        (work / "in").mkdir(exist_ok=True)
        jg = compile_source(text.format(src=str(work / "in") + "/", head="", sp=sp),
                            str(work / "job.flow")).env.get_job_graph()
        self.jg = jg
        self.sg = jg.stream_graph
        self.plan = plan_streaming(jg)
        self.chains = plan_columnar(jg, self.plan)  # type: ignore[assignment]


def job_graph(d: Driver, text: str) -> Any:
    """The job graph of a .flow driver's script (the driver keeps only its plan)."""
    if isinstance(d, (SqlDriver, RowDriver)):
        return d.jg
    return compile_source(text.format(src=str(d.work / "in") + "/", head="", sp=1),
                          str(d.work / "job.flow")).env.get_job_graph()


def printed(d: Driver, results: list[dict[str, Any]]) -> list[str]:
    """The print sinks' lines of ``results`` (``Driver.batch``'s), batch by batch."""
    parallelism = {m.nid: v.parallelism for v in d.plan.vertices for m in v.members}
    lines: list[str] = []
    for r in results:
        for (nid, idx), values in sorted(r["sinks"].items()):
            spec = d.plan.sinks[nid]
            if isinstance(spec, PrintSink):
                prefix = print_prefix(spec, idx, parallelism[nid])
                lines += [prefix + print_text(spec, v) for v in values]
    return lines


def model_lines(jg: Any, files: list[list[str]], timed: bool = False) -> Any:
    """The micro-batch model's run of a job with one monitored source over ``files`` (per
    batch); ``timed``: with the batches' timestamps ``Driver.batch`` runs them at."""
    from flowc.planner.stream_graph import NodeKind

    (source,) = [n.id for n in jg.stream_graph.nodes.values() if n.kind is NodeKind.SOURCE]
    times = [batch_time(b) for b in range(len(files))] if timed else None
    return run_reference(jg, micro_batches=MicroBatches({source: files}, times))


def batch_time(b: int) -> int:
    """Batch ``b``'s processing time in ``Driver.batch`` (Spark's batchTimestampMs)."""
    return 1_000 + 700 * b


def row_and_columnar(d: Driver, files: list[list[str]]) -> dict[str, list[Any]]:
    """The batches on the row path, on the columnar path, and switching paths every
    batch (columnar first, then row first): each a list of ``Driver.batch`` results
    (their snapshots comparable: ``comparable``)."""
    picks = {"row": lambda b: False, "col": lambda b: True,
             "col-row": lambda b: b % 2 == 0, "row-col": lambda b: b % 2 == 1}
    return {name: [comparable(d.batch(d.work / name, b, fs, pick(b)))
                   for b, fs in enumerate(files)]
            for name, pick in picks.items()}


def comparable(v: Any) -> Any:
    """``_norm``'s values with a retracting min / max's multiset (``ExtremeCounts``, whose
    heap layout depends on the operations) as its counts."""
    from flowc.parser.changes import ExtremeCounts

    if isinstance(v, ExtremeCounts):
        return ("extreme", v.largest, sorted(v.counts.items(), key=repr))
    if isinstance(v, dict):
        return {k: comparable(x) for k, x in v.items()}
    if type(v) in (list, tuple):
        return type(v)(comparable(x) for x in v)
    return v
