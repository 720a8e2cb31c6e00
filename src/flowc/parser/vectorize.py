"""The vector form (``flowc.vector``) of compiled .flow expressions.

``ExprCompiler`` builds it beside the Python code: every ``Typed`` carries ``vec``, the same
computation as a VExpr, or None where no vector form exists (UDFs, most helpers): an operator
whose expression has None runs row by row. Only operations whose vector evaluation is known
to equal the row code exactly get a form.
"""

from __future__ import annotations

import re
from typing import Any, Protocol

from flowc.types import DOUBLE, DURATION, INT, TIMESTAMP, Type
from flowc.vector import VCall, VCol, VExpr, VLit

_FIELD = re.compile(r"^r\[(\d+)\]$")
# .flow functions whose template has a vector operator of the same name; the string
# arguments after the first must be constants for these (pyarrow takes them as options).
_UNARY = ("lower", "upper", "trim", "ltrim", "rtrim")
_PATTERN = ("starts_with", "ends_with", "contains")
_ARITH = {"+": "+", "-": "-", "*": "*"}


class HasVec(Protocol):
    type: Type
    vec: Any
    const: bool
    value: Any


# DECIMAL operators with a vector form (``flowc.decimals``' rules: Flink's result type,
# HALF_UP, NULL on overflow); ``/`` and ``%`` are ``dec_div`` / ``dec_mod``.
_DEC_ARITH = {"+": "+", "-": "-", "*": "*", "/": "dec_div", "%": "dec_mod"}
# Ops whose arguments may be MAP columns (anything else over a map has no vector form).
_MAP_OPS = ("is_null", "is_not_null", "map_get", "map_size")


def column(code: str, type_: Type) -> VExpr | None:
    """A field read (``r[3]``) as a column; other reads (joins' scopes) have no form."""
    m = _FIELD.match(code)
    return VCol(int(m.group(1)), type_) if m else None


def literal(value: Any, type_: Type) -> VExpr | None:
    if isinstance(value, (list, dict, set, tuple)):
        return None
    return VLit(value, type_)


# Operators whose row code may skip arguments after the first (short-circuit, a chosen
# branch), and the vector operators that can raise (the row code's ArithmeticException):
# a kernel evaluates every argument over every row, so it would raise for a row whose
# division the row code never reached.
_LAZY = ("coalesce", "if", "case", "and", "or")
_RAISING = ("dec_div", "dec_mod")


def _may_raise(v: VExpr) -> bool:
    todo = [v]
    while todo:
        x = todo.pop()
        if isinstance(x, VCall):
            if x.op in _RAISING:
                return True
            todo.extend(x.args)
    return False


def call(op: str, type_: Type, *args: HasVec) -> VExpr | None:
    if any(a.vec is None for a in args):
        return None
    if op in _LAZY and any(_may_raise(a.vec) for a in args[1:]):  # type: ignore[arg-type]
        return None  # the member runs row by row inside the chain
    if op not in _MAP_OPS and (type_.kind == "map" or any(a.type.kind == "map"
                                                            for a in args)):
        return None  # the map functions run row by row (flowc.maps)
    if op not in ("+", "-", "*", "dec_div", "dec_mod", "neg", "dec_cast", "is_null",
                  "is_not_null", "retype") + _COMPARISONS and _mixes_decimal(type_, args):
        return None
    return VCall(op, tuple(a.vec for a in args), type_)


_COMPARISONS = ("=", "!=", "<", "<=", ">", ">=")


def _mixes_decimal(type_: Type, args: tuple[HasVec, ...]) -> bool:
    """A DECIMAL among the arguments of an operator without DECIMAL rules, or a
    DECIMAL result from arguments of other types (``case`` / ``coalesce`` / ``if`` over
    DECIMAL branches widen them exactly: a branch of another type is cast as the row code
    casts it)."""
    kinds = {a.type.kind for a in args}
    if type_.is_decimal:
        return not kinds <= {"decimal", "int", "null", "bool"}
    return "decimal" in kinds


def arith(op: str, type_: Type, left: HasVec, right: HasVec) -> VExpr | None:
    if type_.is_decimal:
        return call(_DEC_ARITH[op], type_, left, right) if op in _DEC_ARITH else None
    if left.type.is_decimal or right.type.is_decimal:
        return None
    if op == "/":
        return call("div", type_, left, right)
    if op not in _ARITH or type_ not in (INT, DOUBLE, TIMESTAMP, DURATION):
        return None
    return call(_ARITH[op], type_, left, right)


def compare(op: str, left: HasVec, right: HasVec) -> VExpr | None:
    for t in (left.type, right.type):
        if t.is_array or t.kind in ("duration", "map"):
            return None
    if (left.type.is_decimal or right.type.is_decimal) and not {
            left.type.kind, right.type.kind} <= {"decimal", "int", "null"}:
        return None  # Python compares a Decimal with a float exactly: no Arrow kernel does
    from flowc.types import BOOL

    return call(op, BOOL, left, right)


def in_list(x: HasVec, values: list[Any]) -> VExpr | None:
    from flowc.types import BOOL

    if x.vec is None or any(isinstance(v, (list, bool)) for v in values) or \
            x.type.kind in ("bool", "decimal", "map"):
        return None
    return VCall("in", (x.vec, VLit(tuple(values), x.type)), BOOL)


def like(x: HasVec, pattern: str) -> VExpr | None:
    from flowc.types import BOOL

    if x.vec is None:
        return None
    return VCall("like", (x.vec, VLit(pattern, x.type)), BOOL)


def cast(x: HasVec, target: Type, helper: str) -> VExpr | None:
    if x.vec is None or x.type.kind == "map":
        return None
    if helper == "":
        if x.type == target:
            return x.vec
        return None if x.type.is_decimal or (target.is_decimal and not x.type.is_null) \
            else VCall("retype", (x.vec,), target)
    if helper == "cast_double" and x.type == INT:
        return VCall("to_double", (x.vec,), DOUBLE)
    if helper == "cast_decimal":  # HALF_UP to the target's scale, NULL when too wide
        return VCall("dec_cast", (x.vec,), target)
    if helper == "cast_decimal_string":
        return VCall("dec_text", (x.vec,), target)
    if helper == "cast_decimal_int":
        return VCall("dec_int", (x.vec,), target)
    if helper == "cast_double" and x.type.is_decimal:
        return VCall("dec_double", (x.vec,), target)
    return None


def function(name: str, type_: Type, args: list[Any]) -> VExpr | None:
    """A library function's form, or None."""
    if name in _UNARY and args[0].type.kind == "string":
        return call(name, type_, *args)
    if name == "length" and args[0].type.kind == "string":
        return call("length", type_, *args)
    if name in _PATTERN and args[1].const and isinstance(args[1].value, str):
        return call(name, type_, *args)
    if name == "element_at" and args[0].type.kind == "map" and args[1].const and \
            args[1].value is not None:  # m['k'] with a constant key (Arrow's map_lookup)
        return call("map_get", type_, *args)
    if name == "size" and args[0].type.kind == "map":
        return call("map_size", type_, *args)
    if name == "epoch_millis":
        return call("retype", type_, *args)
    if name == "coalesce":
        return call("coalesce", type_, *args)
    if name == "if":
        return call("if", type_, *args)
    return None


def case(type_: Type, conds: list[Any], results: list[Any], default: Any) -> VExpr | None:
    parts: list[Any] = []
    for c, r in zip(conds, results):
        parts += [c, r]
    return call("case", type_, *parts, default)
