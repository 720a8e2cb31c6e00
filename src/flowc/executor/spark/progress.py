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
             width: int = 0, done: int = 0) -> str:
    """One status line: ``<job>: stage 3: 5/8 tasks (2 running) | stage 4: 0/2 tasks
    [1.4 s]``; between stages ``<done> stages done``; cut to ``width`` characters when
    given."""
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
    elif done:
        body = f"{done} stage{'s' if done > 1 else ''} done"
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
        self._seen: set[int] = set()
        self._done: set[int] = set()

    def render(self) -> None:
        try:
            stages = poll(self.tracker)
        except Exception:  # noqa: BLE001 - the display must never fail the job
            return
        active = {st.stage_id for st in stages}
        self._done |= self._seen - active
        self._seen |= active
        width = shutil.get_terminal_size((100, 20)).columns - 1
        line = describe(self.job_name, stages, time.perf_counter() - self._start, width,
                        len(self._done))
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


def is_tty(stream: _Stream) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):
        return False


class Note:
    """A static transient line (``starting Spark ...`` while the session starts) on a
    terminal; nothing otherwise."""

    def __init__(self, stream: _Stream, text: str) -> None:
        self.stream = stream
        self.shown = is_tty(stream)
        if self.shown:
            stream.write(CLEAR + text)
            stream.flush()

    def erase(self) -> None:
        if self.shown:
            self.stream.write(CLEAR)
            self.stream.flush()
            self.shown = False


def start_progress(sc: Any, stream: _Stream, job_name: str) -> ProgressLine | None:
    """A running display on ``stream``, or None when it is not a terminal."""
    if not is_tty(stream):
        return None
    return ProgressLine(sc.statusTracker(), stream, job_name).start()
