"""What a streaming run reports: the totals (``StreamStats``) and, after every micro-batch,
either a log line on stderr or the live terminal line (``spark/progress.StreamProgress``):
batches, rows read and rows/s, each source's watermark (the min over its subtasks), its
lag and the files waiting in a monitored directory, the state's size, late records."""

from __future__ import annotations

import datetime
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from flowc.executor.runtime import files
from flowc.executor.runtime.core import LONG_MAX
from flowc.executor.streaming.plan import StreamingPlan
from flowc.executor.streaming.task import STATS
from flowc.operators import FileSource, TextLineFileSource


@dataclass
class StreamStats:
    """What the run did: batches completed, records read, per-batch lines for the log."""

    batches: int = 0
    rows: int = 0
    late_records_dropped: int = 0
    state_bytes: int = 0  # the snapshots' size after the last batch
    last_batch: int | None = None
    watermark: int | None = None  # the min over the sources' watermarks
    watermarks: dict[int, int] = field(default_factory=dict)  # source node -> watermark
    printed: list[str] = field(default_factory=list)
    name: str = ""

    def summary(self) -> str:
        return (f"job '{self.name}' stopped after {self.batches} micro-batch"
                f"{'es' if self.batches != 1 else ''} "
                f"({self.rows:,} rows)" + (f"; batch {self.last_batch} committed"
                                           if self.last_batch is not None else ""))


def when(wm: int | None) -> str:
    """A watermark as the log line shows it (``-``: none yet, ``end``: finished)."""
    if wm is None or wm < -(1 << 62):
        return "-"
    if wm == LONG_MAX:
        return "end"
    return datetime.datetime.fromtimestamp(wm / 1000, datetime.UTC) \
        .strftime("%Y-%m-%d %H:%M:%S.%f")[:-3]


class BatchReporter:
    """Adds each micro-batch's STATS items to ``stats`` and shows them: the live line on a
    terminal (with ``progress``), else one log line per batch on stderr."""

    def __init__(self, plan: StreamingPlan, names: Callable[[int], str], job: str,
                 progress: bool) -> None:
        self.plan = plan
        self.names = names  # stream node id -> its name
        self.job = job
        self.progress = progress
        self.stats = StreamStats(name=job)
        self.display: Any = None  # spark.progress.StreamProgress on a terminal
        # per unbounded source: files (lines, rows, records) of the committed batches
        self.units_read: list[int] = []
        self.last_start: float | None = None  # perf_counter() at the previous batch's start

    def start(self) -> None:
        """The live line, when asked for and stderr is a terminal."""
        from flowc.executor.spark.progress import StreamProgress, is_tty

        if self.progress and is_tty(sys.stderr):
            self.display = StreamProgress(sys.stderr, waiting=self.waiting).start()

    def stop(self) -> None:
        if self.display is not None:
            self.display.stop()

    def report(self, batch: int, collected: list[tuple[int, Any]], label: str,
               started: float, ended: float) -> None:
        """``started`` / ``ended``: the batch's ``time.perf_counter()`` at its start and
        end (rows / its length: processed rows/s; rows / the time since the previous
        batch's start: input rows/s, as Spark's progress reports them)."""
        from flowc.executor.spark.progress import rate

        seconds = ended - started
        since = None if self.last_start is None else started - self.last_start
        self.last_start = started
        rows = late = state = 0
        wms: dict[str, list[int]] = {}
        source_vertices = {s.vertex for s in self.plan.sources}
        for kind, payload in collected:
            if kind != STATS:
                continue
            s = payload[2]
            late += s["late"]
            state += s["state_bytes"]
            if payload[0] in source_vertices:
                rows += s["in"]
                if s["watermark"] is not None:
                    wms.setdefault(payload[0], []).append(s["watermark"])
        st = self.stats
        st.batches += 1
        st.rows += rows
        st.late_records_dropped += late
        st.state_bytes = state
        st.last_batch = batch
        for s in self.plan.sources:
            if wms.get(s.vertex):
                st.watermarks[s.node] = min(wms[s.vertex])
        st.watermark = min(st.watermarks.values()) if st.watermarks else st.watermark
        input_rate = rows / since if since else None
        if self.display is not None:
            from flowc.executor.spark.progress import BatchProgress, SourceLag

            waiting = self.waiting()
            lags = tuple(SourceLag(self.names(x.node), st.watermarks.get(x.node),
                                   waiting.get(self.names(x.node)))
                         for x in self.plan.sources)
            self.display.update(BatchProgress(
                self.job, batch, st.batches, rows, seconds, st.rows, lags, state,
                st.late_records_dropped, input_rate))
            return
        shown = ", ".join(f"{self.names(s.node)} {when(st.watermarks.get(s.node))}"
                          for s in self.plan.sources)
        line = (f"{self.job}: batch {batch}: {label}, "
                f"{rows:,} rows ({rate(rows / seconds if seconds > 0 else 0.0)} rows/s"
                + (f", input {rate(input_rate)} rows/s" if input_rate is not None else "")
                + "), "
                f"watermark {shown}, "
                f"state {state / 1024:,.1f} KiB"
                + (f", {st.late_records_dropped:,} late records dropped"
                   if st.late_records_dropped else "")
                + f"; {st.batches} batches, {st.rows:,} rows in all")
        sys.stderr.write(line + "\n")
        sys.stderr.flush()

    def waiting(self) -> dict[str, int]:
        """Per monitored source (by name): its files not read yet."""
        from flowc.executor.spark.progress import files_waiting

        out: dict[str, int] = {}
        unbounded = [s for s in self.plan.sources if not s.bounded]
        for k, x in enumerate(unbounded):
            spec = x.spec
            if not isinstance(spec, (FileSource, TextLineFileSource)):
                continue
            given = spec.paths[0] if isinstance(spec, TextLineFileSource) else spec.path
            out[self.names(x.node)] = files_waiting(
                files.local_path(given) or given,
                self.units_read[k] if k < len(self.units_read) else 0,
                isinstance(spec, TextLineFileSource))
        return out
