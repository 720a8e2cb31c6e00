"""What ``run_job_graph`` returns."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class VertexMetrics:
    name: str
    parallelism: int
    records_in: int = 0
    records_out: int = 0
    # Records the vertex's sinks received (None: the chain has no sink).
    records_written: int | None = None
    # Seconds its subtasks ran, summed (Spark; None from the reference executor). A subtask
    # runs from the start of its Spark task until its end of input, reading included.
    seconds: float | None = None

    @property
    def rows_per_second(self) -> float | None:
        """Records in per second of the subtasks running side by side."""
        if not self.seconds or not self.records_in:
            return None
        return self.records_in * self.parallelism / self.seconds


@dataclass
class JobResult:
    """Collected outputs per CollectSink name (subtask order, then arrival order), printed
    lines (print sinks, in sink-node then subtask order; the Spark executor streams them to
    stdout / stderr and keeps the first 10,000 here), per-vertex record counts (records
    in = records entering the chain head; records out = records written to non-chained
    edges, once per edge; records written = records the chain's sinks received), late
    records dropped, the job's wall time in seconds and, separately, the seconds spent
    starting Spark for it (0 when the session was already running)."""

    job_name: str
    collected: dict[str, list[Any]] = field(default_factory=dict)
    printed: list[str] = field(default_factory=list)
    vertices: list[VertexMetrics] = field(default_factory=list)
    late_records_dropped: int = 0
    wall_time: float = 0.0
    startup_time: float = 0.0

    def __getitem__(self, sink_name: str) -> list[Any]:
        return self.collected[sink_name]

    def summary(self) -> str:
        head = f"job '{self.job_name}' finished in {self.wall_time:.2f} s"
        if self.startup_time:
            head += f" (Spark start-up {self.startup_time:.2f} s)"
        lines = [head]
        for v in self.vertices:
            text = f"  {v.name} (p={v.parallelism}): in {v.records_in}, out {v.records_out}"
            if v.records_written is not None:
                text += f", written {v.records_written}"
            rate = v.rows_per_second
            if rate is not None:
                text += f", {rate:,.0f} rows/s"
            lines.append(text)
        if self.late_records_dropped:
            lines.append(f"  late records dropped: {self.late_records_dropped}")
        return "\n".join(lines)
