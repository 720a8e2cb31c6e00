"""Exact ``DECIMAL(p, s)`` as Flink: result types of arithmetic and aggregates (Flink's
``LogicalTypeMerging``, after Calcite / SQL Server), and the run-time values.

A DECIMAL value is a ``decimal.Decimal`` whose exponent is ``-s`` (so it prints with its
scale, as Flink's ``BigDecimal.toPlainString``: ``12.30``). Every result is rounded HALF_UP to
its scale; a value with more than ``p`` digits is NULL, as Flink's ``DecimalData.fromBigDecimal``
makes it on overflow.
"""

from __future__ import annotations

import decimal
import re
from decimal import ROUND_DOWN, ROUND_HALF_UP, Decimal
from typing import Any

MAX_PRECISION = 38
# Flink's LogicalTypeMerging.MINIMUM_ADJUSTED_SCALE
MIN_ADJUSTED_SCALE = 6
# BIGINT as a DECIMAL in arithmetic with one (Flink: DECIMAL(19, 0)).
BIGINT_PRECISION = 19
# Exact for every intermediate of two DECIMAL(38) operands (a product has 76 digits).
_CTX = decimal.Context(prec=160, rounding=ROUND_HALF_UP, Emin=-999_999, Emax=999_999,
                       traps=[decimal.InvalidOperation, decimal.DivisionByZero])
_NAME = re.compile(r"^decimal\(\s*(\d+)\s*,\s*(\d+)\s*\)$")


def parse_name(name: str) -> tuple[int, int] | None:
    """``decimal(10, 2)`` -> (10, 2); None for any other type name."""
    m = _NAME.match(name.strip())
    return (int(m.group(1)), int(m.group(2))) if m else None


def type_name(precision: int, scale: int) -> str:
    return f"decimal({precision}, {scale})"


def check(precision: int, scale: int) -> str | None:
    """Why ``DECIMAL(precision, scale)`` is not a type (Flink's own limits), or None."""
    if not 1 <= precision <= MAX_PRECISION:
        return f"the precision of DECIMAL must be between 1 and {MAX_PRECISION}, not {precision}"
    if not 0 <= scale <= precision:
        return f"the scale of DECIMAL must be between 0 and the precision ({precision}), " \
               f"not {scale}"
    return None


# -- result types (precision, scale) ---------------------------------------------------------

def _adjust(precision: int, scale: int) -> tuple[int, int]:
    """Flink's ``adjustPrecisionScale``: beyond 38 digits, keep the integer digits and at
    least min(scale, 6) fraction digits."""
    if precision <= MAX_PRECISION:
        return precision, scale
    digits = precision - scale
    return MAX_PRECISION, max(MAX_PRECISION - digits, min(scale, MIN_ADJUSTED_SCALE))


def arith(op: str, a: tuple[int, int], b: tuple[int, int]) -> tuple[int, int]:
    """The DECIMAL type of ``a op b`` (``+ - * / %``)."""
    (p1, s1), (p2, s2) = a, b
    if op in ("+", "-"):
        s = max(s1, s2)
        return _adjust(max(p1 - s1, p2 - s2) + s + 1, s)
    if op == "*":
        return _adjust(p1 + p2 + 1, s1 + s2)
    if op == "/":
        s = max(MIN_ADJUSTED_SCALE, s1 + p2 + 1)
        return _adjust(p1 - s1 + s2 + s, s)
    s = max(s1, s2)  # %
    return _adjust(min(p1 - s1, p2 - s2) + s, s)


def sum_type(a: tuple[int, int]) -> tuple[int, int]:
    """SUM of DECIMAL(p, s) is DECIMAL(38, s)."""
    return MAX_PRECISION, a[1]


def avg_type(a: tuple[int, int]) -> tuple[int, int]:
    """AVG of DECIMAL(p, s): the sum divided by the BIGINT count, DECIMAL(38, max(6, s))."""
    return arith("/", (MAX_PRECISION, a[1]), (20, 0))


def common(a: tuple[int, int], b: tuple[int, int]) -> tuple[int, int]:
    """The DECIMAL both widen to (CASE, COALESCE, comparisons): enough integer and fraction
    digits for either (Flink's ``findCommonType`` for decimals)."""
    s = max(a[1], b[1])
    return _adjust(max(a[0] - a[1], b[0] - b[1]) + s, s)


def literal(value: Any) -> tuple[Decimal, int, int] | None:
    """A number literal as Flink SQL types it: ``1.10`` DECIMAL(3, 2), an integer within
    INT's range DECIMAL(10, 0) (INT's own), a larger one DECIMAL(19, 0) (BIGINT's); None for
    anything else."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    if isinstance(value, int):
        p = 10 if -(1 << 31) <= value < (1 << 31) else BIGINT_PRECISION
        return Decimal(value), p, 0
    if value != value or value in (float("inf"), float("-inf")):
        return None
    d = Decimal(repr(value))  # the shortest text of the double: what the user wrote
    scale = max(0, -d.as_tuple().exponent)  # type: ignore[operator]
    p = max(len(d.as_tuple().digits), scale, 1)
    return (d, p, scale) if p <= MAX_PRECISION else None


# -- run-time values ---------------------------------------------------------------------------

def fit(v: Decimal, precision: int, scale: int) -> Decimal | None:
    """``v`` rounded HALF_UP to ``scale``; None when it needs more than ``precision`` digits."""
    q = v.quantize(Decimal(1).scaleb(-scale), rounding=ROUND_HALF_UP, context=_CTX)
    if not q:
        return q.copy_abs()  # Java's BigDecimal has no negative zero: -0.001 is 0.00
    return q if q.adjusted() < precision - scale else None


def negate(v: Decimal) -> Decimal:
    """``-v`` exactly (Decimal's ``-`` rounds to its context), zero staying positive."""
    return v.copy_negate() if v else v


def dec_arith(op: str, a: Any, b: Any, precision: int, scale: int) -> Any:
    """``a op b`` as DECIMAL(precision, scale): exact, then rounded HALF_UP; NULL on
    overflow; a zero divisor fails as Java's BigDecimal does."""
    if a is None or b is None:
        return None
    x, y = _exact(a), _exact(b)
    if op == "+":
        r = _CTX.add(x, y)
    elif op == "-":
        r = _CTX.subtract(x, y)
    elif op == "*":
        r = _CTX.multiply(x, y)
    elif not y:
        from flowc.parser.runtime import ArithmeticException

        # Java's BigDecimal.divide / remainder by zero, which fails Flink's job
        raise ArithmeticException("Division undefined" if not x else "Division by zero")
    elif op == "/":
        # One digit beyond the scale is not enough for HALF_UP of a long quotient: divide
        # to more digits than any result keeps, then round once.
        r = _CTX.divide(x, y)
    else:
        r = _CTX.remainder(x, y)  # the sign of the dividend, as Java's BigDecimal
    return fit(r, precision, scale)


def _exact(v: Any) -> Decimal:
    if isinstance(v, Decimal):
        return v
    if isinstance(v, int):
        return Decimal(v)
    return Decimal(repr(float(v)))


def to_decimal(v: Any, precision: int, scale: int) -> Any:
    """CAST(v AS DECIMAL(p, s)): numbers and numeric text rounded HALF_UP; NULL when it does
    not fit, and for text that is no number (Flink's CAST of bad text is an error in 2.x's
    default, TRY_CAST NULL; see docs/flink-differences.md)."""
    if v is None or isinstance(v, bool):
        return None if v is None else fit(Decimal(int(v)), precision, scale)
    if isinstance(v, str):
        try:
            d = Decimal(v.strip())
        except decimal.InvalidOperation:
            return None
        return fit(d, precision, scale) if d.is_finite() else None
    if isinstance(v, float) and v != v or v in (float("inf"), float("-inf")):
        return None
    return fit(_exact(v), precision, scale)


def from_decimal_to_int(v: Any) -> Any:
    """CAST(DECIMAL AS BIGINT): the fraction truncated, as Java's ``longValue``."""
    if v is None:
        return None
    return int(v.to_integral_value(rounding=ROUND_DOWN))


def to_text(v: Decimal) -> str:
    """``BigDecimal.toPlainString``: all scale digits, no exponent."""
    return format(v, "f")


def plus(a: Any, b: Any) -> Any:
    """``a + b`` of two accumulator values, exact when they are DECIMALs."""
    if isinstance(a, Decimal) or isinstance(b, Decimal):
        return _CTX.add(_exact(a), _exact(b))
    return a + b


def average(total: Any, n: int) -> Any:
    """AVG's result: for a DECIMAL sum (its exponent is minus the input's scale), the
    quotient as DECIMAL(38, max(6, s)) rounded HALF_UP; otherwise ``total / n``."""
    if not isinstance(total, Decimal):
        return total / n
    scale = max(MIN_ADJUSTED_SCALE, -total.as_tuple().exponent)  # type: ignore[operator]
    return fit(_CTX.divide(total, Decimal(n)), MAX_PRECISION, scale)


def sum_result(total: Any) -> Any:
    """SUM's result: a DECIMAL sum beyond 38 digits is NULL (Flink's overflow)."""
    if isinstance(total, Decimal) and total.adjusted() >= MAX_PRECISION:
        return None
    return total


def cast_decimal_string(v: Any) -> Any:
    return None if v is None else to_text(v)


# Run-time helpers of compiled expressions (flowc.parser.runtime.HELPERS).
HELPERS = {"dec_arith": dec_arith, "dec_negate": negate, "cast_decimal": to_decimal,
           "cast_decimal_string": cast_decimal_string, "cast_decimal_int": from_decimal_to_int}
