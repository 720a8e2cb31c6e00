"""Rolling aggregates over Arrow: ``key by ... | aggregate ...`` without a window.

The front end lowers it to ``map(RollingStart) -> key_by -> reduce(RollingMerge) ->
map(RollingResult)`` whose middle stream carries Python accumulators. Here the map becomes
``RollingStart``'s columns - the key fields, then each aggregate's argument value (its
one-record accumulator) - and the reduce with its result map becomes ``Rolling``: the
row ReduceOperator's results (``runtime/operators.py``), computed per chunk with group-wise
cumulative kernels:

- STREAMING: per record, its key's running result over the records so far (counts and
  sums as cumulative sums, min / max as cumulative minima over the values' ranks, first /
  last as the first / latest non-null position, count distinct as a cumulative count of
  first occurrences), with the record's timestamp; watermarks pass unchanged;
- BATCH: at end of input one result per key, keys in first-seen order, with the timestamp
  of the key's last record.

Between chunks a key's state is one summary row (and its distinct values), fed to the next
chunk ahead of its records.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from flowc.executor.arrow.convert import Chunk
from flowc.executor.arrow.kernels import Kernel, as_array, compile_expr
from flowc.executor.runtime.core import unwrap
from flowc.operators import MapOp, ReduceOp
from flowc.types import Field, Schema
from flowc.vector import VAggregate

COUNTED = ("count_star", "count", "avg")  # kinds with a count column (``w``)


def role(spec: Any) -> str | None:
    """``rolling_start`` / ``rolling`` / ``rolling_result`` for the three lowered operators
    of a rolling aggregate whose arguments all have vector forms."""
    from flowc.parser.aggregates import RollingMerge, RollingResult, RollingStart

    fn = unwrap(getattr(spec, "fn", None))
    if isinstance(spec, MapOp) and isinstance(fn, RollingStart) and fn.agg.vector:
        return "rolling_start" if all(
            a is None or compile_expr(a) is not None for a in fn.agg.vector.args) else None
    if isinstance(spec, ReduceOp) and isinstance(fn, RollingMerge) and fn.agg.vector:
        return "rolling"
    if isinstance(spec, MapOp) and isinstance(fn, RollingResult):
        return "rolling_result"
    return None


def start_schema(spec: Any, in_schema: Schema) -> Schema:
    """The columns ``RollingStart`` produces here: key fields, then ``a0..`` (each
    aggregate's argument; ``count(*)`` has none: a null bool column)."""
    from flowc.executor.arrow import convert

    fn = unwrap(spec.fn)
    fields = [in_schema.fields[i] for i in fn.key_positions]
    empty = convert.empty(convert.arrow_schema(in_schema)).batch
    agg: VAggregate = fn.agg.vector
    for i, a in enumerate(agg.args):
        t = pa.bool_() if a is None else as_array(compile_expr(a)(empty), 0).type
        fields.append(Field(f"a{i}", _flowc_type(t)))
    return Schema(tuple(fields))


def _flowc_type(t: pa.DataType) -> Any:
    from flowc import types

    known = {pa.string(): types.STRING, pa.int64(): types.INT, pa.float64(): types.DOUBLE,
             pa.bool_(): types.BOOL}
    if t not in known:
        raise TypeError(f"a rolling aggregate over {t} values")
    return known[t]


def start_step(spec: Any, in_schema: Schema, out_schema: pa.Schema) -> Any:
    fn = unwrap(spec.fn)
    args: list[Kernel | None] = [None if a is None else compile_expr(a)
                                 for a in fn.agg.vector.args]

    def step(c: Chunk) -> Chunk:
        n = c.num_rows
        cols = [c.batch.column(i) for i in fn.key_positions]
        cols += [pa.nulls(n, pa.bool_()) if k is None else as_array(k(c.batch), n)
                 for k in args]
        return c.with_batch(pa.RecordBatch.from_arrays(cols, schema=out_schema))
    return step


class Rolling:
    """One subtask's rolling aggregate (the reduce and its result map)."""

    streaming: bool
    dropped = 0
    late: Chunk | None = None

    def __init__(self, spec: Any, key_count: int, in_schema: pa.Schema,
                 out_schema: pa.Schema, streaming: bool) -> None:
        self.agg: VAggregate = unwrap(spec.fn).agg.vector
        self.kinds = self.agg.kinds
        self.n = key_count
        self.in_schema = in_schema
        self.out_schema = out_schema
        self.streaming = streaming
        self.state: pa.Table | None = None  # one summary row per key (``_state_schema``)
        self.distinct: dict[int, pa.Table] = {}  # per count distinct: (key, value) rows
        self.last_ts: pa.Table | None = None  # BATCH: key, first-seen order, last ts
        self.seen = 0

    # -- combined rows -----------------------------------------------------------------

    def _columns(self, c: Chunk) -> dict[str, Any]:
        """The chunk's records as value (``v``) and count (``w``) columns per aggregate."""
        n = c.num_rows
        cols: dict[str, Any] = {f"k{j}": c.batch.column(j) for j in range(self.n)}
        for i, kind in enumerate(self.kinds):
            v = c.batch.column(self.n + i)
            cols[f"v{i}"] = v
            if kind in COUNTED:
                ones = np.ones(n, np.int64)
                cols[f"w{i}"] = pa.array(ones if kind == "count_star" else
                                         pc.is_valid(v).to_numpy(zero_copy_only=False)
                                         .astype(np.int64))
        return cols

    def _prefix(self) -> pa.Table | None:
        """The state as rows ahead of a chunk's records: each key's summary, then one row
        per distinct value it holds (neutral for every other aggregate)."""
        parts = [] if self.state is None else [self.state]
        for i, values in self.distinct.items():
            n = values.num_rows
            cols = {f"k{j}": values.column(f"k{j}") for j in range(self.n)}
            for a, kind in enumerate(self.kinds):
                t = self.state_schema().field(f"v{a}").type
                cols[f"v{a}"] = values.column("v") if a == i else pa.nulls(n, t)
                if kind in COUNTED:
                    cols[f"w{a}"] = pa.array(np.zeros(n, np.int64))
            parts.append(pa.table(cols, schema=self.state_schema()))
        return pa.concat_tables(parts) if parts else None

    def state_schema(self) -> pa.Schema:
        fields = [pa.field(f"k{j}", self.in_schema.field(j).type) for j in range(self.n)]
        for i, kind in enumerate(self.kinds):
            t = self.in_schema.field(self.n + i).type
            if kind == "sum" or kind == "avg":
                t = pa.int64() if pa.types.is_integer(t) else pa.float64()
            fields.append(pa.field(f"v{i}", t))
            if kind in COUNTED:
                fields.append(pa.field(f"w{i}", pa.int64()))
        return pa.schema(fields)

    # -- running ---------------------------------------------------------------------

    def add(self, c: Chunk) -> Chunk | None:
        n = c.num_rows
        if n == 0:
            return c.with_batch(pa.RecordBatch.from_pylist([], schema=self.out_schema)) \
                if self.streaming else None
        prefix = self._prefix()
        schema = self.state_schema()
        rows = pa.table(self._columns(c))
        rows = pa.Table.from_arrays([pc.cast(rows.column(f.name), f.type, safe=False)
                                     for f in schema], schema=schema)
        table = rows if prefix is None else pa.concat_tables([prefix, rows])
        skip = 0 if prefix is None else prefix.num_rows
        gid = group_ids(table, [f"k{j}" for j in range(self.n)])
        running = self._running(table, gid)
        # The new state: every key's running values at its last row.
        last = _last_of_groups(gid)
        self.state = pa.table({f.name: running[f.name].take(pa.array(last))
                               if f.name in running else table.column(f.name).take(
                                   pa.array(last)) for f in schema}, schema=schema)
        for i, kind in enumerate(self.kinds):
            if kind == "count_distinct":
                keys = table.select([f"k{j}" for j in range(self.n)] + [f"v{i}"])
                values = keys.group_by(keys.column_names, use_threads=False).aggregate([])
                self.distinct[i] = values.filter(pc.is_valid(values.column(f"v{i}"))) \
                    .rename_columns([f"k{j}" for j in range(self.n)] + ["v"])
        if not self.streaming:
            self._remember(table, gid, skip, c)
            return None
        keys = {f"k{j}": table.column(f"k{j}") for j in range(self.n)}
        return c.with_batch(self._results({**keys, **running}, skip))

    def _remember(self, table: pa.Table, gid: np.ndarray, skip: int, c: Chunk) -> None:
        """BATCH: each key's first-seen record number and last timestamp."""
        keys = [f"k{j}" for j in range(self.n)]
        seen = table.select(keys).slice(skip).append_column("first", pa.array(
            np.arange(self.seen, self.seen + c.num_rows, dtype=np.int64))).append_column(
            "ts", c.ts)
        self.seen += c.num_rows
        if self.last_ts is not None:
            seen = pa.concat_tables([self.last_ts, seen])
        grouped = seen.group_by(keys, use_threads=False).aggregate([
            ("first", "min"), ("ts", "last", pc.ScalarAggregateOptions(skip_nulls=False))])
        self.last_ts = pa.table({**{k: grouped.column(k) for k in keys},
                                 "first": grouped.column("first_min"),
                                 "ts": grouped.column("ts_last")})

    def fire(self) -> Chunk | None:
        """BATCH: one result per key, first-seen order, the key's last timestamp."""
        if self.streaming or self.state is None or self.last_ts is None:
            return None
        keys = [f"k{j}" for j in range(self.n)]
        # Match state rows and first-seen rows by key (group_by: null-safe).
        a = self.state.append_column("s", pa.array(np.arange(self.state.num_rows)))
        both = pa.concat_tables([
            a.select(keys + ["s"]).append_column("f", pa.nulls(a.num_rows, pa.int64()))
            .append_column("t", pa.nulls(a.num_rows, pa.int64())),
            self.last_ts.select(keys).append_column(
                "s", pa.nulls(self.last_ts.num_rows, pa.int64())).append_column(
                "f", self.last_ts.column("first")).append_column(
                "t", self.last_ts.column("ts"))])
        opts = pc.ScalarAggregateOptions(skip_nulls=True, min_count=1)
        g = both.group_by(keys, use_threads=False).aggregate(
            [("s", "min", opts), ("f", "min", opts), ("t", "max", opts)])
        g = g.take(pc.sort_indices(g.column("f_min")))
        order = g.column("s_min")
        summary = {f.name: self.state.column(f.name).take(order)
                   for f in self.state_schema()}
        for i, kind in enumerate(self.kinds):
            if kind == "count_distinct":
                summary[f"n{i}"] = self._distinct_totals(g.select(keys), i)
        out = self._results(summary, 0)
        ts = g.column("t_max").combine_chunks()
        return Chunk(out, ts)

    def _distinct_totals(self, keys: pa.Table, i: int) -> pa.Array:
        names = keys.column_names
        values = self.distinct.get(i)
        n = keys.num_rows
        head = keys.append_column("pos", pa.array(np.arange(n, dtype=np.int64))) \
            .append_column("one", pa.nulls(n, pa.int64()))
        if values is None or not values.num_rows:
            return pa.array(np.zeros(n, np.int64))
        tail = values.select(names).append_column(
            "pos", pa.nulls(values.num_rows, pa.int64())).append_column(
            "one", pa.array(np.ones(values.num_rows, np.int64)))
        both = pa.concat_tables([head, tail]).group_by(names, use_threads=False).aggregate(
            [("pos", "min"), ("one", "sum", pc.ScalarAggregateOptions(min_count=0))])
        both = both.filter(pc.is_valid(both.column("pos_min")))
        return both.column("one_sum").take(pc.sort_indices(both.column("pos_min")))

    def _running(self, table: pa.Table, gid: np.ndarray) -> dict[str, Any]:
        return running(table, gid, self.kinds)

    def _results(self, running: dict[str, Any], skip: int) -> pa.RecordBatch:
        """Output rows (key fields, results) of the running values after ``skip``."""
        def tail(a: Any) -> pa.Array:
            a = a.combine_chunks() if isinstance(a, pa.ChunkedArray) else a
            return a.slice(skip)
        state = self.state_schema()
        cols: list[Any] = []
        for j in range(self.n):
            cols.append(tail(running[f"k{j}"]) if f"k{j}" in running else None)
        out: list[Any] = []
        for i, kind in enumerate(self.kinds):
            if kind in ("count_star", "count"):
                out.append(tail(running[f"w{i}"]))
            elif kind == "count_distinct":
                out.append(tail(running[f"n{i}"]))
            elif kind == "avg":
                total = pc.cast(tail(running[f"v{i}"]), pa.float64(), safe=False)
                count = pc.cast(tail(running[f"w{i}"]), pa.float64())
                out.append(pc.if_else(pc.equal(count, 0.0), pa.scalar(None, pa.float64()),
                                      pc.divide(total, count)))
            else:
                out.append(pc.cast(tail(running[f"v{i}"]), state.field(f"v{i}").type))
        arrays = cols + out
        return pa.RecordBatch.from_arrays(
            [pc.cast(a, f.type, safe=False) for a, f in zip(arrays, self.out_schema)],
            schema=self.out_schema)


def running(table: pa.Table, gid: np.ndarray, kinds: tuple[str, ...]) -> dict[str, Any]:
    """Per row of ``table`` (``v{i}`` values, ``w{i}`` counts per aggregate), its group's
    running ``v`` / ``w`` values over the rows up to it (table order), and ``n{i}``: the
    running distinct count."""
    out: dict[str, Any] = {}
    groups = pd.Series(gid)
    for i, kind in enumerate(kinds):
        v = table.column(f"v{i}").combine_chunks()
        if kind in COUNTED:
            w = table.column(f"w{i}").to_numpy()
            out[f"w{i}"] = pa.array(_cumsum_int(w, gid))
        if kind in ("sum", "avg"):
            out[f"v{i}"] = _running_sum(v, gid)
        elif kind in ("min", "max"):
            out[f"v{i}"] = _running_extreme(v, groups, kind == "min")
        elif kind in ("first", "last"):
            valid = pc.is_valid(v).to_numpy(zero_copy_only=False)
            pos = pd.Series(np.where(valid, np.arange(len(gid), dtype=np.float64), np.nan))
            if kind == "first":
                pos = pos.groupby(groups).cummin()
            pos = pos.groupby(groups).ffill()
            out[f"v{i}"] = _take_or_null(v, pos.to_numpy())
        elif kind == "count_distinct":
            out[f"v{i}"] = v
            firsts = pa.table({"g": pa.array(gid), "v": v,
                               "pos": pa.array(np.arange(len(gid), dtype=np.int64))})
            g = firsts.group_by(["g", "v"], use_threads=False).aggregate([("pos", "min")])
            g = g.filter(pc.is_valid(g.column("v")))
            flags = np.zeros(len(gid), np.int64)
            flags[g.column("pos_min").to_numpy()] = 1
            out[f"n{i}"] = pa.array(_cumsum_int(flags, gid))
    return out


def group_ids(table: pa.Table, keys: list[str]) -> np.ndarray:
    """Each row's group number (group_by matches null key fields, a join would not)."""
    n = table.num_rows
    listed = table.select(keys).append_column("pos", pa.array(np.arange(n, dtype=np.int64))) \
        .group_by(keys, use_threads=False).aggregate([("pos", "list")])
    members = listed.column("pos_list").combine_chunks()
    gid = np.empty(n, dtype=np.int64)
    gid[members.values.to_numpy()] = np.repeat(
        np.arange(len(members), dtype=np.int64), np.diff(members.offsets.to_numpy()))
    return gid


def _last_of_groups(gid: np.ndarray) -> np.ndarray:
    """Each group's last row, in group-number order."""
    last = np.zeros(int(gid.max()) + 1 if len(gid) else 0, dtype=np.int64)
    last[gid] = np.arange(len(gid), dtype=np.int64)  # later rows overwrite earlier ones
    return last


def _cumsum_int(x: np.ndarray, gid: np.ndarray) -> np.ndarray:
    """Group-wise running sum of int64 values, wrapping around like Java's long."""
    order = np.argsort(gid, kind="stable")
    xs = x[order].astype(np.int64)
    cs = np.cumsum(xs)
    gs = gid[order]
    start = np.concatenate([[True], gs[1:] != gs[:-1]])
    base = np.maximum.accumulate(np.where(start, np.arange(len(gs)), 0))
    res = cs - cs[base] + xs[base]
    out = np.empty_like(res)
    out[order] = res
    return out


def _running_sum(v: pa.Array, gid: np.ndarray) -> pa.Array:
    """Running sum skipping nulls (null until the key's first value)."""
    valid = pc.is_valid(v).to_numpy(zero_copy_only=False)
    seen = _cumsum_int(valid.astype(np.int64), gid) > 0
    if pa.types.is_integer(v.type):
        total = _cumsum_int(pc.fill_null(v, 0).to_numpy().astype(np.int64), gid)
        return pa.array(total, pa.int64(), mask=~seen)
    # Floats: sequential per key (the row code's rounding); -0.0 is the identity.
    x = pc.fill_null(pc.cast(v, pa.float64()), -0.0).to_numpy(zero_copy_only=False)
    return pa.array(_sequential_cumsum(x, gid), pa.float64(), mask=~seen)


def _sequential_cumsum(x: np.ndarray, gid: np.ndarray) -> np.ndarray:
    """Group-wise running sum of doubles added strictly left to right, as the row code
    adds them (pandas' grouped cumsum compensates, numpy's cumsum has no resets): one numpy
    cumsum per group, or one vector step per position within the groups, whichever is
    fewer."""
    order = np.argsort(gid, kind="stable")
    xs = x[order]
    gs = gid[order]
    starts = np.flatnonzero(np.concatenate([[True], gs[1:] != gs[:-1]])) if len(gs) else \
        np.zeros(0, np.int64)
    sizes = np.diff(np.concatenate([starts, [len(gs)]]))
    res = xs.copy()
    if len(starts) <= (int(sizes.max()) if len(sizes) else 0):
        for s, n in zip(starts, sizes):
            res[s:s + n] = np.cumsum(xs[s:s + n])
    else:
        for k in range(1, int(sizes.max()) if len(sizes) else 0):
            at = starts[sizes > k] + k
            res[at] = res[at - 1] + xs[at]
    out = np.empty_like(res)
    out[order] = res
    return out


def _running_extreme(v: pa.Array, groups: pd.Series, smallest: bool) -> pa.Array:
    """Running min / max skipping nulls, on the values' ranks (any ordered type)."""
    valid = pc.is_valid(v).to_numpy(zero_copy_only=False)
    idx = np.flatnonzero(valid)
    rank = np.full(len(v), np.nan)
    if len(idx):
        order = pc.sort_indices(v.take(pa.array(idx))).to_numpy()
        # Equal values share the rank of the first of them (the row code keeps the first).
        sorted_vals = v.take(pa.array(idx[order]))
        new = np.concatenate([[True], ~pc.equal(sorted_vals.slice(1), sorted_vals.slice(
            0, len(sorted_vals) - 1)).to_numpy(zero_copy_only=False)])
        ranks = np.cumsum(new) - 1
        rank[idx[order]] = ranks
        firsts = idx[order][new]  # one representative row per rank
    s = pd.Series(rank)
    s = s.groupby(groups).cummin() if smallest else s.groupby(groups).cummax()
    best = s.groupby(groups).ffill().to_numpy()
    ok = ~np.isnan(best)
    pick = np.zeros(len(v), np.int64)
    if len(idx):
        pick[ok] = firsts[best[ok].astype(np.int64)]
    taken = v.take(pa.array(pick))
    return pc.if_else(pa.array(ok), taken, pa.scalar(None, v.type))


def _take_or_null(v: pa.Array, pos: np.ndarray) -> pa.Array:
    ok = ~np.isnan(pos)
    pick = np.where(ok, pos, 0).astype(np.int64)
    return pc.if_else(pa.array(ok), v.take(pa.array(pick)), pa.scalar(None, v.type))


def plan(sg: Any, nid: int) -> tuple[str, Schema, Schema] | str | None:
    """For one of a rolling aggregate's operators: its chain member kind and (input,
    output) schemas here; a reason it cannot run columnar; or None (not one of them)."""
    node = sg.nodes[nid]
    r = role(node.operator)
    if r is None:
        return None
    ins = sg.inputs(nid)
    if len(ins) != 1:
        return f"'{node.name}' has {len(ins)} inputs"
    source = sg.nodes[ins[0].source_id]
    if r == "rolling_result":
        if not isinstance(node.output_type, Schema):
            return f"'{node.name}' has no declared schema"
        return "pass", node.output_type, node.output_type
    if r == "rolling_start":
        if not isinstance(source.output_type, Schema):
            return f"the input of '{node.name}' has no declared schema"
        try:
            return "rolling_start", source.output_type, start_schema(
                node.operator, source.output_type)
        except TypeError as e:
            return f"'{node.name}': {e}"
    outs = sg.outputs(nid)
    if role(source.operator) != "rolling_start" or len(outs) != 1 or \
            role(sg.nodes[outs[0].target_id].operator) != "rolling_result" or \
            outs[0].output_tag is not None:
        return f"'{node.name}' is not a rolling aggregate's reduce"
    start = plan(sg, source.id)
    result = sg.nodes[outs[0].target_id].output_type
    if not isinstance(start, tuple) or not isinstance(result, Schema):
        return f"'{node.name}' has no declared schemas"
    return "rolling", start[2], result
