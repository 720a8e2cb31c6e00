"""Bounded BATCH session windows (order-free aggregates, ``sessions.SessionWindow``): the
subtask's records spill to sorted Arrow IPC runs past ``flowc.executor.state-memory``.

A BATCH session is found among its key's records only (one sort by key, timestamp), so
past the limit the buffered records (key fields, aggregate arguments, timestamp ``ts``
and arrival number ``pos``) are written as one *run* sorted by a hash of their key
(``we``: ``joinspill.key_hash``, equal keys equal hashes) to a directory of the subtask's
own. At end of input the runs are merged by ranges of that hash (``spill.merge_runs``),
so a range holds every record of its keys, and each range's sessions are computed as in
memory (``SessionWindow.sessions``, with the records' global arrival numbers). The
in-memory window fires sessions by (end, registration arrival) over all keys, which a
range of keys does not cover: the sessions' results, with that sort key (``we`` the end,
``pos`` the registration), go to runs of their own past the limit, merged by ranges of
end and sorted within each - exactly the in-memory output. Memory holds the limit, a
batch per run file and one range.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from flowc.executor.arrow import spill
from flowc.executor.arrow.convert import Chunk
from flowc.executor.arrow.joinspill import key_hash
from flowc.executor.arrow.sessions import SessionWindow
from flowc.executor.arrow.windows import distinct_values, partial, results


class SpillingSessionWindow(SessionWindow, spill.SortedRuns, spill.Spilling):
    """A BATCH session window whose records spill past ``limit`` bytes (see the module)."""

    def __init__(self, *args: Any, limit: int = spill.DEFAULT, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.limit = limit
        self.seen = 0  # arrival numbers handed out
        self.pos: list[np.ndarray] = []
        self.held = 0
        self.runs: list[dict[str, str]] = []
        self.levels: list[int] = []
        self.files = 0
        self.directory: str | None = None
        self.spilled_bytes = 0
        self.row_bytes = 1

    def add(self, c: Chunk) -> None:
        n = len(self.ts)
        super().add(c)
        if len(self.ts) == n:
            return None
        self.pos.append(np.arange(self.seen, self.seen + c.num_rows, dtype=np.int64))
        self.seen += c.num_rows
        self.held += self.parts[-1].nbytes + 16 * c.num_rows
        if self.held > self.limit:
            self._write({"s": self._buffered()}, "run")
        return None

    def _buffered(self) -> pa.Table:
        """The buffered records as run rows (``we`` the key hash, ``pos`` the arrival)."""
        table = pa.concat_tables(self.parts)
        keys = [table.column(k).combine_chunks() for k in self.assigned.keys]
        table = table.append_column("ts", pa.array(np.concatenate(self.ts))).append_column(
            "pos", pa.array(np.concatenate(self.pos))).append_column(
            "we", pa.array(key_hash(keys) if keys else np.zeros(table.num_rows, np.int64)))
        self.parts, self.ts, self.pos, self.held = [], [], [], 0
        return table

    def fired(self) -> Iterator[Chunk]:
        try:
            if not self.runs:
                out = self.fire()
                if out is not None and out.num_rows:
                    yield out
                return
            last = [{"s": spill.by_range(self._buffered())}] if self.parts else []
            records = spill.merge_runs(self.runs, last, ["s"], lead=None,
                                       rows=self._range_rows())
            # The input runs are read by ``records``; the results get runs of their own.
            self.runs, self.levels = [], []
            held: list[pa.Table] = []
            size = 0
            for tables in records:
                got = self._range(pa.concat_tables([t for t in tables["s"]]))
                if got is None:
                    continue
                held.append(got)
                size += got.nbytes
                if size > self.limit:
                    self._write({"o": pa.concat_tables(held)}, "out")
                    held, size = [], 0
            rest = [{"o": spill.by_range(pa.concat_tables(held))}] if held else []
            if not self.runs:
                if held:
                    yield self._chunk(rest[0]["o"])
                return
            for tables in spill.merge_runs(self.runs, rest, ["o"], lead="o",
                                           rows=self._range_rows()):
                t = pa.concat_tables([t for t in tables["o"] if t.num_rows])
                if t.num_rows:
                    yield self._chunk(spill.by_range(t))
        finally:
            self.close()

    def _range(self, t: pa.Table) -> pa.Table | None:
        """A range's session results as rows: the output fields ``c0``..., ``ts``, the
        sort key ``we`` (end) and ``pos`` (registration)."""
        if not t.num_rows:
            return None
        keys = self.assigned.keys
        groups = keys + ["ws", "we"]
        kinds = self.assigned.agg.kinds
        ts = t.column("ts").to_numpy().astype(np.int64)
        arrival = t.column("pos").to_numpy().astype(np.int64)
        rows = self.sessions(t.drop_columns(["ts", "pos", "we"]), ts, arrival)
        grouped = partial(rows, groups, kinds)
        distinct = {i: distinct_values(rows, groups, i)
                    for i, k in enumerate(kinds) if k == "count_distinct"}
        out = results(grouped, distinct, groups, keys, kinds, self.out_schema)
        table = pa.Table.from_batches([out.batch])
        table = table.rename_columns([f"c{i}" for i in range(table.num_columns)])
        return table.append_column("ts", out.ts).append_column(
            "we", pc.cast(grouped.column("we"), pa.int64())).append_column(
            "pos", pc.cast(grouped.column("row_min"), pa.int64()))

    def _chunk(self, t: pa.Table) -> Chunk:
        n = len(self.out_schema)
        return Chunk(pa.RecordBatch.from_arrays(
            [t.column(i).combine_chunks() for i in range(n)], schema=self.out_schema),
            t.column("ts").combine_chunks())

    def close(self) -> None:
        self.parts, self.ts, self.pos = [], [], []
        if self.directory is not None:
            shutil.rmtree(self.directory, ignore_errors=True)
            self.directory = None
