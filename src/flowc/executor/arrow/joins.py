"""Window and interval joins over Arrow, with exactly the row runtime's results and order.

A join operator gets its subtask's whole input at once (``gather``; in bounded runs
``joinspill.SpillingJoin`` buffers it part by part and hands it over whole or, past the
state memory, range by range): both sides'
records, each with its place in the merged input (the channel rule of ``merge.py``: BATCH
concatenates the channels, STREAMING interleaves them by position) and the input watermark
in force when the row operator would process it. The join is then a sort-based equi-join
on dense key codes (``key_codes``: a null key is a key like any other, as in the row
runtime's dicts).

- **Window join** (``WindowJoin``; Flink's ``a.join(b).where().equal_to().window()``: a
  tagged union into a WindowOperator whose CoGroup function pairs the window's elements):
  every (key, window) group with records on both sides emits each first-side record, in
  arrival order, paired with each second-side record in arrival order, at ``end - 1``;
  groups fire by (window end, first record seen), the WindowOperator's order. STREAMING
  (no allowed lateness): a (record, window) pair whose window is late (``end - 1 <=``
  watermark) is not added, and a record none of whose windows took it is dropped and
  counted.
- **Interval join** (``IntervalJoin``; Flink's IntervalJoinOperator as
  ``runtime/joins.py`` runs it): a record with ``ts < watermark`` is dropped and counted;
  a pair (left, right) with equal keys and ``left.ts + lower <= right.ts <= left.ts +
  upper`` is emitted when the later of the two arrives, if the earlier is still buffered:
  its bucket (key, timestamp) is cleaned up by a timer at ``ts + max(upper, 0)`` (left) or
  ``ts + max(-lower, 0)`` (right) that fires at the first watermark rise reaching it after
  it was registered. Results come out by the later record's arrival, then the other
  side's buckets in creation order, then arrival order within a bucket (the row
  operator's dict iteration), at ``max(left.ts, right.ts)``.

A join function with the vector form ``VJoinRows`` (the .flow / SQL joins: the left fields,
then the right fields) is two column takes; any other runs row by row on the pairs.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from flowc.api.connected import CoGroupWindowFunction, UnionKey, tag1, tag2
from flowc.api.functions import ProcessJoinFunction
from flowc.errors import ExecutionError
from flowc.executor.arrow import convert
from flowc.executor.arrow.convert import Chunk
from flowc.executor.arrow.merge import merge_order
from flowc.executor.arrow.windows import assign_windows
from flowc.executor.runtime.core import method_of, require_timestamp, results
from flowc.executor.runtime.joins import JoinContext
from flowc.operators import IntervalJoinOp, MapOp, WindowOp
from flowc.transformations import OutputTag
from flowc.types import Schema
from flowc.vector import VCol, VJoinRows, vector_of
from flowc.windowing import SlidingEventTimeWindows, TumblingEventTimeWindows

LONG_MIN = -(1 << 63)
# Payloads of one channel: (ipc records, watermark positions, watermark values).
Payloads = list[tuple[bytes, Any, Any]]


@dataclass(frozen=True)
class Side:
    """One input's records in arrival order, each with its index in the merged input of
    both sides (``pos``) and the input watermark in force when it is processed (``wm``)."""

    chunk: Chunk
    pos: np.ndarray
    wm: np.ndarray


@dataclass(frozen=True)
class JoinInput:
    """A join subtask's whole input: side 0 (left / first) and side 1 (right / second)."""

    sides: tuple[Side, Side]

    @property
    def num_rows(self) -> int:
        return sum(s.chunk.num_rows for s in self.sides)


def gather(channels: list[tuple[int, pa.Schema, Payloads]], streaming: bool) -> JoinInput:
    """``channels`` in channel order, each (side, schema, payloads in arrival order)."""
    chunks: list[list[Chunk]] = [[], []]
    numbers: list[list[np.ndarray]] = [[], []]  # record numbers in channel order
    metas: list[list[tuple[int, Any, Any]]] = []
    total = 0
    for side, schema, payloads in channels:
        metas.append([])
        for data, positions, values in payloads:
            c = convert.from_ipc(data, schema)
            chunks[side].append(c)
            numbers[side].append(np.arange(total, total + c.num_rows, dtype=np.int64))
            metas[-1].append((c.num_rows, positions, values))
            total += c.num_rows
    if streaming:
        order, seen, _ = merge_order(metas)
    else:  # BATCH: channels concatenated, no watermarks
        order, seen = np.arange(total, dtype=np.int64), np.full(total, LONG_MIN, np.int64)
    place = np.empty(total, dtype=np.int64)
    place[order] = np.arange(total, dtype=np.int64)
    sides = []
    for side, schema in ((0, _schema(channels, 0)), (1, _schema(channels, 1))):
        records = convert.concat(chunks[side], schema)
        pos = place[np.concatenate(numbers[side])] if numbers[side] else \
            np.zeros(0, np.int64)
        arrival = np.argsort(pos, kind="stable")
        sides.append(Side(records.take(pa.array(arrival)), pos[arrival],
                          seen[pos[arrival]]))
    return JoinInput((sides[0], sides[1]))


def _schema(channels: list[tuple[int, pa.Schema, Payloads]], side: int) -> pa.Schema:
    return next(schema for s, schema, _ in channels if s == side)


def key_codes(left: list[pa.Array], right: list[pa.Array]) -> tuple[np.ndarray, np.ndarray]:
    """Dense int64 codes of the keys (one column per key field) of both sides: equal codes
    iff equal keys, null equal to null (the row runtime keys dicts by the key tuple)."""
    n = len(left[0]) if left else 0
    code = np.zeros(n + (len(right[0]) if right else 0), dtype=np.int64)
    bound = 1  # code < bound
    for a, b in zip(left, right):
        col = pa.concat_arrays([a, b])
        if pa.types.is_floating(col.type):
            col = pc.add(col, pa.scalar(0.0, col.type))  # -0.0 == 0.0, as Python compares
        enc = col.dictionary_encode(null_encoding="encode")
        idx = enc.indices.to_numpy(zero_copy_only=False).astype(np.int64)
        size = max(len(enc.dictionary), 1)
        if bound * size >= 1 << 62:  # re-number densely before the product overflows
            code, bound = _dense(code)
        code, bound = code * size + idx, bound * size
    if bound >= 1 << 31:  # keep codes small for the composite keys built from them
        code = _dense(code)[0]
    return code[:n], code[n:]


def _dense(code: np.ndarray) -> tuple[np.ndarray, int]:
    """``code`` renumbered 0.. (in value order), and how many distinct values it has."""
    uniq, inverse = np.unique(code, return_inverse=True)
    return inverse.astype(np.int64).reshape(-1), max(len(uniq), 1)


def _group_ids(code: np.ndarray, start: np.ndarray, step: int) -> tuple[np.ndarray, int]:
    """Dense ids of the (key code, window start) pairs (starts are ``step`` apart), and
    how many there are."""
    w = (start - start.min()) // step
    width = int(w.max()) + 1
    if (int(code.max()) + 1) * width < 1 << 62:
        return _dense(code * width + w)
    order = np.lexsort((start, code))
    edge = np.ones(len(code), dtype=bool)
    edge[1:] = (code[order][1:] != code[order][:-1]) | (start[order][1:] != start[order][:-1])
    gid = np.empty(len(code), dtype=np.int64)
    gid[order] = np.cumsum(edge) - 1
    return gid, int(gid[order][-1]) + 1


def _key_columns(c: Chunk, index: list[int]) -> list[pa.Array]:
    return [c.batch.column(i) for i in index]


def _expand(starts: np.ndarray, counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For each i, the indices ``starts[i] .. starts[i] + counts[i] - 1``: (owner i,
    index) per produced pair, owners in order."""
    owner = np.repeat(np.arange(len(counts), dtype=np.int64), counts)
    before = np.cumsum(counts) - counts
    return owner, starts[owner] + (np.arange(len(owner), dtype=np.int64) - before[owner])


class Pairing:
    """Makes the output records of matched (left, right) pairs: ``VJoinRows`` as column
    takes, any other function (``call(left, right, left_ts, right_ts, ts)`` returning
    what the row operator emits) row by row."""

    def __init__(self, call: Callable[..., Any] | None, out_schema: pa.Schema) -> None:
        self.call = call
        self.out_schema = out_schema

    def make(self, left: Chunk, right: Chunk, li: np.ndarray, ri: np.ndarray,
             ts: np.ndarray) -> Chunk | None:
        if len(li) == 0:
            return None
        a, b = left.take(pa.array(li)), right.take(pa.array(ri))
        if self.call is None:
            cols = list(a.batch.columns) + list(b.batch.columns)
            batch = pa.RecordBatch.from_arrays(cols, schema=self.out_schema)
            return Chunk(batch, pa.array(ts, pa.int64()))
        rows: list[Any] = []
        stamps: list[int] = []
        lts, rts = a.timestamps(), b.timestamps()
        for x, y, lt, rt, t in zip(a.rows(), b.rows(), lts, rts, ts.tolist()):
            for r in results(self.call(x, y, lt, rt, t)):
                # A side output the job does not consume (the planner refuses the rest).
                if type(r) is tuple and len(r) == 2 and isinstance(r[0], OutputTag):
                    continue
                rows.append(r)
                stamps.append(t)
        out = convert.from_rows(rows, stamps, self.out_schema)
        return out if out.num_rows else None


class WindowJoin:
    """A window join subtask (see the module docstring)."""

    def __init__(self, assigner: Any, keys: tuple[list[int], list[int]], pairing: Pairing,
                 streaming: bool) -> None:
        self.assigner = assigner
        self.keys = keys
        self.pairing = pairing
        self.streaming = streaming
        self.dropped = 0

    def run(self, inp: JoinInput) -> Chunk | None:
        left, right = inp.sides
        codes = key_codes(_key_columns(left.chunk, self.keys[0]),
                          _key_columns(right.chunk, self.keys[1]))
        pairs = [self._pairs(s, c) for s, c in zip(inp.sides, codes)]
        (lrow, lcode, lstart), (rrow, rcode, rstart) = pairs
        return self.match((left.chunk, left.pos, lrow, lcode, lstart),
                          (right.chunk, right.pos, rrow, rcode, rstart))

    def match(self, lside: tuple[Chunk, np.ndarray, np.ndarray, np.ndarray, np.ndarray],
              rside: tuple[Chunk, np.ndarray, np.ndarray, np.ndarray, np.ndarray]
              ) -> Chunk | None:
        """The joined pairs of the (record, window) pairs of both sides, each given as
        (records, their merged places, record of each pair, key code, window start)."""
        lchunk, lpos, lrow, lcode, lstart = lside
        rchunk, rpos, rrow, rcode, rstart = rside
        # Groups: (key, window) over both sides; only those with both sides emit.
        code = np.concatenate([lcode, rcode])
        start = np.concatenate([lstart, rstart])
        if len(lcode) == 0 or len(rcode) == 0:
            return None
        gid, groups = _group_ids(code, start, getattr(self.assigner, "slide", None)
                                 or self.assigner.size)
        lg, rg = gid[:len(lrow)], gid[len(lrow):]
        both = np.zeros(groups, dtype=bool)
        both[lg] = True
        both &= np.bincount(rg, minlength=groups) > 0
        lk, rk = both[lg], both[rg]
        lrow, lg, lstart = lrow[lk], lg[lk], lstart[lk]
        rrow, rg = rrow[rk], rg[rk]
        if len(lrow) == 0:
            return None
        # Fired by (end, first record seen on either side), the WindowOperator's order.
        first = np.full(groups, np.iinfo(np.int64).max, dtype=np.int64)
        np.minimum.at(first, lg, lpos[lrow])
        np.minimum.at(first, rg, rpos[rrow])
        end = np.zeros(groups, dtype=np.int64)
        end[lg] = lstart + self.assigner.size
        kept = np.flatnonzero(both)
        rank = np.zeros(groups, dtype=np.int64)
        rank[kept[np.lexsort((first[kept], end[kept]))]] = np.arange(len(kept), dtype=np.int64)
        # Left pairs in firing order (group rank, arrival); right pairs by (group, arrival).
        lo = np.lexsort((lpos[lrow], rank[lg]))
        ro = np.lexsort((rpos[rrow], rg))
        counts = np.bincount(rg, minlength=groups)
        begin = np.cumsum(counts) - counts
        owner, ri = _expand(begin[lg[lo]], counts[lg[lo]])
        li = lrow[lo][owner]
        ri = rrow[ro][ri]
        ts = end[lg[lo]][owner] - 1
        return self.pairing.make(lchunk, rchunk, li, ri, ts)

    def _pairs(self, s: Side, code: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(record, key code, window start) per (record, window) the window accepts."""
        c = s.chunk
        if c.ts.null_count:
            require_timestamp(None, "an event-time window")
        ts = c.ts.to_numpy(zero_copy_only=False).astype(np.int64)
        start, rep = assign_windows(self.assigner, ts)
        rows = np.arange(len(ts), dtype=np.int64) if rep is None else rep.astype(np.int64)
        if self.streaming:
            keep = start + self.assigner.size - 1 > s.wm[rows]
            self.dropped += len(ts) - len(np.unique(rows[keep]))
            rows, start = rows[keep], start[keep]
        return rows, code[rows], start


class IntervalJoin:
    """An interval join subtask (see the module docstring)."""

    def __init__(self, spec: Any, keys: tuple[list[int], list[int]], pairing: Pairing) -> None:
        self.lower = spec.lower if spec.lower_inclusive else spec.lower + 1
        self.upper = spec.upper if spec.upper_inclusive else spec.upper - 1
        self.keys = keys
        self.pairing = pairing
        self.dropped = 0

    def run(self, inp: JoinInput) -> Chunk | None:
        left, right = inp.sides
        li, ri, _ = self.pairs(inp)
        lts = left.chunk.ts.to_numpy(zero_copy_only=False).astype(np.int64)
        rts = right.chunk.ts.to_numpy(zero_copy_only=False).astype(np.int64)
        return self.pairing.make(left.chunk, right.chunk, li, ri, np.maximum(lts[li], rts[ri]))

    def pairs(self, inp: JoinInput) -> tuple[np.ndarray, np.ndarray, tuple[
            np.ndarray, np.ndarray, np.ndarray]]:
        """The joined (left, right) record pairs in output order, and per pair its sort
        key: (the later record's merged place, the earlier record's bucket generation,
        the earlier record's place)."""
        left, right = inp.sides
        kept: list[tuple[np.ndarray, np.ndarray]] = []  # per side: (records, timestamps)
        for s in inp.sides:
            if s.chunk.ts.null_count:
                raise ExecutionError("Long.MIN_VALUE timestamp: Elements used in interval "
                                     "stream joins need to have timestamps meaningful "
                                     "timestamps.")
            ts = s.chunk.ts.to_numpy(zero_copy_only=False).astype(np.int64)
            late = (s.wm != LONG_MIN) & (ts < s.wm)
            self.dropped += int(late.sum())
            kept.append((np.flatnonzero(~late), ts))
        lcode, rcode = key_codes(_key_columns(left.chunk, self.keys[0]),
                                 _key_columns(right.chunk, self.keys[1]))
        (lrows, lts), (rrows, rts) = kept
        li, ri = self._band(lcode[lrows], lts[lrows], rcode[rrows], rts[rrows])
        li, ri = lrows[li], rrows[ri]
        # Cleanup times (when a record's bucket goes) and bucket generations per side.
        lclean = lts + max(self.upper, 0)
        rclean = rts + max(-self.lower, 0)
        lgen = _generations(lcode, lts, left.pos, left.wm, lclean, lrows)
        rgen = _generations(rcode, rts, right.pos, right.wm, rclean, rrows)
        left_later = left.pos[li] > right.pos[ri]
        later_wm = np.where(left_later, left.wm[li], right.wm[ri])
        earlier_wm = np.where(left_later, right.wm[ri], left.wm[li])
        earlier_clean = np.where(left_later, rclean[ri], lclean[li])
        alive = (later_wm < earlier_clean) | (later_wm == earlier_wm)
        li, ri, left_later = li[alive], ri[alive], left_later[alive]
        later = np.where(left_later, left.pos[li], right.pos[ri])
        bucket = np.where(left_later, rgen[ri], lgen[li])
        earlier = np.where(left_later, right.pos[ri], left.pos[li])
        order = np.lexsort((earlier, bucket, later))
        return li[order], ri[order], (later[order], bucket[order], earlier[order])

    def _band(self, lcode: np.ndarray, lts: np.ndarray, rcode: np.ndarray,
              rts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """All (left, right) index pairs with equal codes and ``lts + lower <= rts <= lts +
        upper``: the right side sorted by (code, ts), a range search per left record."""
        if len(lcode) == 0 or len(rcode) == 0:
            return np.zeros(0, np.int64), np.zeros(0, np.int64)
        ro = np.lexsort((rts, rcode))
        lo_q = _add(lts, self.lower)
        hi_q = _add(lts, self.upper)
        tmin, tmax = int(rts.min()), int(rts.max())
        span = tmax - tmin + 3
        keys = int(max(lcode.max(), rcode.max())) + 1
        if span * keys < (1 << 62):  # (code, ts) as one int64
            def composite(code: np.ndarray, t: np.ndarray) -> np.ndarray:
                return code * span + (np.clip(t, tmin - 1, tmax + 1) - tmin + 1)
            sorted_r = composite(rcode[ro], rts[ro])
            begin = np.searchsorted(sorted_r, composite(lcode, lo_q), side="left")
            stop = np.searchsorted(sorted_r, composite(lcode, hi_q), side="right")
        else:  # per key: the right records of that key are one sorted run
            rc, rt = rcode[ro], rts[ro]
            first = np.searchsorted(rc, lcode, side="left")
            last = np.searchsorted(rc, lcode, side="right")
            begin = np.empty(len(lcode), np.int64)
            stop = np.empty(len(lcode), np.int64)
            for k in np.unique(lcode):
                at = np.flatnonzero(lcode == k)
                a, b = int(first[at[0]]), int(last[at[0]])
                begin[at] = a + np.searchsorted(rt[a:b], lo_q[at], side="left")
                stop[at] = a + np.searchsorted(rt[a:b], hi_q[at], side="right")
        counts = np.maximum(stop - begin, 0)
        owner, idx = _expand(begin, counts)
        return owner, ro[idx]


def _add(ts: np.ndarray, delta: int) -> np.ndarray:
    """``ts + delta`` saturating at the int64 range (a bound far beyond any timestamp)."""
    out = ts.astype(np.float64) + float(delta)
    big = (out >= 2.0 ** 63) | (out < -(2.0 ** 63))
    exact = ts + np.int64(max(min(delta, (1 << 63) - 1), -(1 << 63)))
    return np.where(big, np.where(out > 0, np.iinfo(np.int64).max, LONG_MIN), exact)


def _generations(code: np.ndarray, ts: np.ndarray, pos: np.ndarray, wm: np.ndarray,
                 clean: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """Per record (of ``rows``, the side's kept records), the arrival place of the first
    record of its bucket generation: records of one (key, timestamp) share a bucket until
    a watermark rise removes it (the next record of that key and timestamp then starts a
    new one, which the row operator's dict puts after the others)."""
    out = np.zeros(len(code), dtype=np.int64)
    if len(rows) == 0:
        return out
    order = rows[np.lexsort((pos[rows], ts[rows], code[rows]))]
    new = np.ones(len(order), dtype=bool)
    prev, cur = order[:-1], order[1:]
    same = (code[prev] == code[cur]) & (ts[prev] == ts[cur])
    alive = (wm[cur] < clean[prev]) | (wm[cur] == wm[prev])
    new[1:] = ~(same & alive)
    # Each record's latest generation start in sorted order (indices only grow).
    head = np.maximum.accumulate(np.where(new, np.arange(len(order)), 0))
    out[order] = pos[order][head]
    return out


# -- planning (driver side) -------------------------------------------------------------


@dataclass(frozen=True)
class JoinPlan:
    """A join head as the task needs it: ``kind`` window_join / interval_join; ``sides``:
    the side (0 / 1) of each of the head's inputs, in its in-edge order; ``keys``: the key
    columns of each side; ``vectorised``: the output is the left fields then the right
    ones (``VJoinRows``) as columns. ``fn`` is the Function the row operator opens."""

    kind: str
    op: Any
    sides: tuple[int, ...]
    schemas: tuple[Schema, Schema]
    keys: tuple[list[int], list[int]]
    vectorised: bool
    fn: Any = None


def plan_join(sg: Any, nid: int, batch: bool) -> JoinPlan | str | None:
    """The JoinPlan of node ``nid`` if it is a join the columnar executor runs, the reason
    it does not, or None if it is no join."""
    node = sg.nodes[nid]
    spec = node.operator
    ins = list(sg.inputs(nid))
    if isinstance(spec, IntervalJoinOp):
        if spec.pad != (None, None):
            return f"'{node.name}' is an outer interval join (it pads rows that joined nothing)"
        if spec.table and not batch:  # BATCH has no late rows: the same pairs
            return (f"'{node.name}' is a SQL interval join in STREAMING (rows behind the "
                    "watermark join the cached rows)")
        selectors = node.keys
        sides = tuple(e.type_number - 1 for e in ins)
        kind = "interval_join"
    elif isinstance(spec, WindowOp) and isinstance(spec.window_fn, CoGroupWindowFunction):
        key_fn = getattr(node.keys[0], "fn", None) if node.keys else None
        if not isinstance(key_fn, UnionKey):
            return f"'{node.name}' is keyed by a function the columnar join does not read"
        if not isinstance(spec.assigner, (TumblingEventTimeWindows, SlidingEventTimeWindows)):
            return f"'{node.name}' joins in windows other than tumbling or sliding ones"
        if spec.late_tag is not None or (not batch and int(spec.allowed_lateness) != 0):
            return f"'{node.name}' has allowed lateness in STREAMING"
        selectors = (key_fn.first, key_fn.second)
        tags = [tag_side(sg.nodes[e.source_id].operator) for e in ins]
        if None in tags:
            return f"an input of '{node.name}' is not the join's tagging map"
        sides = tuple(t for t in tags if t is not None)
        kind = "window_join"
    else:
        return None
    if sorted(set(sides)) != [0, 1]:
        return f"'{node.name}' does not have both join inputs"
    schemas: list[Schema] = []
    for side in (0, 1):
        e = ins[sides.index(side)]
        src = sg.nodes[e.source_id]
        schema = src.output_type
        if kind == "window_join":  # the tagging map's input is the side's stream
            schema = sg.nodes[sg.inputs(e.source_id)[0].source_id].output_type
        if not isinstance(schema, Schema):
            return f"the input of '{node.name}' has no declared schema"
        schemas.append(schema)
    keys = ([], [])
    for side, sel in enumerate(selectors):
        vec = vector_of(getattr(sel, "fn", None))
        if not isinstance(vec, tuple) or not all(isinstance(v, VCol) for v in vec):
            return f"'{node.name}' has a key that is not made of fields"
        keys[side].extend(v.index for v in vec)
    left, right = schemas
    if len(keys[0]) != len(keys[1]) or any(
            left.fields[a].type != right.fields[b].type for a, b in zip(*keys)):
        return f"the join keys of '{node.name}' differ in type"
    fn = spec.fn if kind == "interval_join" else spec.window_fn.fn
    out = node.output_type
    vectorised = isinstance(vector_of(fn), VJoinRows) and isinstance(out, Schema) and [
        f.type for f in out] == [f.type for f in (*left.fields, *right.fields)]
    return JoinPlan(kind, spec, sides, (left, right), keys, vectorised,
                    spec.fn if kind == "interval_join" else None)


def tag_side(spec: Any) -> int | None:
    """0 / 1 for the window join's tagging maps (Flink's ``Input1Tagger`` /
    ``Input2Tagger``), else None."""
    fn = getattr(spec, "fn", None) if isinstance(spec, MapOp) else None
    return 0 if fn is tag1 else 1 if fn is tag2 else None


def compile_join(plan: JoinPlan, out_schema: pa.Schema,
                 streaming: bool) -> WindowJoin | IntervalJoin:
    """The task's operator for ``plan``."""
    call: Callable[..., Any] | None = None
    if plan.kind == "window_join":
        if not plan.vectorised:
            join = plan.op.window_fn.fn

            def call(a: Any, b: Any, *_: Any) -> Any:
                r = join(a, b)  # CoGroupWindowFunction's one result; a tagged one is a
                # side output the job does not consume (the planner refuses the others)
                return () if type(r) is tuple and len(r) == 2 and \
                    isinstance(r[0], OutputTag) else (r,)
        return WindowJoin(plan.op.assigner, plan.keys, Pairing(call, out_schema), streaming)
    if not plan.vectorised:
        process = method_of(plan.op.fn, ProcessJoinFunction, "process_element")
        ctx = JoinContext(_NoSideOutputs())  # type: ignore[arg-type]

        def call(a: Any, b: Any, lt: int, rt: int, t: int) -> Any:
            ctx.left_ts, ctx.right_ts, ctx.ts = lt, rt, t
            return list(results(process(a, b, ctx)))
    return IntervalJoin(plan.op, plan.keys, Pairing(call, out_schema))


class _NoSideOutputs:
    """The row operator's side outputs without a consumer: dropped."""

    def side(self, tag: Any, value: Any, ts: Any) -> None:
        pass
