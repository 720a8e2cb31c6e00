"""Reading back what a .flow / SQL print sink printed (Flink's table row format,
``+I[a, 1]``) as Python values, for tests that compare values: ``null`` -> None, integers,
doubles, ``true`` / ``false``, ``LocalDateTime`` text -> epoch milliseconds (UTC), anything
else a string. The row kind is kept (flowc.rowkind: -U / +U / -D rows are tuple subclasses,
+I a plain tuple). Fields are split at ``", "``: test data has no string holding one."""

from __future__ import annotations

import datetime as dt
import re
from typing import Any

from flowc.rowkind import with_kind

_ROW = re.compile(r"^(?:[^>\s]*> )?([+-][IUD])\[(.*)\]$", re.S)
_INT = re.compile(r"-?\d+")
_DOUBLE = re.compile(r"-?(\d+\.\d+(E-?\d+)?|Infinity|NaN)")
_TS = re.compile(r"(-?\d{4,})-(\d\d)-(\d\d)T(\d\d):(\d\d)(?::(\d\d)(?:\.(\d{3}))?)?")


def value(text: str) -> Any:
    if text == "null":
        return None
    if text in ("true", "false"):
        return text == "true"
    if _INT.fullmatch(text):
        return int(text)
    if _DOUBLE.fullmatch(text):
        return float(text)
    m = _TS.fullmatch(text)
    if m:
        y, mo, d, h, mi, s, ms = (int(g or 0) for g in m.groups())
        t = dt.datetime(y, mo, d, h, mi, s) - dt.datetime(1970, 1, 1)
        return (t.days * 86400 + t.seconds) * 1000 + ms
    return text


def row(line: str) -> tuple[Any, ...]:
    """One printed line (with or without a ``n> `` prefix) as a tuple of its kind."""
    m = _ROW.match(line)
    assert m is not None, f"not a printed row: {line!r}"
    fields = m.group(2)
    return with_kind(m.group(1), tuple(value(f) for f in fields.split(", ")) if fields else ())


def rows(lines: list[str]) -> list[tuple[Any, ...]]:
    return [row(line) for line in lines]
