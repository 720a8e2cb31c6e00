"""The flowc types of a Python function from its annotations, for SQL's
``CREATE FUNCTION name AS 'module.fn' LANGUAGE PYTHON`` (Flink's DDL names no types; a .flow
``import udf`` declares them itself): ``str`` is STRING, ``int`` BIGINT, ``float`` DOUBLE,
``bool`` BOOLEAN, ``list[str]`` ARRAY<STRING>; ``Optional[X]`` / ``X | None`` is X (every
value may be null)."""

from __future__ import annotations

import inspect
import types
import typing
from collections.abc import Callable
from typing import Any

from flowc.errors import FlowTypeError, Span
from flowc.types import BOOL, DOUBLE, INT, STRING, Type, array_of

_SCALARS: dict[Any, Type] = {str: STRING, int: INT, float: DOUBLE, bool: BOOL}
_HINT = ("annotate every parameter and the return type with str, int, float, bool or "
         "list[...] of them, e.g. def f(s: str, n: int) -> str")


def _type(annotation: Any) -> Type | None:
    if annotation in _SCALARS:
        return _SCALARS[annotation]
    origin = typing.get_origin(annotation)
    args = [a for a in typing.get_args(annotation) if a is not type(None)]
    if origin in (typing.Union, types.UnionType) and len(args) == 1:
        return _type(args[0])
    if origin is list and len(args) == 1:
        element = _type(args[0])
        return array_of(element) if element is not None else None
    return None


def annotated_types(fn: Callable[..., Any], name: str,
                    span: Span) -> tuple[tuple[Type, ...], Type]:
    """(parameter types, result type) of ``fn``, or a FlowTypeError saying which
    annotation is missing or not supported."""
    try:
        signature = inspect.signature(fn)
        hints = typing.get_type_hints(fn)
    except Exception as e:  # noqa: BLE001 - any failure of user code is a user error
        raise FlowTypeError(f"cannot read the types of '{name}': {e}", span,
                            hint=_HINT) from None
    params: list[Type] = []
    for p in signature.parameters.values():
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD, p.KEYWORD_ONLY):
            raise FlowTypeError(f"'{name}' has a parameter '{p.name}' that is not "
                                "positional", span, hint=_HINT)
        t = _type(hints.get(p.name))
        if t is None:
            what = "no type annotation" if p.name not in hints else \
                f"the annotation {hints[p.name]!r}, which flowc cannot map to a SQL type"
            raise FlowTypeError(f"parameter '{p.name}' of '{name}' has {what}", span,
                                hint=_HINT)
        params.append(t)
    returns = _type(hints.get("return"))
    if returns is None:
        what = "no return annotation" if "return" not in hints else \
            f"the return annotation {hints['return']!r}, which flowc cannot map to a SQL type"
        raise FlowTypeError(f"'{name}' has {what}", span, hint=_HINT)
    return tuple(params), returns
