"""Typing rules of the .flow operators: arithmetic result types and casts."""

from __future__ import annotations

from flowc.types import DOUBLE, DURATION, INT, NULL, STRING, TIMESTAMP, Type


def conversion_hint(a: Type, b: Type) -> str | None:
    if STRING in (a, b) and (a.is_numeric or b.is_numeric or TIMESTAMP in (a, b)):
        return "convert one side with cast(... as ...)"
    if TIMESTAMP in (a, b) and (a == INT or b == INT):
        return "use to_timestamp(millis) or epoch_millis(ts)"
    return None


def arith_type(op: str, a: Type, b: Type) -> Type | None:
    if a.is_null or b.is_null:
        other = b if a.is_null else a
        return other if other.is_numeric or other in (DURATION, TIMESTAMP, NULL) else None
    if a.is_numeric and b.is_numeric:
        if op == "/":
            return DOUBLE
        return DOUBLE if DOUBLE in (a, b) else INT
    if op in ("+", "-") and a == TIMESTAMP and b == DURATION:
        return TIMESTAMP
    if op == "+" and a == DURATION and b == TIMESTAMP:
        return TIMESTAMP
    if op == "-" and a == TIMESTAMP and b == TIMESTAMP:
        return INT
    if op in ("+", "-") and a == DURATION and b == DURATION:
        return DURATION
    if op == "*" and {a, b} == {DURATION, INT}:
        return DURATION
    return None


# (from, to) -> runtime helper; "" means the value is already right.
CASTS = {
    ("int", "string"): "cast_string", ("double", "string"): "cast_string",
    ("bool", "string"): "cast_string", ("timestamp", "string"): "cast_ts_string",
    ("string", "int"): "cast_int", ("double", "int"): "cast_int", ("bool", "int"): "cast_int",
    ("timestamp", "int"): "", ("duration", "int"): "",
    ("string", "double"): "cast_double", ("int", "double"): "cast_double",
    ("string", "bool"): "cast_bool", ("int", "bool"): "cast_bool",
    ("string", "timestamp"): "cast_timestamp", ("int", "timestamp"): "",
}
