"""BATCH regular joins (SQL / .flow ``join R on ...``; the runtime's ``RegularJoin``, Flink's
StreamingJoinOperator) as a vectorised hash join, with exactly the row operator's output:
the same records, kinds, timestamps and order.

A BATCH join subtask gets its input a received batch at a time through
``joinspill.SpillingJoin`` (each record with its place ``pos`` in the merged input,
channels concatenated), which runs this join on all of it at the end, or, past the state
memory, on one range of keys at a time and merges the outputs by their places. The row operator processes the
records in that order; with insert-only inputs (the planner keeps updating ones on the row
executor) its output for a record ``x`` of side ``s`` with key ``k`` is, in order:

- ``k`` holds a null (or NaN: a NaN never equals itself in the row operator's dicts): an
  outer side emits ``+I`` ``x`` padded with nulls, an inner side nothing;
- else, with ``M`` the other side's earlier records of key ``k`` in its state's order (the
  distinct rows by first arrival, each row's copies by arrival):
  1. if the other side is outer and ``x`` is the first record of key ``k`` on its side,
     ``-D`` each ``m`` of ``M`` padded (the row operator's association count of every
     such row is the number of ``s`` records of ``k`` so far: zero exactly then);
  2. if ``M`` is empty and ``s`` is outer, ``+I`` ``x`` padded;
  3. ``+I`` ``x`` joined with each ``m`` of ``M`` (left fields, then right fields).

An earlier row is emitted as the state holds it: the first of its equal rows (a ``-0.0``
stays ``-0.0`` when an equal ``0.0`` arrives later). Every emitted record carries ``x``'s
timestamp. So each output is placed by (``x``'s ``pos``, step, the earlier row's first
arrival, its ``pos``), which one ``lexsort`` orders (skipped when the pairs are already
made in that order: one side's records all before the other's and no padded rows, the
usual BATCH inner join).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from flowc.executor.arrow import convert
from flowc.executor.arrow.convert import Chunk
from flowc.executor.arrow.joins import JoinInput, JoinPlan, _expand, key_codes
from flowc.operators import KeyedCoProcessOp
from flowc.parser.regular_join import RegularJoin
from flowc.types import Schema
from flowc.vector import VCol, vector_of

DELETE = 3  # Flink's RowKind byte of -D (``convert``'s ``_kind`` column)


def plan_regular_join(sg: Any, nid: int, batch: bool) -> JoinPlan | str | None:
    """The JoinPlan of node ``nid`` if it is a regular join the columnar executor runs,
    the reason it does not, or None if it is none."""
    node = sg.nodes[nid]
    spec = node.operator
    if not isinstance(spec, KeyedCoProcessOp) or not isinstance(spec.fn, RegularJoin):
        return None
    if not batch:
        return f"'{node.name}' is a regular join in STREAMING (it runs on the row executor)"
    if spec.fn.ttl is not None:
        return f"'{node.name}' is a regular join with a state TTL"
    ins = list(sg.inputs(nid))
    sides = tuple(e.type_number - 1 for e in ins)
    if sorted(set(sides)) != [0, 1]:
        return f"'{node.name}' does not have both join inputs"
    schemas = [sg.nodes[ins[sides.index(s)].source_id].output_type for s in (0, 1)]
    if not all(isinstance(s, Schema) for s in schemas):
        return f"the input of '{node.name}' has no declared schema"
    keys: tuple[list[int], list[int]] = ([], [])
    for side, sel in enumerate(node.keys):
        vec = vector_of(getattr(sel, "fn", None))
        if not isinstance(vec, tuple) or not all(isinstance(v, VCol) for v in vec):
            return f"'{node.name}' has a key that is not made of fields"
        keys[side].extend(v.index for v in vec)
    left, right = schemas
    if tuple(keys[0]) != tuple(spec.fn.key_positions[0]) or \
            tuple(keys[1]) != tuple(spec.fn.key_positions[1]):
        return f"'{node.name}' is keyed by other fields than it joins on"
    if len(keys[0]) != len(keys[1]) or any(
            left.fields[a].type != right.fields[b].type for a, b in zip(*keys)):
        return f"the join keys of '{node.name}' differ in type"
    out = node.output_type
    if not isinstance(out, Schema) or [f.type for f in out] != \
            [f.type for f in (*left.fields, *right.fields)]:
        return f"'{node.name}' does not output the left fields then the right ones"
    # No ``fn``: the vectorised join replaces the Function (nothing to open).
    return JoinPlan("regular_join", spec, sides, (left, right), keys, True)


class RegularJoinTask:
    """One subtask's BATCH regular join (see the module docstring)."""

    dropped = 0  # no late records

    def __init__(self, plan: JoinPlan, out_schema: pa.Schema) -> None:
        fn: RegularJoin = plan.op.fn
        self.keys = plan.keys
        self.outer = (fn.kind in ("left", "full"), fn.kind in ("right", "full"))
        self.out_schema = out_schema
        self.kinded = out_schema.names[-1:] == [convert.KIND]

    def run(self, inp: JoinInput) -> Chunk | None:
        """The output records in the row operator's order."""
        made = self.records(inp)
        if made is None:
            return None
        out, place, ordered = made
        if ordered:
            return out
        idx = pa.array(np.lexsort(place[::-1]))
        return Chunk(out.batch.take(idx), out.ts.take(idx))

    def records(self, inp: JoinInput) -> tuple[Chunk, tuple[np.ndarray, ...], bool] | None:
        """The output records, each one's place (later pos, step, first arrival of the
        earlier row, its pos: sorted by these they are in output order) and whether they
        are made in that order already; None without output. The places are the merged
        input's, so those of a subset of the keys (``joinspill``) order its records among
        all the others'."""
        left, right = inp.sides
        lcode, rcode = key_codes([left.chunk.batch.column(i) for i in self.keys[0]],
                                 [right.chunk.batch.column(i) for i in self.keys[1]])
        codes = [_unmatched(s.chunk, k, c) for s, k, c in zip(inp.sides, self.keys,
                                                              (lcode, rcode))]
        # Each record's first equal row of its side: the state's dict key, whose values
        # (``-0.0`` for a later ``0.0``) the row operator emits for it.
        rep = [_first_arrival(s.chunk) for s in inp.sides]
        focc = [s.pos[r] for s, r in zip(inp.sides, rep)]
        # Pairs: each record of side ``a`` (by pos) with every record of its key of the
        # other side ``b``, sorted by (key, first arrival of its row, pos) - b's state's
        # order. ``a`` is the right side unless all left records come after the right
        # ones: the pairs are then made in output order (no sort below).
        lc, rc = codes
        a = 0 if len(lc) and _before(right.pos, left.pos) else 1
        b = 1 - a
        sa, sb, ac, bc = inp.sides[a], inp.sides[b], codes[a], codes[b]
        bsorted = np.lexsort((sb.pos, focc[b], bc))
        bsorted = bsorted[bc[bsorted] >= 0]
        size = int(max(lc.max(initial=-1), rc.max(initial=-1))) + 1
        counts = np.bincount(bc[bsorted], minlength=size)
        begin = np.cumsum(counts) - counts
        arows = np.flatnonzero(ac >= 0)
        arows = arows[np.argsort(sa.pos[arows], kind="stable")]
        owner, at = _expand(begin[ac[arows]], counts[ac[arows]])
        li, ri = (arows[owner], bsorted[at]) if a == 0 else (bsorted[at], arows[owner])
        lpos, rpos = left.pos[li], right.pos[ri]
        right_later = rpos > lpos
        later = np.where(right_later, rpos, lpos)
        efocc = np.where(right_later, focc[0][li], focc[1][ri])
        epos = np.where(right_later, lpos, rpos)
        lts, rts = left.chunk.ts.take(pa.array(li)), right.chunk.ts.take(pa.array(ri))
        # The earlier record of a pair is emitted as its state row.
        li, ri = np.where(right_later, rep[0][li], li), np.where(right_later, ri, rep[1][ri])
        # (left rows, right rows, place: later pos, step, first arrival, pos; kind, ts)
        parts: list[tuple[Any, ...]] = [
            (li, ri, later, np.ones(len(li), np.int8), efocc, epos, 0,
             pc.if_else(pa.array(right_later, pa.bool_()), rts, lts))]
        for s in (0, 1):  # records of side s that are the later one of their pairs
            side, mine, other = inp.sides[s], (li, ri)[s], (li, ri)[1 - s]
            is_later = right_later if s == 1 else ~right_later
            if self.outer[1 - s]:  # 1. -D the other side's earlier rows, padded
                sel = is_later & _first_of_key(codes[s], side.pos)[mine]
                rows = (other[sel], None) if s == 1 else (None, other[sel])
                parts.append(rows + (later[sel], np.zeros(int(sel.sum()), np.int8),
                                     efocc[sel], epos[sel], DELETE,
                                     side.chunk.ts.take(pa.array(mine[sel]))))
            if self.outer[s]:  # 2. +I the record padded: no earlier match (or null key)
                matched = np.bincount(mine[is_later], minlength=side.chunk.num_rows) > 0
                lone = np.flatnonzero(~matched)
                rows = (lone, None) if s == 0 else (None, lone)
                none = np.full(len(lone), -1, np.int64)
                parts.append(rows + (side.pos[lone], np.ones(len(lone), np.int8), none,
                                     none, 0, side.chunk.ts.take(pa.array(lone))))
        out = self._records(parts, inp)
        if out is None:
            return None
        # Made in order: side a's records by pos, b's in state order, all b before a.
        ordered = len(parts) == 1 and (len(li) == 0 or _before(sb.pos, sa.pos))
        return out, tuple(np.concatenate([p[i] for p in parts]) for i in (2, 3, 4, 5)), \
            ordered

    def _records(self, parts: list[Any], inp: JoinInput) -> Chunk | None:
        n = sum(len(p[2]) for p in parts)
        if n == 0:
            return None
        cols: list[pa.Array] = []
        for s in (0, 1):
            chunk = inp.sides[s].chunk
            table = pa.Table.from_batches([_take_or_null(chunk, p[s], len(p[2]))
                                           for p in parts]).combine_chunks()
            cols.extend(c.combine_chunks() for c in table.columns)
        ts = pa.concat_arrays([p[7] for p in parts])
        if self.kinded:
            cols.append(pa.array(np.concatenate(
                [np.full(len(p[2]), p[6], np.int8) for p in parts])))
        return Chunk(pa.RecordBatch.from_arrays(cols, schema=self.out_schema), ts)


def _unmatched(c: Chunk, index: list[int], code: np.ndarray) -> np.ndarray:
    """``code`` with -1 for the records whose key holds a null or a NaN (they join
    nothing)."""
    bad = np.zeros(c.num_rows, dtype=bool)
    for i in index:
        col = c.batch.column(i)
        if col.null_count:
            bad |= np.asarray(col.is_null().to_numpy(zero_copy_only=False), dtype=bool)
        if pa.types.is_floating(col.type):
            bad |= np.asarray(pc.fill_null(pc.is_nan(col), False).to_numpy(
                zero_copy_only=False), dtype=bool)
    return np.where(bad, -1, code) if bad.any() else code


def _first_arrival(c: Chunk) -> np.ndarray:
    """Per record (in arrival order), the index of the first record of its side equal to
    it (the row operator's state is a dict of rows: equal rows share the first one's
    entry). A row with a NaN equals no other (Python's ``nan != nan``)."""
    n = c.num_rows
    if n == 0:
        return np.zeros(0, np.int64)
    cols = [c.batch.column(i) for i in range(c.batch.num_columns)]
    # A column without repeats (an id): every row is its own first. Integer columns are
    # checked first, by counting (a hash count of 500k values costs ~0.1 s).
    ints = [col for col in cols if pa.types.is_integer(col.type) and not col.null_count]
    for col in [*ints, *(col for col in cols if not any(col is i for i in ints))]:
        if not pa.types.is_floating(col.type) and _no_repeats(col, n):
            return np.arange(n, dtype=np.int64)
    code, _ = key_codes(cols, [col.slice(0, 0) for col in cols])
    nan = _unmatched(c, [i for i, col in enumerate(cols) if pa.types.is_floating(col.type)],
                     np.zeros(n, np.int64)) < 0
    if nan.any():
        code = np.where(nan, -1 - np.arange(n, dtype=np.int64), code)
    _, first, inverse = np.unique(code, return_index=True, return_inverse=True)
    return first[inverse.reshape(-1)].astype(np.int64)


def _before(first: np.ndarray, then: np.ndarray) -> bool:
    """Whether every place of ``first`` is below every place of ``then``. (The check was
    ``first.max(initial=-1) < then.min(initial=0)``, whose ``initial`` takes part in the
    minimum: never true with records on both sides, so the sort always ran.)"""
    return not len(first) or not len(then) or int(first.max()) < int(then.min())


def _no_repeats(col: pa.Array, n: int) -> bool:
    """Whether the ``n`` values of ``col`` are distinct (null counts as a value)."""
    if n == 0:
        return True
    if pa.types.is_integer(col.type) and not col.null_count:
        v = col.to_numpy(zero_copy_only=False).astype(np.int64)
        low, high = int(v.min()), int(v.max())
        if high - low < 4 * n:  # dense ids: a count per value
            return bool(np.bincount(v - low).max() <= 1)
    return bool(pc.count_distinct(col, mode="all").as_py() == n)


def _first_of_key(code: np.ndarray, pos: np.ndarray) -> np.ndarray:
    """Per record: whether it is the first (by ``pos``) of its side with its key."""
    out = np.zeros(len(code), dtype=bool)
    ok = np.flatnonzero(code >= 0)
    if len(ok):
        order = ok[np.lexsort((pos[ok], code[ok]))]
        head = np.ones(len(order), dtype=bool)
        head[1:] = code[order][1:] != code[order][:-1]
        out[order[head]] = True
    return out


def _take_or_null(c: Chunk, idx: np.ndarray | None, n: int) -> pa.RecordBatch:
    """The records at ``idx``, or ``n`` null rows (the padded side)."""
    if idx is not None:
        return c.batch.take(pa.array(idx, pa.int64()))
    return c.batch.take(pa.array(np.zeros(n, np.int64), mask=np.ones(n, dtype=bool)))
