"""Flink's RowKind on records of an updating (changelog) stream.

A record of an insert-only stream is a plain tuple (``+I``). On an updating stream a record
is one of four tuple subclasses and ``type(v)`` is its kind: ``Insert`` (+I),
``UpdateBefore`` (-U), ``UpdateAfter`` (+U) and ``Delete`` (-D). Subclasses cost nothing on
insert-only streams, compare equal to tuples with the same fields (so results of both kinds
of stream compare alike), and pickle by class reference (Spark moves them as they are).
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any


class RowKind(tuple):  # type: ignore[type-arg]
    """Base of the four kinds; never instantiated itself."""

    __slots__ = ()
    short = "+I"
    retract = False  # -U and -D withdraw a row an earlier +I / +U added

    def __repr__(self) -> str:
        return f"{self.short}{tuple.__repr__(self)}"

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (tuple(self),))


class Insert(RowKind):
    __slots__ = ()
    short = "+I"


class UpdateBefore(RowKind):
    __slots__ = ()
    short = "-U"
    retract = True


class UpdateAfter(RowKind):
    __slots__ = ()
    short = "+U"


class Delete(RowKind):
    __slots__ = ()
    short = "-D"
    retract = True


KINDS: dict[str, type[RowKind]] = {k.short: k for k in (Insert, UpdateBefore, UpdateAfter,
                                                         Delete)}


def kind_of(row: Any) -> str:
    """``+I`` / ``-U`` / ``+U`` / ``-D`` of a record (a plain tuple is an insert)."""
    return row.short if isinstance(row, RowKind) else "+I"


def is_retract(row: Any) -> bool:
    """Whether a record withdraws an earlier row (``-U`` or ``-D``)."""
    return isinstance(row, RowKind) and row.retract


def same_kind(source: Any, result: Any) -> Any:
    """``result`` with the kind of ``source``: a Calc (map) over an updating stream keeps
    each record's kind. A plain-tuple source leaves ``result`` as it is."""
    cls = type(source)
    if cls is tuple or not isinstance(source, RowKind) or cls is Insert:
        return result
    return cls(result)


def with_kind(short: str, row: Any) -> tuple[Any, ...]:
    """``row`` as a record of kind ``short``; ``+I`` stays a plain tuple."""
    return tuple(row) if short == "+I" else KINDS[short](row)


def materialize(changes: Any) -> list[tuple[Any, ...]]:
    """The table a changelog describes: ``+I`` / ``+U`` add a row, ``-U`` / ``-D`` take one
    equal row out (Flink's SQL client in result-mode 'table'), counted, so the changes of
    several subtasks can come in any order. Rows in the order they were first added."""
    counts: dict[tuple[Any, ...], int] = {}
    for row in changes:
        plain = tuple(row)
        counts[plain] = counts.get(plain, 0) + (-1 if is_retract(row) else 1)
    return [r for r, n in counts.items() for _ in range(max(n, 0))]


# ------------------------------------------------------------------ Flink's print format


def row_text(row: Any, kinds: tuple[str, ...]) -> str:
    """A row as Flink's print connector writes it (``Row.toString``): ``+I[a, 1]``,
    ``-U[...]``; ``kinds`` are the fields' flowc type kinds (flowc.types.Type.kind)."""
    return f"{kind_of(row)}[{', '.join(value_text(v, k) for v, k in zip(row, kinds))}]"


def value_text(v: Any, kind: str) -> str:
    """One field as Java's ``toString`` of Flink's external type writes it."""
    if v is None:
        return "null"
    if kind == "string":
        return str(v)
    if kind == "bool" or isinstance(v, bool):
        return "true" if v else "false"
    if kind == "double" or isinstance(v, float):
        from flowc.common.typeinfo import java_double_str

        return java_double_str(float(v))
    if isinstance(v, dict):  # a MAP, in its HashMap order (flowc.maps)
        from flowc.maps import map_text

        return map_text(v, value_text)
    if isinstance(v, Decimal):  # BigDecimal.toPlainString: with its scale, no exponent
        return format(v, "f")
    if kind == "timestamp" and isinstance(v, int):
        return local_date_time(v)
    if kind in ("timestamp_ltz", "date") and isinstance(v, int):
        from flowc.dates import date_text, instant_text

        return instant_text(v) if kind == "timestamp_ltz" else date_text(v)
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(value_text(x, "") for x in v) + "]"
    return str(v)


def local_date_time(ms: int) -> str:
    """``LocalDateTime.toString`` of epoch milliseconds (UTC): ``2024-05-01T10:00``, with
    ``:ss`` when seconds or millis are set and ``.SSS`` when millis are."""
    import datetime as dt

    try:
        t = dt.datetime(1970, 1, 1) + dt.timedelta(milliseconds=ms)
    except OverflowError:
        return str(ms)
    text = f"{t.year:04d}-{t.month:02d}-{t.day:02d}T{t.hour:02d}:{t.minute:02d}"
    millis = t.microsecond // 1000
    if t.second or millis:
        text += f":{t.second:02d}"
    if millis:
        text += f".{millis:03d}"
    return text
