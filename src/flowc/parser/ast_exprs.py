"""The expression nodes of the .flow AST (re-exported by :mod:`flowc.parser.ast`, where the
steps and statements are): literals, field references, calls and operators, each with the
:class:`Span` it came from."""

from __future__ import annotations

from dataclasses import dataclass

from flowc.errors import Span
from flowc.types import Type

# ---------------------------------------------------------------- expressions


@dataclass(frozen=True)
class Literal:
    """``value`` is already the runtime value (timestamps as epoch ms); ``type`` its type."""

    value: object
    type: Type
    span: Span


@dataclass(frozen=True)
class DurationLit:
    millis: int
    span: Span


@dataclass(frozen=True)
class FieldRef:
    """``name`` or ``qualifier.name``."""

    name: str
    qualifier: str | None
    span: Span


@dataclass(frozen=True)
class Call:
    """``name(args)``; ``star`` for ``count(*)``, ``distinct`` for ``count(distinct x)``;
    ``internal`` for a call the SQL translator made to an internal function (``_sql_div``),
    which a script cannot name and no imported function can shadow."""

    name: str
    args: tuple[Expr, ...]
    span: Span
    name_span: Span
    star: bool = False
    distinct: bool = False
    internal: bool = False


@dataclass(frozen=True)
class Binary:
    """Arithmetic (``+ - * / %``), ``||``, comparison (``= != < <= > >=``), ``and``/``or``."""

    op: str
    left: Expr
    right: Expr
    span: Span


@dataclass(frozen=True)
class Unary:
    """``-x`` (op ``neg``) or ``not x`` (op ``not``)."""

    op: str
    operand: Expr
    span: Span


@dataclass(frozen=True)
class IsNull:
    operand: Expr
    negated: bool
    span: Span


@dataclass(frozen=True)
class InList:
    operand: Expr
    items: tuple[Expr, ...]
    negated: bool
    span: Span


@dataclass(frozen=True)
class Between:
    operand: Expr
    low: Expr
    high: Expr
    negated: bool
    span: Span


@dataclass(frozen=True)
class Like:
    operand: Expr
    pattern: Expr
    negated: bool
    span: Span


@dataclass(frozen=True)
class When:
    condition: Expr
    result: Expr
    span: Span


@dataclass(frozen=True)
class Case:
    """``case [operand] when .. then .. [else ..] end``."""

    operand: Expr | None
    whens: tuple[When, ...]
    default: Expr | None
    span: Span


@dataclass(frozen=True)
class Cast:
    operand: Expr
    target: Type
    span: Span


@dataclass(frozen=True)
class ArrayLit:
    items: tuple[Expr, ...]
    span: Span


Expr = (
    Literal
    | DurationLit
    | FieldRef
    | Call
    | Binary
    | Unary
    | IsNull
    | InList
    | Between
    | Like
    | Case
    | Cast
    | ArrayLit
)
