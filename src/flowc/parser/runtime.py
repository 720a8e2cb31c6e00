"""Run-time helpers that compiled .flow expressions call (SQL null semantics throughout).

Generated code refers to these as ``_rt_<name>`` (see :data:`HELPERS`); every CodeFn's ``env``
carries the ones it uses, so an executor that inlines expression source can merge envs freely.
Timestamps are int epoch milliseconds (UTC).

Numbers behave as Flink's (Java's): ``int`` is a 64-bit long whose arithmetic wraps around
on overflow, ``%`` is the truncated remainder (the sign of the dividend) computed exactly on
ints, and double results follow IEEE 754 (``sqrt(-1)`` is NaN, overflow is infinity).
Conversions to int that cannot give a long (NaN, infinity, out of range) give null.
"""

from __future__ import annotations

import datetime as _dt
import decimal
import functools
import math
import re
from collections.abc import Callable
from typing import Any

from flowc import dates, decimals, maps
from flowc.parser.javatime import format_datetime, week_fields

_EPOCH = _dt.datetime(1970, 1, 1, tzinfo=_dt.timezone.utc)
_MS = _dt.timedelta(milliseconds=1)
MASK64 = (1 << 64) - 1
LONG_MIN = -(1 << 63)
LONG_MAX = (1 << 63) - 1


def wrap64(v: int) -> int:
    """Java long overflow: keep the low 64 bits, two's complement."""
    if LONG_MIN <= v <= LONG_MAX:
        return v
    return ((v - LONG_MIN) & MASK64) + LONG_MIN


def _long_or_none(v: Any) -> Any:
    return v if LONG_MIN <= v <= LONG_MAX else None


def to_datetime(ms: int) -> _dt.datetime:
    return _EPOCH + _dt.timedelta(milliseconds=ms)


def from_datetime(value: _dt.datetime) -> int:
    if value.tzinfo is None:
        value = value.replace(tzinfo=_dt.timezone.utc)
    return (value - _EPOCH) // _MS


def div(a: Any, b: Any) -> Any:
    if a is None or b is None or b == 0:
        return None
    # Java divides the operands as doubles (a long is first converted to double).
    return float(a) / float(b)


def mod(a: Any, b: Any) -> Any:
    if a is None or b is None or b == 0:
        return None
    if isinstance(a, int) and isinstance(b, int):
        # Java's % on longs: truncated division, the sign of the dividend; exact.
        r = abs(a) % abs(b)
        return -r if a < 0 else r
    try:
        return math.fmod(a, b)
    except ValueError:  # fmod(inf, y): Java gives NaN
        return math.nan


class ArithmeticException(ArithmeticError):
    """Named as Java's, so a failed job reads as Flink's does (``/ by zero``)."""


def sql_div(a: Any, b: Any) -> Any:
    """SQL's ``/`` as Flink runs it: long / long is Java's integer division (truncated
    toward zero; a zero divisor fails the job), otherwise double division (IEEE 754)."""
    if a is None or b is None:
        return None
    if isinstance(a, int) and isinstance(b, int):
        if b == 0:
            raise ArithmeticException("/ by zero")
        q = abs(a) // abs(b)
        return wrap64(-q if (a < 0) != (b < 0) else q)  # LONG_MIN / -1 wraps, as in Java
    x, y = float(a), float(b)
    if y == 0.0:
        if x == 0.0 or math.isnan(x):
            return math.nan
        return math.copysign(math.inf, x) * math.copysign(1.0, y)
    return x / y


def sql_mod(a: Any, b: Any) -> Any:
    """SQL's ``%`` / ``MOD``: Java's remainder; a zero int divisor fails the job, a zero
    double divisor gives NaN."""
    if a is None or b is None:
        return None
    if isinstance(a, int) and isinstance(b, int):
        if b == 0:
            raise ArithmeticException("/ by zero")
        return mod(a, b)
    return math.nan if b == 0 else mod(float(a), float(b))


def position(part: Any, s: Any, start: Any = 1) -> Any:
    """Flink's POSITION / LOCATE: the 1-based index of ``part`` in ``s`` at or after
    ``start``, 0 if it is not there."""
    if part is None or s is None or start is None:
        return None
    if start < 1:
        return 0
    return s.find(part, start - 1) + 1


def nullif(a: Any, b: Any) -> Any:
    return None if a is not None and b is not None and a == b else a


_SDF = re.compile(r"'(?:[^']|'')*'|([A-Za-z])\1*|[^A-Za-z']+")
_MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August",
           "September", "October", "November", "December")
_DAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")


@functools.lru_cache(maxsize=64)
def _sdf_parts(pattern: str) -> tuple[tuple[str, str], ...]:
    """A Java SimpleDateFormat pattern as (letter, run) pairs; letter '' is literal text."""
    out: list[tuple[str, str]] = []
    for m in _SDF.finditer(pattern):
        run = m.group(0)
        if run.startswith("'"):
            out.append(("", "'" if run == "''" else run[1:-1].replace("''", "'")))
        elif m.group(1):
            if m.group(1) not in "GyYMdHhkKmsSaEDuwWFzZX":
                raise ValueError(f"Illegal pattern character '{m.group(1)}'")
            out.append((m.group(1), run))
        else:
            out.append(("", run))
    return tuple(out)


def _sdf_field(letter: str, n: int, d: _dt.datetime) -> str:
    """SimpleDateFormat's fields in the JVM's default locale en_US (weeks start on Sunday,
    minimal days 1, as :mod:`flowc.parser.javatime`)."""
    def num(v: int) -> str:
        return str(v).zfill(n)
    if letter in "yY":
        year = d.year if letter == "y" else week_fields(d.date())[0]
        return str(year % 100).zfill(2) if n == 2 else num(year)
    if letter == "M":
        return _MONTHS[d.month - 1][:3 if n == 3 else None] if n >= 3 else num(d.month)
    if letter == "E":
        return _DAYS[d.weekday()][:3 if n < 4 else None]
    values = {"d": d.day, "H": d.hour, "k": d.hour or 24, "K": d.hour % 12,
              "h": d.hour % 12 or 12, "m": d.minute, "s": d.second,
              "S": d.microsecond // 1000, "D": d.timetuple().tm_yday, "u": d.isoweekday(),
              "F": (d.day - 1) // 7 + 1}
    if letter in values:
        return num(values[letter])
    if letter in "wW":
        return num(week_fields(d.date())[1 if letter == "w" else 2])
    if letter == "a":
        return "AM" if d.hour < 12 else "PM"
    if letter == "G":
        return "AD"
    if letter == "z":
        return "UTC" if n < 4 else "Coordinated Universal Time"
    return "Z" if letter == "X" else "+0000"  # Z: UTC, flowc's time zone


def date_format(ts: Any, pattern: Any = "yyyy-MM-dd HH:mm:ss") -> Any:
    """Flink's DATE_FORMAT: ``ts`` (UTC) formatted by a java.time DateTimeFormatter
    pattern (Flink formats a LocalDateTime; see :mod:`flowc.parser.javatime`)."""
    if ts is None or pattern is None:
        return None
    if isinstance(ts, str):
        ts = parse_timestamp(ts)
        if ts is None:
            return None
    d = _datetime_or_none(ts)
    if d is None:
        return None
    return format_datetime(d, pattern)


def from_unixtime(seconds: Any, pattern: Any = "yyyy-MM-dd HH:mm:ss") -> Any:
    """Flink's FROM_UNIXTIME: epoch seconds (UTC) formatted by a SimpleDateFormat pattern
    (unlike DATE_FORMAT: ``u`` is the day's number, Monday 1)."""
    if seconds is None or pattern is None:
        return None
    d = _datetime_or_none(seconds * 1000)
    if d is None:
        return None
    return "".join(text if not letter else _sdf_field(letter, len(text), d)
                   for letter, text in _sdf_parts(pattern))


# SimpleDateFormat.parse: a number field takes its digits (as many as its letters when the
# next field follows without a separator), text must match, trailing input is ignored.
_PARSE_FIELDS = {"y": "year", "M": "month", "d": "day", "H": "hour", "k": "hour",
                 "m": "minute", "s": "second", "S": "milli"}


@functools.lru_cache(maxsize=64)
def _sdf_parser(pattern: str) -> tuple[re.Pattern[str], tuple[str, ...]]:
    parts = _sdf_parts(pattern)
    regex: list[str] = []
    names: list[str] = []
    for i, (letter, text) in enumerate(parts):
        if not letter:
            regex.append(re.escape(text))
            continue
        if letter not in _PARSE_FIELDS:
            raise ValueError(f"UNIX_TIMESTAMP: pattern letter '{letter}' cannot be parsed "
                             "by flowc (y M d H k m s S can)")
        adjacent = i + 1 < len(parts) and parts[i + 1][0] != ""
        # each number may follow spaces or tabs (SimpleDateFormat skips them)
        regex.append(f"[ \\t]*([+-]?\\d{{1,{len(text)}}})" if adjacent
                     else "[ \\t]*([+-]?\\d+)")
        names.append(_PARSE_FIELDS[letter])
    return re.compile("".join(regex)), tuple(names)


def unix_timestamp(s: Any, pattern: Any = "yyyy-MM-dd HH:mm:ss") -> Any:
    """Flink's UNIX_TIMESTAMP(string [, pattern]): epoch seconds of the UTC date-time, or
    Long.MIN_VALUE (as Flink) when the string does not match."""
    if s is None or pattern is None:
        return None
    regex, names = _sdf_parser(pattern)
    m = regex.match(s)
    if m is None:
        return LONG_MIN
    f = {"year": 1970, "month": 1, "day": 1, "hour": 0, "minute": 0, "second": 0, "milli": 0}
    f.update({name: int(v) for name, v in zip(names, m.groups())})
    try:  # lenient like SimpleDateFormat: month 13 is January of the next year, ...
        base = _dt.datetime(f["year"], 1, 1, tzinfo=_dt.timezone.utc)
        ms = from_datetime(base) + ((((_months_days(f["year"], f["month"]) + f["day"] - 1) * 24
                                      + f["hour"]) * 60 + f["minute"]) * 60 + f["second"]) \
            * 1000 + f["milli"]
    except (ValueError, OverflowError):
        return LONG_MIN
    return -(-ms // 1000) if ms < 0 else ms // 1000  # Java's long division


def _months_days(year: int, month: int) -> int:
    """Days from January 1st of ``year`` to the 1st of ``month`` (beyond 12: later years)."""
    y, m = year + (month - 1) // 12, (month - 1) % 12 + 1
    return (_dt.date(y, m, 1) - _dt.date(year, 1, 1)).days


@functools.lru_cache(maxsize=256)
def _java_regex(regex: str) -> re.Pattern[str]:
    """A Java regex in Python's engine: named groups ``(?<name>...)`` are spelt
    ``(?P<name>...)``; the rest of the common syntax is shared."""
    return re.compile(re.sub(r"\(\?<(?=[A-Za-z])", "(?P<", regex))


def regexp_extract(s: Any, regex: Any, index: Any = 0) -> Any:
    """Flink's REGEXP_EXTRACT: group ``index`` (0: the whole match) of the first match;
    null if there is none, the group did not take part, the index is out of range or the
    regex is invalid (Flink returns null for all of these)."""
    if s is None or regex is None or index is None:
        return None
    try:
        m = _java_regex(regex).search(s)
    except re.error:
        return None
    if m is None or not 0 <= index <= m.re.groups:
        return None
    return m.group(index)


def regexp_replace(s: Any, regex: Any, replacement: Any) -> Any:
    """Flink's REGEXP_REPLACE: every match replaced by ``replacement`` taken literally
    (Flink 2.3 gives ``'$1'`` and ``'\\$'`` back as written); an invalid regex fails."""
    if s is None or regex is None or replacement is None:
        return None
    try:
        pattern = _java_regex(regex)
    except re.error as e:
        raise ValueError(f"REGEXP_REPLACE: invalid regular expression '{regex}': {e}") \
            from None
    return pattern.sub(lambda _: replacement, s)


def split_index(s: Any, sep: Any, index: Any) -> Any:
    """Flink's SPLIT_INDEX: the ``index``-th (from 0) piece of ``s`` split at each ``sep``
    (a plain string; empty: whitespace), null beyond the pieces."""
    if s is None or sep is None or index is None or index < 0 or s == "":
        return None
    pieces = re.split(r"\s", s) if sep == "" else s.split(sep)
    return pieces[index] if index < len(pieces) else None


def concat_ws(sep: Any, *parts: Any) -> Any:
    """Flink's CONCAT_WS: null parts are skipped; a null separator gives null."""
    if sep is None:
        return None
    return sep.join(p for p in parts if p is not None)


def to_timestamp_ltz(epoch: Any, precision: Any = 3) -> Any:
    """Flink's TO_TIMESTAMP_LTZ: epoch seconds (precision 0) or milliseconds (3)."""
    if epoch is None or precision is None:
        return None
    if precision not in (0, 3):
        raise ValueError(f"TO_TIMESTAMP_LTZ: the precision must be 0 or 3, not {precision}")
    millis = epoch * 1000 if precision == 0 else epoch
    if isinstance(millis, float):
        if not math.isfinite(millis):
            return None
        millis = int(millis)
    return _long_or_none(millis)


def abs_(x: Any) -> Any:
    if x is None:
        return None
    return wrap64(abs(x)) if isinstance(x, int) else abs(x)


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


_TO_END = object()


def substr(s: Any, start: Any, length: Any = _TO_END) -> Any:
    """1-based like SQL; ``start`` <= 0 counts as 1; a missing length means to the end, a
    negative one gives ''."""
    if s is None or start is None or length is None:
        return None
    begin = max(start - 1, 0)
    if length is _TO_END:
        return s[begin:]
    return s[begin:begin + max(length, 0)]


def concat(*parts: Any) -> Any:
    if any(p is None for p in parts):
        return None
    return "".join(parts)


def sql_round(x: Any, digits: Any = 0) -> Any:
    """Half away from zero like Flink's ROUND (Python's round is half-to-even): exact on
    ints (the result stays an int, wrapping like a long), and on a double's shortest decimal
    form (Java's ``BigDecimal.valueOf``); NaN and infinities are returned unchanged."""
    if x is None or digits is None:
        return None
    if isinstance(x, int):
        if digits >= 0:
            return x
        if digits < -19:  # 10**20 / 2 is beyond every long
            return 0
        factor = 10 ** -digits
        q, r = divmod(abs(x), factor)
        q += 2 * r >= factor
        return wrap64(q * factor if x >= 0 else -q * factor)
    if not math.isfinite(x) or digits > 350:  # no double has digits that far right
        return x
    if digits < -350:
        return 0.0
    exact = decimal.Decimal(repr(x)).quantize(decimal.Decimal(1).scaleb(-digits),
                                              rounding=decimal.ROUND_HALF_UP, context=_WIDE)
    return float(exact)


_WIDE = decimal.Context(prec=800, Emin=-999_999, Emax=999_999)


def floor(x: Any) -> Any:
    if x is None or isinstance(x, int):
        return x
    return _long_or_none(math.floor(x)) if math.isfinite(x) else None


def ceil(x: Any) -> Any:
    if x is None or isinstance(x, int):
        return x
    return _long_or_none(math.ceil(x)) if math.isfinite(x) else None


def sqrt(x: Any) -> Any:
    if x is None:
        return None
    return math.sqrt(x) if x >= 0 or math.isnan(x) else math.nan


def power(a: Any, b: Any) -> Any:
    """Java's Math.pow: overflow is an infinity, an undefined result NaN."""
    if a is None or b is None:
        return None
    try:
        return float(math.pow(a, b))
    except OverflowError:
        odd = float(b).is_integer() and int(b) % 2 == 1
        return -math.inf if a < 0 and odd else math.inf
    except ValueError:
        if a == 0 and b < 0:  # pow(0, negative): +infinity (-infinity for -0.0, odd b)
            odd = float(b).is_integer() and int(b) % 2 == 1
            return -math.inf if odd and math.copysign(1.0, a) < 0 else math.inf
        return math.nan


def split(s: Any, sep: Any) -> Any:
    if s is None or sep is None:
        return None
    return s.split(sep) if sep else list(s)


def element_at(arr: Any, i: Any) -> Any:
    if isinstance(arr, dict):  # a map's value (SQL's m['k'])
        return arr.get(i)
    if arr is None or i is None or i == 0 or abs(i) > len(arr):
        return None
    return arr[i - 1] if i > 0 else arr[i]


def array_contains(arr: Any, v: Any) -> Any:
    if arr is None or v is None:
        return None
    return v in arr


def _datetime_or_none(ms: int) -> _dt.datetime | None:
    """The UTC date-time of ``ms``, or None beyond the years 1 to 9999."""
    try:
        return to_datetime(ms)
    except OverflowError:
        return None


def ts_part(part: str) -> Callable[[Any], Any]:
    def get(ms: Any) -> Any:
        d = None if ms is None else _datetime_or_none(ms)
        return None if d is None else getattr(d, part)
    get.__name__ = part
    return get


_TRUNC = ("year", "month", "day", "hour", "minute", "second")


def date_trunc(unit: Any, ms: Any) -> Any:
    if unit is None or ms is None or unit not in _TRUNC:
        return None
    d = _datetime_or_none(ms)
    if d is None:
        return None
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
    return None if v is None or _datetime_or_none(v) is None else format_timestamp(v)


def cast_int(v: Any) -> Any:
    if v is None:
        return None
    try:
        if isinstance(v, str):
            v = v.strip()
            return _long_or_none(int(v) if v.lstrip("+-").isdigit() else int(float(v)))
        if isinstance(v, float) and not math.isfinite(v):
            return None
        return _long_or_none(int(v))
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


def proctime() -> int:
    """Processing time now (epoch ms): the running executor's clock."""
    from flowc.executor.runtime.clock import processing_clock  # parser loads before executor

    return processing_clock().now_ms()


HELPERS: dict[str, Callable[..., Any]] = {
    "div": div, "mod": mod, "sql_div": sql_div, "sql_mod": sql_mod, "position": position,
    "nullif": nullif, "date_format": date_format, "from_unixtime": from_unixtime,
    "unix_timestamp": unix_timestamp, "regexp_extract": regexp_extract,
    "regexp_replace": regexp_replace, "split_index": split_index, "concat_ws": concat_ws, "to_timestamp_ltz": to_timestamp_ltz, "abs": abs_, "wrap64": wrap64, "in_list": in_list, "like": like, "like_regex": like_regex,
    "substr": substr, "concat": concat, "round": sql_round, "floor": floor, "ceil": ceil,
    "sqrt": sqrt, "power": power, "split": split, "element_at": element_at,
    "array_contains": array_contains, "date_trunc": date_trunc,
    "year": ts_part("year"), "month": ts_part("month"), "day": ts_part("day"),
    "hour": ts_part("hour"), "minute": ts_part("minute"), "second": ts_part("second"),
    "cast_string": cast_string, "cast_ts_string": cast_ts_string, "cast_int": cast_int,
    "cast_double": cast_double, "cast_bool": cast_bool, "cast_timestamp": cast_timestamp,
    "random_int": random_int, "random_double": random_double, "random_choice": random_choice,
    "proctime": proctime,
}
for _more in (decimals.HELPERS, maps.HELPERS, dates.HELPERS):  # DECIMAL, MAP and DATE ops
    HELPERS.update(_more)
