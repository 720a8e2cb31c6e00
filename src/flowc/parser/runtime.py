"""Run-time helpers that compiled .flow expressions call (SQL null semantics throughout).

Generated code refers to these as ``_rt_<name>`` (see :data:`HELPERS`); every CodeFn's ``env``
carries the ones it uses, so an executor that inlines expression source can merge envs freely.
Timestamps are int epoch milliseconds (UTC).
"""

from __future__ import annotations

import datetime as _dt
import functools
import math
import re
from collections.abc import Callable
from typing import Any

_EPOCH = _dt.datetime(1970, 1, 1, tzinfo=_dt.timezone.utc)
_MS = _dt.timedelta(milliseconds=1)
MASK64 = (1 << 64) - 1


def to_datetime(ms: int) -> _dt.datetime:
    return _EPOCH + _dt.timedelta(milliseconds=ms)


def from_datetime(value: _dt.datetime) -> int:
    if value.tzinfo is None:
        value = value.replace(tzinfo=_dt.timezone.utc)
    return (value - _EPOCH) // _MS


def div(a: Any, b: Any) -> Any:
    if a is None or b is None or b == 0:
        return None
    return a / b


def mod(a: Any, b: Any) -> Any:
    if a is None or b is None or b == 0:
        return None
    # SQL's % keeps the sign of the dividend (Python's follows the divisor).
    r = math.fmod(a, b)
    return int(r) if isinstance(a, int) and isinstance(b, int) else r


def in_list(value: Any, items: tuple[Any, ...]) -> bool | None:
    if value is None:
        return None
    saw_null = False
    for item in items:
        if item is None:
            saw_null = True
        elif item == value:
            return True
    return None if saw_null else False


@functools.lru_cache(maxsize=256)
def like_regex(pattern: str) -> re.Pattern[str]:
    """SQL LIKE: ``%`` any run, ``_`` one character, ``\\`` escapes."""
    out = []
    i = 0
    while i < len(pattern):
        c = pattern[i]
        if c == "\\" and i + 1 < len(pattern):
            out.append(re.escape(pattern[i + 1]))
            i += 2
            continue
        out.append(".*" if c == "%" else "." if c == "_" else re.escape(c))
        i += 1
    return re.compile("".join(out), re.DOTALL)


def like(value: Any, pattern: Any) -> bool | None:
    if value is None or pattern is None:
        return None
    return like_regex(pattern).fullmatch(value) is not None


def substr(s: Any, start: Any, length: Any = -1) -> Any:
    """1-based like SQL; ``start`` <= 0 counts as 1; a missing length means to the end."""
    if s is None or start is None or length is None:
        return None
    begin = max(start - 1, 0)
    if length == -1:
        return s[begin:]
    return s[begin:begin + max(length, 0)]


def concat(*parts: Any) -> Any:
    if any(p is None for p in parts):
        return None
    return "".join(parts)


def sql_round(x: Any, digits: Any = 0) -> Any:
    """Half away from zero, like SQL (Python's round is half-to-even)."""
    if x is None or digits is None:
        return None
    factor = 10 ** digits
    value = math.floor(abs(x) * factor + 0.5) / factor
    value = math.copysign(value, x)
    return int(value) if isinstance(x, int) and digits >= 0 else value


def floor(x: Any) -> Any:
    return None if x is None else math.floor(x)


def ceil(x: Any) -> Any:
    return None if x is None else math.ceil(x)


def sqrt(x: Any) -> Any:
    return None if x is None or x < 0 else math.sqrt(x)


def power(a: Any, b: Any) -> Any:
    if a is None or b is None:
        return None
    try:
        return float(math.pow(a, b))
    except (OverflowError, ValueError):
        return None


def split(s: Any, sep: Any) -> Any:
    if s is None or sep is None:
        return None
    return s.split(sep) if sep else list(s)


def element_at(arr: Any, i: Any) -> Any:
    if arr is None or i is None or i == 0 or abs(i) > len(arr):
        return None
    return arr[i - 1] if i > 0 else arr[i]


def array_contains(arr: Any, v: Any) -> Any:
    if arr is None or v is None:
        return None
    return v in arr


def ts_part(part: str) -> Callable[[Any], Any]:
    def get(ms: Any) -> Any:
        return None if ms is None else getattr(to_datetime(ms), part)
    get.__name__ = part
    return get


_TRUNC = ("year", "month", "day", "hour", "minute", "second")


def date_trunc(unit: Any, ms: Any) -> Any:
    if unit is None or ms is None or unit not in _TRUNC:
        return None
    d = to_datetime(ms)
    keep = _TRUNC[:_TRUNC.index(unit) + 1]
    actual = {"year": d.year, "month": d.month, "day": d.day, "hour": d.hour,
              "minute": d.minute, "second": d.second}
    floor_of = {"year": 1970, "month": 1, "day": 1, "hour": 0, "minute": 0, "second": 0}
    args = [actual[u] if u in keep else floor_of[u] for u in _TRUNC]
    return from_datetime(_dt.datetime(*args, tzinfo=_dt.timezone.utc))


def parse_timestamp(s: str) -> int | None:
    try:
        return from_datetime(_dt.datetime.fromisoformat(s.strip()))
    except ValueError:
        return None


def format_timestamp(ms: int) -> str:
    return to_datetime(ms).strftime("%Y-%m-%d %H:%M:%S.%f")[:-3]


def cast_string(v: Any) -> Any:
    if v is None:
        return None
    if isinstance(v, bool):
        return "true" if v else "false"
    return str(v)


def cast_ts_string(v: Any) -> Any:
    return None if v is None else format_timestamp(v)


def cast_int(v: Any) -> Any:
    if v is None:
        return None
    try:
        if isinstance(v, str):
            v = v.strip()
            return int(v) if v.lstrip("+-").isdigit() else int(float(v))
        if isinstance(v, float) and not math.isfinite(v):
            return None
        return int(v)
    except (ValueError, OverflowError):
        return None


def cast_double(v: Any) -> Any:
    if v is None:
        return None
    try:
        return float(v)
    except ValueError:
        return None


def cast_bool(v: Any) -> Any:
    if v is None:
        return None
    if isinstance(v, str):
        return {"true": True, "false": False, "1": True, "0": False}.get(v.strip().lower())
    return bool(v)


def cast_timestamp(v: Any) -> Any:
    if v is None:
        return None
    if isinstance(v, str):
        return parse_timestamp(v)
    return int(v)


def splitmix64(x: int) -> int:
    x = (x + 0x9E3779B97F4A7C15) & MASK64
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & MASK64
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & MASK64
    return x ^ (x >> 31)


def rand_unit(index: int, salt: int) -> float:
    """A deterministic number in [0, 1) from (row index, call site): datagen stays
    reproducible however rows are split across subtasks."""
    return splitmix64((index * 0x100000001B3 + salt) & MASK64) / 2.0**64


def random_int(index: int, salt: int, lo: Any, hi: Any) -> Any:
    if lo is None or hi is None or hi < lo:
        return None
    return lo + int(rand_unit(index, salt) * (hi - lo + 1))


def random_double(index: int, salt: int) -> float:
    return rand_unit(index, salt)


def random_choice(index: int, salt: int, *options: Any) -> Any:
    return options[int(rand_unit(index, salt) * len(options))]


HELPERS: dict[str, Callable[..., Any]] = {
    "div": div, "mod": mod, "in_list": in_list, "like": like, "like_regex": like_regex,
    "substr": substr, "concat": concat, "round": sql_round, "floor": floor, "ceil": ceil,
    "sqrt": sqrt, "power": power, "split": split, "element_at": element_at,
    "array_contains": array_contains, "date_trunc": date_trunc,
    "year": ts_part("year"), "month": ts_part("month"), "day": ts_part("day"),
    "hour": ts_part("hour"), "minute": ts_part("minute"), "second": ts_part("second"),
    "cast_string": cast_string, "cast_ts_string": cast_ts_string, "cast_int": cast_int,
    "cast_double": cast_double, "cast_bool": cast_bool, "cast_timestamp": cast_timestamp,
    "random_int": random_int, "random_double": random_double, "random_choice": random_choice,
}
