"""Typing rules of the .flow operators: arithmetic result types and casts."""

from __future__ import annotations

from flowc import decimals
from flowc.types import DOUBLE, DURATION, INT, NULL, STRING, TIMESTAMP, Type, decimal_of


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
        if DOUBLE not in (a, b) and (a.is_decimal or b.is_decimal):
            return decimal_of(*decimals.arith(op, a.ps, b.ps))
        if op == "/":
            return DOUBLE
        return DOUBLE if DOUBLE in (a, b) else INT
    if op in ("+", "-") and a == TIMESTAMP and b == DURATION:
        return a  # its flavour too: a TIMESTAMP_LTZ / DATE plus an interval stays one (a
        # DATE adds the interval's whole days: ExprCompiler._whole_days)
    if op == "+" and a == DURATION and b == TIMESTAMP:
        return b
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
    ("decimal", "string"): "cast_decimal_string", ("decimal", "int"): "cast_decimal_int",
    ("decimal", "double"): "cast_double",
    # to DECIMAL: the helper takes the target's precision and scale as well
    ("string", "decimal"): "cast_decimal", ("int", "decimal"): "cast_decimal",
    ("double", "decimal"): "cast_decimal", ("decimal", "decimal"): "cast_decimal",
    ("map", "string"): "cast_map_string",
}


def flavor_cast(src: Type, dst: Type) -> str | None:
    """The helper of a cast that changes a timestamp's flavour's value or text (DATE:
    flowc.dates), or None when CASTS decides."""
    if dst.flavor == "date" and src.flavor != "date" and src.kind in ("timestamp", "string"):
        return "cast_date"
    if src.flavor == "date" and dst.kind == "string":
        return "cast_date_string"
    return None
