"""Run time of a regular (unbounded) join: Flink's StreamingJoinOperator for inner, left,
right and full outer joins, as a KeyedCoProcessFunction over both sides keyed by the join
keys.

Each side's keyed state maps a row to ``[count, associations]``: how many copies of the
row the side holds (inserts minus retractions; Flink's state without a unique key) and,
for an outer side, with how many rows of the other side it joins. Per input record, as
Flink's ``processElement``:

- an insert / update-after joins every matching row of the other side; an outer input
  without matches emits itself padded with nulls (``+I[a, null]``); an outer other side's
  row that had no match yet is withdrawn padded (``-D[null, b]``) before its first join;
- a retraction withdraws its joined rows (``-D`` on an outer input, else its own kind),
  ``-D`` padded when it had no match, and re-emits an outer other side's row padded
  (``+I[null, b]``) when it loses its last match.

Inner joins keep the input's row kind (``+I``/``+U``/``-U``/``-D``); rows whose key holds
a null join nothing (SQL's ``=``): an outer side emits them padded, an inner side drops
them.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from flowc.api.functions import KeyedCoProcessFunction
from flowc.parser.changes import value_state
from flowc.rowkind import is_retract, kind_of, with_kind

JOIN_KINDS = ("inner", "left", "right", "full")


class RegularJoin(KeyedCoProcessFunction):
    """``kind``: inner / left / right / full; ``widths``: the number of fields per side;
    ``key_positions``: the join key's fields per side (for the null rule)."""

    def __init__(self, kind: str, widths: tuple[int, int],
                 key_positions: tuple[tuple[int, ...], tuple[int, ...]],
                 ttl: int | None = None,
                 side_ttls: tuple[int | None, int | None] | None = None) -> None:
        assert kind in JOIN_KINDS
        self.kind = kind
        self.widths = widths
        self.key_positions = key_positions
        self.ttl = ttl  # table.exec.state.ttl (ms): each side's rows expire, as Flink's
        # per side (SQL's STATE_TTL hint: Flink's left / right state retention time)
        self.ttls = side_ttls if side_ttls is not None else (ttl, ttl)

    @property
    def emits_updates(self) -> bool:
        """An outer join withdraws its null-padded rows (the planner's changelog mode);
        an inner join of insert-only inputs is insert-only."""
        return self.kind != "inner"

    def open(self, runtime_context: Any) -> None:
        self.sides = (runtime_context.get_state(value_state("left-records", self.ttls[0])),
                      runtime_context.get_state(value_state("right-records", self.ttls[1])))

    def process_element1(self, value: Any, ctx: Any) -> Iterator[tuple[Any, ...]]:
        return self._process(value, 0)

    def process_element2(self, value: Any, ctx: Any) -> Iterator[tuple[Any, ...]]:
        return self._process(value, 1)

    # ------------------------------------------------------------------ the rule

    def _outer(self, side: int) -> bool:
        return self.kind == "full" or self.kind == ("left", "right")[side]

    def _joined(self, row: tuple[Any, ...], other: tuple[Any, ...] | None, side: int,
                kind: str) -> tuple[Any, ...]:
        pad = (None,) * self.widths[1 - side]
        o = pad if other is None else other
        return with_kind(kind, row + o if side == 0 else o + row)

    def _process(self, value: Any, side: int) -> Iterator[tuple[Any, ...]]:
        row = tuple(value)
        retract = is_retract(value)
        kind = kind_of(value)
        input_outer, other_outer = self._outer(side), self._outer(1 - side)
        if any(row[i] is None for i in self.key_positions[side]):
            if input_outer:
                yield self._joined(row, None, side, "-D" if retract else "+I")
            return
        mine_state, other_state = self.sides[side], self.sides[1 - side]
        mine: dict[tuple[Any, ...], list[int]] = mine_state.value() or {}
        other: dict[tuple[Any, ...], list[int]] = other_state.value() or {}
        matches = [r for r, rec in other.items() for _ in range(rec[0])]
        if not retract:
            if other_outer and matches:
                for r in matches:  # each copy sees the count before this record (Flink)
                    rec = other[r]
                    if rec[1] == 0:
                        yield self._joined(r, None, 1 - side, "-D")
                for r in set(matches):
                    other[r][1] += 1
            if input_outer and not matches:
                yield self._joined(row, None, side, "+I")
            out_kind = "+I" if input_outer or other_outer else kind
            for r in matches:
                yield self._joined(row, r, side, out_kind)
            rec = mine.setdefault(row, [0, 0])
            rec[0] += 1
            rec[1] = len(matches)
        else:
            rec = mine.get(row)
            if rec is not None:
                rec[0] -= 1
                if rec[0] <= 0:
                    del mine[row]
            if not matches:
                if input_outer:
                    yield self._joined(row, None, side, "-D")
            else:
                out_kind = "-D" if input_outer else kind
                for r in matches:
                    yield self._joined(row, r, side, out_kind)
                if other_outer:
                    for r in matches:
                        if other[r][1] == 1:
                            yield self._joined(r, None, 1 - side, "+I")
                    for r in set(matches):
                        other[r][1] -= 1
        mine_state.update(mine)
        other_state.update(other)

