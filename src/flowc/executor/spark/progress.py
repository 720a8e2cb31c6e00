"""A one-line progress display on a terminal, from Spark's status tracker and row counts
the source tasks send.

A driver thread polls ``sc.statusTracker()`` while the job's actions run and rewrites one
line on stderr: rows read so far per source (and rows/s), then the active stages with a bar
and their tasks completed / total (and running), plus the elapsed time. Task counts alone do
not move for minutes when each of 2 tasks reads half the input, so the source tasks send
their row counts to the driver (``RowFeed``: UDP datagrams, a few per second per task;
lost ones only make the display lag). The line is erased when the job ends (transient),
before flowc prints the job's output, so print-sink lines (stdout) and the summary never mix
with it. Nothing is shown when the stream is not a terminal.

An unbounded job (``executor/streaming``) has its own line, ``StreamProgress``: set after
every micro-batch (batches, rows and rows/s, per source its watermark, the lag now -
watermark and, for a monitored directory, the files waiting; the state's size) and redrawn
twice a second in between.
"""

from __future__ import annotations

import shutil
import socket
import threading
import time
from collections.abc import Sequence
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


@dataclass(frozen=True)
class SourceRows:
    name: str
    rows: int
    rate: float  # rows per second since the source's first report


BAR = 8  # characters of a stage's bar


def bar(done: int, total: int, width: int = BAR) -> str:
    filled = round(width * done / total) if total > 0 else 0
    return "█" * filled + "░" * (width - filled)


def count(n: float) -> str:
    """1234 -> 1,234; 1234567 -> 1.23M (rates: 45.6k)."""
    if n >= 1e6:
        return f"{n / 1e6:.2f}M"
    if n >= 1e4:
        return f"{n / 1e3:.1f}k"
    return f"{n:,.0f}"


def rate(per_second: float) -> str:
    """A rate as ``count`` gives it, with one decimal below 10 and two significant digits
    below 1 (a batch of 3 rows in 2 s is 1.5 rows/s, not 2; 2 rows arriving in 45 s are
    0.044 rows/s, not 0)."""
    if 0 < per_second < 1:
        return f"{per_second:.2g}"
    if 0 < per_second < 10:
        return f"{per_second:.1f}"
    return count(per_second)


def describe(job_name: str, stages: list[StageProgress], elapsed: float,
             width: int = 0, done: int = 0, sources: Sequence[SourceRows] = ()) -> str:
    """One status line: ``<job>: Source: clicks 1.23M rows (456.0k/s) | stage 3 ██████░░ 5/8
    tasks (2 running) | stage 4 ░░░░░░░░ 0/2 tasks [1.4 s]``; between stages ``<done>
    stages done``; cut to ``width`` characters when given."""
    lead = [f"{s.name} {count(s.rows)} rows ({count(s.rate)}/s)" for s in sources]
    if stages:
        parts = list(lead)
        for s in stages:
            text = f"stage {s.stage_id} {bar(s.completed, s.tasks)} {s.completed}/{s.tasks} tasks"
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
        body = " | ".join([*lead, f"{done} stage{'s' if done > 1 else ''} done"])
    else:
        body = " | ".join(lead) or "starting"
    line = f"{job_name}: {body} [{elapsed:.1f} s]"
    if width and len(line) > width:
        line = line[:max(width - 1, 0)] + "…" if width > 1 else line[:width]
    return line


class RowFeed:
    """Driver side of the source tasks' row counts: a UDP socket receiving
    ``<source> <subtask> <rows>`` datagrams (``tasks.reporting`` sends them)."""

    def __init__(self, host: str) -> None:
        self.host = host
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.bind(("", 0))
        self.sock.settimeout(0.2)
        self.port = self.sock.getsockname()[1]
        self.rows: dict[tuple[int, int], int] = {}
        self.first: dict[int, float] = {}
        self.last: dict[int, float] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="flowc-rows", daemon=True)
        self._thread.start()

    @property
    def address(self) -> tuple[str, int]:
        return self.host, self.port

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                data = self.sock.recv(256)
            except OSError:  # timeout (to see the stop flag) or closed
                continue
            try:
                source, subtask, rows = (int(x) for x in data.split())
            except ValueError:
                continue  # not ours
            now = time.perf_counter()
            self.first.setdefault(source, now)
            self.last[source] = now
            key = (source, subtask)
            self.rows[key] = max(rows, self.rows.get(key, 0))  # datagrams may reorder

    def total(self, source: int) -> tuple[int, float]:
        """Rows read so far by all subtasks of ``source`` and rows per second (between its
        first and its latest report: a finished source keeps its reading rate)."""
        rows = sum(n for (s, _), n in list(self.rows.items()) if s == source)
        since, last = self.first.get(source), self.last.get(source)
        elapsed = last - since if since is not None and last is not None else 0.0
        return rows, rows / elapsed if elapsed > 0.05 else 0.0

    def close(self) -> None:
        self._stop.set()
        self._thread.join()
        self.sock.close()


class ProgressLine:
    """The polling thread; ``start()`` / ``stop()`` around the job's actions. ``sources``
    names the sources (by the number their tasks report under) whose rows ``feed``
    counts."""

    def __init__(self, tracker: Any, stream: _Stream, job_name: str,
                 interval: float = 0.25, feed: RowFeed | None = None,
                 sources: dict[int, str] | None = None) -> None:
        self.tracker = tracker
        self.stream = stream
        self.job_name = job_name
        self.interval = interval
        self.feed = feed
        self.sources = dict(sources or {})
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
        rows = []
        if self.feed is not None:
            for number, name in self.sources.items():
                n, rate = self.feed.total(number)
                if n:
                    rows.append(SourceRows(name, n, rate))
        line = describe(self.job_name, stages, time.perf_counter() - self._start, width,
                        len(self._done), rows)
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
        if self.feed is not None:
            self.feed.close()
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


def start_progress(sc: Any, stream: _Stream, job_name: str,
                   sources: dict[int, str] | None = None) -> ProgressLine | None:
    """A running display on ``stream``, or None when it is not a terminal. With
    ``sources``, a RowFeed on the driver's address receives their tasks' row counts
    (``display.feed.address`` is where the tasks send them)."""
    if not is_tty(stream):
        return None
    feed = None
    if sources:
        try:
            feed = RowFeed(sc.getConf().get("spark.driver.host") or "127.0.0.1")
        except OSError:  # no socket: stages only
            feed = None
    return ProgressLine(sc.statusTracker(), stream, job_name, feed=feed,
                        sources=sources).start()


# -- unbounded jobs: one live line per streaming query ------------------------------------


@dataclass(frozen=True)
class SourceLag:
    """A source's watermark (ms; None: none yet) and, for a monitored directory, how many
    of its files are not read yet (None: not a file source)."""

    name: str
    watermark: int | None
    waiting: int | None = None


@dataclass(frozen=True)
class BatchProgress:
    """What the last completed micro-batch left: the display's content."""

    job: str
    batch: int
    batches: int
    rows: int
    seconds: float
    total_rows: int
    sources: tuple[SourceLag, ...]
    state_bytes: int
    late: int = 0
    # rows / seconds since the previous micro-batch of the run started (Spark's input
    # rate); None for the run's first batch. ``rows / seconds`` is the processing rate.
    input_rate: float | None = None


def size(n: float) -> str:
    """Bytes as 12.5 KiB / 3.2 MiB."""
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n:,.0f} {unit}" if unit == "B" else f"{n:,.1f} {unit}"
        n /= 1024
    return f"{n:,.1f} GiB"


def _lag(seconds: float) -> str:
    if seconds < 120:
        return f"{seconds:.1f} s"
    if seconds < 7200:
        return f"{seconds / 60:.1f} min"
    return f"{seconds / 3600:.1f} h"


def describe_stream(p: BatchProgress, now_ms: int, width: int = 0) -> str:
    """``<job>: batch 7 (8 done), 80 rows at 40 rows/s (input 8.0 rows/s), 640 in all |
    Source: clicks watermark 10:00:03.999 lag 2.1 s, 3 files waiting | state 12.5 KiB | 3
    late dropped``: rows / the batch's seconds (processed), rows / the seconds since the
    previous batch started (input); lag = now - watermark; cut to ``width`` characters
    when given."""
    import datetime as dt

    per_second = p.rows / p.seconds if p.seconds > 0 else 0.0
    parts = [f"{p.job}: batch {p.batch} ({p.batches} done), {count(p.rows)} rows at "
             f"{rate(per_second)} rows/s"
             + (f" (input {rate(p.input_rate)} rows/s)" if p.input_rate is not None else "")
             + f", {count(p.total_rows)} in all"]
    for s in p.sources:
        if s.watermark is None or s.watermark < -(1 << 62):
            text = f"{s.name} watermark -"
        else:
            stamp = dt.datetime.fromtimestamp(s.watermark / 1000, dt.UTC)
            text = (f"{s.name} watermark {stamp.strftime('%Y-%m-%d %H:%M:%S.%f')[:-3]} "
                    f"lag {_lag(max(0, now_ms - s.watermark) / 1000)}")
        if s.waiting is not None:
            text += f", {s.waiting:,} file{'s' if s.waiting != 1 else ''} waiting"
        parts.append(text)
    parts.append(f"state {size(p.state_bytes)}")
    if p.late:
        parts.append(f"{p.late:,} late dropped")
    line = " | ".join(parts)
    if width and len(line) > width:
        line = line[:max(width - 1, 0)] + "…" if width > 1 else line[:width]
    return line


class StreamProgress:
    """The live line of an unbounded job on a terminal: set after every micro-batch
    (``update``) and redrawn every ``interval`` seconds in between, so the lag keeps
    counting and ``waiting()`` (files not read yet, per source name) stays current while
    a long batch runs. ``clock``: epoch milliseconds, ``width``: the line's (0: uncut;
    default: the terminal's) - tests fix them."""

    def __init__(self, stream: _Stream, interval: float = 0.5,
                 waiting: Any = None, clock: Any = None, width: int | None = None) -> None:
        self.stream = stream
        self.width = width
        self.interval = interval
        self.waiting = waiting
        self.clock = clock or (lambda: int(time.time() * 1000))
        self.last: BatchProgress | None = None
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._shown = False

    def update(self, p: BatchProgress) -> None:
        self.last = p
        self.render()

    def render(self) -> None:
        p = self.last
        if p is None:
            return
        if self.waiting is not None:
            try:
                now_waiting = self.waiting()
            except OSError:  # the directory went away: keep the last count
                now_waiting = {}
            p = BatchProgress(**{**vars(p), "sources": tuple(
                SourceLag(s.name, s.watermark, now_waiting.get(s.name, s.waiting))
                for s in p.sources)})
        width = shutil.get_terminal_size((100, 20)).columns - 1 if self.width is None \
            else self.width
        with self._lock:
            self.stream.write(CLEAR + describe_stream(p, self.clock(), width))
            self.stream.flush()
            self._shown = True

    def _run(self) -> None:
        while not self._stop.wait(self.interval):
            self.render()

    def start(self) -> StreamProgress:
        self._thread = threading.Thread(target=self._run, name="flowc-stream-progress",
                                        daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        if self._shown:
            with self._lock:
                self.stream.write(CLEAR)
                self.stream.flush()


def files_waiting(directory: str, read: int, recursive: bool = False) -> int:
    """Files in a monitored directory not read yet: those Spark's file source would list
    (not starting with '.' or '_') minus the ``read`` ones."""
    import os

    n = 0
    if recursive:
        for _, dirs, names in os.walk(directory):
            dirs[:] = [d for d in dirs if not d.startswith((".", "_"))]
            n += sum(1 for f in names if not f.startswith((".", "_")))
    else:
        with os.scandir(directory) as it:
            n = sum(1 for e in it if e.is_file() and not e.name.startswith((".", "_")))
    return max(0, n - read)
