"""Shared by the test_streaming_columnar_* tests of the columnar micro-batches' newer
members (rolling aggregates, allowed lateness, ...): ``test_streaming_columnar.Driver``
runs a job's micro-batches in this process on either path; these helpers add SQL jobs,
the printed lines of a run (as the streaming executor prints them: batch by batch, then
sink, subtask and arrival order) and the reference executor's micro-batch model over the
same files."""

from __future__ import annotations

import random
from collections.abc import Sequence
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

__all__ = ["CLICKS_HEADER", "Driver", "RowDriver", "SqlDriver", "batch_time", "model_lines",
           "printed", "_norm", "random_click", "row_and_columnar", "same_on_every_path",
           "write_batches"]

CLICKS_HEADER = "user_id,action,score,n,ts"


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


def same_on_every_path(runs: dict[str, list[Any]]) -> None:
    """``row_and_columnar``'s runs: every batch's outputs, stats and snapshots on the
    columnar and the switching paths are the row path's."""
    for name in ("col", "col-row", "row-col"):
        for b, (r, c) in enumerate(zip(runs["row"], runs[name])):
            assert c["sinks"] == r["sinks"], (name, b)
            assert c["stats"] == r["stats"], (name, b)
            assert c["snapshots"] == r["snapshots"], (name, b)


def write_batches(d: Driver, batches: list[list[str]]) -> list[list[str]]:
    """One csv file per batch in ``d``'s input directory (``CLICKS_HEADER``, then the
    batch's lines): each batch's files, for ``Driver.batch``."""
    files = []
    for b, lines in enumerate(batches):
        path = d.work / "in" / f"f{b:03d}.csv"
        path.write_text("\n".join([CLICKS_HEADER, *lines]) + "\n")
        files.append([str(path)])
    return files


def random_click(rnd: random.Random, at: int, spread: tuple[int, int], users: int,
                 actions: Sequence[str], iso: bool = False) -> str:
    """A random line of ``CLICKS_HEADER``'s columns: a nullable score (now and then -0.0)
    and count, ``ts`` in ``at + spread`` (not below 0; ``iso``: as an ISO time on
    2024-05-01), one of ``users`` users and of ``actions``."""
    score = "" if rnd.random() < 0.2 else f"{rnd.uniform(-5, 5):.3f}"
    if rnd.random() < 0.05:
        score = "-0.0"
    n = "" if rnd.random() < 0.2 else str(rnd.randrange(-3, 100))
    ts = max(0, at + rnd.randrange(*spread))
    when = f"2024-05-01T10:{ts // 60000 % 60:02d}:{ts // 1000 % 60:02d}." \
        f"{ts % 1000:03d}Z" if iso else str(ts)
    return f"u{rnd.randrange(users)},{rnd.choice(actions)},{score},{n},{when}"


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
