"""DECIMAL kernels: ``flowc.decimals``' rules over decimal128 columns.

A DECIMAL(p, s) column is ``decimal128(p, s)``; BIGINT operands count as DECIMAL(19, 0)
(Flink's rule). Every result is exactly the row code's (``decimals.dec_arith``,
``to_decimal``, ...): Flink's result type, HALF_UP to its scale, NULL when it needs more
than its precision. pyarrow computes where its kernels are exact: ``+ - *`` whose exact
result fits 38 digits (no adjusted type: nothing rounds, nothing overflows), comparisons
at a common type of at most 38 digits, widening casts, negation. Rounding to a smaller
scale goes through pyarrow's ``round`` (ties away from zero, Java's HALF_UP) on a type
one digit wider (its decimal ``round`` wraps silently on a carry out of the precision),
and the overflow to NULL is a comparison with 10^(p - s). What no exact kernel computes -
``/`` and ``%`` (a HALF_UP quotient), results of adjusted types, text and doubles to
DECIMAL, DECIMAL to double - runs the row code's own function per value.
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from decimal import Decimal
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from flowc import decimals
from flowc.types import Type
from flowc.vector import VCall

Kernel = Callable[[pa.RecordBatch], Any]
MAX = decimals.MAX_PRECISION
_PY_COMPARE = {"=": operator.eq, "!=": operator.ne, "<": operator.lt, "<=": operator.le,
               ">": operator.gt, ">=": operator.ge}
_PA_COMPARE = {"=": pc.equal, "!=": pc.not_equal, "<": pc.less, "<=": pc.less_equal,
               ">": pc.greater, ">=": pc.greater_equal}
_PA_ARITH = {"+": pc.add, "-": pc.subtract, "*": pc.multiply}
OPS = ("dec_div", "dec_mod", "dec_cast", "dec_text", "dec_int", "dec_double")


def handles(e: VCall) -> bool:
    """Whether ``e`` is a DECIMAL operation (``kernels`` hands it here)."""
    if e.op in OPS:
        return True
    if e.op in ("+", "-", "*", "neg"):
        return e.type.is_decimal
    return e.op in _PA_COMPARE and any(a.type.is_decimal for a in e.args)


def _ps(t: Type) -> tuple[int, int] | None:
    """(precision, scale) of a DECIMAL or BIGINT operand; None for the null literal."""
    return None if t.is_null else t.ps


def _array(value: Any, n: int) -> pa.Array:
    if isinstance(value, pa.ChunkedArray):
        return value.combine_chunks()
    return pa.repeat(value, n) if isinstance(value, pa.Scalar) else value


def _exact(value: Any, ps: tuple[int, int], to: tuple[int, int]) -> Any:
    """``value`` (DECIMAL ``ps`` or BIGINT) as decimal128 ``to``, which holds every value
    of ``ps`` exactly."""
    t = pa.decimal128(*to)
    if value.type == t:
        return value
    if pa.types.is_integer(value.type):
        value = pc.cast(value, pa.decimal128(decimals.BIGINT_PRECISION, 0))
    return pc.cast(value, t)


def _py(fn: Callable[..., Any], args: list[Kernel], out: pa.DataType) -> Kernel:
    """The row code's function per value (nulls passed as None, as the row code does)."""
    def run(batch: pa.RecordBatch) -> Any:
        n = batch.num_rows
        cols = [_array(a(batch), n).to_pylist() for a in args]
        return pa.array([fn(*vs) for vs in zip(*cols)], out)
    return run


def rescale(value: Any, ps: tuple[int, int], to: tuple[int, int]) -> Any:
    """``decimals.fit`` over a column: HALF_UP to ``to``'s scale, NULL beyond its
    precision; None when pyarrow cannot do it exactly (the caller goes per value)."""
    (p0, s0), (p, s) = ps, to
    if s >= s0:
        width = p0 - s0 + s
        if width > MAX:
            return None
        v = _exact(value, ps, (width, s))
    else:
        if p0 + 1 > MAX:
            return None
        wide = _exact(value, ps, (p0 + 1, s0))  # room for the carry of 9.99 -> 10.0
        width = p0 + 1 - s0 + s
        v = pc.cast(pc.round(wide, s, round_mode="half_towards_infinity"),
                    pa.decimal128(width, s))
    if p - s < width - s:  # some values may need more integer digits than p - s
        limit = pa.scalar(Decimal(10) ** (p - s), pa.decimal128(width, s))
        v = pc.if_else(pc.greater_equal(pc.abs(v), limit),
                       pa.scalar(None, pa.decimal128(width, s)), v)
    return pc.cast(v, pa.decimal128(p, s), safe=False)


def fit_to(value: Any, t: Type, target: Type, n: int) -> Any:
    """A value of type ``t`` (DECIMAL, BIGINT, null) as DECIMAL ``target`` (``case``,
    ``coalesce`` and ``if`` results: the row code fits the chosen branch)."""
    out = pa.decimal128(target.precision, target.scale)
    if t.is_null:
        return pa.nulls(n, out)
    got = rescale(value, t.ps, target.ps)
    if got is not None:
        return got
    values = _array(value, n).to_pylist()
    return pa.array([decimals.to_decimal(v, *target.ps) for v in values], out)


def coalesce(e: VCall, args: list[Kernel]) -> Kernel:
    """``coalesce`` with a DECIMAL result: the first non-null argument, then fitted to the
    result type (which may make it NULL: the row code fits the chosen value)."""
    types = [a.type for a in e.args]

    def run(batch: pa.RecordBatch) -> Any:
        n = batch.num_rows
        raws = [k(batch) for k in args]
        out = fit_to(raws[-1], types[-1], e.type, n)
        for raw, t in zip(reversed(raws[:-1]), reversed(types[:-1])):
            out = pc.if_else(pc.is_valid(_array(raw, n)), fit_to(raw, t, e.type, n), out)
        return out
    return run


def branches(e: VCall, args: list[Kernel]) -> list[Kernel]:
    """``case`` / ``if`` with a DECIMAL result: each branch fitted to it (the row code
    fits the chosen one; which one is chosen does not depend on the branches' values)."""
    if e.op == "if":
        picked = range(1, 3)
    else:  # case: condition, result, ..., default
        picked = [*range(1, len(args) - 1, 2), len(args) - 1]
    out = list(args)
    for i in picked:
        out[i] = _fitted(args[i], e.args[i].type, e.type)
    return out


def _fitted(k: Kernel, t: Type, target: Type) -> Kernel:
    if t == target:
        return k
    return lambda batch: fit_to(k(batch), t, target, batch.num_rows)


def compile_call(e: VCall, args: list[Kernel]) -> Kernel:
    """The kernel of a DECIMAL operation (``handles(e)``)."""
    op = e.op
    out = pa.decimal128(e.type.precision, e.type.scale) if e.type.is_decimal else None
    if op in _PA_COMPARE:
        return _compare(op, e, args)
    if any(a.type.is_null for a in e.args) and op != "dec_cast":
        return lambda batch: pa.nulls(batch.num_rows, out or pa.bool_())
    if op in _PA_ARITH:
        return _arith(op, e, args, out)
    if op == "neg":
        (a,) = args
        return lambda batch: pc.negate(a(batch))
    if op in ("dec_div", "dec_mod"):
        sym = "/" if op == "dec_div" else "%"
        p, s = e.type.ps
        return _py(lambda x, y: decimals.dec_arith(sym, x, y, p, s), args, out)
    (a,) = args
    src = e.args[0].type
    if op == "dec_cast":
        target = e.type
        if src.kind in ("decimal", "int", "null"):
            return lambda batch: fit_to(a(batch), src, target, batch.num_rows)
        return _py(lambda v: decimals.to_decimal(v, *target.ps), args, out)
    if op == "dec_text":
        return _text(a, src.scale)
    if op == "dec_int":  # the fraction truncated (Java's longValue)
        if src.precision - src.scale > 18:
            raise NotImplementedError("beyond a long")  # the row code's big ints
        return lambda batch: pc.cast(a(batch), pa.int64(), safe=False)
    if op == "dec_double":
        from flowc.parser.runtime import cast_double

        return _py(cast_double, args, pa.float64())
    raise NotImplementedError(op)


def _text(a: Kernel, scale: int) -> Kernel:
    """BigDecimal.toPlainString (the row code's ``format(v, "f")``): Arrow's text of a
    decimal128, which is the same but for |v| < 10^-6 at a scale above 6, where it is
    Java's ``toString`` (``0E-17``): a batch with such a value goes per value."""
    tiny = pa.scalar(Decimal(1).scaleb(-6), pa.decimal128(max(scale, 7), scale)) \
        if scale > 6 else None

    def run(batch: pa.RecordBatch) -> Any:
        v = a(batch)
        if tiny is not None and pc.any(pc.less(pc.abs(v), tiny)).as_py():
            values = _array(v, batch.num_rows).to_pylist()
            return pa.array([None if x is None else decimals.to_text(x) for x in values],
                            pa.string())
        return pc.cast(v, pa.string())
    return run


def _arith(op: str, e: VCall, args: list[Kernel], out: pa.DataType) -> Kernel:
    (p1, s1), (p2, s2) = (a.type.ps for a in e.args)
    a, b = args
    p, s = e.type.ps
    if op == "*":
        exact = (p1 + p2 + 1, s1 + s2)
        at, bt = (p1, s1), (p2, s2)
    else:
        scale = max(s1, s2)
        exact = (max(p1 - s1, p2 - s2) + scale + 1, scale)
        at, bt = (p1 - s1 + scale, scale), (p2 - s2 + scale, scale)
    if exact != (p, s) or p > MAX:  # an adjusted type: the exact result rounds
        return _py(lambda x, y: decimals.dec_arith(op, x, y, p, s), args, out)
    fn = _PA_ARITH[op]
    ta, tb = e.args[0].type.ps, e.args[1].type.ps
    return lambda batch: pc.cast(fn(_exact(a(batch), ta, at), _exact(b(batch), tb, bt)), out)


def _compare(op: str, e: VCall, args: list[Kernel]) -> Kernel:
    types = [_ps(a.type) for a in e.args]
    a, b = args
    if None in types:
        return lambda batch: pa.nulls(batch.num_rows, pa.bool_())
    (p1, s1), (p2, s2) = types  # type: ignore[misc]
    scale = max(s1, s2)
    width = max(p1 - s1, p2 - s2) + scale
    if width > MAX:
        py = _PY_COMPARE[op]
        return _py(lambda x, y: None if x is None or y is None else py(x, y), args,
                   pa.bool_())
    fn = _PA_COMPARE[op]
    ta, tb = types
    return lambda batch: fn(_exact(a(batch), ta, (width, scale)),  # type: ignore[arg-type]
                            _exact(b(batch), tb, (width, scale)))  # type: ignore[arg-type]
