"""Starting and stopping a streaming run: the ``--trigger`` value, SIGINT / SIGTERM ending
the run after its running micro-batch, and the test hook that holds the driver at a
chosen point of a batch (so a test can kill -9 it exactly there)."""

from __future__ import annotations

import os
import signal
import sys
import threading
import time
from collections.abc import Callable
from typing import Any

from flowc.errors import ConfigError, FlowcError

STOP_WAIT = 60.0  # seconds a stop waits for the running micro-batch to end


def parse_trigger(text: str) -> int:
    """``1s`` / ``500ms`` / ``0`` -> milliseconds (``flowc run --trigger``)."""
    from flowc.errors import Span
    from flowc.sql.ddl import flink_duration

    try:
        return flink_duration(text, Span("--trigger", 1, 1))
    except FlowcError:
        raise ConfigError(f"--trigger expects a duration such as 1s or 500ms, got '{text}'") \
            from None


def stop_between_batches(query: Any, batch_ended: threading.Event) -> None:
    """Stop the query when no micro-batch is running, or right after the running one
    returned (a source with data at every trigger - datagen, a busy topic - never leaves a
    pause between batches; the batch Spark may have begun meanwhile is interrupted and,
    uncommitted, replayed on restart), so the checkpoint ends on a committed batch; after
    STOP_WAIT seconds a batch still running is interrupted (replayed on restart too)."""
    batch_ended.clear()
    deadline = time.monotonic() + STOP_WAIT
    while time.monotonic() < deadline and not batch_ended.is_set():
        try:
            if not query.status["isTriggerActive"]:
                break
        except Exception:  # noqa: BLE001 - the query ended meanwhile
            break
        batch_ended.wait(0.05)
    query.stop()


def hold_for_test(point: str, batch: int) -> None:
    """Test hook: with ``FLOWC_STREAMING_TEST_HOLD=<dir>`` and
    ``FLOWC_STREAMING_TEST_HOLD_AT=<point>-<batch>``, the driver announces
    ``<dir>/<point>-<batch>`` there and waits, so a test can kill -9 it at exactly that
    moment (tests/streaming/test_exactly_once.py). Off when the variables are unset."""
    directory = os.environ.get("FLOWC_STREAMING_TEST_HOLD")
    if not directory or os.environ.get("FLOWC_STREAMING_TEST_HOLD_AT") != f"{point}-{batch}":
        return
    marker = os.path.join(directory, f"{point}-{batch}")
    with open(marker, "w", encoding="utf-8") as fh:
        fh.write(str(os.getpid()))
    time.sleep(120)


def install_stop_signals(stop: threading.Event) -> Callable[[], None]:
    """SIGINT / SIGTERM set ``stop`` (the run ends after the running micro-batch); returns
    a function restoring the previous handlers."""
    old = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}

    def handler(signum: int, _frame: Any) -> None:
        if stop.is_set():  # a second Ctrl-C: stop now
            raise KeyboardInterrupt
        stop.set()
        print("\nflowc: stopping after the current micro-batch ...", file=sys.stderr)
    handler.flowc_stop = True  # type: ignore[attr-defined]  # known to run_streaming
    for s in old:
        signal.signal(s, handler)

    def restore() -> None:
        for s, h in old.items():
            signal.signal(s, h)
    return restore
