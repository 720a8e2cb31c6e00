"""The standard function library of .flow expressions: signatures and code templates.

A function either has a ``template`` (Python source with ``{0}``, ``{1}``... for the
arguments; the compiler adds SQL null propagation around it) or a ``helper`` from
:mod:`flowc.parser.runtime` (which handles nulls itself). ``infer`` type-checks the argument
types and returns the result type, or a message saying what is wrong.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from flowc.types import (
    BOOL,
    DOUBLE,
    INT,
    STRING,
    TIMESTAMP,
    TIMESTAMP_LTZ,
    Type,
    array_of,
    common_type,
    map_of,
)

Infer = Callable[[list[Type]], "Type | str"]


@dataclass(frozen=True)
class Function:
    name: str
    min_args: int
    max_args: int | None
    infer: Infer
    signature: str
    template: str | None = None
    helper: str | None = None
    datagen_only: bool = False
    # Only the SQL translator calls it (``A.Call(..., internal=True)``): scripts cannot name
    # it, and no hint or completion offers it.
    internal: bool = False


AGGREGATES = ("count", "sum", "min", "max", "avg", "first", "last")


def _is(t: Type, *kinds: str) -> bool:
    return t.kind in kinds or t.is_null


def _fixed(result: Type, *params: tuple[str, ...]) -> Infer:
    """Each argument must be one of the kinds listed for its position."""
    def infer(args: list[Type]) -> Type | str:
        for i, (arg, kinds) in enumerate(zip(args, params)):
            if not _is(arg, *kinds):
                return f"argument {i + 1} must be {' or '.join(kinds)}, not {arg}"
        return result
    return infer


def _numeric_same(args: list[Type]) -> Type | str:
    if not _is(args[0], "int", "double"):
        return f"needs a number, not {args[0]}"
    return INT if args[0].is_null else args[0]


def _round(args: list[Type]) -> Type | str:
    if not _is(args[0], "int", "double"):
        return f"argument 1 must be a number, not {args[0]}"
    if len(args) > 1 and not _is(args[1], "int"):
        return f"argument 2 (digits) must be int, not {args[1]}"
    return DOUBLE if args[0] == DOUBLE else INT


def _to_int(args: list[Type]) -> Type | str:
    return INT if _is(args[0], "int", "double") else f"needs a number, not {args[0]}"


def _to_double(args: list[Type]) -> Type | str:
    for i, a in enumerate(args):
        if not _is(a, "int", "double"):
            return f"argument {i + 1} must be a number, not {a}"
    return DOUBLE


def _length(args: list[Type]) -> Type | str:
    return INT if _is(args[0], "string", "array") else f"needs a string or an array, not {args[0]}"


def _all_strings(args: list[Type]) -> Type | str:
    for i, a in enumerate(args):
        if not _is(a, "string"):
            return f"argument {i + 1} must be string, not {a} (use cast(x as string))"
    return STRING


def _substr(args: list[Type]) -> Type | str:
    return _fixed(STRING, ("string",), ("int",), ("int",))(args)


def _size(args: list[Type]) -> Type | str:
    return INT if _is(args[0], "array", "map") else f"needs an array or a map, not {args[0]}"


def _str_to_map(args: list[Type]) -> Type | str:
    for i, a in enumerate(args):
        if not _is(a, "string"):
            return f"argument {i + 1} must be a string, not {a}"
    return map_of(STRING, STRING)


def _element_at(args: list[Type]) -> Type | str:
    if args[0].kind == "map":  # m['k']
        assert args[0].key is not None and args[0].element is not None
        if common_type(args[0].key, args[1]) is None:
            return f"the key must be {args[0].key}, not {args[1]}"
        return args[0].element
    if not args[0].is_array:
        return f"argument 1 must be an array, not {args[0]}"
    if not _is(args[1], "int"):
        return f"argument 2 (position) must be int, not {args[1]}"
    assert args[0].element is not None
    return args[0].element


def _array_contains(args: list[Type]) -> Type | str:
    if not args[0].is_array:
        return f"argument 1 must be an array, not {args[0]}"
    assert args[0].element is not None
    if common_type(args[0].element, args[1]) is None:
        return f"cannot look for a {args[1]} in an {args[0]}"
    return BOOL


def _to_timestamp(args: list[Type]) -> Type | str:
    if not _is(args[0], "int", "string"):
        return f"needs epoch milliseconds (int) or an ISO-8601 string, not {args[0]}"
    return TIMESTAMP


def _common(args: list[Type]) -> Type | str:
    result = args[0]
    for a in args[1:]:
        c = common_type(result, a)
        if c is None:
            return f"arguments have incompatible types {result} and {a}"
        result = c
    return result


def _if(args: list[Type]) -> Type | str:
    if not _is(args[0], "bool"):
        return f"argument 1 (the condition) must be bool, not {args[0]}"
    c = common_type(args[1], args[2])
    return c if c is not None else f"the two branches have incompatible types {args[1]} and {args[2]}"


def _random_int(args: list[Type]) -> Type | str:
    return _fixed(INT, ("int",), ("int",))(args)


def _sql_arith(op: str) -> Infer:
    # SQL's '/' and '%': int op int stays int (Java's long arithmetic), else double
    def infer(args: list[Type]) -> Type | str:
        a, b = args
        if not (_is(a, "int", "double") and _is(b, "int", "double")):
            return f"cannot apply '{op}' to {a} and {b}"
        return DOUBLE if DOUBLE in (a, b) else INT
    return infer


def _position(args: list[Type]) -> Type | str:
    return _fixed(INT, ("string",), ("string",), ("int",))(args)


def _date_format(args: list[Type]) -> Type | str:
    if not _is(args[0], "timestamp", "string"):
        return f"argument 1 must be a timestamp (or an ISO-8601 string), not {args[0]}"
    if len(args) > 1 and not _is(args[1], "string"):
        return f"argument 2 (the pattern) must be string, not {args[1]}"
    return STRING


def _to_timestamp_ltz(args: list[Type]) -> Type | str:
    if not _is(args[0], "int", "double"):
        return f"argument 1 (the epoch) must be a number, not {args[0]}"
    if len(args) > 1 and not _is(args[1], "int"):
        return f"argument 2 (the precision, 0 or 3) must be int, not {args[1]}"
    return TIMESTAMP_LTZ


_TS = ("timestamp",)
_FUNCTIONS = [
    Function("lower", 1, 1, _fixed(STRING, ("string",)), "lower(string) -> string", "{0}.lower()"),
    Function("upper", 1, 1, _fixed(STRING, ("string",)), "upper(string) -> string", "{0}.upper()"),
    Function("trim", 1, 1, _fixed(STRING, ("string",)), "trim(string) -> string", "{0}.strip(' ')"),
    Function("ltrim", 1, 1, _fixed(STRING, ("string",)), "ltrim(string) -> string", "{0}.lstrip(' ')"),
    Function("rtrim", 1, 1, _fixed(STRING, ("string",)), "rtrim(string) -> string", "{0}.rstrip(' ')"),
    Function("length", 1, 1, _length, "length(string | array) -> int", "len({0})"),
    Function("substr", 2, 3, _substr, "substr(string, start int [, length int]) -> string",
             helper="substr"),
    Function("concat", 1, None, _all_strings, "concat(string, ...) -> string", helper="concat"),
    Function("replace", 3, 3, _fixed(STRING, ("string",), ("string",), ("string",)),
             "replace(string, search string, replacement string) -> string",
             "{0}.replace({1}, {2})"),
    Function("starts_with", 2, 2, _fixed(BOOL, ("string",), ("string",)),
             "starts_with(string, prefix string) -> bool", "{0}.startswith({1})"),
    Function("ends_with", 2, 2, _fixed(BOOL, ("string",), ("string",)),
             "ends_with(string, suffix string) -> bool", "{0}.endswith({1})"),
    Function("contains", 2, 2, _fixed(BOOL, ("string",), ("string",)),
             "contains(string, part string) -> bool", "({1} in {0})"),
    Function("abs", 1, 1, _numeric_same, "abs(number) -> number", helper="abs"),
    Function("round", 1, 2, _round, "round(number [, digits int]) -> number", helper="round"),
    Function("floor", 1, 1, _to_int, "floor(number) -> int", helper="floor"),
    Function("ceil", 1, 1, _to_int, "ceil(number) -> int", helper="ceil"),
    Function("sqrt", 1, 1, _to_double, "sqrt(number) -> double", helper="sqrt"),
    Function("power", 2, 2, _to_double, "power(number, number) -> double", helper="power"),
    Function("coalesce", 1, None, _common, "coalesce(T, T, ...) -> T"),
    Function("if", 3, 3, _if, "if(bool, T, T) -> T"),
    Function("year", 1, 1, _fixed(INT, _TS), "year(timestamp) -> int", helper="year"),
    Function("month", 1, 1, _fixed(INT, _TS), "month(timestamp) -> int", helper="month"),
    Function("day", 1, 1, _fixed(INT, _TS), "day(timestamp) -> int", helper="day"),
    Function("hour", 1, 1, _fixed(INT, _TS), "hour(timestamp) -> int", helper="hour"),
    Function("minute", 1, 1, _fixed(INT, _TS), "minute(timestamp) -> int", helper="minute"),
    Function("second", 1, 1, _fixed(INT, _TS), "second(timestamp) -> int", helper="second"),
    Function("date_trunc", 2, 2, _fixed(TIMESTAMP, ("string",), _TS),
             "date_trunc('year'|'month'|'day'|'hour'|'minute'|'second', timestamp) -> timestamp",
             helper="date_trunc"),
    Function("epoch_millis", 1, 1, _fixed(INT, _TS), "epoch_millis(timestamp) -> int", "{0}"),
    Function("to_timestamp", 1, 1, _to_timestamp, "to_timestamp(int | string) -> timestamp",
             helper="cast_timestamp"),
    Function("split", 2, 2, _fixed(array_of(STRING), ("string",), ("string",)),
             "split(string, separator string) -> array<string>", helper="split"),
    Function("size", 1, 1, _size, "size(array or map) -> int", "len({0})"),
    Function("str_to_map", 1, 3, _str_to_map,
             "str_to_map(text string [, list delimiter regex ',' , key-value delimiter regex "
             "'=']) -> map<string, string>", helper="str_to_map"),
    Function("element_at", 2, 2, _element_at, "element_at(array<T>, position int) -> T",
             helper="element_at"),
    Function("array_contains", 2, 2, _array_contains, "array_contains(array<T>, T) -> bool",
             helper="array_contains"),
    Function("position", 2, 3, _position,
             "position(part string, string [, from int]) -> int (1-based; 0 if absent)",
             helper="position"),
    Function("nullif", 2, 2, _common, "nullif(T, T) -> T (null if the two are equal)",
             helper="nullif"),
    Function("date_format", 1, 2, _date_format,
             "date_format(timestamp [, pattern string]) -> string (Java DateTimeFormatter "
             "pattern, default 'yyyy-MM-dd HH:mm:ss')", helper="date_format"),
    Function("from_unixtime", 1, 2, _fixed(STRING, ("int",), ("string",)),
             "from_unixtime(epoch seconds int [, pattern string]) -> string (Java "
             "SimpleDateFormat pattern, default 'yyyy-MM-dd HH:mm:ss')", helper="from_unixtime"),
    Function("unix_timestamp", 1, 2, _fixed(INT, ("string",), ("string",)),
             "unix_timestamp(string [, pattern string]) -> int (epoch seconds; the smallest "
             "int if the string does not match)", helper="unix_timestamp"),
    Function("regexp_extract", 2, 3, _fixed(STRING, ("string",), ("string",), ("int",)),
             "regexp_extract(string, regex string [, group int]) -> string (group 0, the "
             "default, is the whole match; null if nothing matches)", helper="regexp_extract"),
    Function("regexp_replace", 3, 3, _fixed(STRING, ("string",), ("string",), ("string",)),
             "regexp_replace(string, regex string, replacement string) -> string (the "
             "replacement is literal text)", helper="regexp_replace"),
    Function("split_index", 3, 3, _fixed(STRING, ("string",), ("string",), ("int",)),
             "split_index(string, separator string, index int) -> string (index from 0; null "
             "beyond the pieces)", helper="split_index"),
    Function("concat_ws", 1, None, _all_strings,
             "concat_ws(separator string, string, ...) -> string (null parts skipped)",
             helper="concat_ws"),
    Function("to_timestamp_ltz", 1, 2, _to_timestamp_ltz,
             "to_timestamp_ltz(epoch number [, precision 0 (seconds) | 3 (milliseconds)]) -> "
             "timestamp", helper="to_timestamp_ltz"),
    # SQL's '/' and '%' (the SQL translator emits these; .flow's '/' always gives double)
    Function("_sql_div", 2, 2, _sql_arith("/"),
             "int / int is integer division (truncated toward zero); with a double, double",
             helper="sql_div", internal=True),
    Function("_sql_mod", 2, 2, _sql_arith("%"),
             "int % int is the remainder with the sign of the dividend; with a double, double",
             helper="sql_mod", internal=True),
    # SQL's ``pt AS PROCTIME()`` column: the processing time (executor/runtime/clock.py)
    Function("_proctime", 0, 0, lambda args: TIMESTAMP, "PROCTIME() -> timestamp",
             helper="proctime", internal=True),
    # INSERT INTO a csv / json table: a TIMESTAMP_LTZ column's text as Flink writes it
    Function("_file_ltz_text", 1, 1, _fixed(STRING, ("timestamp",)),
             "TIMESTAMP_LTZ -> string (2024-05-01 10:00:01Z)", helper="file_ltz_text",
             internal=True),
    Function("random_int", 2, 2, _random_int, "random_int(low int, high int) -> int",
             helper="random_int", datagen_only=True),
    Function("random_double", 0, 0, lambda args: DOUBLE, "random_double() -> double",
             helper="random_double", datagen_only=True),
    Function("random_choice", 1, None, _common, "random_choice(T, T, ...) -> T",
             helper="random_choice", datagen_only=True),
]

FUNCTIONS: dict[str, Function] = {f.name: f for f in _FUNCTIONS}
# The functions a user may call (and be offered in hints and completion).
PUBLIC_FUNCTIONS: dict[str, Function] = {f.name: f for f in _FUNCTIONS if not f.internal}


def lookup(name: str, internal: bool = False) -> Function | None:
    """The built-in function ``name``; an internal one only for a call the SQL translator
    made (``internal``)."""
    fn = FUNCTIONS.get(name)
    return fn if fn is not None and (internal or not fn.internal) else None
