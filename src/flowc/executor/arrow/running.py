"""Group-wise running aggregates over Arrow rows: per row, its group's aggregate over the
rows up to it (cumulative kernels). Late firings of STREAMING windows with allowed lateness
(``stream_windows.py``), BATCH sessions (``sessions.py``) and the rolling ``aggregate``
(``rolling.py``, its changelog in the batches' ``_kind`` column) read them.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

COUNTED = ("count_star", "count", "avg")  # kinds with a count column (``w``)


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
    if not keys:  # a keyless window: one group (pyarrow has no keyless "list" aggregate)
        return np.zeros(n, dtype=np.int64)
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
    if pa.types.is_decimal(v.type):
        return _running_decimal_sum(v, gid, seen)
    if pa.types.is_integer(v.type):
        total = _cumsum_int(pc.fill_null(v, 0).to_numpy().astype(np.int64), gid)
        return pa.array(total, pa.int64(), mask=~seen)
    # Floats: sequential per key (the row code's rounding); -0.0 is the identity.
    x = pc.fill_null(pc.cast(v, pa.float64()), -0.0).to_numpy(zero_copy_only=False)
    return pa.array(_sequential_cumsum(x, gid), pa.float64(), mask=~seen)


LIMB = 32  # bits of a limb of a running DECIMAL sum


def _running_decimal_sum(v: pa.Array, gid: np.ndarray, seen: np.ndarray) -> pa.Array:
    """Group-wise running sum of DECIMAL(p, s) values, exact (as the row code adds them),
    as decimal256(76, s): each value's 256-bit two's complement cut into eight 32-bit
    limbs (the top one signed), each limb summed in int64 (exact below 2^31 rows), the
    carries then propagated. Null until the group's first value."""
    typ = pa.decimal256(76, v.type.scale)
    w = pc.fill_null(pc.cast(v, typ), pa.scalar(Decimal(0), typ)).combine_chunks() \
        if isinstance(v, pa.ChunkedArray) else \
        pc.fill_null(pc.cast(v, typ), pa.scalar(Decimal(0), typ))
    n = len(w)
    words = np.frombuffer(w.buffers()[1], dtype=np.uint32, count=(w.offset + n) * 8)
    limbs = words.reshape(-1, 8)[w.offset:].astype(np.int64)
    limbs[:, 7] = limbs[:, 7].astype(np.uint32).view(np.int32)
    sums = np.stack([_cumsum_int(limbs[:, j], gid) for j in range(8)], axis=1)
    for j in range(7):
        sums[:, j + 1] += sums[:, j] >> LIMB  # arithmetic shift: floor, borrows too
        sums[:, j] &= (1 << LIMB) - 1
    out = (sums & ((1 << LIMB) - 1)).astype(np.uint32)
    total = pa.Array.from_buffers(typ, n, [None, pa.py_buffer(out.tobytes())])
    return pc.if_else(pa.array(seen), total, pa.scalar(None, typ))


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
    if pa.types.is_floating(v.type):
        return _running_float_extreme(v, groups, smallest)
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


def _running_float_extreme(v: pa.Array, groups: pd.Series, smallest: bool) -> pa.Array:
    """Running min / max of floats as the row code compares them (``windows.py``'s
    ``EXTREME_PARTS``): NaN when the group's first value is NaN, else the extreme of the
    other values, a zero extreme being the group's first zero (``0.0`` or ``-0.0``)."""
    valid = pc.is_valid(v).to_numpy(zero_copy_only=False)
    x = pc.fill_null(pc.cast(v, pa.float64()), 0.0).to_numpy(zero_copy_only=False)
    pos = np.arange(len(x), dtype=np.float64)

    def first_where(mask: np.ndarray) -> np.ndarray:
        at = pd.Series(np.where(mask, pos, np.nan)).groupby(groups).cummin()
        return at.groupby(groups).ffill().to_numpy()

    head, zero = first_where(valid), first_where(valid & (x == 0))
    fill = np.inf if smallest else -np.inf
    y = pd.Series(np.where(valid & ~np.isnan(x), x, fill))
    ext = (y.groupby(groups).cummin() if smallest else y.groupby(groups).cummax()).to_numpy()
    seen = ~np.isnan(head)
    head_v = x[np.where(seen, head, 0).astype(np.int64)]
    zero_v = x[np.where(np.isnan(zero), 0, zero).astype(np.int64)]
    out = np.where(seen & np.isnan(head_v), np.nan, np.where(ext == 0, zero_v, ext))
    return pc.cast(pa.array(out, pa.float64(), mask=~seen), v.type)


def _take_or_null(v: pa.Array, pos: np.ndarray) -> pa.Array:
    ok = ~np.isnan(pos)
    pick = np.where(ok, pos, 0).astype(np.int64)
    return pc.if_else(pa.array(ok), v.take(pa.array(pick)), pa.scalar(None, v.type))
