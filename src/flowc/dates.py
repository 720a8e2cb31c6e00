"""SQL's DATE and TIMESTAMP_LTZ values (flowc.types: timestamp flavours; the value is UTC
epoch milliseconds, a DATE's its day's midnight): casts and Flink's print texts.

flowc's session time zone (Flink's ``table.local-time-zone``) is UTC, so a TIMESTAMP_LTZ
and a TIMESTAMP of the same instant hold the same wall-clock time."""

from __future__ import annotations

import datetime as _dt
import re
from collections.abc import Callable
from typing import Any

DAY_MS = 86_400_000
_EPOCH = _dt.datetime(1970, 1, 1)


def cast_date(v: Any) -> Any:
    """CAST(x AS DATE): a timestamp's day (floored: before 1970 too), a string's date as
    Flink's ``DateTimeUtils.parseDate`` reads it (text_date); NULL when it is none, as
    Flink's TRY_CAST (Flink's CAST fails the job: docs/flink-differences.md)."""
    if v is None:
        return None
    if isinstance(v, str):
        return text_date(v)
    return int(v) - int(v) % DAY_MS


def text_date(text: str) -> int | None:
    """Flink's ``DateTimeUtils.parseDate`` (its CAST of a string to DATE), as epoch ms of
    the day's midnight, None for no date: the text up to a first space that is not
    leading (``2024-05-01 10:00:00`` is 2024-05-01), then ``y[-m[-d]]`` of unsigned digit
    runs, each trimmed, a missing month / day 1 (``'12'`` is 0012-01-01, ``'2024-5'``
    2024-05-01), a year 0-9999 and a real day. Year 0 is None here: Python's dates start
    at year 1 (Flink gives 0000-01-01)."""
    space = text.find(" ")
    if space > 0:
        text = text[:space]
    parts = text.split("-", 2)
    if not all(p.strip().isascii() and p.strip().isdigit() for p in parts):
        return None
    y, m, d = (int(p) for p in parts + ["1"] * (3 - len(parts)))
    if not 1 <= y <= 9999:
        return None
    try:
        day = _dt.date(y, m, d)
    except ValueError:
        return None
    return (day.toordinal() - _EPOCH.toordinal()) * DAY_MS


def literal_date(text: str) -> int | None:
    """A ``DATE '...'`` literal as Flink's parser takes it: ``yyyy-MM-dd`` (one or two
    digit month and day, ``DATE '2024-5-1'`` too) of a real day, no time of day; None
    otherwise (Flink: ``Illegal DATE literal '...': not in format 'yyyy-MM-dd'``)."""
    if re.fullmatch(r"[0-9]{1,4}-[0-9]{1,2}-[0-9]{1,2}", text) is None:
        return None
    return text_date(text)


def whole_days(d: Any) -> Any:
    """A day-time interval's whole days, truncated toward zero, in ms: what Flink adds to
    a DATE (``DATE '2024-05-01' + INTERVAL '25' HOUR`` is 2024-05-02, ``- INTERVAL '1'
    SECOND`` stays 2024-05-01); NULL stays NULL."""
    if d is None:
        return None
    days = abs(int(d)) // DAY_MS * DAY_MS
    return days if d >= 0 else -days


def cast_date_string(v: Any) -> Any:
    """CAST(d AS STRING): ``2024-05-01`` (Java's LocalDate.toString)."""
    return None if v is None else date_text(v)


def date_text(ms: int) -> str:
    """``LocalDate.toString``: ``2024-05-01`` (a year past 9999 gets a ``+``)."""
    d = (_EPOCH + _dt.timedelta(milliseconds=ms)).date()
    return d.isoformat() if d.year <= 9999 else "+" + d.isoformat()


def instant_text(ms: int) -> str:
    """``Instant.toString`` (ISO_INSTANT), as Flink's print connector writes a TIMESTAMP_LTZ:
    ``2024-05-01T10:00:00Z``, seconds always, the fraction in groups of 3 digits."""
    t = _EPOCH + _dt.timedelta(milliseconds=ms)
    text = f"{t.year:04d}-{t.month:02d}-{t.day:02d}T{t.hour:02d}:{t.minute:02d}:{t.second:02d}"
    millis = t.microsecond // 1000
    return text + (f".{millis:03d}" if millis else "") + "Z"


def file_ltz_text(v: Any) -> Any:
    """A TIMESTAMP_LTZ as Flink's csv and json formats write it (their
    ``SQL_TIMESTAMP_WITH_LOCAL_TIMEZONE_FORMAT``, UTC): ``2024-05-01 10:00:01Z``, the
    fraction without trailing zeros (``...:02.5Z``); NULL stays NULL."""
    if v is None:
        return None
    t = _EPOCH + _dt.timedelta(milliseconds=int(v))
    text = f"{t.year:04d}-{t.month:02d}-{t.day:02d} {t.hour:02d}:{t.minute:02d}:{t.second:02d}"
    millis = t.microsecond // 1000
    return text + (f".{millis:03d}".rstrip("0") if millis else "") + "Z"


def parse_date(v: Any) -> int:
    """A DATE in a csv / json file -> its midnight's epoch ms: a date (``2024-05-01``), or
    a timestamp text / epoch ms at midnight. A time of day is no DATE: Flink's formats
    reject ``2024-05-01 10:00:01`` (a bad row here); raises ValueError."""
    from flowc.executor.runtime.converters import parse_timestamp

    ms = parse_timestamp(v)
    if ms % DAY_MS:
        raise ValueError(f"not a DATE: {v!r} has a time of day (write 2024-05-01)")
    return ms


def client_text(ms: int, kind: str) -> str | None:
    """A time value as Flink's SQL client shows it (UTC zone): a TIMESTAMP or TIMESTAMP_LTZ
    ``2024-05-01 10:00:01.500``, a DATE ``2024-05-01``; None for another kind."""
    if kind == "date":
        return date_text(ms)
    if kind not in ("timestamp", "timestamp_ltz"):
        return None
    return (_EPOCH + _dt.timedelta(milliseconds=ms)).strftime("%Y-%m-%d %H:%M:%S.%f")[:-3]


HELPERS: dict[str, Callable[..., Any]] = {"cast_date": cast_date,
                                          "cast_date_string": cast_date_string,
                                          "file_ltz_text": file_ltz_text,
                                          "whole_days": whole_days}
