"""Bounded BATCH window and interval joins: a join subtask's input spills to sorted Arrow
IPC runs past ``flowc.executor.state-memory`` and is joined range by range, with exactly
the in-memory join's (``joins.py``) output and order.

In BATCH a join subtask's merged input is its channels concatenated (the order
``spill.Received.ordered`` hands the received items out), so each record's merged place
is a running count and no record is late. ``SpillingJoin`` takes the input a part at a
time (``JoinPart``: one received batch of one side) and buffers it; while the buffered
parts stay under the limit the join at end of input is the in-memory one on all of them.
Past the limit the buffer is written as one *run* per side (a directory of the subtask's
own under Spark's local dirs, removed when it ends), sorted by a range column ``we``:

- **window join**: one row per (record, window) pair, ``we`` the window end. A (key,
  window) group's rows all have its end, so a range of ends (``spill.merge_runs``) holds
  whole groups; the in-memory join orders groups by (end, first place), so the ranges'
  outputs, in end order, are its output.
- **interval join**: one row per record, ``we`` a hash of its key (equal keys, equal
  hashes; a range joins every key it holds exactly, by ``joins.key_codes``). The pairs
  of a range come out ordered by the in-memory join's sort key (the later record's
  place, the earlier one's bucket generation and place: ``IntervalJoin.pairs``), which
  a range of keys does not cover, so the pairs (both records' fields and timestamps,
  with the key) go to runs of their own sorted by the later record's place and are
  merged by ranges of it, each range sorted by the whole key and paired.

Memory then holds the limit, a batch per run file and one range (the groups of a range
of window ends, the records of a range of key hashes, the pairs of a range of places).
"""

from __future__ import annotations

import shutil
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from flowc.executor.arrow import convert, merge, spill
from flowc.executor.arrow.convert import Chunk
from flowc.executor.arrow.joins import (
    LONG_MIN,
    IntervalJoin,
    JoinInput,
    Side,
    WindowJoin,
    key_codes,
)
from flowc.executor.arrow.regular_join import RegularJoinTask
from flowc.executor.arrow.windows import assign_windows
from flowc.executor.runtime.core import require_timestamp

SIDES = ("l", "r")


@dataclass(frozen=True)
class JoinPart:
    """A part of a join subtask's input: its side (0 / 1) and records; STREAMING also
    each record's place in the merged input (``pos``) and the input watermark in force
    at it (``wm``). BATCH: one received batch, places a running count, no watermarks."""

    side: int
    chunk: Chunk
    pos: np.ndarray | None = None
    wm: np.ndarray | None = None

    @property
    def num_rows(self) -> int:
        return self.chunk.num_rows


def streaming_parts(channels: list[tuple[int, pa.Schema, Iterator[tuple[bytes, Any, Any]]]],
                    span: int = merge.SPAN) -> Iterator[JoinPart]:
    """A STREAMING join subtask's input as parts: ``channels`` (side, schema, payloads in
    arrival order; in channel order) merged a range of element positions at a time
    (``merge.merged_ranges``, the channel rule of ``joins.gather``), each range's records
    per side in merged order with their places and watermarks."""
    base = 0  # merged places handed out
    sides = [s for s, _, _ in channels]
    for r in merge.merged_ranges([(it, schema) for _, schema, it in channels], span):
        counts = [sum(c.num_rows for c in cs) for cs in r.chunks]
        # Each numbered record's (side, index among its side's records of the range).
        side_of = np.repeat(np.asarray(sides, np.int64), counts)
        local = np.zeros(len(side_of), np.int64)
        for s in (0, 1):
            mine = side_of == s
            local[mine] = np.arange(int(mine.sum()), dtype=np.int64)
        merged_side = side_of[r.order]
        for s in (0, 1):
            at = np.flatnonzero(merged_side == s)
            if not len(at):
                continue
            schema = next(sc for x, sc, _ in channels if x == s)
            records = convert.concat([c for x, cs in zip(sides, r.chunks) if x == s
                                      for c in cs], schema)
            yield JoinPart(s, records.take(pa.array(local[r.order[at]])), base + at,
                           r.seen[at].astype(np.int64))
        base += len(r.order)


class SpillingJoin(spill.SortedRuns, spill.Spilling):
    """A join subtask (``join``: the in-memory operator) whose input spills past
    ``limit`` bytes (see the module); its late records are counted by ``join``."""

    dropped = 0
    late = None

    def __init__(self, join: WindowJoin | IntervalJoin | RegularJoinTask, schemas: tuple[pa.Schema, pa.Schema],
                 limit: int) -> None:
        self.join = join
        self.schemas = schemas
        self.limit = limit
        self.seen = 0  # merged places handed out
        self.parts: list[list[tuple[Chunk, np.ndarray, np.ndarray | None]]] = [[], []]
        self.held = 0
        self.runs: list[dict[str, str]] = []
        self.directory: str | None = None
        self.spilled_bytes = 0
        self.row_bytes = 1  # the widest run row seen (sizes merged ranges)
        self.levels: list[int] = []  # per run: how many merges made it
        self.files = 0  # runs written (their files' names)

    def add(self, part: JoinPart) -> None:
        c = part.chunk
        pos = np.arange(self.seen, self.seen + c.num_rows, dtype=np.int64) \
            if part.pos is None else part.pos
        self.parts[part.side].append((c, pos, part.wm))
        self.seen += c.num_rows
        self.held += c.batch.nbytes + c.ts.nbytes + 16 * c.num_rows
        if self.held > self.limit:
            self._write({SIDES[side]: self._ranged(side) for side in (0, 1)}, "run")
            self.parts = [[], []]
            self.held = 0

    def fire(self) -> Chunk | None:
        raise NotImplementedError("a SpillingJoin fires range by range (fired)")

    def fired(self) -> Iterator[Chunk]:
        try:
            if not self.runs:  # all in memory: the in-memory join
                out = self.join.run(JoinInput((self._side(0), self._side(1))))
                if out is not None and out.num_rows:
                    yield out
                return
            last = [{SIDES[s]: spill.by_range(self._ranged(s)) for s in (0, 1)}]
            self.parts = [[], []]
            # (A regular outer join's range of right records alone has output too, an
            # interval join's late records in it are counted.)
            ranges = spill.merge_runs(self.runs, last, list(SIDES), lead="l" if isinstance(
                self.join, WindowJoin) else None, rows=self._range_rows())
            if isinstance(self.join, WindowJoin):
                for tables in ranges:
                    out = self._window_range(tables)
                    if out is not None and out.num_rows:
                        yield out
            elif isinstance(self.join, IntervalJoin):
                yield from self._placed(ranges, self._interval_pairs, self._paired)
            else:
                yield from self._placed(ranges, self._regular_rows, self._regular_out)
        finally:
            self.close()

    def close(self) -> None:
        self.parts = [[], []]
        if self.directory is not None:
            shutil.rmtree(self.directory, ignore_errors=True)
            self.directory = None

    # -- runs ---------------------------------------------------------------------------

    def _side(self, side: int) -> Side:
        """The buffered records of ``side`` as the in-memory join's input."""
        parts = self.parts[side]
        chunk = convert.concat([c for c, _, _ in parts], self.schemas[side])
        pos = np.concatenate([p for _, p, _ in parts]) if parts else np.zeros(0, np.int64)
        wm = np.concatenate([np.full(len(p), LONG_MIN, np.int64) if w is None else w
                             for _, p, w in parts]) if parts else np.zeros(0, np.int64)
        return Side(chunk, pos, wm)

    def _ranged(self, side: int) -> pa.Table:
        """The buffered records of ``side`` as run rows: the record's columns (named
        ``c0``... : a field may be called ``ts``), ``ts``, ``pos`` (merged place), ``wm``
        (the watermark in force at it) and ``we`` (the range column). A STREAMING window
        join keeps only the pairs whose window is not late and counts the records none of
        whose windows took them (``WindowJoin._pairs``)."""
        s = self._side(side)
        table = pa.Table.from_batches([s.chunk.batch])
        table = table.rename_columns([f"c{i}" for i in range(table.num_columns)])
        ts = s.chunk.ts.to_numpy(zero_copy_only=False)
        join = self.join
        if isinstance(join, WindowJoin):  # one row per (record, window)
            if s.chunk.ts.null_count:
                require_timestamp(None, "an event-time window")
            ts = ts.astype(np.int64)
            start, rep = assign_windows(join.assigner, ts)
            rows = np.arange(len(ts), dtype=np.int64) if rep is None else rep.astype(np.int64)
            if join.streaming:
                keep = start + join.assigner.size - 1 > s.wm[rows]
                join.dropped += len(ts) - len(np.unique(rows[keep]))
                rows, start = rows[keep], start[keep]
            return table.take(pa.array(rows)).append_column(
                "ts", pa.array(ts[rows], pa.int64())).append_column(
                "pos", pa.array(s.pos[rows])).append_column(
                "wm", pa.array(s.wm[rows])).append_column(
                "we", pa.array(start + join.assigner.size, pa.int64()))
        keys = [table.column(i).combine_chunks() for i in join.keys[side]]
        return table.append_column("ts", s.chunk.ts).append_column(
            "pos", pa.array(s.pos)).append_column("wm", pa.array(s.wm)).append_column(
            "we", pa.array(key_hash(keys)))

    def _chunk(self, side: int, tables: list[pa.Table]) -> tuple[
            Chunk, np.ndarray, np.ndarray, np.ndarray]:
        """A range's rows of ``side`` as records (in merged order), their places, their
        ``we`` and their watermarks."""
        t = pa.concat_tables(tables) if len(tables) > 1 else tables[0]
        t = t.sort_by([("pos", "ascending")])
        n = len(self.schemas[side])
        batch = pa.RecordBatch.from_arrays(
            [t.column(i).combine_chunks() for i in range(n)], schema=self.schemas[side])
        return (Chunk(batch, t.column("ts").combine_chunks()),
                t.column("pos").to_numpy().astype(np.int64),
                t.column("we").to_numpy().astype(np.int64),
                t.column("wm").to_numpy().astype(np.int64))

    # -- window join --------------------------------------------------------------------

    def _window_range(self, tables: dict[str, list[pa.Table]]) -> Chunk | None:
        join = self.join
        assert isinstance(join, WindowJoin)
        (lc, lpos, lend, _), (rc, rpos, rend, _) = (self._chunk(s, tables[SIDES[s]])
                                                    for s in (0, 1))
        if lc.num_rows == 0 or rc.num_rows == 0:
            return None
        lcode, rcode = key_codes([lc.batch.column(i) for i in join.keys[0]],
                                 [rc.batch.column(i) for i in join.keys[1]])
        size = join.assigner.size
        rows = (np.arange(lc.num_rows, dtype=np.int64), np.arange(rc.num_rows, dtype=np.int64))
        return join.match((lc, lpos, rows[0], lcode, lend - size),
                          (rc, rpos, rows[1], rcode, rend - size))

    # -- interval join ------------------------------------------------------------------

    def _placed(self, ranges: Iterator[dict[str, list[pa.Table]]],
                rows: Callable[[dict[str, list[pa.Table]]], pa.Table | None],
                out: Callable[[pa.Table], Iterator[Chunk]]) -> Iterator[Chunk]:
        """The output of an interval or regular join, whose key ranges do not come in
        output order: ``rows`` makes a range's output rows with their place (``we``: the
        later record's pos, then further sort columns), spilled to runs of their own past
        the limit and merged by ranges of ``we``; ``out`` orders such a range."""
        # The input runs are read by ``ranges``; the pairs get runs of their own.
        self.runs, self.levels = [], []
        held: list[pa.Table] = []
        size = 0
        for tables in ranges:
            pairs = rows(tables)
            if pairs is None:
                continue
            held.append(pairs)
            size += pairs.nbytes
            if size > self.limit:
                self._write({"o": pa.concat_tables(held)}, "pairs")
                held, size = [], 0
        last = [{"o": pa.concat_tables(held).sort_by([("we", "ascending")])}] if held else []
        if not self.runs:
            if held:
                yield from out(last[0]["o"])
            return
        for tables in spill.merge_runs(self.runs, last, ["o"], lead="o",
                                       rows=self._range_rows()):
            yield from out(pa.concat_tables([t for t in tables["o"] if t.num_rows]))

    def _interval_pairs(self, tables: dict[str, list[pa.Table]]) -> pa.Table | None:
        """A range's joined pairs: the left record's columns, the right's, their
        timestamps and the output sort key (``we`` later place, ``gen``, ``pos``)."""
        join = self.join
        assert isinstance(join, IntervalJoin)
        (lc, lpos, _, lwm), (rc, rpos, _, rwm) = (self._chunk(s, tables[SIDES[s]])
                                                  for s in (0, 1))
        # (A range with one side only has no pairs, but ``pairs`` counts its late records.)
        inp = JoinInput((Side(lc, lpos, lwm), Side(rc, rpos, rwm)))
        li, ri, (later, gen, earlier) = join.pairs(inp)
        if len(li) == 0:
            return None
        a, b = lc.take(pa.array(li)), rc.take(pa.array(ri))
        cols = [*a.batch.columns, *b.batch.columns, a.ts, b.ts, pa.array(later),
                pa.array(gen), pa.array(earlier)]
        names = [*(f"l{n}" for n in a.batch.schema.names),
                 *(f"r{n}" for n in b.batch.schema.names), "lts", "rts", "we", "gen", "pos"]
        return pa.Table.from_arrays(cols, names=names)

    def _paired(self, t: pa.Table) -> Iterator[Chunk]:
        """The output records of pairs ``t`` (rows of ``_interval_pairs``) in output
        order."""
        join = self.join
        assert isinstance(join, IntervalJoin)
        if t.num_rows == 0:
            return
        t = t.sort_by([("we", "ascending"), ("gen", "ascending"), ("pos", "ascending")])
        n0, n1 = len(self.schemas[0]), len(self.schemas[1])
        left = Chunk(pa.RecordBatch.from_arrays(
            [t.column(i).combine_chunks() for i in range(n0)], schema=self.schemas[0]),
            t.column("lts").combine_chunks())
        right = Chunk(pa.RecordBatch.from_arrays(
            [t.column(n0 + i).combine_chunks() for i in range(n1)], schema=self.schemas[1]),
            t.column("rts").combine_chunks())
        idx = np.arange(t.num_rows, dtype=np.int64)
        ts = np.maximum(left.ts.to_numpy().astype(np.int64), right.ts.to_numpy().astype(np.int64))
        out = join.pairing.make(left, right, idx, idx, ts)
        if out is not None and out.num_rows:
            yield out


    # -- regular join -------------------------------------------------------------------

    def _regular_rows(self, tables: dict[str, list[pa.Table]]) -> pa.Table | None:
        """A range's output records (columns ``c0``...), their timestamps and their place
        (``RegularJoinTask.records``: ``we`` the later pos, ``step``, ``first``, ``pos``)."""
        join = self.join
        assert isinstance(join, RegularJoinTask)
        sides = []
        for s in (0, 1):
            chunk, pos, _, wm = self._chunk(s, tables[SIDES[s]])
            sides.append(Side(chunk, pos, wm))
        made = join.records(JoinInput((sides[0], sides[1])))
        if made is None:
            return None
        out, place, _ = made
        cols = [*out.batch.columns, out.ts, *(pa.array(p.astype(np.int64)) for p in place)]
        names = [*(f"c{i}" for i in range(out.batch.num_columns)), "ts", "we", "step",
                 "first", "pos"]
        return pa.Table.from_arrays(cols, names=names)

    def _regular_out(self, t: pa.Table) -> Iterator[Chunk]:
        """The output records of rows ``t`` (``_regular_rows``) in output order."""
        join = self.join
        assert isinstance(join, RegularJoinTask)
        if t.num_rows == 0:
            return
        t = t.sort_by([(c, "ascending") for c in ("we", "step", "first", "pos")])
        n = len(join.out_schema)
        yield Chunk(pa.RecordBatch.from_arrays([t.column(i).combine_chunks() for i in range(n)],
                                               schema=join.out_schema),
                    t.column("ts").combine_chunks())


def key_hash(columns: list[pa.Array]) -> np.ndarray:
    """An int64 hash per row of the key ``columns``, equal for equal keys (null equal to
    null, -0.0 to 0.0, NaN to NaN), within one process: each column's distinct values
    hashed once, combined per row."""
    n = len(columns[0]) if columns else 0
    out = np.zeros(n, dtype=np.uint64)
    for col in columns:
        if pa.types.is_floating(col.type):
            col = pc.add(col, pa.scalar(0.0, col.type))
        enc = col.dictionary_encode(null_encoding="encode")
        values = enc.dictionary.to_pylist()
        h = np.array([hash(v) if v == v else 0 for v in values], dtype=np.int64) \
            .view(np.uint64)
        idx = enc.indices.to_numpy(zero_copy_only=False).astype(np.int64)
        with np.errstate(over="ignore"):
            out = out * np.uint64(1_000_003) + h[idx]
    return out.view(np.int64)
