"""Bounded window state: a columnar window subtask spills its partial aggregates to local
disk when they pass ``flowc.executor.state-memory`` and merges them, sort-based, at the end.

``SpillingWindow`` is a ``BatchWindow`` whose folded state (per-(key, window) partials and
count-distinct value rows), once larger than the limit, is merged, sorted by window end
and written as one *run* of Arrow IPC files (one per table kind) to a directory of its own
under Spark's local dirs (``SPARK_LOCAL_DIRS``, else the temp dir), and dropped from
memory. At the end of input the runs and what is still in memory are read back one batch
per file at a time and merged by ranges of window end (``merge_runs``): every partial of a
(key, window) group carries the same end, so a range holds whole groups; each range is
folded and fired as ``BatchWindow.fire`` does (runs in input order, so first / last stay
right) and the ranges come out in end order - exactly the unspilled output, (end,
first-seen) order included. Memory then holds the limit, one batch per run file and one
range's groups, not the whole state. The directory is removed when the subtask ends.

Double sums are added one value at a time in record order (the row code's rounding), which
partials of separate runs cannot be merged into: after the first spill the rows' double
values are kept unfolded too (table 'f', spilled with each run) and a merged range adds
them, in run order, to the first run's sums.
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
from collections.abc import Iterator
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from flowc.errors import ConfigError
from flowc.executor.arrow import convert
from flowc.executor.arrow.convert import Chunk
from flowc.executor.arrow.stream_windows import StreamWindow
from flowc.executor.arrow.windows import (
    BatchWindow,
    WindowState,
    ends_in,
    exact_sums,
    float_sums,
    merge_partials,
)

OPTION = "flowc.executor.state-memory"
# The spelling a .flow `set` (and so `--set`) can write: a setting name has no '-'.
SCRIPT_OPTION = "flowc.executor.state_memory"
DEFAULT = 256 << 20  # bytes of window state per window subtask before it spills
BATCH_ROWS = 1 << 15  # rows per IPC batch of a run (what a merge holds per run file)
_UNITS = {"": 1, "b": 1, "k": 1 << 10, "kb": 1 << 10, "m": 1 << 20, "mb": 1 << 20,
          "g": 1 << 30, "gb": 1 << 30}


def state_memory(options: dict[str, str]) -> int:
    """The option's bytes (``512m``, ``2g``, ``65536``; default 256 MiB)."""
    name = OPTION if OPTION in options else SCRIPT_OPTION
    text = options.get(name)
    if text is None:
        return DEFAULT
    m = re.fullmatch(r"\s*(\d+)\s*([a-zA-Z]*)\s*", str(text).strip("'\""))
    if m is None or m.group(2).lower() not in _UNITS or int(m.group(1)) == 0:
        raise ConfigError(f"{name} must be a positive size such as 256m, 2g or 65536 "
                          f"(bytes), not '{text}'")
    return int(m.group(1)) * _UNITS[m.group(2).lower()]


def _local_dir() -> str:
    dirs = os.environ.get("SPARK_LOCAL_DIRS", "")
    return dirs.split(",")[0] if dirs else tempfile.gettempdir()


class Spilling:
    """A BATCH operator that may have spilled: its results come range by range at end of
    input (``fired``), and ``close`` removes its files (also after a failure)."""

    def fired(self) -> Iterator[Chunk]:
        raise NotImplementedError

    def close(self) -> None:
        raise NotImplementedError


class RunWriter:
    """A run file being written: Arrow IPC batches of ``BATCH_ROWS`` rows, smaller ones to
    keep a batch within 1/16 of ``limit`` bytes (a merge holds a batch per run)."""

    def __init__(self, directory: str, name: str, schema: pa.Schema,
                 limit: int | None = None) -> None:
        self.path = os.path.join(directory, f"{name}.arrow")
        self.limit = limit
        self.sink = pa.OSFile(self.path, "wb")
        self.writer = pa.ipc.new_file(self.sink, schema)

    def write(self, table: pa.Table) -> None:
        rows = BATCH_ROWS
        if self.limit is not None and table.num_rows:
            rows = max(1, min(rows, (self.limit // 16) * table.num_rows
                              // max(table.nbytes, 1)))
        self.writer.write_table(table, max_chunksize=rows)

    def close(self) -> tuple[str, int]:
        """The file's path and size."""
        self.writer.close()
        self.sink.close()
        return self.path, os.path.getsize(self.path)


def write_run(directory: str, name: str, table: pa.Table,
              limit: int | None = None) -> tuple[str, int]:
    """``table`` as one run file (``RunWriter``): its path and size."""
    w = RunWriter(directory, name, table.schema, limit)
    w.write(table)
    return w.close()


def spill_directory() -> str:
    """A new directory for one subtask's runs under Spark's local dirs."""
    return tempfile.mkdtemp(prefix="flowc-spill-", dir=_local_dir())


class SpillingState(WindowState):
    """A BATCH ``WindowState`` that spills its folded state past ``limit`` bytes."""

    def __init__(self, keys: list[str], kinds: tuple[str, ...], limit: int) -> None:
        super().__init__(keys, kinds)
        self.limit = limit
        self.runs: list[dict[str, str]] = []  # per run: table name -> IPC file
        self.directory: str | None = None
        self.spilled_bytes = 0
        self.merging = False
        self.sums: list[int] = []  # the double sums' aggregates (``float_sums``)
        self.values: list[pa.Table] = []  # their rows folded since the last spill
        self.values_schema: pa.Schema | None = None
        self.sources: list[pa.Table] | None = None  # a merged range's sums, in order

    def state_bytes(self) -> int:
        tables = [*self.partials, *(t for ts in self.distinct.values() for t in ts),
                  *self.values]
        return sum(t.nbytes for t in tables)

    def _folded(self, table: pa.Table) -> None:
        if self.values_schema is None:
            self.sums = float_sums(table, self.kinds)
            self.values_schema = table.select(
                self.groups + [f"a{i}" for i in self.sums]).schema
        if self.sums and self.runs:
            self.values.append(table.select(self.values_schema.names))

    def _merge(self, chosen: pa.Table) -> pa.Table:
        merged = super()._merge(chosen)
        if self.sources is None or not self.sums:
            return merged
        return exact_sums(merged, self.sources, self.groups, self.kinds, self.sums)

    def append(self, table: pa.Table) -> None:
        super().append(table)
        # The unfolded rows count too: fold (and maybe spill) early past the limit.
        if self.rows and sum(t.nbytes for t in self.rows) + self.state_bytes() > self.limit:
            self._compact()

    def _compact(self) -> None:
        super()._compact()
        if not self.merging and self.partials and self.state_bytes() > self.limit:
            self._spill()

    def tables(self) -> dict[str, pa.Table]:
        """The folded state as one table per kind: 'p' partials, 'd<i>' distinct rows."""
        out = {"p": merge_partials(pa.concat_tables(self.partials), self.groups, self.kinds)
               if len(self.partials) > 1 else self.partials[0]}
        for i, parts in self.distinct.items():
            out[f"d{i}"] = pa.concat_tables(parts).group_by(
                self.groups + [f"a{i}"], use_threads=False).aggregate([])
        if self.sums and self.values_schema is not None:
            out["f"] = pa.concat_tables(self.values) if self.values \
                else self.values_schema.empty_table()
        return out

    def _spill(self) -> None:
        if self.directory is None:
            self.directory = spill_directory()
        run: dict[str, str] = {}
        for name, table in self.tables().items():
            path, size = write_run(self.directory, f"run{len(self.runs)}-{name}",
                                   by_end(table), self.limit)
            self.spilled_bytes += size
            run[name] = path
        self.runs.append(run)
        self.partials = []
        self.values = []
        self.distinct = {i: [] for i in self.distinct}

    def close(self) -> None:
        if self.directory is not None:
            shutil.rmtree(self.directory, ignore_errors=True)
            self.directory = None


class SpillingWindow(BatchWindow, Spilling):
    """A BatchWindow whose state spills past ``limit`` bytes (see the module)."""

    def __init__(self, *args: Any, limit: int = DEFAULT, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.state: SpillingState = SpillingState(self.state.keys, self.state.kinds, limit)

    @property
    def runs(self) -> list[dict[str, str]]:
        return self.state.runs

    @property
    def directory(self) -> str | None:
        return self.state.directory

    @property
    def spilled_bytes(self) -> int:
        return self.state.spilled_bytes

    def fired(self) -> Iterator[Chunk]:
        """The fired windows: ``fire()``'s one chunk, or with spilled runs a chunk per
        range of window ends, in order."""
        st = self.state
        st._compact()  # folding the last rows may spill: decide after it
        if not st.runs:
            out = self.fire()
            if out is not None and out.num_rows:
                yield out
            return
        names = list(st.runs[0])
        last = [{k: by_end(t) for k, t in st.tables().items()}] if st.partials else []
        st.merging = True
        try:
            for tables in merge_runs(st.runs, last, names):
                st.partials = [t for t in tables["p"] if t.num_rows]
                st.distinct = {i: tables[f"d{i}"] for i in st.distinct}
                if "f" in tables:  # the first run's sums, then the later runs' values
                    st.sources = tables["p"][:1] + tables["f"]
                out = self.fire()
                if out is not None and out.num_rows:
                    yield out
        finally:
            st.merging = False
            st.sources = None
            self.close()

    def close(self) -> None:
        self.state.close()


class StreamSpillingState(SpillingState):
    """STREAMING window state (no allowed lateness: folded partials) that spills past
    ``limit`` bytes like ``SpillingState``. A watermark rise fires the groups ending by
    it: each run is sorted by window end, so they are a prefix of every run, read from a
    cursor per run file (one batch held beyond it) and merged with the memory's groups in
    run order, memory last - the order of their rows, as in BATCH's merged ranges."""

    def __init__(self, keys: list[str], kinds: tuple[str, ...], limit: int) -> None:
        super().__init__(keys, kinds, limit)
        self.cursors: list[dict[str, Cursor]] = []
        self.peak = 0  # the most bytes held after an append (rows and folded state)

    def append(self, table: pa.Table) -> None:
        super().append(table)
        self.peak = max(self.peak, self.state_bytes() + sum(t.nbytes for t in self.rows))

    def fire(self, out_schema: pa.Schema, lo: int | None = None, hi: int | None = None,
             remove: bool = True) -> Chunk | None:
        self._compact()
        if not self.runs:
            return super().fire(out_schema, lo, hi, remove)
        assert remove
        # Groups with end - 1 <= hi: window ends below hi + 2 (all of them at the end).
        bound = None if hi is None or hi >= (1 << 63) - 2 else hi + 2
        while len(self.cursors) < len(self.runs):
            self.cursors.append({name: Cursor(path) for name, path
                                 in self.runs[len(self.cursors)].items()})
        taken = [{name: run_prefix(c, bound) for name, c in cs.items()} for cs in self.cursors]
        self.partials = [t["p"] for t in taken if t["p"].num_rows] + self.partials
        self.distinct = {i: [t[f"d{i}"] for t in taken] + parts
                         for i, parts in self.distinct.items()}
        if self.sums:  # the first run's sums, then every later row's values in order
            self.sources = [taken[0]["p"]] + [t["f"] for t in taken] + self.values
        self.merging = True
        try:
            return super().fire(out_schema, lo, hi, remove)
        finally:
            self.merging = False
            self.sources = None
            kept = [v.filter(pc.invert(ends_in(v, lo, hi))) for v in self.values]
            self.values = [v for v in kept if v.num_rows]


def run_prefix(cursor: Cursor, bound: int | None) -> pa.Table:
    """The run's rows whose window ends before ``bound`` (all with None)."""
    while not cursor.done and (bound is None or cursor.last_end() is None
                               or cursor.last_end() < bound):  # type: ignore[operator]
        cursor.load()
    return cursor.take_below(bound)


def streaming_window(spec: Any, key: Any, in_schema: Any, out_schema: pa.Schema,
                     limit: int | None) -> Any:
    """A STREAMING window member: with a ``limit`` its state spills (no allowed lateness:
    ``SpillingStreamWindow``; with it, the rows of windows not fired yet:
    ``latespill.LateSpillingStreamWindow``). Without a limit (the unbounded executor,
    which snapshots the state from memory) it is held in memory."""
    if limit is None:
        return StreamWindow(spec, key, in_schema, out_schema)
    if int(spec.allowed_lateness):
        from flowc.executor.arrow.latespill import LateSpillingStreamWindow

        return LateSpillingStreamWindow(spec, key, in_schema, out_schema, limit=limit)
    return SpillingStreamWindow(spec, key, in_schema, out_schema, limit=limit)


class FinalInRanges(StreamWindow, Spilling):
    """A spilling STREAMING window whose final Long.MAX_VALUE watermark, once it has
    spilled, fires at end of input (``fired``) a range of window ends at a time rather
    than all at once in ``add``: a chunk of results per range (each the groups ending by
    the least end any run's cursor has read), in end order, then the watermark - the
    in-memory window's output, in pieces, and memory holds a range, not the state."""

    final = False
    in_schema: pa.Schema

    def add(self, c: Chunk) -> Chunk:
        marks = c.marks
        if marks is None or not len(marks[1]) or int(marks[1][-1]) != (1 << 63) - 1 \
                or not self.state.runs:
            return super().add(c)
        self.final = True  # everything arrived: the last mark is the end of input
        self.in_schema = c.batch.schema
        pos, val = (np.asarray(m, np.int64) for m in marks)
        return super().add(Chunk(c.batch, c.ts, (pos[:-1], val[:-1]), c.wm_at))

    def fired(self) -> Iterator[Chunk]:
        try:
            if self.final:
                yield from self._final()
        finally:
            self.close()

    def _final(self) -> Iterator[Chunk]:
        top = (1 << 63) - 1
        st = self.state
        lo = self.wm
        st.fire(self.out_schema, lo, lo)  # opens a cursor per run (nothing ends by lo)
        while True:
            ends = [e for c in _cursors(st) if not c.done
                    for e in [c.last_end()] if e is not None]
            hi = min(ends) - 1 if ends else top
            out = st.fire(self.out_schema, lo, hi, remove=True)
            if out is not None and out.num_rows:
                yield out
            lo = max(lo, hi)  # (fired windows kept for lateness never fire again)
            if hi == top:
                break
        self.wm = top
        mark = (np.zeros(1, np.int64), np.asarray([top], np.int64))
        if self.side_output:  # the late side output gets the watermark too, after it
            e = convert.empty(self.in_schema)
            self.late = Chunk(e.batch, e.ts, mark)
        e = convert.empty(self.out_schema)
        yield Chunk(e.batch, e.ts, mark)

    def close(self) -> None:
        self.state.close()  # type: ignore[attr-defined]


def _cursors(state: Any) -> list[Cursor]:
    return [c for cs in state.cursors for c in (cs.values() if isinstance(cs, dict) else [cs])]


class SpillingStreamWindow(FinalInRanges):
    """A STREAMING window (no allowed lateness) whose state spills past ``limit``."""

    def __init__(self, *args: Any, limit: int = DEFAULT, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.state: StreamSpillingState = StreamSpillingState(
            self.state.keys, self.state.kinds, limit)


def by_end(table: pa.Table) -> pa.Table:
    return table.take(pc.sort_indices(table, sort_keys=[("we", "ascending")]))


class Cursor:
    """One run file (or table) read a batch at a time; ``buffer`` holds what is read but not yet
    merged (sorted by window end), ``ends`` its window ends."""

    def __init__(self, source: str | pa.Table) -> None:
        if isinstance(source, pa.Table):
            self.batches: Any = iter(source.to_batches(max_chunksize=BATCH_ROWS))
            schema = source.schema
        else:
            reader = pa.ipc.open_file(pa.OSFile(source, "rb"))
            self.batches = (reader.get_batch(i) for i in range(reader.num_record_batches))
            schema = reader.schema
        self.empty = schema.empty_table()
        self.buffer = self.empty
        self.ends = np.zeros(0, np.int64)
        self.done = False
        self.load()

    def load(self) -> None:
        """Read batches until one adds rows, or to the end."""
        for batch in self.batches:
            if batch.num_rows:
                self.buffer = pa.concat_tables([self.buffer, pa.Table.from_batches([batch])])
                self.ends = np.concatenate([self.ends, batch.column("we").to_numpy()])
                return
        self.done = True

    def last_end(self) -> int | None:
        return int(self.ends[-1]) if len(self.ends) else None

    def take_below(self, end: int | None) -> pa.Table:
        """The buffered rows whose window ends before ``end`` (all with None)."""
        cut = len(self.ends) if end is None else \
            0 if not len(self.ends) or self.ends[0] >= end else \
            int(np.searchsorted(self.ends, end, side="left"))
        if cut == 0:
            return self.empty
        out, self.buffer = self.buffer.slice(0, cut), self.buffer.slice(cut)
        self.ends = self.ends[cut:]
        return out


def merge_runs(runs: list[dict[str, str]], last: list[dict[str, pa.Table]],
               names: list[str], lead: str | None = "p",
               rows: int | None = None) -> Iterator[dict[str, list[pa.Table]]]:
    """Per range of window ends (column ``we``; any int64 the runs are sorted by), in
    order: per table name, the rows of every run (in run order, ``last`` after the files)
    whose groups end in the range; a range without rows of table ``lead`` is skipped
    (but the last). A range gathers about ``rows`` (default ``BATCH_ROWS``) rows: fewer,
    larger ranges, each within a caller's memory budget."""
    target = BATCH_ROWS if rows is None else max(1, rows)
    cursors = {name: [Cursor(r[name]) for r in runs] + [Cursor(t[name]) for t in last]
               for name in names}
    every = [c for cs in cursors.values() for c in cs]
    pieces = {name: [[] for _ in cs] for name, cs in cursors.items()}
    held = 0

    def gathered() -> dict[str, list[pa.Table]]:
        out = {name: [pa.concat_tables(ps) if len(ps) > 1 else ps[0] if ps else c.empty
                      for ps, c in zip(pieces[name], cursors[name])] for name in names}
        for lists in pieces.values():
            for ps in lists:
                ps.clear()
        return out
    while True:
        live = [c for c in every if not c.done]
        if not live:
            for name, cs in cursors.items():
                for ps, c in zip(pieces[name], cs):
                    ps.append(c.take_below(None))
            yield gathered()
            return
        # Groups ending before the smallest last-read end are complete in every buffer.
        ends = [c.last_end() for c in live]
        hi = min(e for e in ends if e is not None) if any(e is not None for e in ends) \
            else None
        if hi is not None:
            for name, cs in cursors.items():
                for ps, c in zip(pieces[name], cs):
                    t = c.take_below(hi)
                    if t.num_rows:
                        ps.append(t)
                        held += t.num_rows
            if held >= target:
                held = 0
                out = gathered()
                if lead is None or any(t.num_rows for t in out[lead]):
                    yield out
        for c, e in zip(live, ends):
            if e is None or e == hi:
                c.load()


FAN_IN = 8  # runs merged into one


def by_range(table: pa.Table) -> pa.Table:
    """Run rows in run order: by the range column ``we``, then the place ``pos``."""
    return table.sort_by([("we", "ascending"), ("pos", "ascending")])


class SortedRuns:
    """An operator's runs of named tables sorted by (``we``, ``pos``) in a directory of
    its own: ``runs`` (per run: name -> file), ``levels`` (merges that made each run).
    ``FAN_IN`` runs of one level merge into one of the next. The operator sets ``limit``
    and starts with no runs, levels or directory, ``spilled_bytes`` and ``files`` 0 and
    ``row_bytes`` (the widest run row seen: sizes merged ranges) 1."""

    limit: int
    runs: list[dict[str, str]]
    levels: list[int]
    directory: str | None
    spilled_bytes: int
    row_bytes: int
    files: int

    def _write(self, tables: dict[str, pa.Table], prefix: str) -> None:
        """One run: per table, its rows sorted by (``we``, merged place)."""
        if self.directory is None:
            self.directory = spill_directory()
        run: dict[str, str] = {}
        for name, table in tables.items():
            table = by_range(table)
            path, size = write_run(self.directory, f"{prefix}{self.files}-{name}", table,
                                   self.limit)
            self.spilled_bytes += size
            self.row_bytes = max(self.row_bytes, table.nbytes // max(table.num_rows, 1))
            run[name] = path
        self.runs.append(run)
        self.files += 1
        self.levels.append(0)
        # FAN_IN runs of one level merge into one of the next: a merge then reads at most
        # FAN_IN * log(runs) files at a batch each, and each row is rewritten log times.
        while len(self.levels) >= FAN_IN and len(set(self.levels[-FAN_IN:])) == 1:
            merged = self._merged(self.runs[-FAN_IN:], f"{prefix}{self.files}m")
            self.files += 1
            for old in self.runs[-FAN_IN:]:
                for path in old.values():
                    os.remove(path)
            level = self.levels[-1] + 1
            del self.runs[-FAN_IN:], self.levels[-FAN_IN:]
            self.runs.append(merged)
            self.levels.append(level)

    def _merged(self, runs: list[dict[str, str]], prefix: str) -> dict[str, str]:
        """``runs`` as one run, range by range (``merge_runs``)."""
        assert self.directory is not None
        writers = {n: RunWriter(self.directory, f"{prefix}-{n}",
                                pa.ipc.open_file(path).schema, self.limit)
                   for n, path in runs[0].items()}
        for tables in merge_runs(runs, [], list(writers), lead=None, rows=self._range_rows()):
            for n, w in writers.items():
                w.write(by_range(pa.concat_tables(tables[n])))
        return {n: w.close()[0] for n, w in writers.items()}

    def _range_rows(self) -> int:
        """Rows a merged range gathers: a quarter of the limit's worth."""
        return self.limit // 4 // max(self.row_bytes, 1)


class Received:
    """A consumer subtask's received shuffle items ``(channel id, sequence, IPC bytes,
    ...)``, handed out in (channel, sequence) order - the BATCH channel order. Their bytes
    stay in memory up to ``limit`` (``flowc.executor.state-memory``); past it each further
    item's bytes are appended to one file under the local dirs and read back when its
    turn comes, so memory holds the limit and a small index, not the whole partition."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.held = 0
        # (channel, sequence, bytes or None, file offset, length, the item's rest)
        self.index: list[tuple[int, int, bytes | None, int, int, tuple[Any, ...]]] = []
        self.directory: str | None = None
        self.file: Any = None
        self.spilled_bytes = 0

    def add(self, item: tuple[Any, ...]) -> None:
        cid, seq, data, *rest = item
        if self.held + len(data) <= self.limit:
            self.held += len(data)
            self.index.append((cid, seq, data, 0, 0, tuple(rest)))
            return
        if self.file is None:
            self.directory = tempfile.mkdtemp(prefix="flowc-received-", dir=_local_dir())
            self.file = open(os.path.join(self.directory, "received.bin"), "w+b")  # noqa: SIM115
        self.index.append((cid, seq, None, self.spilled_bytes, len(data), tuple(rest)))
        self.file.write(data)
        self.spilled_bytes += len(data)

    def ordered(self) -> Iterator[tuple[Any, ...]]:
        """The items in (channel, sequence) order; the spill file is removed after."""
        self.index.sort(key=lambda x: (x[0], x[1]))
        try:
            for entry in self.index:
                yield self._item(entry)
        finally:
            self.close()

    def channels(self, cids: list[int]) -> list[Iterator[tuple[Any, ...]]]:
        """Per channel of ``cids``, its items in sequence order, each read (from memory
        or the spill file) only when it is reached: the STREAMING merge interleaves the
        channels (``merge.merge_chunks``). ``close`` removes the file."""
        self.index.sort(key=lambda x: (x[0], x[1]))
        mine: dict[int, list[Any]] = {c: [] for c in cids}
        for entry in self.index:
            mine[entry[0]].append(entry)
        return [(self._item(e)[2:] for e in mine[c]) for c in cids]

    def _item(self, entry: tuple[int, int, bytes | None, int, int, tuple[Any, ...]]
              ) -> tuple[Any, ...]:
        cid, seq, data, offset, length, rest = entry
        if data is None:
            self.file.flush()
            self.file.seek(offset)
            data = self.file.read(length)
        return (cid, seq, data, *rest)

    def close(self) -> None:
        self.index = []
        if self.file is not None:
            self.file.close()
            self.file = None
        if self.directory is not None:
            shutil.rmtree(self.directory, ignore_errors=True)
            self.directory = None
