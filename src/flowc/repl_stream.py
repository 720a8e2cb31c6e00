"""REPL continuous queries: a query over an unbounded source (a monitored directory,
datagen without a row limit, a socket, Kafka) runs on the streaming executor and shows each
micro-batch's results as the batch commits, in the session's result mode, until Ctrl-C,
which stops the query after its running micro-batch and returns to the prompt.

- an insert-only result: each batch's new rows, as a table ("no new rows" when none);
- an updating result, 'changelog' / 'tableau': each batch's changelog rows (op column);
- an updating result, 'table': the changelog so far applied, shown again after every batch
  that changed it (Flink's SQL client refreshes its table view the same way).

The query's checkpoint is temporary: a continuous query in the REPL does not resume.
"""

from __future__ import annotations

import contextlib
import io
import threading
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from flowc.rowkind import RowKind
from flowc.sql.changelog import Updating

if TYPE_CHECKING:
    from flowc.repl import Session


class _View:
    """Receives each micro-batch's collected rows (on Spark's foreachBatch thread) and
    shows them on the session's console."""

    def __init__(self, session: Session, names: list[str], kinds: list[str] | None,
                 updating: Updating | None) -> None:
        self.session = session
        self.names = names
        self.kinds = kinds
        self.updating = updating
        self.history: list[Any] = []  # mode 'table': the whole changelog so far
        self.rows = 0

    def batch(self, batch: int, collected: dict[str, list[Any]]) -> None:
        rows = collected.get("result", [])
        s = self.session
        if not rows:  # a line all the same: the query is alive and the batch is done
            s.console.print(f"micro-batch {batch}: no new rows", markup=False)
            return
        self.rows += len(rows)
        whole = s.result_mode == "table" and (
            self.updating is not None or any(isinstance(r, RowKind) for r in rows))
        if whole:
            self.history.extend(rows)
            rows = self.history
        names, cells, note = s.shape(list(self.names), rows, self.kinds, self.updating)
        s._table(tuple(names), cells[: s.max_rows])
        more = f" (showing {s.max_rows})" if len(cells) > s.max_rows else ""
        what = "the table now" if whole else "new"
        s.console.print(f"micro-batch {batch}: {what} {len(cells)} row"
                        f"{'s' if len(cells) != 1 else ''}{note}{more}", markup=False)


def run_continuous(session: Session, job_graph: Any, columns: Iterable[str] | None,
                   kinds: list[str] | None, updating: Updating | None) -> None:
    """Run the query's job until Ctrl-C (a second Ctrl-C stops at once); print sinks' lines
    (a pipeline ending in ``| print``) are shown as each batch prints them."""
    from flowc.executor.streaming.plan import plan_streaming
    from flowc.executor.streaming.runner import install_stop_signals, run_streaming
    from flowc.repl_terminal import cancel_on_interrupt

    plan_streaming(job_graph)  # what it cannot run yet is an error before the banner
    with cancel_on_interrupt() as interrupted:
        session._wait_for_spark(interrupted)
    view = _View(session, list(columns), kinds, updating) if columns is not None else None
    stop = threading.Event()
    console = session.console
    console.print("streaming: each micro-batch's results as it commits; Ctrl-C stops",
                  markup=False)
    out = console.file  # the print sinks' lines (the runner writes them to stdout)
    log = io.StringIO()  # the runner's per-batch lines: the view shows the results instead
    restore = install_stop_signals(stop) \
        if threading.current_thread() is threading.main_thread() else None
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(log):
            stats = run_streaming(job_graph, master=session.master, job_name="flowc repl",
                                  stop=stop, collect=view.batch if view else None)
    except KeyboardInterrupt:  # the second Ctrl-C: stop the query now, not after its batch
        _stop_queries()
        raise
    finally:
        if restore is not None:
            restore()
    shown = f"; {view.rows:,} result rows" if view is not None else ""
    console.print(f"stopped after {stats.batches} micro-batch"
                  f"{'es' if stats.batches != 1 else ''} ({stats.rows:,} rows read{shown})",
                  markup=False)


def _stop_queries() -> None:
    """Stop the streaming queries this process started (named ``flowc-<pid>``)."""
    from flowc.executor.spark.session import get_spark, spark_running

    if not spark_running():
        return
    for q in get_spark().streams.active:
        if (q.name or "").startswith("flowc-"):
            with contextlib.suppress(Exception):
                q.stop()
