"""Run time of ``top n by ...`` (Flink SQL's Top-N: ``ROW_NUMBER() OVER (PARTITION BY ..
ORDER BY ..)`` filtered on the rank; ``top 1`` is its deduplication) over an insert-only
stream, as Flink's AppendOnlyTopNFunction / Deduplicate emit it.

Per key the state is the current top rows, in order (ascending puts nulls first,
descending last, as Flink; a row equal in the order goes after the rows already there).
A row that lands at rank ``k <= n``:

- with a rank column: every rank from ``k`` down to the last kept one changes its row:
  ``-U`` the old row with that rank, ``+U`` the new one (``+I`` for a rank not filled
  before); the row pushed beyond ``n`` is not withdrawn on its own;
- without one: ``-D`` the row pushed beyond ``n``, then ``+I`` the new row;
- ``top 1`` without a rank column (deduplication): ``-U`` the kept row, ``+U`` the new one;
  ordered descending, an equal row replaces the kept one (keep the last row).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from flowc.api.functions import KeyedProcessFunction
from flowc.executor.runtime.core import LONG_MAX
from flowc.parser.changes import value_state
from flowc.rowkind import Delete, UpdateAfter, UpdateBefore


class TopN(KeyedProcessFunction):
    """``order``: (field position, descending, nulls first) per ORDER BY item."""

    emits_updates = True  # the planner's changelog mode

    def __init__(self, n: int, order: tuple[tuple[int, bool, bool], ...], rank: bool,
                 ttl: int | None = None) -> None:
        self.n = n
        self.order = order
        self.rank = rank
        self.ttl = ttl  # table.exec.state.ttl (ms): the key's rows expire, as Flink's

    def open(self, runtime_context: Any) -> None:
        self.state = runtime_context.get_state(value_state("top-rows", self.ttl))

    def _before(self, a: tuple[Any, ...], b: tuple[Any, ...]) -> int:
        """-1 if ``a`` sorts before ``b``, 1 after, 0 equal in the order."""
        for pos, desc, nulls_first in self.order:
            x, y = a[pos], b[pos]
            if x == y:
                continue
            if x is None or y is None:
                return -1 if (x is None) == nulls_first else 1
            return (-1 if x < y else 1) * (-1 if desc else 1)
        return 0

    def process_element(self, value: Any, ctx: Any) -> Iterator[tuple[Any, ...]]:
        row = tuple(value)
        rows: list[tuple[Any, ...]] = self.state.value() or []
        dedup = self.n == 1 and not self.rank
        k = len(rows)
        for i, old in enumerate(rows):
            c = self._before(row, old)
            if c < 0 or (c == 0 and dedup and self.order and self.order[0][1]):
                k = i
                break
        if k >= self.n:
            return
        if dedup:
            if rows:
                yield UpdateBefore(rows[0])
                yield UpdateAfter(row)
            else:
                yield row
            self.state.update([row])
            return
        new = rows[:k] + [row] + rows[k:]
        if self.rank:
            for r in range(k, min(len(new), self.n)):
                if r < len(rows):
                    yield UpdateBefore(rows[r] + (r + 1,))
                    yield UpdateAfter(new[r] + (r + 1,))
                else:
                    yield new[r] + (r + 1,)
        else:
            if len(new) > self.n:
                yield Delete(new[self.n])
            yield row
        self.state.update(new[:self.n])


class BatchTopN(TopN):
    """BATCH mode: Flink plans a sort-based Rank (BatchPhysicalRank) that emits each key's
    final top rows once, insert-only, after the key's last row - not the streaming
    changelog. The rows are ranked as ``TopN`` does; a timer at the end of time (fired at
    the end of the bounded input) emits them."""

    emits_updates = False

    def process_element(self, value: Any, ctx: Any) -> Iterator[tuple[Any, ...]]:
        if self.state.value() is None:
            ctx.timer_service().register_event_time_timer(LONG_MAX)
        for _ in super().process_element(value, ctx):
            pass  # the changelog of the streaming Top-N: BATCH emits final rows only
        return iter(())

    def on_timer(self, timestamp: int, ctx: Any) -> Iterator[tuple[Any, ...]]:
        rows: list[tuple[Any, ...]] = self.state.value() or []
        for r, row in enumerate(rows):
            yield row + (r + 1,) if self.rank else row
