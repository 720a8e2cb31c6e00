"""``decimal(p, s)`` in .flow schemas, casts and UDF signatures: Flink's exact DECIMAL, the
type SQL's DECIMAL(p, s) is (flowc.decimals: arithmetic, rounding HALF_UP to the scale, NULL
on overflow). ``decimal(p)`` is ``decimal(p, 0)`` as in Flink; a bare ``decimal`` (Flink's
DECIMAL(10, 0), a trap for money) is an error asking for the scale."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from lark import Token

from flowc import decimals
from flowc.errors import FlowNameError, FlowTypeError, Span
from flowc.types import TYPE_NAMES, Type, decimal_of

EXAMPLE = "decimal(10, 2)"
TYPES_HINT = "types are string, int, double, bool, timestamp, decimal(p, s) and array<T>"


def decimal_type(name: Token, precision: Token, scale: Token | None,
                 span: Span) -> Type:
    """The type of ``name(precision[, scale])``; ``span``: the whole type, for errors."""
    text = str(name)
    if text.lower() != "decimal":
        what = f"'{text}' takes no parameters" if text in TYPE_NAMES else \
            f"unknown type '{text}'"
        raise FlowNameError(what, span, hint=f"did you mean '{EXAMPLE}'?" if text.lower() in (
            "numeric", "dec", "number") else TYPES_HINT)
    if text != "decimal":
        raise FlowNameError(f"unknown type '{text}'", span, hint="did you mean 'decimal'?")
    p = int(str(precision))
    s = int(str(scale)) if scale is not None else 0
    why = decimals.check(p, s)
    if why is not None:
        p, s = (s, p) if s > p else (p, s)  # the two swapped, most likely
        fix = decimal_of(min(max(p, 1), decimals.MAX_PRECISION),
                         min(s, decimals.MAX_PRECISION))
        raise FlowTypeError(why.replace("DECIMAL", "decimal"), span,
                            hint=f"did you mean '{fix}'?")
    return decimal_of(p, s)


def bare_decimal(span: Span) -> FlowTypeError:
    return FlowTypeError("decimal needs its precision and scale", span,
                         hint=f"did you mean '{EXAMPLE}'? (precision: digits in all, "
                              "scale: digits after the point)")


def decimal_value(value: Any, field: str, t: Type, span: Span) -> Any:
    """A number written for a ``decimal(p, s)`` field of a ``values`` source: exactly the
    number written (``1.25``, never the double's 1.25000000000000001...), rounded HALF_UP to
    the scale; one that needs more digits than the precision is an error."""
    exact = decimals.literal(value)
    if exact is None:
        raise FlowTypeError(f"'{field}' is {t}, but this value is not a number", span)
    v = decimals.fit(exact[0], t.precision, t.scale)
    if v is None:
        raise FlowTypeError(f"{exact[0]} does not fit '{field}' ({t})", span,
                            hint=f"widen it: decimal({min(decimals.MAX_PRECISION, exact[1] + t.scale)}"
                                 f", {t.scale})")
    return v


def udf_code(name: str, args: Sequence[str], returns: Type,
             helper: Callable[[str], str]) -> str:
    """The code of a UDF call; a ``decimal(p, s)`` result is fitted to its declared type
    (rounded HALF_UP, null when too wide), as Flink converts a Python UDF's Decimal."""
    call = f"{name}({', '.join(args)})"
    if not returns.is_decimal:
        return call
    return f"{helper('cast_decimal')}({call}, {returns.precision}, {returns.scale})"
