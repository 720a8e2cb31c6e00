"""Run time of ``top n by ...`` over an updating stream: Flink's RetractableTopNFunction
(the Rank of ``strategy=[RetractStrategy]``), emitting its changelog.

Per key the state holds the distinct sort keys in order with how many rows each has, and
the rows of each sort key in arrival order (Flink's ``sorted-map`` and ``data-state``). An
accumulating row (``+I`` / ``+U``) joins its sort key's rows at the end; a retraction
(``-U`` / ``-D``) takes out the first equal row. What is emitted walks the sort keys from
the top, as Flink does:

- with a rank column: every rank from the changed row down to ``n`` gets its new row
  (``-U`` old, ``+U`` new), a rank filled for the first time ``+I``, a rank emptied ``-D``;
- without one: an insert ``-D``s the row it pushes beyond ``n`` and ``+I``s itself; a
  retraction ``-D``s the row and ``+I``s the row that moves up to rank ``n``.

When the input has a unique key and the sort key only moves one way (``ORDER BY COUNT(*)
DESC`` over a GROUP BY) Flink picks UpdatableTopNFunction instead: flowc.parser.topn_update,
chosen by flowc.sql.topn as Flink's planner does; .flow's ``top`` always retracts.
"""

from __future__ import annotations

from collections.abc import Generator, Iterable, Iterator
from typing import Any

from flowc.api.functions import KeyedProcessFunction
from flowc.parser.changes import value_state
from flowc.rowkind import Delete, UpdateAfter, UpdateBefore, is_retract


class _Ranked:
    """One key's state: sort keys in order, their row counts and rows."""

    __slots__ = ("keys", "counts", "rows")

    def __init__(self) -> None:
        self.keys: list[tuple[Any, ...]] = []
        self.counts: dict[tuple[Any, ...], int] = {}
        self.rows: dict[tuple[Any, ...], list[tuple[Any, ...]]] = {}


class RetractTopN(KeyedProcessFunction):
    """``order``: (field position, descending, nulls first) per ORDER BY item; ranks
    ``start``..``n`` are emitted (``start`` > 1: a rank filter with a lower bound)."""

    emits_updates = True  # the planner's changelog mode

    def __init__(self, n: int, order: tuple[tuple[int, bool, bool], ...], rank: bool,
                 ttl: int | None = None, start: int = 1) -> None:
        self.n = n
        self.order = order
        self.rank = rank
        self.ttl = ttl  # table.exec.state.ttl (ms): the key's state expires, as Flink's
        self.start = start

    def open(self, runtime_context: Any) -> None:
        self.state = runtime_context.get_state(value_state("sorted-map", self.ttl))

    # ---------------------------------------------------------------- ordering

    def _cmp(self, a: tuple[Any, ...], b: tuple[Any, ...]) -> int:
        """-1 if sort key ``a`` sorts before ``b``, 1 after, 0 equal."""
        for (_, desc, nulls_first), x, y in zip(self.order, a, b):
            if x == y:
                continue
            if x is None or y is None:
                return -1 if (x is None) == nulls_first else 1
            return (-1 if x < y else 1) * (-1 if desc else 1)
        return 0

    def _position(self, keys: list[tuple[Any, ...]], key: tuple[Any, ...]) -> int:
        """Where ``key`` is or goes in ``keys`` (binary search with the order's rules)."""
        lo, hi = 0, len(keys)
        while lo < hi:
            mid = (lo + hi) // 2
            if self._cmp(keys[mid], key) < 0:
                lo = mid + 1
            else:
                hi = mid
        return lo

    # ---------------------------------------------------------------- output

    def _in_range(self, rank: int) -> bool:
        return self.start <= rank <= self.n

    def _out(self, kind: Any, row: tuple[Any, ...], rank: int) -> Iterator[tuple[Any, ...]]:
        if self._in_range(rank):
            yield kind(row + (rank,) if self.rank else row)

    def _shift(self, rows: Iterable[tuple[Any, ...]], carried: tuple[Any, ...], rank: int,
               down: bool) -> Generator[tuple[Any, ...], None, tuple[tuple[Any, ...], int]]:
        """The rows of the next sort key (in order, from ``rank`` on) each move by one rank:
        an insert pushes them down (rank r held the row, now holds ``carried``), a
        retraction pulls them up (r held ``carried``, now holds the row); a -U/+U pair per
        rank within the range. Returns the row carried on and the next rank."""
        for row in rows:
            if rank > self.n:
                break
            before, after = (row, carried) if down else (carried, row)
            yield from self._out(UpdateBefore, before, rank)
            yield from self._out(UpdateAfter, after, rank)
            carried, rank = row, rank + 1
        return carried, rank

    # ---------------------------------------------------------------- records

    def process_element(self, value: Any, ctx: Any) -> Iterator[tuple[Any, ...]]:
        retract = is_retract(value)
        row = tuple(value)
        st: _Ranked = self.state.value() or _Ranked()
        key = tuple(row[pos] for pos, _, _ in self.order)
        numbered = self.rank or self.start > 1
        if not retract:
            if key in st.counts:
                st.counts[key] += 1
            else:
                st.keys.insert(self._position(st.keys, key), key)
                st.counts[key] = 1
            if numbered:
                yield from self._insert_numbered(st, key, row)
            else:
                yield from self._insert_plain(st, key, row)
            st.rows.setdefault(key, []).append(row)
        else:
            if numbered:
                removed = yield from self._retract_numbered(st, key, row)
            else:
                removed = yield from self._retract_plain(st, key, row)
            if key in st.counts:  # a retraction of a row never seen is dropped (Flink)
                st.counts[key] -= 1
                if not st.counts[key]:
                    del st.counts[key]
                    st.keys.pop(self._position(st.keys, key))
            if not removed:
                rows = st.rows.get(key)
                if rows is not None and row in rows:
                    rows.remove(row)
                if rows is not None and not rows:
                    del st.rows[key]
        self.state.update(st)

    def _insert_numbered(self, st: _Ranked, key: tuple[Any, ...],
                         row: tuple[Any, ...]) -> Iterator[tuple[Any, ...]]:
        rank = 0
        current: tuple[Any, ...] | None = None
        found = False
        for k in st.keys:
            if rank > self.n:
                break
            if not found and k == key:
                rank += st.counts[k]
                current, found = row, True
            elif found:
                assert current is not None
                current, rank = yield from self._shift(st.rows.get(k, ()), current, rank,
                                                       down=True)
            else:
                rank += st.counts[k]
        if rank <= self.n and current is not None:
            yield from self._out(lambda r: r, current, rank)

    def _insert_plain(self, st: _Ranked, key: tuple[Any, ...],
                      row: tuple[Any, ...]) -> Iterator[tuple[Any, ...]]:
        rank = 0
        found = False
        collect = False
        delete: tuple[Any, ...] | None = None
        for k in st.keys:
            if rank > self.n:
                break
            if not found and k == key:
                rank += st.counts[k]
                collect = self._in_range(rank)
                found = True
            elif found:
                last = rank + st.counts[k]
                if last <= self.n:
                    rank = last
                else:
                    delete = st.rows[k][self.n - rank]
                    break
            else:
                rank += st.counts[k]
        if delete is not None:
            yield Delete(delete)
        if collect:
            yield row

    def _retract_numbered(self, st: _Ranked, key: tuple[Any, ...],
                          row: tuple[Any, ...]) -> Iterator[tuple[Any, ...]]:
        """Returns (as the generator's value) whether ``row`` left the state."""
        rank = 0
        prev: tuple[Any, ...] | None = None
        found = False
        for k in st.keys:  # not changed before the loop ends
            if rank > self.n:
                break
            if not found and k == key:
                rows = st.rows.get(k, [])
                i = 0
                while i < len(rows) and rank <= self.n:
                    current = rows[i]
                    if not found and current == row:
                        prev, found = current, True
                        del rows[i]
                        rank += 1
                        continue
                    if found:
                        assert prev is not None
                        yield from self._out(UpdateBefore, prev, rank)
                        yield from self._out(UpdateAfter, current, rank)
                        prev = current
                    rank += 1
                    i += 1
                if not rows:
                    st.rows.pop(k, None)
            elif found:
                assert prev is not None
                prev, rank = yield from self._shift(st.rows.get(k, ()), prev, rank, down=False)
            else:
                rank += st.counts[k]
        if rank <= self.n and prev is not None:
            yield from self._out(Delete, prev, rank)
        return found

    def _retract_plain(self, st: _Ranked, key: tuple[Any, ...],
                       row: tuple[Any, ...]) -> Iterator[tuple[Any, ...]]:
        """Returns (as the generator's value) whether ``row`` left the state."""
        nxt = 1  # the next rank
        found = False
        for k in st.keys:  # not changed before the loop ends
            if nxt > self.n:
                break
            if not found and k == key:
                rows = st.rows.get(k, [])
                i = 0
                while i < len(rows) and nxt <= self.n:
                    current = rows[i]
                    if not found and current == row:
                        yield Delete(current)
                        found = True
                        del rows[i]
                        continue  # nxt stays: the next row takes this rank
                    if found and nxt == self.n:
                        yield current
                    nxt += 1
                    i += 1
                if not rows:
                    st.rows.pop(k, None)
            elif found:
                last = nxt + st.counts[k] - 1
                if last < self.n:
                    nxt = last + 1
                else:
                    yield st.rows[k][self.n - nxt]
                    break
            else:
                nxt += st.counts[k]
        return found
