"""BATCH Top-N and deduplication (``parser.topn.BatchTopN``, Flink's sort-based Rank)
vectorised: each key's final top rows, ranked exactly as the row operator ranks them.

The row operator keeps per key the first ``n`` rows in the ORDER BY order (ascending puts
nulls first, descending last, or as the query says), a row equal in the order going after
the rows already there - a stable sort by arrival - except deduplication ordered
descending (``top 1`` without a rank column), where an equal row replaces the kept one
(the last of equal rows wins). At end of input a timer per key (registered in first-seen
key order, all at ``Long.MAX_VALUE``) emits the key's rows, with their row number when the
query reads the rank column.

Here every order column becomes an int64 sort key (a dense rank, negated for descending,
nulls below or above all values); a ``lexsort`` by (key's first arrival, order keys,
arrival) puts each key's rows in that order and the first ``n`` per key are kept. The state
is folded to those rows every ``FOLD`` buffered records, so it holds at most ``n`` rows
per key plus one fold's input. Keys and order columns of DOUBLE keep the row operator
(Python orders NaN inconsistently, and a NaN key is a key of its own).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from flowc.executor.arrow import convert
from flowc.executor.arrow.convert import Chunk
from flowc.executor.arrow.joins import key_codes
from flowc.executor.runtime.core import LONG_MAX
from flowc.operators import KeyedProcessOp
from flowc.parser.topn import BatchTopN
from flowc.types import Schema
from flowc.vector import VCol, vector_of

FOLD = 1 << 18  # buffered records before the state is cut to each key's top rows
_SORTABLE = ("string", "int", "bool", "timestamp", "duration")
_LOW, _HIGH = -(1 << 62), 1 << 62  # a null's sort key: before / after every value


@dataclass(frozen=True)
class RankPlan:
    """A BATCH Top-N as the task needs it: ``keys`` the key columns, ``order`` (column,
    descending, nulls first) per ORDER BY item."""

    n: int
    order: tuple[tuple[int, bool, bool], ...]
    rank: bool
    keys: tuple[int, ...]


def plan_rank(spec: Any, key: Any, in_schema: Any) -> RankPlan | None:
    """The RankPlan of a BATCH Top-N this module runs, else None (the row operator)."""
    if not isinstance(spec, KeyedProcessOp) or type(spec.fn) is not BatchTopN or \
            not isinstance(in_schema, Schema) or isinstance(in_schema, convert.Changelog):
        return None
    fn: BatchTopN = spec.fn
    vec = vector_of(getattr(key, "fn", None)) if key is not None else ()
    if not isinstance(vec, tuple) or not all(isinstance(v, VCol) for v in vec):
        return None
    keys = tuple(v.index for v in vec)
    kinds = [in_schema.fields[i].type for i in (*keys, *(o[0] for o in fn.order))]
    if any(t.is_array or t.kind not in _SORTABLE for t in kinds):
        return None
    return RankPlan(fn.n, tuple(fn.order), fn.rank, keys)


class BatchRank:
    """One subtask's BATCH Top-N (a chain member holding state until end of input)."""

    late: Chunk | None = None
    dropped = 0

    def __init__(self, plan: RankPlan, in_schema: pa.Schema, out_schema: pa.Schema) -> None:
        self.plan = plan
        self.in_schema = in_schema
        self.out_schema = out_schema
        self.dedup_last = plan.n == 1 and not plan.rank and bool(plan.order) and \
            plan.order[0][1]
        self.chunks: list[Chunk] = []
        self.buffered = 0
        self.seen = 0  # records so far (arrival numbers)
        # The state: kept records, their arrival numbers and their key's first arrival.
        self.state = convert.empty(in_schema)
        self.arrival = np.zeros(0, np.int64)
        self.first = np.zeros(0, np.int64)
        self.ranks = np.zeros(0, np.int64)

    def add(self, c: Chunk) -> None:
        if c.num_rows:
            self.chunks.append(c)
            self.buffered += c.num_rows
            if self.buffered >= FOLD:
                self._fold()
        return None

    def fire(self) -> Chunk | None:
        self._fold()
        if self.state.num_rows == 0:
            return None
        cols = list(self.state.batch.columns)
        if self.plan.rank:
            cols.append(pa.array(self.ranks, self.out_schema.field(len(cols)).type))
        batch = pa.RecordBatch.from_arrays(cols, schema=self.out_schema)
        return Chunk(batch, pa.array(np.full(batch.num_rows, LONG_MAX, np.int64)))

    def _fold(self) -> None:
        """The state and the buffered records cut to each key's top rows, in output order
        (keys by first arrival, then rank)."""
        if not self.chunks:
            return
        n_new = self.buffered
        rows = convert.concat([self.state, *self.chunks], self.in_schema)
        arrival = np.concatenate([self.arrival, np.arange(self.seen, self.seen + n_new,
                                                          dtype=np.int64)])
        first = np.concatenate([self.first, arrival[len(self.first):]])
        self.seen += n_new
        self.chunks, self.buffered = [], 0
        batch = rows.batch
        cols = [batch.column(i) for i in self.plan.keys]
        code = key_codes(cols, [c.slice(0, 0) for c in cols])[0] if cols else \
            np.zeros(len(arrival), np.int64)
        key_first = np.full(int(code.max(initial=-1)) + 1, np.iinfo(np.int64).max, np.int64)
        np.minimum.at(key_first, code, first)
        first = key_first[code]
        sort_keys = [-arrival if self.dedup_last else arrival]
        for pos, desc, nulls_first in reversed(self.plan.order):
            sort_keys.append(_order_key(batch.column(pos), desc, nulls_first))
        sort_keys.append(first)
        order = np.lexsort(tuple(sort_keys))
        sorted_first = first[order]
        head = np.ones(len(order), dtype=bool)
        head[1:] = sorted_first[1:] != sorted_first[:-1]
        start = np.maximum.accumulate(np.where(head, np.arange(len(order)), 0))
        rank = np.arange(len(order)) - start
        keep = rank < self.plan.n
        taken = order[keep]
        self.state = rows.take(pa.array(taken))
        self.arrival, self.first = arrival[taken], first[taken]
        self.ranks = rank[keep] + 1


def _order_key(col: pa.Array, desc: bool, nulls_first: bool) -> np.ndarray:
    """An int64 per value that sorts ascending in the ORDER BY item's order (equal values
    equal keys), nulls before or after every value."""
    if isinstance(col, pa.ChunkedArray):
        col = col.combine_chunks()
    dense = pc.rank(col, sort_keys="ascending", tiebreaker="dense")  # nulls: set below
    key = dense.to_numpy(zero_copy_only=False).astype(np.int64)
    if desc:
        key = -key
    if col.null_count:
        nulls = np.asarray(col.is_null().to_numpy(zero_copy_only=False), dtype=bool)
        key[nulls] = _LOW if nulls_first else _HIGH
    return key
