"""The declarative (vectorisable) form of compiled expressions and aggregates.

A front end that knows what an operator computes column by column (``.flow`` and SQL do)
attaches one of these to the operator's function (``CodeFn.vector``, or a ``vector``
attribute of an AggregateFunction / ProcessWindowFunction), beside the Python code that
computes the same thing row by row. A columnar executor may evaluate the vector form over
whole Arrow batches; anything without one runs row by row. The two must agree exactly:
the row form is the definition, the vector form an equivalent.

Nodes are immutable and check their invariants when built; ``type`` is the .flow type of
the value (timestamps are int epoch milliseconds, durations int milliseconds).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from flowc.types import Type

# Operators a VCall may name, with their arity (None: any number, at least one).
OPS: dict[str, int | None] = {
    "and": 2, "or": 2, "not": 1,
    "=": 2, "!=": 2, "<": 2, "<=": 2, ">": 2, ">=": 2,
    "+": 2, "-": 2, "*": 2, "div": 2, "neg": 1,
    "is_null": 1, "is_not_null": 1,
    "concat": 2, "lower": 1, "upper": 1, "trim": 1, "ltrim": 1, "rtrim": 1, "length": 1,
    "starts_with": 2, "ends_with": 2, "contains": 2, "like": 2, "in": 2,
    "case": None, "coalesce": None, "if": 3, "to_double": 1, "retype": 1,
    # DECIMAL (flowc.decimals): ``+ - *`` above take DECIMAL operands too; the result type
    # is Flink's, every value rounded HALF_UP to its scale and NULL when too wide.
    "dec_div": 2, "dec_mod": 2, "dec_cast": 1, "dec_text": 1, "dec_int": 1, "dec_double": 1,
    # MAP (flowc.maps): m['k'] with a constant key, CARDINALITY / size
    "map_get": 2, "map_size": 1,
    # DATE +/- interval (flowc.dates.whole_days): the interval's whole days, toward zero
    "whole_days": 1,
}


@dataclass(frozen=True)
class VCol:
    """Field ``index`` of the input record."""

    index: int
    type: Type

    def __post_init__(self) -> None:
        if self.index < 0:
            raise ValueError("a column index is not negative")


@dataclass(frozen=True)
class VLit:
    """A constant (``None`` is null). ``in`` and ``like`` take their constant lists and
    patterns as literals."""

    value: Any
    type: Type


@dataclass(frozen=True)
class VCall:
    """``op`` over ``args`` with SQL null semantics, exactly as the row code computes it.

    ``case`` args: condition, result, condition, result, ..., default. ``retype``: the
    same values under another type (timestamp -> int)."""

    op: str
    args: tuple[VExpr, ...]
    type: Type

    def __post_init__(self) -> None:
        if self.op not in OPS:
            raise ValueError(f"unknown vector operator {self.op!r}")
        arity = OPS[self.op]
        if (arity is not None and len(self.args) != arity) or not self.args:
            raise ValueError(f"{self.op} takes {arity} arguments, got {len(self.args)}")


VExpr = VCol | VLit | VCall


@dataclass(frozen=True)
class VAggregate:
    """``aggregate``'s accumulators: one ``kind`` (count_star, count, count_distinct, sum,
    avg, min, max, first, last) per output, over ``args`` (None for count_star)."""

    kinds: tuple[str, ...]
    args: tuple[VExpr | None, ...]
    types: tuple[Type, ...]

    def __post_init__(self) -> None:
        if not (len(self.kinds) == len(self.args) == len(self.types)):
            raise ValueError("one argument and one type per aggregate")


@dataclass(frozen=True)
class VWindowRow:
    """A window function emitting ``(key fields..., window_start, window_end,
    aggregates...)``."""

    key_count: int


@dataclass(frozen=True)
class VJoinRows:
    """A join function emitting the left record's fields, then the right record's (the
    .flow / SQL window and interval joins)."""


def vector_of(fn: Any) -> Any:
    """The vector form a function carries, or None."""
    return getattr(fn, "vector", None)
