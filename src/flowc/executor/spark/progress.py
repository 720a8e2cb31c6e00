"""A one-line progress display on a terminal, from Spark's status tracker.

A driver thread polls ``sc.statusTracker()`` while the job's actions run and rewrites one
line on stderr: the active stages with their tasks completed / total (and running), plus
the elapsed time. The line is erased when the job ends (transient), before flowc prints the
job's output, so print-sink lines (stdout) and the summary never mix with it. Nothing is
shown when the stream is not a terminal.
"""

from __future__ import annotations

import shutil
import threading
import time
from dataclasses import dataclass
from typing import Any, Protocol

CLEAR = "\r\x1b[K"


@dataclass(frozen=True)
class StageProgress:
    stage_id: int
    tasks: int
    completed: int
    active: int
    failed: int = 0


class _Stream(Protocol):
    def write(self, text: str) -> Any: ...

    def flush(self) -> Any: ...

    def isatty(self) -> bool: ...


def poll(tracker: Any) -> list[StageProgress]:
    """The active stages (ascending id) from a Spark ``StatusTracker``."""
    stages = []
    for sid in sorted(tracker.getActiveStageIds()):
        info = tracker.getStageInfo(sid)
        if info is None:  # finished between the two calls
            continue
        stages.append(StageProgress(sid, info.numTasks, info.numCompletedTasks,
                                    info.numActiveTasks, info.numFailedTasks))
    return stages


def describe(job_name: str, stages: list[StageProgress], elapsed: float,
             width: int = 0) -> str:
    """One status line: ``<job>: stage 3: 5/8 tasks (2 running) | stage 4: 0/2 tasks
    [1.4 s]``; cut to ``width`` characters when given."""
    if stages:
        parts = []
        for s in stages:
            text = f"stage {s.stage_id}: {s.completed}/{s.tasks} tasks"
            extra = []
            if s.active:
                extra.append(f"{s.active} running")
            if s.failed:
                extra.append(f"{s.failed} failed")
            if extra:
                text += f" ({', '.join(extra)})"
            parts.append(text)
        body = " | ".join(parts)
    else:
        body = "starting"
    line = f"{job_name}: {body} [{elapsed:.1f} s]"
    if width and len(line) > width:
        line = line[:max(width - 1, 0)] + "…" if width > 1 else line[:width]
    return line


class ProgressLine:
    """The polling thread; ``start()`` / ``stop()`` around the job's actions."""

    def __init__(self, tracker: Any, stream: _Stream, job_name: str,
                 interval: float = 0.25) -> None:
        self.tracker = tracker
        self.stream = stream
        self.job_name = job_name
        self.interval = interval
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._start = 0.0
        self._shown = False

    def render(self) -> None:
        try:
            stages = poll(self.tracker)
        except Exception:  # noqa: BLE001 - the display must never fail the job
            return
        width = shutil.get_terminal_size((100, 20)).columns - 1
        line = describe(self.job_name, stages, time.perf_counter() - self._start, width)
        self.stream.write(CLEAR + line)
        self.stream.flush()
        self._shown = True

    def _run(self) -> None:
        while not self._stop.wait(self.interval):
            self.render()

    def start(self) -> ProgressLine:
        self._start = time.perf_counter()
        self._thread = threading.Thread(target=self._run, name="flowc-progress", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        if self._shown:  # transient: erase the line
            self.stream.write(CLEAR)
            self.stream.flush()


def start_progress(sc: Any, stream: _Stream, job_name: str) -> ProgressLine | None:
    """A running display on ``stream``, or None when it is not a terminal."""
    try:
        tty = stream.isatty()
    except (AttributeError, ValueError):
        tty = False
    if not tty:
        return None
    return ProgressLine(sc.statusTracker(), stream, job_name).start()
