"""Field conversion of the file sources and sinks: a declared type's name (``int``,
``array<timestamp>``, ``decimal(10, 2)``) -> the function that turns a json / parquet value
or a csv field into it (``converter``, ``text_converter``); ValueError when it cannot."""

from __future__ import annotations

import datetime as dt
import json
import re
from collections.abc import Callable
from decimal import Decimal
from typing import Any

from flowc import dates, decimals
from flowc.errors import UnsupportedError
from flowc.executor.runtime import csvread

SCALAR_TYPES = ("string", "int", "double", "bool", "timestamp")
# A text file's DATE column (parser/lower.py): a timestamp whose text has no time of day.
_READ_ONLY = ("date",)
LONG_MIN, LONG_MAX = -(1 << 63), (1 << 63) - 1
_INT = re.compile(r"^[+-]?\d+$")
_ISO = re.compile(r"^(\d{4})-(\d{2})-(\d{2})(?:[Tt ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d{1,9}))?)?)?"
                  r"\s*(Z|z|UTC|[+-]\d{2}(?::?\d{2})?)?$")
_EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc)
_MS = dt.timedelta(milliseconds=1)


def parse_type(name: str) -> tuple[int, str]:
    """``array<array<int>>`` -> (2, "int"): array depth and scalar element type."""
    depth, inner = 0, name.strip()
    while inner.startswith("array<") and inner.endswith(">"):
        depth, inner = depth + 1, inner[6:-1].strip()
    if inner not in SCALAR_TYPES + _READ_ONLY and decimals.parse_name(inner) is None:
        raise UnsupportedError(f"field type '{name}' (supported: {', '.join(SCALAR_TYPES)}, "
                               "decimal(p, s), array<T>)")
    return depth, inner


def parse_timestamp(value: Any) -> int:
    """A timestamp in a file -> epoch milliseconds: integer epoch milliseconds (a number or
    digits), ISO-8601 text (``2024-05-01``, ``2024-05-01 10:00:00.250``,
    ``2024-05-01T10:00:00Z``, ``...+02:00``; UTC when no offset is given) or a datetime
    (parquet; naive means UTC). Raises ValueError otherwise."""
    if isinstance(value, bool) or isinstance(value, float):
        raise ValueError(f"not a timestamp: {value!r} (use ISO-8601 text or integer epoch "
                         "milliseconds)")
    if isinstance(value, int):
        return _long(value, "timestamp")
    if isinstance(value, dt.datetime):
        d = value if value.tzinfo is not None else value.replace(tzinfo=dt.timezone.utc)
        return (d - _EPOCH) // _MS
    if isinstance(value, dt.date):
        return (dt.datetime(value.year, value.month, value.day, tzinfo=dt.timezone.utc)
                - _EPOCH) // _MS
    text = str(value).strip()
    if _INT.match(text):
        return _long(int(text), "timestamp")
    m = _ISO.match(text)
    if m is None:
        raise ValueError(f"not a timestamp: {text!r} (use ISO-8601 text or integer epoch "
                         "milliseconds)")
    y, mo, d, h, mi, s, frac, zone = m.groups()
    tz = dt.timezone.utc
    if zone and zone not in ("Z", "z", "UTC"):
        sign = -1 if zone[0] == "-" else 1
        digits = zone[1:].replace(":", "")
        minutes = int(digits[:2]) * 60 + (int(digits[2:]) if len(digits) > 2 else 0)
        tz = dt.timezone(sign * dt.timedelta(minutes=minutes))
    try:
        stamp = dt.datetime(int(y), int(mo), int(d), int(h or 0), int(mi or 0), int(s or 0),
                            tzinfo=tz)
    except ValueError as e:
        raise ValueError(f"not a timestamp: {text!r} ({e})") from None
    return (stamp - _EPOCH) // _MS + (int((frac or "0")[:3].ljust(3, "0")))


def _long(v: int, what: str) -> int:
    if not LONG_MIN <= v <= LONG_MAX:
        raise ValueError(f"{v} is out of range for {what} (64-bit)")
    return v


def _to_string(v: Any) -> str:
    if isinstance(v, str):
        return v
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (dict, list)):
        return json.dumps(v)
    return str(v)


def _to_int(v: Any) -> int:
    if isinstance(v, bool) or isinstance(v, float):
        raise ValueError(f"not an int: {v!r}")
    if isinstance(v, int):
        return _long(v, "int")
    if isinstance(v, str) and _INT.match(v.strip()):
        return _long(int(v), "int")
    raise ValueError(f"not an int: {v!r}")


def _to_double(v: Any) -> float:
    if isinstance(v, bool) or not isinstance(v, (int, float, str)):
        raise ValueError(f"not a double: {v!r}")
    try:
        return float(v)
    except ValueError:
        raise ValueError(f"not a double: {v!r}") from None


def _to_bool(v: Any) -> bool:
    if isinstance(v, bool):
        return v
    if isinstance(v, str):
        low = v.strip().lower()
        if low in ("true", "false"):
            return low == "true"
    raise ValueError(f"not a bool: {v!r}")


_SCALAR: dict[str, Callable[[Any], Any]] = {
    "string": _to_string, "int": _to_int, "double": _to_double, "bool": _to_bool,
    "timestamp": parse_timestamp, "date": dates.parse_date}


def _scalar(name: str) -> Callable[[Any], Any]:
    ps = decimals.parse_name(name)
    return _SCALAR[name] if ps is None else _decimal_reader(*ps)


def _decimal_reader(precision: int, scale: int) -> Callable[[Any], Any]:
    """A number or numeric text -> DECIMAL(p, s), rounded HALF_UP and NULL when it does not
    fit, as Flink's formats read one (``DecimalData.fromBigDecimal``)."""
    def read(v: Any) -> Any:
        if isinstance(v, bool) or not isinstance(v, (int, float, str, Decimal)):
            raise ValueError(f"not a decimal: {v!r}")
        if isinstance(v, str):
            try:
                v = Decimal(v.strip())
            except ArithmeticError:
                raise ValueError(f"not a decimal: {v!r}") from None
            if not v.is_finite():
                raise ValueError(f"not a decimal: {v!r}")
        return decimals.to_decimal(v, precision, scale)
    return read


def converter(type_name: str) -> Callable[[Any], Any]:
    """Value (json / parquet) -> the declared type; None stays None; ValueError if bad."""
    depth, scalar = parse_type(type_name)
    fn = _scalar(scalar)

    def nullable(f: Callable[[Any], Any]) -> Callable[[Any], Any]:
        return lambda v: None if v is None else f(v)

    conv = nullable(fn)
    for _ in range(depth):
        conv = nullable(_lister(conv))
    return conv


def _lister(elem: Callable[[Any], Any]) -> Callable[[Any], Any]:
    def to_list(v: Any) -> list[Any]:
        if not isinstance(v, (list, tuple)):
            raise ValueError(f"not an array: {v!r}")
        return [elem(x) for x in v]
    return to_list


def text_parser(type_name: str) -> Callable[[str], Any] | None:
    """A non-null csv field -> the declared type; None for ``string`` (kept as it is)."""
    if type_name == "string":
        return None
    scalar = parse_type(type_name)[1]
    return csvread.timestamp_parser(parse_timestamp) if scalar == "timestamp" else _scalar(scalar)


def text_converter(type_name: str, null_value: str) -> Callable[[str], Any]:
    """A csv field -> the declared type: the null literal (default: the empty field) is
    null, and so is an empty field of a non-string type."""
    fn = text_parser(type_name)
    if fn is None:
        return lambda s: None if s == null_value else s
    return lambda s: None if s == null_value or s == "" else fn(s)
