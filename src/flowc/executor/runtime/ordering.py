"""Sorting rows by columns as Flink SQL orders them (shared by the sort operator and the
window Top-N function)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, TypeVar

T = TypeVar("T")


def sort_rows(items: list[T], columns: Sequence[tuple[int, bool, bool]],
              row: Callable[[T], Any] = lambda r: r) -> list[T]:
    """``items`` ordered by ``(position, descending, nulls_first)`` columns, most significant
    first; stable (equal rows keep their order): one pass per column, least significant
    first, nulls set apart since they compare with nothing."""
    for pos, descending, nulls_first in reversed(columns):
        nulls = [r for r in items if row(r)[pos] is None]
        values = sorted((r for r in items if row(r)[pos] is not None),
                        key=lambda r, p=pos: row(r)[p], reverse=descending)
        items = nulls + values if nulls_first else values + nulls
    return items
