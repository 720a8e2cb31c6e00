"""The AST of ``order by`` / ``limit`` and ``window top`` / ``window first|last`` steps (a
mixin of ``build.AstBuilder``)."""

from __future__ import annotations

from typing import Any

from lark import Token, v_args
from lark.visitors import Transformer_NonRecursive

from flowc.errors import Span
from flowc.parser import ast as A


@v_args(inline=True)
class SortSteps(Transformer_NonRecursive):
    def meta(self, meta: Any) -> Span:  # provided by AstBuilder
        raise NotImplementedError

    def _ref(self, t: Token) -> A.FieldRef:  # provided by AstBuilder
        raise NotImplementedError

    def _int(self, t: Token, negative: bool = False) -> int:  # provided by AstBuilder
        raise NotImplementedError

    @v_args(meta=True)
    def order_op(self, meta: Any, items: list[A.OrderItem]) -> A.OrderStep:
        return A.OrderStep(tuple(items), self.meta(meta))

    @v_args(meta=True, inline=True)
    def order_item(self, meta: Any, name: Token, direction: str | None,
                   nulls: str | None) -> A.OrderItem:
        return A.OrderItem(self._ref(name), direction == "desc",
                           None if nulls is None else nulls == "first", self.meta(meta))

    def asc(self) -> str:
        return "asc"

    def desc(self) -> str:
        return "desc"

    def nulls_first(self) -> str:
        return "first"

    def nulls_last(self) -> str:
        return "last"

    @v_args(meta=True)
    def top_op(self, meta: Any, children: list[Any]) -> A.TopStep:
        count, *items, rank = children
        return A.TopStep(self._int(count), tuple(items),
                         None if rank is None else str(rank), self.meta(meta))

    @v_args(meta=True, inline=True)
    def limit_op(self, meta: Any, count: Token, offset: Token | None) -> A.LimitStep:
        return A.LimitStep(self._int(count), 0 if offset is None else self._int(offset),
                           self.meta(meta))

    @v_args(meta=True, inline=True)
    def window_top_op(self, meta: Any, count: Token, offset: Token | None,
                      *rest: Any) -> A.WindowRankStep:
        items = tuple(i for i in rest if isinstance(i, A.OrderItem))
        alias = rest[-1] if rest and isinstance(rest[-1], Token) else None
        return A.WindowRankStep(0 if offset is None else self._int(offset), self._int(count),
                                items, None if alias is None else str(alias), self.meta(meta))

    @v_args(meta=True, inline=True)
    def window_first_op(self, meta: Any, field: Token, alias: Token | None) -> A.WindowRankStep:
        return self._keep("first", meta, field, alias)

    @v_args(meta=True, inline=True)
    def window_last_op(self, meta: Any, field: Token, alias: Token | None) -> A.WindowRankStep:
        return self._keep("last", meta, field, alias)

    def _keep(self, keep: str, meta: Any, field: Token, alias: Token | None) -> A.WindowRankStep:
        span = self.meta(meta)
        # first: the earliest row (ascending); last: the latest (descending, ties to the last)
        item = A.OrderItem(self._ref(field), keep == "last", None, span)
        return A.WindowRankStep(0, 1, (item,), None if alias is None else str(alias), span,
                                keep=keep)
