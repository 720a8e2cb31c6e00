"""REPL continuous queries: a query over a monitored directory shows each micro-batch's
results as it commits, in the session's result mode, until Ctrl-C (a real SIGINT to this
process), which stops the query and returns to the session - which then runs the next
query as usual."""

from __future__ import annotations

import io
import os
import signal
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from flowc.repl import Session

TABLE = """CREATE TABLE clicks (user_id STRING, action STRING, ts TIMESTAMP(3),
  WATERMARK FOR ts AS ts - INTERVAL '1' SECOND) WITH (
  'connector' = 'filesystem', 'path' = '{src}', 'format' = 'csv',
  'source.monitor-interval' = '100ms');"""
FLOW_SOURCE = ("source clicks (user_id string, action string, ts timestamp) from csv '{src}' "
               "monitor every 100ms{watermark};")


@pytest.fixture(scope="module")
def spark() -> Any:
    from flowc.executor import get_spark
    from flowc.executor.spark.session import spark_running

    return get_spark(None if spark_running() else "local[2]")


def _session(tmp_path: Path, *setup: str) -> tuple[Session, io.StringIO, Path]:
    """A session writing to a buffer, its input directory ``in`` and its ``setup``
    statements run (``{src}`` in them: the directory)."""
    src = tmp_path / "in"
    src.mkdir()
    out = io.StringIO()
    s = Session(out=out, width=160)
    for statement in setup:
        s.execute(statement.replace("{src}", str(src)))
    return s, out, src


def _land(src: Path, k: int, rows: list[str]) -> None:
    tmp = src / f".f{k}.csv"
    tmp.write_text("user_id,action,ts\n" + "".join(r + "\n" for r in rows))
    tmp.rename(src / f"f{k}.csv")


def _until(out: io.StringIO, text: str, timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while text not in out.getvalue():
        if time.monotonic() > deadline:
            raise AssertionError(f"{text!r} never shown:\n{out.getvalue()}")
        time.sleep(0.05)


def _stream(session: Session, out: io.StringIO, query: str,
            steps: Callable[[], None]) -> tuple[str, float]:
    """Run ``query`` (it blocks until Ctrl-C) while ``steps`` lands files and waits for
    their results; then Ctrl-C. Returns the output and the seconds from Ctrl-C to the
    prompt."""
    sent: list[float] = []
    errors: list[BaseException] = []

    def feed() -> None:
        try:
            steps()
        except BaseException as e:  # noqa: BLE001
            errors.append(e)
        sent.append(time.monotonic())
        os.kill(os.getpid(), signal.SIGINT)  # Ctrl-C
    t = threading.Thread(target=feed)
    t.start()
    session.execute(query)
    back = time.monotonic()
    t.join()
    if errors:
        raise errors[0]
    return out.getvalue(), back - sent[0]


def _rows(text: str) -> list[str]:
    return [" ".join(line.replace("│", " ").split()) for line in text.splitlines()
            if line.startswith("│")]


@pytest.mark.spark
@pytest.mark.parametrize("mode", ["changelog", "table"])
def test_an_updating_query_shows_each_batch_until_ctrl_c(spark: Any, tmp_path: Path,
                                                         mode: str) -> None:
    s, out, src = _session(tmp_path, "SET 'parallelism.default' = '1';",
                           f"SET 'sql-client.execution.result-mode' = '{mode}';", TABLE)

    def steps() -> None:
        _land(src, 0, ["u1,click,1000", "u2,click,2000"])
        _until(out, "micro-batch 0:")
        _land(src, 1, ["u1,buy,3000"])
        _until(out, "micro-batch 1:")

    text, stop_seconds = _stream(
        s, out, "SELECT user_id, COUNT(*) AS n FROM clicks GROUP BY user_id;", steps)
    assert "streaming: each micro-batch's results as it commits; Ctrl-C stops" in text
    first, second = text.split("micro-batch 0:")[0], text.split("micro-batch 0:")[1]
    if mode == "changelog":  # each batch's changes, with their row kinds
        assert _rows(first) == ["+I u1 1", "+I u2 1"]
        assert _rows(second) == ["-U u1 1", "+U u1 2"]
        assert "micro-batch 1: new 2 rows of changelog" in text
    else:  # the changelog so far applied: the table as it is now
        assert _rows(first) == ["u1 1", "u2 1"]
        assert sorted(_rows(second)) == ["u1 2", "u2 1"]  # materialize: an update moves last
        assert "micro-batch 1: the table now 2 rows (the changelog applied" in text
    assert "stopped after 2 micro-batches (3 rows read; 4 result rows)" in text
    assert stop_seconds < 30  # Ctrl-C ends the query after its batch, not after a timeout
    # back at the prompt: the session goes on, and no query is left running
    assert not [q for q in spark.streams.active if (q.name or "").startswith("flowc-")]
    s.execute("show tables;")
    assert _rows(out.getvalue())[-1].startswith("clicks filesystem")


@pytest.mark.spark
def test_a_windowed_flow_query_shows_windows_as_they_close(spark: Any,
                                                          tmp_path: Path) -> None:
    s, out, src = _session(tmp_path, "set parallelism = 1;",
                           FLOW_SOURCE.format(src="{src}", watermark=" watermark ts - 1s"))

    def steps() -> None:
        _land(src, 0, ["u1,click,1000", "u1,click,2000", "u2,click,4000"])
        _until(out, "micro-batch 0: no new rows")
        _land(src, 1, ["u1,click,7000"])  # the watermark passes 5 s: [0, 5) closes
        _until(out, "micro-batch 1:")

    text, _ = _stream(s, out, "clicks | key by user_id | window tumbling 5s "
                              "| aggregate count(*) as n;", steps)
    assert "micro-batch 0: no new rows" in text  # no window closed yet
    closed = [r for r in _rows(text) if r.startswith(("u1", "u2"))]
    assert [r.split()[0] + " " + r.split()[-1] for r in closed] == ["u1 2", "u2 1"]
    assert "micro-batch 1: new 2 rows" in text
    assert "stopped after 2 micro-batches (4 rows read; 2 result rows)" in text


@pytest.mark.spark
def test_a_pipeline_ending_in_print_shows_its_lines_per_batch(spark: Any,
                                                              tmp_path: Path) -> None:
    s, out, src = _session(tmp_path, "set parallelism = 1;",
                           FLOW_SOURCE.format(src="{src}", watermark=""))

    def steps() -> None:
        _land(src, 0, ["u1,buy,1000", "u2,view,2000"])
        _until(out, "+I[u1, buy")
        _land(src, 1, ["u3,buy,3000"])
        _until(out, "+I[u3, buy")

    text, _ = _stream(s, out, "clicks | filter action = 'buy' | map user_id, action "
                              "| print;", steps)
    body = text.split("Ctrl-C stops")[1]
    assert [x for x in body.splitlines() if x.startswith("+I")] == ["+I[u1, buy]",
                                                                   "+I[u3, buy]"]
    assert "stopped after 2 micro-batches (3 rows read)" in text


def test_a_query_the_streaming_executor_cannot_run_is_a_diagnostic(tmp_path: Path) -> None:
    """Refused before Spark or the banner: the session goes on."""
    out = io.StringIO()
    s = Session(out=out, width=160)
    # a monitored directory on HDFS: the streaming executor watches local paths only
    s.execute("source x (k string) from csv 'hdfs://nohost:9000/a' monitor every 1s;")
    s.execute("x;")
    text = out.getvalue()
    assert "error: the streaming executor cannot run 'Source: x' yet: it reads local " \
           "paths only" in text
    assert "streaming:" not in text
