"""Helpers the generated chain code calls inside Spark tasks (kept small: they are
pickled into every task by reference to this module)."""

from __future__ import annotations

import gc
import json
import re
import socket
import time
import traceback
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any

from flowc.errors import FlowcError
from flowc.executor.runtime.channels import merge_channels

_MARK = re.compile(r"FLOWC-ERROR(\{.*?\})FLOWC-END", re.S)


class FlowcTaskError(RuntimeError):
    """Carries (node id, error type, message) out of a Spark task as text, so the driver
    can rebuild an ExecutionError from Spark's wrapped Python exception."""


def task_error(exc: BaseException, filename: str, line_nodes: dict[int, int],
               default_node: int) -> FlowcTaskError:
    node = default_node
    for frame, lineno in traceback.walk_tb(exc.__traceback__):
        if frame.f_code.co_filename == filename:
            node = _node_at(line_nodes, lineno, node)
    payload = {"node": node, "type": type(exc).__name__, "message": str(exc),
               "flowc": isinstance(exc, FlowcError)}
    return FlowcTaskError("FLOWC-ERROR" + json.dumps(payload) + "FLOWC-END")


def close_all(opened: list[Callable[[], None]]) -> None:
    """A task failed: close the chain members opened so far, last opened first (head ->
    tail, flink-semantics §7); their own errors give way to the one that failed the task."""
    while opened:
        try:
            opened.pop()()
        except Exception:  # noqa: BLE001, S110 - the original failure is reported
            pass


def _node_at(line_nodes: dict[int, int], lineno: int, default: int) -> int:
    best = None
    for ln in line_nodes:
        if ln <= lineno and (best is None or ln > best):
            best = ln
    return line_nodes[best] if best is not None else default


def parse_task_error(text: str) -> dict[str, Any] | None:
    m = _MARK.search(text)
    return json.loads(m.group(1)) if m else None


def merged_input(it: Iterable[tuple[int, tuple[int, Any, Any]]], expected: Sequence[int],
                 inputs: Sequence[int], batch: bool) -> Iterator[tuple[int, Any, Any]]:
    """Bucket a shuffled partition by channel (Spark keeps each map output block's order)
    and merge the channels by the deterministic rule of ``runtime.channels``."""
    buckets: dict[int, list[tuple[Any, Any]]] = {c: [] for c in expected}
    appends = {c: b.append for c, b in buckets.items()}
    for _, (cid, v, ts) in it:
        appends[cid]((v, ts))
    return merge_channels([buckets[c] for c in expected], inputs, batch)


# Generation-0 threshold while a task runs (CPython's default: 700). The map-side combiner
# and unpickled partials keep ~1M live objects per task; with the default thresholds every
# full collection rescans them all (about half of a worker's CPU on the clicks job), yet
# they are freed by reference counting, not by the cycle collector.
TASK_GC_THRESHOLD = (200_000, 50, 1000)


def gc_relaxed(items: Iterator[Any]) -> Iterator[Any]:
    """Run a task's chain (a generator) with rare garbage collections and restore the
    worker's settings afterwards (Spark reuses Python workers across tasks). Collections
    are made rarer, not disabled: cyclic garbage a user function makes is still freed."""
    saved = gc.get_threshold()
    gc.set_threshold(*TASK_GC_THRESHOLD)
    try:
        yield from items
    finally:
        gc.set_threshold(*saved)


REPORT_EVERY = 0.25  # seconds between a source task's row-count datagrams


def reporting(items: Iterator[Any], address: tuple[str, int], source: int,
              subtask: int, rows: Callable[[Any], int] | None = None) -> Iterator[Any]:
    """``items`` (a source subtask's records), sending ``<source> <subtask> <rows read>``
    to the driver's progress display (``progress.RowFeed``) every REPORT_EVERY seconds and
    at the end. UDP: never blocks or fails the task; a lost datagram only delays the
    display. Used only while a progress display runs (it costs a generator step per
    record)."""
    try:
        sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    except OSError:
        yield from items
        return

    def send(n: int) -> None:
        try:
            sock.sendto(f"{source} {subtask} {n}".encode(), address)
        except OSError:
            pass

    n = 0
    last = time.monotonic()
    try:
        for k, item in enumerate(items, 1):
            yield item
            n = k if rows is None else n + rows(item)  # rows: a batch's record count
            if not k & 1023 or rows is not None:
                now = time.monotonic()
                if now - last >= REPORT_EVERY:
                    send(n)
                    last = now
        send(n)
    finally:
        sock.close()


def timed(on_end: Callable[[list[Any]], None]) -> Callable[[list[Any]], None]:
    """``on_end`` of a task that also reports the seconds since the task started (called
    when Spark starts computing the partition)."""
    start = time.perf_counter()

    def ended(stats: list[Any]) -> None:
        on_end([*stats, time.perf_counter() - start])
    return ended


class DictSum:
    """AccumulatorParam: {vertex: [records in, records out, late dropped, records written,
    task seconds]} summed over the vertex's subtasks."""

    def zero(self, value: dict[str, list[int]]) -> dict[str, list[int]]:
        return {}

    def addInPlace(self, a: dict[str, list[int]], b: dict[str, list[int]]) -> dict[str, list[int]]:  # noqa: N802
        for k, v in b.items():
            cur = a.get(k)
            a[k] = list(v) if cur is None else [x + y for x, y in zip(cur, v)]
        return a
