"""Run time of a Top-N over an updating input whose rows have a unique key and whose sort
key only moves one way (``ORDER BY COUNT(*) DESC`` over a GROUP BY): Flink's
UpdatableTopNFunction (the Rank of ``strategy=[UpdateFastStrategy[...]]``), emitting its
changelog.

The input is an upsert stream: a row replaces the row of its unique key, retractions
(``-U``) are not needed and are skipped (Flink's planner does not even ask the GroupAggregate
for them). Per key the state holds the top rows only: sort keys in order, each with its row
keys in arrival order, and the row of each row key. A row whose key is in the top moves up
(its sort key only grows in the order); a new row enters when it sorts before the last kept
one or the top is not full. With a rank column each rank whose row changes is ``-U`` old /
``+U`` new (``+I`` a rank filled first); without one an update is ``-U`` / ``+U`` of the row
and a new row ``-D``s the row it pushes out, then ``+I``s itself.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from flowc.errors import ExecutionError
from flowc.parser.changes import value_state
from flowc.parser.topn_retract import RetractTopN
from flowc.rowkind import Delete, UpdateAfter, UpdateBefore, is_retract

Key = tuple[Any, ...]


class _Top:
    """One key's state (Flink's TopNBuffer and row-key map)."""

    __slots__ = ("keys", "by_key", "rows")

    def __init__(self) -> None:
        self.keys: list[Key] = []  # distinct sort keys, in order
        self.by_key: dict[Key, list[Key]] = {}  # sort key -> row keys, arrival order
        self.rows: dict[Key, tuple[Any, ...]] = {}  # row key -> row

    def size(self) -> int:
        return sum(len(v) for v in self.by_key.values())


class UpdateTopN(RetractTopN):
    """``unique``: the positions of the input's unique key (the GROUP BY columns)."""

    def __init__(self, n: int, order: tuple[tuple[int, bool, bool], ...], rank: bool,
                 unique: tuple[int, ...], ttl: int | None = None, start: int = 1) -> None:
        super().__init__(n, order, rank, ttl, start)
        self.unique = unique

    def open(self, runtime_context: Any) -> None:
        self.state = runtime_context.get_state(value_state("data-state-with-update", self.ttl))

    def _put(self, st: _Top, sk: Key, rk: Key) -> None:
        if sk not in st.by_key:
            st.keys.insert(self._position(st.keys, sk), sk)
            st.by_key[sk] = []
        st.by_key[sk].append(rk)

    def _remove(self, st: _Top, sk: Key, rk: Key) -> None:
        keys = st.by_key[sk]
        keys.remove(rk)
        if not keys:
            del st.by_key[sk]
            st.keys.pop(self._position(st.keys, sk))

    def _rank_of(self, st: _Top, sk: Key, rk: Key) -> int:
        rank = 1
        for k in st.keys:
            if k == sk:
                return rank + st.by_key[k].index(rk)
            rank += len(st.by_key[k])
        raise ExecutionError("Failed to find the sortKey, rowkey in the buffer. This should "
                             "never happen")

    def _in_buffer_range(self, st: _Top, sk: Key) -> bool:
        if not st.keys:
            return True
        return self._cmp(sk, st.keys[-1]) < 0 or st.size() < self.n

    def process_element(self, value: Any, ctx: Any) -> Iterator[tuple[Any, ...]]:
        if is_retract(value):  # an upsert input: the next +U replaces the row
            return
        row = tuple(value)
        st: _Top = self.state.value() or _Top()
        sk = tuple(row[pos] for pos, _, _ in self.order)
        rk = tuple(row[i] for i in self.unique)
        if self.rank or self.start > 1:
            yield from self._numbered(st, sk, rk, row)
        else:
            yield from self._plain(st, sk, rk, row)
        self.state.update(st)

    def _plain(self, st: _Top, sk: Key, rk: Key,
               row: tuple[Any, ...]) -> Iterator[tuple[Any, ...]]:
        old = st.rows.get(rk)
        if old is not None:
            old_sk = tuple(old[pos] for pos, _, _ in self.order)
            if old_sk != sk:
                self._remove(st, old_sk, rk)
                self._put(st, sk, rk)
            st.rows[rk] = row
            yield UpdateBefore(old)
            yield UpdateAfter(row)
        elif self._in_buffer_range(st, sk):
            self._put(st, sk, rk)
            st.rows[rk] = row
            if st.size() > self.n:
                last_sk = st.keys[-1]
                last = st.by_key[last_sk][-1]
                self._remove(st, last_sk, last)
                yield Delete(st.rows.pop(last))
            yield row

    def _numbered(self, st: _Top, sk: Key, rk: Key,
                  row: tuple[Any, ...]) -> Iterator[tuple[Any, ...]]:
        old = st.rows.get(rk)
        if old is not None:
            old_sk = tuple(old[pos] for pos, _, _ in self.order)
            c = self._cmp(sk, old_sk)
            if c == 0:
                rank = self._rank_of(st, sk, rk)
                st.rows[rk] = row
                yield from self._out(UpdateBefore, old, rank)
                yield from self._out(UpdateAfter, row, rank)
                return
            if c > 0:
                raise ExecutionError(
                    f"The input retract record's sort key {sk} is lower than old sort key "
                    f"{old_sk}, this break the monotonicity on sort key field which is "
                    "guaranteed by the sql semantic.")
            old_rank = self._rank_of(st, old_sk, rk)
            self._remove(st, old_sk, rk)
            self._put(st, sk, rk)
            st.rows[rk] = row
            yield from self._emit(st, sk, row, old_sk, old, old_rank)
        elif self._in_buffer_range(st, sk):
            self._put(st, sk, rk)
            st.rows[rk] = row
            yield from self._emit(st, sk, row, None, None, -1)

    def _emit(self, st: _Top, sk: Key, row: tuple[Any, ...], old_sk: Key | None,
              old: tuple[Any, ...] | None, old_rank: int) -> Iterator[tuple[Any, ...]]:
        rank = 0
        current = row
        found = retracted = False
        keys = list(st.keys)
        i = 0
        while i < len(keys) and rank <= self.n:
            k = keys[i]
            i += 1
            row_keys = st.by_key[k]
            if not found and k == sk:
                rank += len(row_keys)
                current, found = row, True
            elif found:
                if old_sk is not None and self._cmp(k, old_sk) > 0:
                    break  # below the old position: those ranks do not change
                for r in row_keys:
                    if rank > self.n or (old_sk is not None and rank >= old_rank):
                        break
                    prev = st.rows[r]
                    yield from self._out(UpdateBefore, prev, rank)
                    if current is row and old is not None and not retracted:
                        yield from self._out(UpdateBefore, old, old_rank)
                        retracted = True
                    yield from self._out(UpdateAfter, current, rank)
                    current, rank = prev, rank + 1
            else:
                rank += len(row_keys)
        if rank <= self.n:
            if old is None:
                yield from self._out(lambda r: r, current, rank)
            else:
                if not retracted:
                    yield from self._out(UpdateBefore, old, old_rank)
                yield from self._out(UpdateAfter, current, rank)
            return
        for k in keys[i:]:  # pushed out of the top: forgotten
            for r in st.by_key.pop(k):
                st.rows.pop(r, None)
            st.keys.pop(self._position(st.keys, k))
