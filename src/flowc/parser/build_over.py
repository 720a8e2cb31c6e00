"""The AST of ``over ... aggregate ...``, ``window ... join`` and ``write ... partitioned by``
steps (a mixin of ``build.AstBuilder``)."""

from __future__ import annotations

from typing import Any

from lark import Token, v_args
from lark.visitors import Transformer_NonRecursive

from flowc.errors import FlowSyntaxError, Span
from flowc.parser import ast as A


@v_args(inline=True)
class OverSteps(Transformer_NonRecursive):
    def meta(self, meta: Any) -> Span:  # provided by AstBuilder
        raise NotImplementedError

    def tok(self, t: Token) -> Span:  # provided by AstBuilder
        raise NotImplementedError

    def _int(self, t: Token, negative: bool = False) -> int:  # provided by AstBuilder
        raise NotImplementedError

    @v_args(meta=True, inline=True)
    def over_op(self, meta: Any, frame: tuple[bool, int | None],
                items: list[A.SelectItem]) -> A.OverStep:
        return A.OverStep(frame[0], frame[1], tuple(items), self.meta(meta))

    def rows_frame(self, count: Token) -> tuple[bool, int | None]:
        return True, self._int(count)

    def range_frame(self, duration: Token) -> tuple[bool, int | None]:
        from flowc.parser.build import duration_millis

        span = self.tok(duration)
        ms = duration_millis(str(duration), span)
        if ms < 0:
            raise FlowSyntaxError("an over range cannot be negative", span)
        return False, ms

    def rows_unbounded(self) -> tuple[bool, int | None]:
        return True, None

    def range_unbounded(self) -> tuple[bool, int | None]:
        return False, None

    @v_args(meta=True, inline=True)
    def window_join_op(self, meta: Any, kind: Token | None, other: Token, alias: Token | None,
                       keys: list[A.JoinKey]) -> A.WindowJoinStep:
        return A.WindowJoinStep(str(other), str(alias) if alias is not None else None,
                                tuple(keys), "inner" if kind is None else str(kind),
                                self.meta(meta), self.tok(other))

    @v_args(meta=True)
    def write_op(self, meta: Any, children: list[Any]) -> A.FileSinkStep:
        from flowc.parser.build import string_value

        fmt, path = children[0], children[1]
        partition: tuple[A.FieldRef, ...] = ()
        options: tuple[A.Setting, ...] = ()
        for c in children[2:]:
            if isinstance(c, tuple) and c and isinstance(c[0], A.FieldRef):
                partition = c
            elif c is not None:
                options = tuple(c)
        return A.FileSinkStep(str(fmt), string_value(path), options, self.meta(meta),
                              self.tok(fmt), partition_by=partition)

    def partitioned(self, *names: Token) -> tuple[A.FieldRef, ...]:
        return tuple(self._ref(n) for n in names)

    def _ref(self, t: Token) -> A.FieldRef:  # provided by AstBuilder
        raise NotImplementedError
