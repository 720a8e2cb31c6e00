"""The AST of ``source`` statements: fields, file / values / datagen / sequence bodies,
monitoring, watermarks, dead letters (a mixin of ``build.AstBuilder``)."""

from __future__ import annotations

from typing import Any

from lark import Token, v_args
from lark.visitors import Transformer_NonRecursive

from flowc.errors import Span
from flowc.parser import ast as A
from flowc.types import Type


def _string(t: Token) -> str:
    from flowc.parser.build import string_value  # build imports this module

    return string_value(t)


def _millis(text: str, span: Span) -> int:
    from flowc.parser.build import duration_millis

    return duration_millis(text, span)


@v_args(inline=True)
class SourceSteps(Transformer_NonRecursive):
    def meta(self, meta: Any) -> Span:  # provided by AstBuilder
        raise NotImplementedError

    def tok(self, t: Token) -> Span:  # provided by AstBuilder
        raise NotImplementedError

    def _int(self, t: Token, negative: bool = False) -> int:  # provided by AstBuilder
        raise NotImplementedError

    @v_args(meta=True)
    def source_stmt(self, meta: Any, children: list[Any]) -> A.SourceStmt:
        name: Token = children[0]
        fields = [c for c in children[1:] if isinstance(c, A.FieldDecl)]
        rest = [c for c in children[1:] if not isinstance(c, A.FieldDecl)]
        body = rest[0]
        watermark = next((c for c in rest if isinstance(c, A.Watermark)), None)
        dead = next((c for c in rest if isinstance(c, tuple) and c[0] == "dead"), None)
        hints = next((c for c in rest if isinstance(c, list)), [])
        return A.SourceStmt(str(name), tuple(fields), body, watermark,
                            dead[1] if dead else None, tuple(hints), self.meta(meta),
                            self.tok(name), dead[2] if dead else None)

    @v_args(meta=True, inline=True)
    def field_decl(self, meta: Any, name: Token, type_: Type) -> A.FieldDecl:
        return A.FieldDecl(str(name), type_, self.meta(meta))

    @v_args(meta=True, inline=True)
    def file_source(self, meta: Any, fmt: Token, path: Token,
                    options: list[A.Setting] | None = None,
                    monitor: tuple[int, Span] | None = None) -> A.FileBody:
        every, every_span = monitor if monitor is not None else (None, None)
        return A.FileBody(str(fmt), _string(path), tuple(options or ()), self.meta(meta),
                          self.tok(fmt), every, every_span)

    def monitor(self, t: Token) -> tuple[int, Span]:
        span = self.tok(t)
        return _millis(str(t), span), span

    @v_args(meta=True)
    def values_source(self, meta: Any, rows: list[tuple[tuple[A.Expr, ...], Span]]) -> A.ValuesBody:
        return A.ValuesBody(tuple(r[0] for r in rows), tuple(r[1] for r in rows), self.meta(meta))

    @v_args(meta=True)
    def row(self, meta: Any, exprs: list[A.Expr]) -> tuple[tuple[A.Expr, ...], Span]:
        return tuple(exprs), self.meta(meta)

    @v_args(meta=True, inline=True)
    def datagen_source(self, meta: Any, rows: Token, rate: tuple[int, Span] | None = None,
                       generators: list[tuple[str, A.Expr, Span]] | None = None) -> A.DatagenBody:
        n, gens = self._int(rows), tuple(generators or ())
        if rate is None:
            return A.DatagenBody(n, gens, self.meta(meta))
        # ``rows N every D``: unbounded at N rows every D (lower.py checks the rate)
        return A.DatagenBody(None, gens, self.meta(meta), n * 1000 // max(rate[0], 1))

    rate = monitor  # ``every <duration>``: (milliseconds, span)

    def generators(self, *gens: tuple[str, A.Expr, Span]) -> list[tuple[str, A.Expr, Span]]:
        return list(gens)

    @v_args(meta=True, inline=True)
    def generator(self, meta: Any, name: Token, expr: A.Expr) -> tuple[str, A.Expr, Span]:
        return str(name), expr, self.tok(name)

    @v_args(meta=True, inline=True)
    def sequence_source(self, meta: Any, start: int, end: int) -> A.SequenceBody:
        return A.SequenceBody(start, end, self.meta(meta))

    def pos_int(self, t: Token) -> int:
        return self._int(t)

    def neg_int(self, t: Token) -> int:
        return self._int(t, negative=True)

    @v_args(meta=True, inline=True)
    def watermark(self, meta: Any, expr: A.Expr,
                  idle: tuple[int, Span] | None = None) -> A.Watermark:
        span = self.meta(meta)
        timeout, idle_span = idle if idle is not None else (None, None)
        # `ts - 2s` is parsed as an expression; a trailing "- <duration>" is the bound.
        if isinstance(expr, A.Binary) and expr.op == "-" and isinstance(expr.right, A.DurationLit):
            return A.Watermark(expr.left, expr.right.millis, span, timeout, idle_span)
        return A.Watermark(expr, 0, span, timeout, idle_span)

    idle = monitor  # ``idle after <duration>``: (milliseconds, span)

    @v_args(meta=True, inline=True)
    def dead_letter(self, meta: Any, path: Token) -> tuple[str, str, Span]:
        return "dead", _string(path), self.meta(meta)
