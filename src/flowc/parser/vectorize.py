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


def column(code: str, type_: Type) -> VExpr | None:
    """A field read (``r[3]``) as a column; other reads (joins' scopes) have no form."""
    m = _FIELD.match(code)
    if type_.kind in ("decimal", "map"):  # run row by row (flowc.decimals, flowc.maps)
        return None
    return VCol(int(m.group(1)), type_) if m else None


def literal(value: Any, type_: Type) -> VExpr | None:
    if isinstance(value, (list, dict, set, tuple)):
        return None
    return VLit(value, type_)


def call(op: str, type_: Type, *args: HasVec) -> VExpr | None:
    if any(a.vec is None for a in args):
        return None
    return VCall(op, tuple(a.vec for a in args), type_)


def arith(op: str, type_: Type, left: HasVec, right: HasVec) -> VExpr | None:
    if op == "/":
        return call("div", type_, left, right)
    if op not in _ARITH or type_ not in (INT, DOUBLE, TIMESTAMP, DURATION):
        return None
    return call(_ARITH[op], type_, left, right)


def compare(op: str, left: HasVec, right: HasVec) -> VExpr | None:
    for t in (left.type, right.type):
        if t.is_array or t.kind == "duration":
            return None
    from flowc.types import BOOL

    return call(op, BOOL, left, right)


def in_list(x: HasVec, values: list[Any]) -> VExpr | None:
    from flowc.types import BOOL

    if x.vec is None or any(isinstance(v, (list, bool)) for v in values) or \
            x.type.kind == "bool":
        return None
    return VCall("in", (x.vec, VLit(tuple(values), x.type)), BOOL)


def like(x: HasVec, pattern: str) -> VExpr | None:
    from flowc.types import BOOL

    if x.vec is None:
        return None
    return VCall("like", (x.vec, VLit(pattern, x.type)), BOOL)


def cast(x: HasVec, target: Type, helper: str) -> VExpr | None:
    if x.vec is None:
        return None
    if helper == "":
        return VCall("retype", (x.vec,), target)
    if helper == "cast_double" and x.type == INT:
        return VCall("to_double", (x.vec,), DOUBLE)
    return None


def function(name: str, type_: Type, args: list[Any]) -> VExpr | None:
    """A library function's form, or None."""
    if name in _UNARY and args[0].type.kind == "string":
        return call(name, type_, *args)
    if name == "length" and args[0].type.kind == "string":
        return call("length", type_, *args)
    if name in _PATTERN and args[1].const and isinstance(args[1].value, str):
        return call(name, type_, *args)
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
