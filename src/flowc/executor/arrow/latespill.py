"""Bounded STREAMING window state with allowed lateness: the (record, window) rows of
windows not fired yet spill to sorted Arrow IPC runs past ``flowc.executor.state-memory``.

With allowed lateness a ``StreamWindow`` keeps its rows, not partials: a late record
re-fires its window with the group's running aggregate at it (``_late_firings``), until
the watermark passes the window's cleanup time. Only windows already fired (``end - 1 <=``
watermark) can fire late, so ``LateSpillingState`` keeps those in memory and, past the
limit, writes the rows of the windows still to come (``end - 1 >`` the watermark of the
last firing) as one *run* sorted by window end (stable: a group's rows keep their order)
to a directory of the subtask's own. A watermark rise to ``hi`` first reads back, from a
cursor per run, the prefix of every run with ``end - 1 <= hi`` (runs in order, then the
rows in memory: a group's rows in row order, as the in-memory state holds them) and then
fires as the in-memory state does - so the results, late firings included, are the
in-memory window's. Memory holds the limit's worth of unfired rows, a batch per run file
and the rows of the fired windows not yet cleaned up (at most ``lateness`` of event time
behind the watermark, which the in-memory state holds too).
"""

from __future__ import annotations

import shutil
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from flowc.executor.arrow import spill
from flowc.executor.arrow.convert import Chunk
from flowc.executor.arrow.stream_windows import LONG_MIN
from flowc.executor.arrow.windows import WindowState


class LateSpillingState(WindowState):
    """A STREAMING window's row state (allowed lateness) that spills the rows of its
    windows not fired yet past ``limit`` bytes (see the module)."""

    def __init__(self, keys: list[str], kinds: tuple[str, ...], limit: int) -> None:
        super().__init__(keys, kinds, compact=False)
        self.limit = limit
        # Spill again only when memory doubles what the last spill kept (fired windows'
        # rows cannot go): a run per append would be many small files.
        self.threshold = limit
        self.fired_upto = LONG_MIN  # the watermark of the last firing
        self.runs: list[str] = []
        self.cursors: list[spill.Cursor] = []
        self.directory: str | None = None
        self.spilled_bytes = 0
        self.peak = 0  # the most row bytes held after an append

    def held(self) -> int:
        return sum(t.nbytes for t in self.rows)

    def append(self, table: pa.Table) -> None:
        super().append(table)
        held = self.held()
        self.peak = max(self.peak, held)
        if held > self.threshold:
            self._spill()

    def _spill(self) -> None:
        raw = self.raw()
        if raw is None:
            return
        future = pc.greater(pc.subtract(raw.column("we"), 1), self.fired_upto)
        rest = raw.filter(pc.invert(future))
        self.rows, self.buffered = ([rest] if rest.num_rows else []), rest.num_rows
        self.threshold = max(self.limit, 2 * rest.nbytes)
        table = raw.filter(future)
        if not table.num_rows:
            return
        if self.directory is None:
            self.directory = spill.spill_directory()
        path, size = spill.write_run(self.directory, f"late{len(self.runs)}",
                                     spill.by_end(table), self.limit)
        self.spilled_bytes += size
        self.runs.append(path)
        self.cursors.append(spill.Cursor(path))

    def fire(self, out_schema: pa.Schema, lo: int | None = None, hi: int | None = None,
             remove: bool = True) -> Chunk | None:
        if self.cursors:
            # Windows with end - 1 <= hi: ends below hi + 2 (all of them at the end).
            bound = None if hi is None or hi >= (1 << 63) - 2 else hi + 2
            taken = [spill.run_prefix(c, bound) for c in self.cursors]
            taken = [t for t in taken if t.num_rows]
            self.cursors = [c for c in self.cursors if not (c.done and not len(c.ends))]
            if taken:
                self.rows = [*taken, *self.rows]
                self.buffered = sum(t.num_rows for t in self.rows)
        if hi is not None:
            self.fired_upto = max(self.fired_upto, hi)
        return super().fire(out_schema, lo, hi, remove)

    def close(self) -> None:
        self.cursors = []
        if self.directory is not None:
            shutil.rmtree(self.directory, ignore_errors=True)
            self.directory = None


class LateSpillingStreamWindow(spill.FinalInRanges):
    """A STREAMING window with allowed lateness whose unfired rows spill past ``limit``
    (the final watermark fires a range of ends at a time: ``spill.FinalInRanges``)."""

    def __init__(self, *args: Any, limit: int = spill.DEFAULT, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.state: LateSpillingState = LateSpillingState(
            self.state.keys, self.state.kinds, limit)
