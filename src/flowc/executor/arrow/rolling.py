"""The rolling ``aggregate`` (``key by | aggregate`` without a window: Flink SQL's
GroupAggregate) over Arrow batches, vectorised with ``running.py``'s group-wise kernels.

The front end plans it as ``map(RollingStart) -> key_by -> reduce(RollingMerge) ->
flat_map(RollingChanges)`` (``flowc.parser.changes``). On an insert-only input with
vector forms for every argument the three run here instead:

- ``start``: the map; a record -> its key fields and the aggregates' argument values
  (columns ``a<i>``), routed by the key fields as the reduce's key selector routes them;
- ``RollingAggregate``: the reduce and the flat map. STREAMING: per record, in arrival
  order, the key's running aggregates (the key's state from earlier chunks is one more
  row in front of the chunk's rows), and the changelog ``RollingChanges`` emits - a key's
  first row ``+I``, then ``-U`` old / ``+U`` new, nothing when the row did not change -
  at the record's timestamp, in a ``_kind`` column (``convert.Changelog``). BATCH: each
  key's final row once, ``+I``, at end of input, in first-seen key order with the key's
  last timestamp (the row ReduceOp's BATCH rule).

An updating input (retractions) or an argument without a vector form runs the row code (``rowop.RollingRows``) after a start member that puts the key
columns in front of the records; an aggregate without key
leaves the job on the row executor (``plan.py`` names the reason).

``count(distinct)`` keeps, per aggregate, the distinct (key, value) pairs seen so far (one
Arrow table, as the row code's per-key set); a record's value counts when its pair is in
neither that table nor earlier in the chunk (one group_by over both, which matches null
key fields as the row code's tuples do), and the running count is the key's state count
plus the group-wise running sum of those flags - a ``count`` whose ``w`` column holds the
flags. Over doubles the row code's set is a Python dict: ``-0.0`` and ``0.0`` are one
value, and each NaN is a value of its own (a dict tells NaNs apart by object, and every
record's NaN is a new float): here ``-0.0`` counts as ``0.0`` and a NaN always counts,
never joining the seen pairs.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from flowc.executor.arrow import convert
from flowc.executor.arrow.convert import Chunk
from flowc.executor.arrow.kernels import as_array, compile_expr
from flowc.executor.arrow.running import COUNTED, _cumsum_int, _last_of_groups, group_ids, running
from flowc.executor.arrow.windows import decimal_avg_result, decimal_sum_result
from flowc.parser.changes import RollingChanges, RollingMerge, RollingStart
from flowc.types import Field, Schema
from flowc.vector import VAggregate, vector_of

KINDS = ("count_star", "count", "count_distinct", "sum", "avg", "min", "max", "first",
         "last")
INSERT, UPDATE_BEFORE, UPDATE_AFTER = 0, 1, 2  # Flink's RowKind byte values


@dataclass(frozen=True)
class RollingPlan:
    """Both members' spec: the front end's RollingStart and its aggregates' vector form."""

    fn: RollingStart
    agg: VAggregate | None  # None: over an updating input, row by row (``rowop.py``)
    merge: Any = None  # the reduce's ReduceOp (RollingMerge) and the RollingChanges
    changes: Any = None


def start_plan(fn: Any, in_schema: Any) -> RollingPlan | str:
    """The vector form of a RollingStart, or why it has none."""
    if not isinstance(fn, RollingStart):
        return "not a rolling aggregate"
    if not fn.key_positions:
        return "it has no key"
    if fn.retracting:  # retraction-aware accumulators (multisets): the row code's
        return RollingPlan(fn, None) if isinstance(in_schema, Schema) else \
            "its input has no schema"
    agg = vector_of(fn.agg)
    if not isinstance(agg, VAggregate):
        # The row code inside the chain (``rowop.RollingRows``): an argument without a
        # vector form.
        return RollingPlan(fn, None) if isinstance(in_schema, Schema) else \
            "an aggregate argument has no vector form"
    if not fn.key_positions:
        return "it has no key"
    bad = [k for k in agg.kinds if k not in KINDS]
    if bad:
        name = "count(distinct)" if bad[0] == "count_distinct" else f"{bad[0]}()"
        return f"{name} keeps state a running row cannot hold"
    if not isinstance(in_schema, Schema):
        return "an aggregate argument has no vector form"
    if any(a is not None and compile_expr(a) is None for a in agg.args):
        return RollingPlan(fn, None)
    return RollingPlan(fn, agg)


def start_schema(plan: RollingPlan, in_schema: Schema) -> Schema:
    """The start member's columns: the key fields, then ``a<i>`` per argument (over an
    updating input: then the input's fields)."""
    keys = tuple(in_schema.fields[p] for p in plan.fn.key_positions)
    if plan.agg is None:
        return Schema(keys + in_schema.fields)
    return Schema(keys + tuple(Field(f"a{i}", a.type) for i, a in enumerate(plan.agg.args)
                               if a is not None))


def is_merge(fn: Any) -> bool:
    return isinstance(fn, RollingMerge)


def is_changes(fn: Any) -> bool:
    return isinstance(fn, RollingChanges)


def compile_start(plan: RollingPlan, out_schema: pa.Schema) -> Any:
    positions = plan.fn.key_positions
    if plan.agg is None:  # the key columns in front of the records (and their kinds)
        return lambda c: c.with_batch(pa.RecordBatch.from_arrays(
            [c.batch.column(p) for p in positions] + c.batch.columns, schema=out_schema))
    kernels = [None if a is None else compile_expr(a) for a in plan.agg.args]

    def start(c: Chunk) -> Chunk:
        n = c.num_rows
        cols = [c.batch.column(p) for p in positions]
        cols += [as_array(k(c.batch), n) for k in kernels if k is not None]
        cols = [pc.cast(a, f.type, safe=False) for a, f in zip(cols, out_schema)]
        return c.with_batch(pa.RecordBatch.from_arrays(cols, schema=out_schema))
    return start


class RollingAggregate:
    """One subtask's rolling aggregate (the reduce and the changelog flat map)."""

    late: Chunk | None = None
    dropped = 0

    def __init__(self, plan: RollingPlan, in_schema: pa.Schema, out_schema: pa.Schema,
                 streaming: bool) -> None:
        agg = plan.agg
        assert agg is not None
        key_count = len(plan.fn.key_positions)
        self.kinds = agg.kinds
        # count(distinct) runs as a count of its new-distinct flags (``_new_distinct``)
        self.run_kinds = tuple("count" if k == "count_distinct" else k for k in agg.kinds)
        self.seen: dict[int, pa.Table] = {}  # count(distinct): the (key, value) pairs seen
        self.n = key_count
        self.keys = [f"k{i}" for i in range(key_count)]
        self.arg_col: dict[int, str] = {}
        col = key_count
        for i, a in enumerate(agg.args):
            if a is not None:
                self.arg_col[i] = in_schema.names[col]
                col += 1
        # The state's column types (``_rows``), for state restored from a row snapshot.
        self.key_types = [in_schema.field(i).type for i in range(key_count)]
        self.value_types = [pa.int64() if i not in self.arg_col else
                            _summed(in_schema.field(self.arg_col[i]).type)
                            if kind in ("sum", "avg") else
                            in_schema.field(self.arg_col[i]).type
                            for i, kind in enumerate(agg.kinds)]
        self.out_schema = out_schema
        self.streaming = streaming
        # Per key, in first-seen order: key fields, running v<i> / w<i>, last timestamp,
        # its number of records (``n``).
        self.state: pa.Table | None = None
        # STREAMING: per state row, the key's output fields before its last record (the
        # row ReduceOperator's state holds them: ``streaming/rolling_state.py``).
        self.prev: list[pa.Array] | None = None

    def _rows(self, c: Chunk) -> pa.Table:
        """The chunk as state-shaped rows: one record's values and counts each."""
        n = c.num_rows
        cols: dict[str, Any] = {k: c.batch.column(i) for i, k in enumerate(self.keys)}
        for i, kind in enumerate(self.kinds):
            v = c.batch.column(self.arg_col[i]) if i in self.arg_col else \
                pa.nulls(n, pa.int64())
            if kind in ("sum", "avg"):
                v = pc.cast(v, _summed(v.type))
            cols[f"v{i}"] = v
            if kind == "count_distinct":
                cols[f"w{i}"] = pa.array(self._new_distinct(cols, v, i))
            elif kind in COUNTED:
                valid = np.ones(n, np.int64) if kind == "count_star" else \
                    pc.is_valid(v).to_numpy(zero_copy_only=False).astype(np.int64)
                cols[f"w{i}"] = pa.array(valid)
        cols["ts"] = c.ts
        cols["n"] = pa.array(np.ones(n, np.int64))
        return pa.table(cols)

    def _new_distinct(self, cols: dict[str, Any], v: pa.Array, i: int) -> np.ndarray:
        """1 for each record whose non-null value is new for its key (not seen in earlier
        chunks nor earlier in this one), else 0; the new pairs join the seen ones."""
        n = len(v)
        seen = self.seen.get(i)
        m = 0 if seen is None else seen.num_rows
        nan = np.zeros(n, bool)
        if pa.types.is_floating(v.type):  # the row code's dict: -0.0 is 0.0, NaNs differ
            v = pc.add(pc.cast(v, pa.float64()), 0.0)  # -0.0 + 0.0 is 0.0
            nan = pc.fill_null(pc.is_nan(v), False).to_numpy(zero_copy_only=False)
            v = pc.if_else(pa.array(nan), pa.scalar(None, pa.float64()), v)
        rows = pa.table({**{k: cols[k] for k in self.keys}, "v": v})
        both = rows if seen is None else pa.concat_tables([seen, rows])
        both = both.append_column("pos", pa.array(np.arange(m + n, dtype=np.int64)))
        firsts = both.group_by(self.keys + ["v"], use_threads=False).aggregate(
            [("pos", "min")])
        firsts = firsts.filter(pc.and_(pc.is_valid(firsts.column("v")),
                                       pc.greater_equal(firsts.column("pos_min"), m)))
        at = np.sort(firsts.column("pos_min").to_numpy()) - m
        flags = nan.astype(np.int64)
        flags[at] = 1
        new = rows.take(pa.array(at))
        self.seen[i] = new if seen is None else pa.concat_tables([seen, new])
        return flags

    def add(self, c: Chunk) -> Chunk | None:
        if not c.num_rows:
            return self._changes(c, None, None, np.zeros(0, np.int64)) \
                if self.streaming else None
        rows = self._rows(c)
        state = self.state
        table = rows if state is None else pa.concat_tables([state, rows],
                                                            promote_options="permissive")
        m = 0 if state is None else state.num_rows
        gid = group_ids(table, self.keys)
        run = running(table, gid, self.run_kinds)
        cols = {k: table.column(k) for k in self.keys}
        for i in range(len(self.kinds)):  # counts read only w<i>: v<i> rides along
            cols[f"v{i}"] = run.get(f"v{i}", table.column(f"v{i}"))
            if f"w{i}" in run:
                cols[f"w{i}"] = run[f"w{i}"]
        cols["ts"] = table.column("ts")
        cols["n"] = pa.array(_cumsum_int(table.column("n").to_numpy(), gid))
        runs = pa.table(cols)
        # The new state: every key's last row, keys in first-seen order (the state's
        # keys come first; a new key's first row is in the chunk, in arrival order).
        last = _last_of_groups(gid)
        seen = np.full(len(last), len(gid), np.int64)
        np.minimum.at(seen, gid, np.arange(len(gid), dtype=np.int64))
        order = np.argsort(seen, kind="stable")
        self.state = runs.take(pa.array(last[order]))
        if not self.streaming:
            return None
        new = self._results(runs)
        self.prev = self._previous(new, gid, last[order], m)
        own = {i: pc.is_valid(rows.column(f"v{i}")).to_numpy(zero_copy_only=False)
               for i, k in enumerate(self.kinds) if k in ("sum", "last")}
        return self._changes(c, new, gid, np.arange(m, len(gid)), own)

    def _previous(self, new: list[pa.Array], gid: np.ndarray, last: np.ndarray,
                  m: int) -> list[pa.Array]:
        """Per new state row (``last``: its row in ``new``), the key's output fields
        before its last record: the row before it in the key's group, or - a key without
        records in this chunk - what it was (a key's first row has none: any row)."""
        n = len(gid)
        pos = np.arange(n, dtype=np.int64)
        before = np.ones(n, dtype=bool)
        before[last] = False
        second = np.full(len(last), -1, np.int64)
        second[gid[before]] = pos[before]  # later rows overwrite: each group's last but one
        second = second[gid[last]]
        kept = (second < 0) & (last < m)
        at = np.where(second >= 0, second, np.where(kept, n + last, last))
        old = self.prev if self.prev is not None else [a.slice(0, 0) for a in new]
        return [pa.concat_arrays([a, o]).take(pa.array(at)) for a, o in zip(new, old)]

    def _results(self, runs: pa.Table) -> list[pa.Array]:
        """The output fields of running rows: key fields, then each aggregate's value."""
        out = [runs.column(k).combine_chunks() for k in self.keys]
        for i, kind in enumerate(self.kinds):
            if kind in ("sum", "avg") and pa.types.is_decimal(runs.schema.field(f"v{i}").type):
                field = self.out_schema.field(len(out))  # this aggregate's output field
                out.append(decimal_sum_result(runs.column(f"v{i}"), field) if kind == "sum"
                           else decimal_avg_result(runs.column(f"v{i}"),
                                                   runs.column(f"w{i}"), field))
            elif kind in ("count_star", "count", "count_distinct"):
                out.append(runs.column(f"w{i}").combine_chunks())
            elif kind == "avg":
                total = pc.cast(runs.column(f"v{i}"), pa.float64(), safe=False)
                if pa.types.is_floating(runs.schema.field(f"v{i}").type):
                    total = pc.add(total, 0.0)  # the row code's sum starts at 0: no -0.0
                count = pc.cast(runs.column(f"w{i}"), pa.float64())
                out.append(pc.if_else(pc.equal(count, 0.0), pa.scalar(None, pa.float64()),
                                      pc.divide(total, count)).combine_chunks())
            else:
                out.append(runs.column(f"v{i}").combine_chunks())
        fields = list(self.out_schema)[:len(out)]
        return [pc.cast(a, f.type, safe=False) for a, f in zip(out, fields)]

    def _changes(self, c: Chunk, new: list[pa.Array] | None, gid: np.ndarray | None,
                 mine: np.ndarray, own: dict[int, np.ndarray] | None = None) -> Chunk:
        """Per chunk record (rows ``mine`` of the running rows' outputs ``new``), in
        order: ``+I`` for a key's first row, ``-U`` old / ``+U`` new when the row changed,
        else nothing."""
        n = len(mine)
        if new is None or gid is None or not n:
            return Chunk(convert.empty(self.out_schema).batch, pa.array([], convert.TS),
                         None if c.marks is None else (np.zeros(len(c.marks[0]), np.int64),
                                                       c.marks[1]))
        # The row before each row of its group (-1: none).
        order = np.argsort(gid, kind="stable")
        prev_sorted = np.r_[-1, order[:-1]]
        same = np.r_[False, gid[order][1:] == gid[order][:-1]]
        prev = np.empty(len(gid), np.int64)
        prev[order] = np.where(same, prev_sorted, -1)
        before = prev[mine]
        first = before < 0
        safe = np.where(first, mine, before)
        changed = np.zeros(n, dtype=bool)
        # The row code compares rows with ``==``, an element by identity first, so a NaN
        # result is unchanged exactly when it is the same float object: a min / max /
        # first's NaN is never replaced; a sum / last is replaced by a record with a value
        # (NaN + x, the value itself) and kept by a null; an avg is a new quotient.
        k = len(self.keys)
        for j, a in enumerate(new):
            x, y = a.take(pa.array(mine)), a.take(pa.array(safe))
            eq = pc.fill_null(pc.equal(x, y), False)
            both_null = pc.and_(pc.is_null(x), pc.is_null(y))
            kind = self.kinds[j - k] if j >= k else None
            if kind in ("min", "max", "first", "sum", "last") and \
                    pa.types.is_floating(a.type):
                same = pc.fill_null(pc.and_(pc.is_nan(x), pc.is_nan(y)), False)
                if kind in ("sum", "last") and own is not None:
                    same = pc.and_(same, pa.array(~own[j - k][mine - len(gid) + n]))
                both_null = pc.or_(both_null, same)
            changed |= ~pc.or_(eq, both_null).to_numpy(zero_copy_only=False)
        counts = np.where(first, 1, np.where(changed, 2, 0)).astype(np.int64)
        # Output row j: from ``take`` with kind ``kinds``.
        reps = np.repeat(np.arange(n), counts)
        second = np.r_[False, reps[1:] == reps[:-1]]
        two = counts[reps] == 2
        take = np.where(two & ~second, before[reps], mine[reps])
        kinds = np.where(first[reps], INSERT, np.where(second, UPDATE_AFTER, UPDATE_BEFORE))
        idx = pa.array(take)
        arrays = [a.take(idx) for a in new] + [pa.array(kinds.astype(np.int8))]
        batch = pa.RecordBatch.from_arrays(arrays, schema=self.out_schema)
        ts = c.ts.take(pa.array(reps))
        marks = None
        if c.marks is not None:
            ends = np.concatenate([[0], np.cumsum(counts)])
            marks = (ends[np.asarray(c.marks[0], np.int64)], c.marks[1])
        wm_at = None if c.wm_at is None else c.wm_at.take(pa.array(reps))
        return Chunk(batch, ts, marks, wm_at)

    def fire(self) -> Chunk | None:
        """BATCH: every key's final row (``+I``) in first-seen order, at its last
        timestamp."""
        if self.streaming or self.state is None:
            return None
        arrays = self._results(self.state)
        if len(arrays) < len(self.out_schema):  # an updating schema (not in BATCH)
            arrays.append(pa.array(np.zeros(self.state.num_rows, np.int8)))
        ts = self.state.column("ts").combine_chunks()
        return Chunk(pa.RecordBatch.from_arrays(arrays, schema=self.out_schema), ts)


def _summed(t: pa.DataType) -> pa.DataType:
    """The type sums and averages add in: double, long, or a DECIMAL(p, s)'s exact
    decimal256(76, s) (``running._running_decimal_sum``)."""
    if pa.types.is_decimal(t):
        return pa.decimal256(76, t.scale)
    return pa.float64() if pa.types.is_floating(t) else pa.int64()
