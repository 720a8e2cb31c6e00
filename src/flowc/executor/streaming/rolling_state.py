"""The STREAMING columnar rolling aggregate's state (``arrow/rolling.RollingAggregate``) as
the row ReduceOperator's (``runtime/operators.py``, the reduce of ``map(RollingStart) ->
key_by -> reduce(RollingMerge) -> flat_map(RollingChanges)``) and back, for the
streaming executor's snapshots (``columnar.py``).

The row operator holds, per key in first-seen order, ``values[key] = (key fields...,
(acc, count, result, prev_count, prev_result, written))`` (``flowc.parser.changes``): the
``RowAggregate`` accumulators (count an int, sum / min / max / first / last the value or
None, avg (sum, count), count distinct a ``DistinctSet``), the key's number of records,
its result row, and the count and result before its last record. The columnar state holds
one running row per key (``v<i>`` / ``w<i>``, ``n`` the records), count distinct's (key,
value) pairs in first-seen order, and ``prev`` (the output fields before the key's last
record). Insert-only input: ``prev_count`` is always ``count - 1``. With a state TTL the
row state holds write times the columnar one has not: such jobs stay row by row.
"""

from __future__ import annotations

from typing import Any

import pyarrow as pa

from flowc.executor.arrow import convert
from flowc.executor.arrow.rolling import RollingAggregate
from flowc.executor.arrow.running import COUNTED
from flowc.parser.aggregates import DistinctSet

_NO_VALUES = DistinctSet()  # count distinct's empty accumulator (never extended in place)


def why_not(plan: Any) -> str | None:
    """Why a rolling aggregate's columnar state has no row form (None: it has)."""
    if plan.agg is not None and plan.fn.ttl:
        return "its state TTL needs the write times the row state keeps"
    return None


def _pylist(a: Any) -> list[Any]:
    return a.to_pylist()


def rolling_to_row(r: RollingAggregate, op: Any, agg: Any) -> None:
    """Put ``r``'s keys into the opened row ReduceOperator ``op`` (``values``); ``agg``:
    the front end's ``RowAggregate`` (results are computed by it, as the row code does)."""
    op.values = {}
    st = r.state
    if st is None or not st.num_rows:
        return
    keys = list(zip(*(_pylist(st.column(k)) for k in r.keys)))
    counts = _pylist(st.column("n"))
    prev = list(zip(*(_pylist(a) for a in r.prev))) if r.prev is not None else \
        [None] * len(keys)
    per_kind: list[list[Any]] = []
    for i, kind in enumerate(r.kinds):
        v = _pylist(st.column(f"v{i}"))
        w = _pylist(st.column(f"w{i}")) if f"w{i}" in st.column_names else None
        if kind == "count_distinct":
            sets: dict[tuple[Any, ...], DistinctSet] = {}
            seen = r.seen.get(i)
            if seen is not None:
                for *key, value in zip(*(_pylist(seen.column(k)) for k in r.keys),
                                       _pylist(seen.column("v"))):
                    sets[tuple(key)] = sets.get(tuple(key), _NO_VALUES).add(value)
            per_kind.append([sets.get(k, _NO_VALUES) for k in keys])
        elif kind in ("count", "count_star"):
            per_kind.append(w)  # type: ignore[arg-type]
        elif kind == "avg":  # the row sum starts at 0: a float sum of -0.0s is 0.0
            per_kind.append([(0 if t is None else t + 0.0 if isinstance(t, float) else t, c)
                             for t, c in zip(v, w)])  # type: ignore[arg-type]
        else:
            per_kind.append(v)
    values = op.values
    for key, n, acc, before in zip(keys, counts, zip(*per_kind), prev):
        # ``prev``: the output fields, the key's then the aggregates' (the row's result)
        value = key + ((acc, n, agg.get_result(acc), n - 1,
                        tuple(before[len(key):]) if n > 1 and before is not None else None,
                        None),)
        values[op.key_fn(value)] = value


def rolling_from_row(op: Any, r: RollingAggregate) -> None:
    """Put the row ReduceOperator ``op``'s keys (restored from a snapshot) into ``r``."""
    k = len(r.keys)
    rows = list(op.values.values())
    template = _template(r)
    cols: dict[str, list[Any]] = {name: [] for name in template.names}
    distinct: dict[int, dict[str, list[Any]]] = {}
    for value in rows:
        key, (acc, n, _, _, _, _) = value[:k], value[k]
        for j, name in enumerate(r.keys):
            cols[name].append(key[j])
        for i, kind in enumerate(r.kinds):
            a = acc[i]
            if kind == "count_distinct":
                cols[f"v{i}"].append(None)
                cols[f"w{i}"].append(len(a))
                d = distinct.setdefault(i, {**{name: [] for name in r.keys}, "v": []})
                for x in a:
                    for j, name in enumerate(r.keys):
                        d[name].append(key[j])
                    d["v"].append(x)
            elif kind in ("count", "count_star"):
                cols[f"v{i}"].append(None)
                cols[f"w{i}"].append(a)
            elif kind == "avg":
                cols[f"v{i}"].append(a[0] if a[1] else None)
                cols[f"w{i}"].append(a[1])
            else:
                cols[f"v{i}"].append(a)
        cols["ts"].append(None)
        cols["n"].append(n)
    r.state = pa.Table.from_pydict(cols, schema=template) if rows else None
    for i, kind in enumerate(r.kinds):
        if kind == "count_distinct":
            schema = pa.schema([template.field(name) for name in r.keys]
                               + [pa.field("v", r.value_types[i])])
            r.seen[i] = pa.Table.from_pydict(distinct.get(i, {n: [] for n in schema.names}),
                                             schema=schema)
    fields = list(r.out_schema)[:len(r.keys) + len(r.kinds)]
    prevs = [value[:k] + (value[k][4] if value[k][4] is not None else
                          (None,) * len(r.kinds)) for value in rows]
    r.prev = [pa.array([p[j] for p in prevs], f.type) for j, f in enumerate(fields)] \
        if rows else None


def _template(r: RollingAggregate) -> pa.Schema:
    """The state table's schema: the rows of no records, as ``RollingAggregate`` makes
    them."""
    fields = [pa.field(k, t) for k, t in zip(r.keys, r.key_types)]
    for i, kind in enumerate(r.kinds):
        fields.append(pa.field(f"v{i}", r.value_types[i]))
        if kind in COUNTED or kind == "count_distinct":
            fields.append(pa.field(f"w{i}", pa.int64()))
    fields += [pa.field("ts", convert.TS), pa.field("n", pa.int64())]
    return pa.schema(fields)
