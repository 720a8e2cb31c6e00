"""Java's ``DateTimeFormatter.ofPattern`` (java.time) for Flink's DATE_FORMAT, in the JVM's
default locale en_US: week fields start on Sunday with minimal days 1 (``'yyyy-ww W u YYYY'``
on 2023-01-01, a Sunday, is ``2023-01 1 2023 2023``; ``u`` is the year, not the day number
SimpleDateFormat prints).

Flink formats a TIMESTAMP (a LocalDateTime), so zone letters (``z``, ``Z``, ``X``, ``O``,
``V``, ``x``) fail at run time as in Flink, and so does an unknown letter, too many letters
or a reserved character. Optional sections (``[...]``) print their content.
"""

from __future__ import annotations

import datetime as _dt
import functools
from collections.abc import Callable

_MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August",
           "September", "October", "November", "December")
_DAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
_QUARTERS = ("1st quarter", "2nd quarter", "3rd quarter", "4th quarter")
# letter -> most letters allowed (java.time's DateTimeFormatterBuilder.parseField)
_MAX = {"G": 5, "u": 19, "y": 19, "Y": 19, "Q": 5, "q": 5, "M": 5, "L": 5, "w": 2, "W": 1,
        "d": 2, "D": 3, "F": 1, "E": 5, "e": 5, "c": 5, "a": 1, "h": 2, "K": 2, "k": 2,
        "H": 2, "m": 2, "s": 2, "S": 9, "A": 19, "n": 19, "N": 19}
_ZONES = "VvzOXxZ"
_RESERVED = "#{}"

Part = Callable[[_dt.datetime], str]


class PatternError(ValueError):
    """An invalid pattern (Java's IllegalArgumentException) or a field a TIMESTAMP lacks."""


def week_fields(d: _dt.date) -> tuple[int, int, int]:
    """(week-based year, week of week-based year, week of month), weeks starting on Sunday
    and week 1 the one containing January 1st (minimal days 1)."""
    def week1_start(year: int) -> _dt.date:
        jan1 = _dt.date(year, 1, 1)
        return jan1 - _dt.timedelta(days=(jan1.weekday() + 1) % 7)  # the Sunday on/before
    year = d.year
    if d >= week1_start(year + 1):
        year += 1
    week = (d - week1_start(year)).days // 7 + 1
    first = d.replace(day=1)
    month_week = (d.day - 1 + (first.weekday() + 1) % 7) // 7 + 1
    return year, week, month_week


def _num(value: int, n: int) -> str:
    return str(value).zfill(n) if value >= 0 else "-" + str(-value).zfill(n)


def _year(value: int, n: int) -> str:
    if n == 2:
        return str(value % 100).zfill(2)
    # padded to the letters' width; from 4 letters a '+' when the year is wider
    if n >= 4 and value > 0 and len(str(value)) > n:
        return "+" + str(value)
    return _num(value, n)


def _text(full: str, n: int, abbrev: int = 3) -> str:
    return full[:abbrev] if n <= 3 else full if n == 4 else full[0]


def _field(letter: str, n: int) -> Part:
    if letter in "uy":
        return lambda d: _year(d.year, n)
    if letter == "Y":
        return lambda d: _year(week_fields(d.date())[0], n)
    if letter == "G":
        return lambda d: "AD" if n <= 3 else "Anno Domini" if n == 4 else "A"
    if letter in "ML":
        return lambda d: _num(d.month, n) if n <= 2 else _text(_MONTHS[d.month - 1], n)
    if letter in "Qq":
        def quarter(d: _dt.datetime) -> str:
            q = (d.month - 1) // 3 + 1
            return _num(q, n) if n <= 2 else f"Q{q}" if n == 3 else \
                _QUARTERS[q - 1] if n == 4 else str(q)
        return quarter
    if letter == "E":
        return lambda d: _text(_DAYS[d.weekday()], n)
    if letter in "ec":
        def local_day(d: _dt.datetime) -> str:
            if n <= 2:  # the day's number in a Sunday-first week
                return _num((d.weekday() + 1) % 7 + 1, n)
            return _text(_DAYS[d.weekday()], n)
        if letter == "c" and n == 2:
            raise PatternError("Invalid pattern \"cc\"")
        return local_day
    if letter == "w":
        return lambda d: _num(week_fields(d.date())[1], n)
    if letter == "W":
        return lambda d: _num(week_fields(d.date())[2], n)
    if letter == "F":  # JDK 17 (Flink 2.3's runtime): the aligned day of week in month
        return lambda d: _num((d.day - 1) % 7 + 1, n)
    if letter == "S":
        return lambda d: str(d.microsecond).zfill(6)[:n].ljust(n, "0")
    if letter == "a":
        return lambda d: "AM" if d.hour < 12 else "PM"
    values: dict[str, Callable[[_dt.datetime], int]] = {
        "d": lambda d: d.day, "D": lambda d: d.timetuple().tm_yday,
        "H": lambda d: d.hour, "k": lambda d: d.hour or 24, "K": lambda d: d.hour % 12,
        "h": lambda d: d.hour % 12 or 12, "m": lambda d: d.minute, "s": lambda d: d.second,
        "A": lambda d: ((d.hour * 60 + d.minute) * 60 + d.second) * 1000 + d.microsecond // 1000,
        "n": lambda d: d.microsecond * 1000,
        "N": lambda d: (((d.hour * 60 + d.minute) * 60 + d.second) * 1_000_000
                        + d.microsecond) * 1000,
    }
    get = values[letter]
    return lambda d: _num(get(d), n)


@functools.lru_cache(maxsize=64)
def compile_pattern(pattern: str) -> tuple[Part, ...]:
    """The pattern as one function per field or literal, or a PatternError with Java's
    message."""
    parts: list[Part] = []
    i, end = 0, len(pattern)
    while i < end:
        c = pattern[i]
        if c.isascii() and c.isalpha():
            j = i
            while j < end and pattern[j] == c:
                j += 1
            n = j - i
            if c in _ZONES:
                raise PatternError(f"Unsupported field: pattern letter '{c}' is a time zone "
                                   "field; a TIMESTAMP has no time zone")
            if c not in _MAX:
                raise PatternError(f"Unknown pattern letter: {c}")
            if n > _MAX[c]:
                raise PatternError(f"Too many pattern letters: {c}")
            parts.append(_field(c, n))
            i = j
        elif c == "'":
            j = i + 1
            text: list[str] = []
            while True:
                if j >= end:
                    raise PatternError(f"Pattern ends with an incomplete string literal: "
                                       f"{pattern}")
                if pattern[j] == "'":
                    if j + 1 < end and pattern[j + 1] == "'":
                        text.append("'")
                        j += 2
                        continue
                    break
                text.append(pattern[j])
                j += 1
            literal = "".join(text) if j > i + 1 else "'"  # '' alone is one quote
            parts.append(lambda d, s=literal: s)
            i = j + 1
        elif c in _RESERVED:
            raise PatternError(f"Pattern includes reserved character: '{c}'")
        elif c in "[]":
            i += 1  # an optional section: every field of a TIMESTAMP is present
        else:
            parts.append(lambda d, s=c: s)
            i += 1
    return tuple(parts)


def format_datetime(d: _dt.datetime, pattern: str) -> str:
    return "".join(p(d) for p in compile_pattern(pattern))
