"""Lark parse tree -> typed AST (:mod:`flowc.parser.ast`).

A non-recursive Lark transformer (deep expressions cannot exhaust the Python stack here).
The parser sees one statement at a time, so positions are relative to the statement's text;
``line0``/``col0`` shift them back to positions in the whole file.
"""

from __future__ import annotations

import datetime as _dt
import decimal
import math
import re
from dataclasses import replace
from typing import Any

from lark import Token, v_args

from flowc.errors import FlowNameError, FlowSyntaxError, FlowTypeError, Span, did_you_mean
from flowc.parser import ast as A
from flowc.parser.build_over import OverSteps
from flowc.parser.build_sort import SortSteps
from flowc.parser.build_sources import SourceSteps
from flowc.parser.decimal_types import TYPES_HINT, bare_decimal, decimal_type
from flowc.types import (
    BOOL,
    DOUBLE,
    INT,
    NULL,
    STRING,
    TIMESTAMP,
    TYPE_ALIASES,
    TYPE_NAMES,
    Type,
    type_from_name,
    type_meant,
)

INT64_MAX = 2**63 - 1
_DURATION = re.compile(r"^(\d+(?:\.\d+)?)([A-Za-z_][A-Za-z0-9_]*)$")
_UNITS = {"ms": 1, "s": 1000, "m": 60_000, "h": 3_600_000, "d": 86_400_000}
# Units people write out, mapped to flowc's (a "did you mean" for `10sec`, `5 minutes`).
_UNIT_ALIASES = {**{w: "ms" for w in ("msec", "msecs", "milli", "millis", "millisecond",
                                      "milliseconds")},
                 **{w: "s" for w in ("sec", "secs", "second", "seconds")},
                 **{w: "m" for w in ("min", "mins", "minute", "minutes")},
                 **{w: "h" for w in ("hr", "hrs", "hour", "hours")},
                 **{w: "d" for w in ("day", "days")}}
_EPOCH = _dt.datetime(1970, 1, 1, tzinfo=_dt.timezone.utc)


def parse_timestamp(text: str) -> int | None:
    """ISO-8601 date or date-time (naive means UTC) -> epoch milliseconds, or None."""
    try:
        value = _dt.datetime.fromisoformat(text.strip())
    except ValueError:
        return None
    if value.tzinfo is None:
        value = value.replace(tzinfo=_dt.timezone.utc)
    return (value - _EPOCH) // _dt.timedelta(milliseconds=1)


# The longest duration: 10000 years of 365 days, beyond the whole timestamp range (years 1
# to 9999), so windows, lateness, watermark delays and interval bounds cannot overflow a
# long however they are added to a timestamp.
MAX_DURATION_DAYS = 3_650_000
MAX_DURATION_MS = MAX_DURATION_DAYS * _UNITS["d"]
_EXPONENT = re.compile(r"^\d+(?:\.\d+)?[eE]\d*$")


def duration_millis(text: str, span: Span) -> int:
    m = _DURATION.match(text)
    unit = m.group(2) if m else text
    if _EXPONENT.match(text):
        plain = "100000 or 0.00001"
        if text[-1].isdigit() and abs(decimal.Decimal(text).adjusted()) <= 30:
            plain = format(decimal.Decimal(text), "f")
        raise FlowSyntaxError(f"'{text}' looks like a number in exponent notation, which .flow "
                              "does not have", span, hint=f"write the number out: {plain}")
    if m is None or unit not in _UNITS:
        hint = "durations are a number and a unit: 500ms, 5s, 1m, 1h or 1d"
        meant = _UNIT_ALIASES.get(unit.lower()) or (unit.lower() if unit.lower() in _UNITS
                                                    else None)
        if m is not None and meant is not None:
            hint = f"did you mean '{m.group(1)}{meant}'?"
        raise FlowSyntaxError(f"'{text}' is not a duration: unknown unit '{unit}'", span,
                              hint=hint)
    number = m.group(1)
    millis = float(number) * _UNITS[unit] if "." in number else int(number) * _UNITS[unit]
    if abs(millis) > MAX_DURATION_MS:
        raise FlowSyntaxError(f"duration '{text}' is too long: at most {MAX_DURATION_DAYS}d "
                              "(10000 years)", span)
    if millis != int(millis):
        raise FlowSyntaxError(f"duration '{text}' is not a whole number of milliseconds", span)
    return int(millis)


def finite_float(text: str, span: Span) -> float:
    """A double literal; one beyond the double range is an error (Calcite's message), not
    infinity, which has no literal to stand for it in generated code."""
    value = float(text)
    if not math.isfinite(value):
        raise FlowTypeError(f"numeric literal '{text}' out of range", span,
                            hint="a double is at most about 1.8e308")
    return value


def string_value(token: Token) -> str:
    return str(token)[1:-1].replace("''", "'")


@v_args(inline=True)
class AstBuilder(SortSteps, OverSteps, SourceSteps):
    def __init__(self, filename: str, text: str, line0: int, col0: int) -> None:
        super().__init__()
        self.filename = filename
        self.text = text
        self.line0 = line0
        self.col0 = col0

    # ------------------------------------------------------------------ positions

    def _pos(self, line: int, col: int) -> tuple[int, int]:
        if line == 1:
            return self.line0, col + self.col0 - 1
        return self.line0 + line - 1, col

    def span_of(self, line: int, col: int, end_line: int, end_col: int) -> Span:
        l1, c1 = self._pos(line, col)
        l2, c2 = self._pos(end_line, end_col)
        return Span(self.filename, l1, c1, l2, c2, self.text)

    def tok(self, t: Token) -> Span:
        return self.span_of(t.line or 1, t.column or 1, t.end_line or 1, t.end_column or 1)

    def meta(self, meta: Any) -> Span:
        if getattr(meta, "empty", True):
            return Span(self.filename, self.line0, self.col0, text=self.text)
        return self.span_of(meta.line, meta.column, meta.end_line, meta.end_column)

    def _int(self, t: Token, negative: bool = False) -> int:
        value = -int(t) if negative else int(t)
        if not -INT64_MAX - 1 <= value <= INT64_MAX:
            raise FlowSyntaxError(f"integer {value} does not fit in 64 bits", self.tok(t))
        return value

    # ------------------------------------------------------------------ statements

    @v_args(inline=True)
    def start(self, statement: Any) -> Any:
        return statement

    @v_args(meta=True, inline=True)
    def set_stmt(self, meta: Any, key: tuple[str, Span], value: tuple[object, Span]) -> A.SetStmt:
        span = self.meta(meta)
        return A.SetStmt(A.Setting(key[0], value[0], span, key[1], value[1]), span)

    @v_args(meta=True)
    def dotted_name(self, meta: Any, names: list[Token]) -> tuple[str, Span]:
        return ".".join(str(n) for n in names), self.meta(meta)

    @v_args(meta=True, inline=True)
    def import_stmt(self, meta: Any, path: tuple[str, Span], params: list[Type] | None,
                    returns: Type, alias: Token | None) -> A.ImportUdf:
        dotted, path_span = path
        if "." not in dotted:
            raise FlowSyntaxError(f"'{dotted}' is not a module path: write module.function, "
                                  "for example mypkg.udfs.score", path_span)
        module, _, function = dotted.rpartition(".")
        return A.ImportUdf(module, function, tuple(params or ()), returns,
                           str(alias) if alias is not None else None, self.meta(meta), path_span)

    def type_list(self, *types: Type) -> list[Type]:
        return list(types)

    def simple_type(self, name: Token) -> Type:
        if str(name) == "decimal":
            raise bare_decimal(self.tok(name))
        t = type_from_name(str(name))
        if t is None:
            raise self._unknown_type(name)
        return t

    def generic_type(self, name: Token, element: Type) -> Type:
        t = type_from_name(str(name), element)
        if t is None:
            raise self._unknown_type(name, generic=True)
        return t

    @v_args(meta=True, inline=True)
    def param_type(self, meta: Any, name: Token, precision: Token,
                   scale: Token | None) -> Type:
        return decimal_type(name, precision, scale, self.meta(meta))

    def _unknown_type(self, name: Token, generic: bool = False) -> FlowNameError:
        text = str(name)
        if generic or text == "array":
            msg = (f"'{text}' takes no type parameter" if text in TYPE_NAMES
                   else f"unknown type '{text}'")
            if text == "array":
                msg = "array needs an element type, as in array<string>"
        else:
            msg = f"unknown type '{text}'"
        alias = TYPE_ALIASES.get(text.lower())
        hint = f"did you mean '{alias}'?" if alias else did_you_mean(text, TYPE_NAMES)
        return FlowNameError(msg, self.tok(name), hint=hint or TYPES_HINT)

    # ------------------------------------------------------------------ settings

    def options(self, *settings: A.Setting) -> list[A.Setting]:
        return list(settings)

    def hints(self, *settings: A.Setting) -> list[A.Setting]:
        return list(settings)

    @v_args(meta=True, inline=True)
    def setting(self, meta: Any, key: tuple[str, Span], value: tuple[object, Span]) -> A.Setting:
        return A.Setting(key[0], value[0], self.meta(meta), key[1], value[1])

    def string_value(self, t: Token) -> tuple[object, Span]:
        return string_value(t), self.tok(t)

    def int_value(self, t: Token) -> tuple[object, Span]:
        return self._int(t), self.tok(t)

    def neg_int_value(self, t: Token) -> tuple[object, Span]:
        return self._int(t, negative=True), self.tok(t)

    def float_value(self, t: Token) -> tuple[object, Span]:
        span = self.tok(t)
        return finite_float(str(t), span), span

    def duration_value(self, t: Token) -> tuple[object, Span]:
        span = self.tok(t)
        return A.DurationLit(duration_millis(str(t), span), span), span

    def word_value(self, t: Token) -> tuple[object, Span]:
        return A.Word(str(t)), self.tok(t)

    # ------------------------------------------------------------------ pipelines

    @v_args(meta=True, inline=True)
    def let_stmt(self, meta: Any, name: Token, pipeline: A.Pipeline) -> A.LetStmt:
        return A.LetStmt(str(name), pipeline, self.meta(meta), self.tok(name))

    @v_args(meta=True, inline=True)
    def pipeline_stmt(self, meta: Any, pipeline: A.Pipeline) -> A.PipelineStmt:
        return A.PipelineStmt(pipeline, self.meta(meta))

    @v_args(meta=True)
    def pipeline(self, meta: Any, children: list[Any]) -> A.Pipeline:
        head, is_union = children[0]
        return A.Pipeline(head, tuple(children[1:]), self.meta(meta), is_union)

    def _ref(self, t: Token) -> A.FieldRef:
        return A.FieldRef(str(t), None, self.tok(t))

    def stream_head(self, name: Token) -> tuple[tuple[A.FieldRef, ...], bool]:
        return (self._ref(name),), False

    def union_head(self, *names: Token) -> tuple[tuple[A.FieldRef, ...], bool]:
        return tuple(self._ref(n) for n in names), True

    def step(self, op: Any, hints: list[A.Setting] | None = None) -> Any:
        if hints:
            return type(op)(**{**op.__dict__, "hints": tuple(hints)})
        return op

    @v_args(meta=True, inline=True)
    def map_op(self, meta: Any, items: list[A.SelectItem]) -> A.MapStep:
        return A.MapStep(tuple(items), self.meta(meta))

    def select_items(self, *items: A.SelectItem) -> list[A.SelectItem]:
        return list(items)

    @v_args(meta=True, inline=True)
    def select_expr(self, meta: Any, expr: A.Expr, alias: Token | None) -> A.SelectItem:
        return A.SelectItem(expr, str(alias) if alias is not None else None, self.meta(meta))

    @v_args(meta=True)
    def select_star(self, meta: Any, _children: list[Any]) -> A.SelectItem:
        return A.SelectItem(None, None, self.meta(meta), star=True)

    @v_args(meta=True, inline=True)
    def filter_op(self, meta: Any, cond: A.Expr) -> A.FilterStep:
        return A.FilterStep(cond, self.meta(meta))

    @v_args(meta=True, inline=True)
    def flat_map_op(self, meta: Any, expr: A.Expr, alias: Token) -> A.FlatMapStep:
        return A.FlatMapStep(expr, str(alias), self.meta(meta))

    @v_args(meta=True)
    def key_by_op(self, meta: Any, names: list[Token]) -> A.KeyByStep:
        return A.KeyByStep(tuple(self._ref(n) for n in names), self.meta(meta))

    @v_args(meta=True)
    def window_op(self, meta: Any, children: list[Any]) -> A.WindowStep:
        spec: A.WindowSpec = children[0]
        opts = [o for o in children[1:] if o[0] != "processing"]
        if len(opts) < len(children) - 2:
            span = [o for o in children[1:] if o[0] == "processing"][1][2]
            raise FlowSyntaxError("'on processing time' is given twice", span)
        if len(opts) < len(children) - 1:
            spec = replace(spec, processing=True)
        lateness, late, late_span = self._window_opts(opts)
        return A.WindowStep(spec, lateness, late, self.meta(meta), late_span)

    def _window_opts(self, opts: list[Any]) -> tuple[int | None, str | None, Span | None]:
        lateness: int | None = None
        late: str | None = None
        late_span: Span | None = None
        for kind, value, span in opts:
            if kind == "processing":
                raise FlowSyntaxError("a window join runs on event time", span,
                                      hint="'on processing time' works on "
                                           "'window ... | aggregate'")
            if kind == "lateness":
                if lateness is not None:
                    raise FlowSyntaxError("'allowed lateness' is given twice", span)
                lateness = value
            else:
                if late is not None:
                    raise FlowSyntaxError("'late into' is given twice", span)
                late, late_span = value, span
        return lateness, late, late_span

    @v_args(meta=True, inline=True)
    def tumbling(self, meta: Any, size: Token, offset: Token | None) -> A.WindowSpec:
        return A.WindowSpec("tumbling", self._dur(size), 0,
                            self._dur(offset) if offset is not None else 0, self.meta(meta))

    @v_args(meta=True, inline=True)
    def sliding(self, meta: Any, size: Token, slide: Token, offset: Token | None) -> A.WindowSpec:
        return A.WindowSpec("sliding", self._dur(size), self._dur(slide),
                            self._dur(offset) if offset is not None else 0, self.meta(meta))

    @v_args(meta=True, inline=True)
    def cumulating(self, meta: Any, size: Token, step: Token,
                   offset: Token | None) -> A.WindowSpec:
        return A.WindowSpec("cumulative", self._dur(size), self._dur(step),
                            self._dur(offset) if offset is not None else 0, self.meta(meta))

    @v_args(meta=True, inline=True)
    def session(self, meta: Any, gap: Token) -> A.WindowSpec:
        return A.WindowSpec("session", self._dur(gap), 0, 0, self.meta(meta))

    def _dur(self, t: Token) -> int:
        return duration_millis(str(t), self.tok(t))

    @v_args(meta=True)
    def processing_time(self, meta: Any, _children: list[Any]) -> tuple[str, object, Span]:
        return "processing", True, self.meta(meta)

    @v_args(meta=True, inline=True)
    def lateness(self, meta: Any, d: Token) -> tuple[str, object, Span]:
        return "lateness", self._dur(d), self.meta(meta)

    @v_args(meta=True, inline=True)
    def late_into(self, meta: Any, name: Token) -> tuple[str, object, Span]:
        return "late", str(name), self.tok(name)

    @v_args(meta=True)
    def aggregate_op(self, meta: Any, children: list[Any]) -> A.AggregateStep:
        return A.AggregateStep(tuple(children[0]), self.meta(meta))

    @v_args(meta=True)
    def union_op(self, meta: Any, names: list[Token]) -> A.UnionStep:
        return A.UnionStep(tuple(self._ref(n) for n in names), self.meta(meta))

    @v_args(meta=True)
    def join_op(self, meta: Any, children: list[Any]) -> A.JoinStep:
        other, alias, keys, spec = children[:4]
        lateness, late, late_span = self._window_opts(children[4:])
        if late is not None:
            raise FlowSyntaxError("a window join has no late-data side output", late_span,
                                  hint="'late into' works on 'window ... | aggregate'")
        return A.JoinStep(str(other), str(alias) if alias is not None else None, tuple(keys),
                          spec, lateness, None, None, self.meta(meta), self.tok(other))

    @v_args(meta=True, inline=True)
    def regular_join_op(self, meta: Any, other: Token, alias: Token | None,
                        keys: list[A.JoinKey]) -> A.JoinStep:
        return A.JoinStep(str(other), str(alias) if alias is not None else None, tuple(keys),
                          None, None, None, None, self.meta(meta), self.tok(other),
                          kind="inner")

    @v_args(meta=True, inline=True)
    def side_join_op(self, meta: Any, side: Token, other: Token, alias: Token | None,
                     keys: list[A.JoinKey]) -> A.JoinStep:
        return A.JoinStep(str(other), str(alias) if alias is not None else None, tuple(keys),
                          None, None, None, None, self.meta(meta), self.tok(other),
                          kind=str(side).lower())

    @v_args(meta=True, inline=True)
    def interval_join_op(self, meta: Any, other: Token, alias: Token | None,
                         keys: list[A.JoinKey], lower: int, upper: int) -> A.JoinStep:
        span = self.meta(meta)
        if lower > upper:
            raise FlowSyntaxError(f"the interval's lower bound ({lower} ms) is above its upper "
                                  f"bound ({upper} ms)", span)
        return A.JoinStep(str(other), str(alias) if alias is not None else None, tuple(keys),
                          None, None, lower, upper, span, self.tok(other))

    def join_keys(self, *keys: A.JoinKey) -> list[A.JoinKey]:
        return list(keys)

    @v_args(meta=True, inline=True)
    def join_eq(self, meta: Any, left: A.FieldRef, right: A.FieldRef) -> A.JoinKey:
        return A.JoinKey(left, right, self.meta(meta))

    @v_args(meta=True, inline=True)
    def join_same(self, meta: Any, name: Token) -> A.JoinKey:
        ref = self._ref(name)
        return A.JoinKey(ref, ref, self.meta(meta))

    @v_args(meta=True, inline=True)
    def qualified_name(self, meta: Any, q: Token, name: Token) -> A.FieldRef:
        return A.FieldRef(str(name), str(q), self.meta(meta))

    def pos_duration(self, t: Token) -> int:
        return self._dur(t)

    def neg_duration(self, t: Token) -> int:
        return -self._dur(t)

    @v_args(meta=True, inline=True)
    def partition_op(self, meta: Any, kind: Token) -> A.PartitionStep:
        return A.PartitionStep(str(kind), self.meta(meta))


    @v_args(meta=True, inline=True)
    def print_op(self, meta: Any, ident: Token | None) -> A.PrintSink:
        return A.PrintSink(string_value(ident) if ident is not None else None, self.meta(meta))

    @v_args(meta=True)
    def blackhole_op(self, meta: Any, _children: list[Any]) -> A.BlackholeSink:
        return A.BlackholeSink(self.meta(meta))

    # ------------------------------------------------------------------ expressions

    def _bin(op: str) -> Any:  # noqa: N805 - a method factory used in the class body
        @v_args(meta=True, inline=True)
        def build(self: AstBuilder, meta: Any, left: A.Expr, right: A.Expr) -> A.Binary:
            return A.Binary(op, left, right, self.meta(meta))
        return build

    or_ = _bin("or")
    and_ = _bin("and")
    eq = _bin("=")
    concat = _bin("||")
    add = _bin("+")
    sub = _bin("-")
    mul = _bin("*")
    div = _bin("/")
    mod = _bin("%")

    @v_args(meta=True, inline=True)
    def compare(self, meta: Any, left: A.Expr, op: Token, right: A.Expr) -> A.Binary:
        text = {"==": "=", "<>": "!="}.get(str(op), str(op))
        return A.Binary(text, left, right, self.meta(meta))

    @v_args(meta=True, inline=True)
    def not_(self, meta: Any, operand: A.Expr) -> A.Unary:
        return A.Unary("not", operand, self.meta(meta))

    @v_args(meta=True, inline=True)
    def neg(self, meta: Any, operand: A.Expr) -> A.Expr:
        span = self.meta(meta)
        # Fold -literal so that -9223372036854775808 and `values (-1)` are plain constants.
        if isinstance(operand, A.Literal) and operand.type in (INT, DOUBLE):
            value = -operand.value  # type: ignore[operator]
            return A.Literal(value, operand.type, span)
        if isinstance(operand, A.DurationLit):
            return A.DurationLit(-operand.millis, span)
        return A.Unary("neg", operand, span)

    @v_args(meta=True, inline=True)
    def is_null(self, meta: Any, operand: A.Expr) -> A.IsNull:
        return A.IsNull(operand, False, self.meta(meta))

    @v_args(meta=True, inline=True)
    def is_not_null(self, meta: Any, operand: A.Expr) -> A.IsNull:
        return A.IsNull(operand, True, self.meta(meta))

    @v_args(meta=True)
    def in_list(self, meta: Any, c: list[A.Expr]) -> A.InList:
        return A.InList(c[0], tuple(c[1:]), False, self.meta(meta))

    @v_args(meta=True)
    def not_in_list(self, meta: Any, c: list[A.Expr]) -> A.InList:
        return A.InList(c[0], tuple(c[1:]), True, self.meta(meta))

    @v_args(meta=True, inline=True)
    def between(self, meta: Any, e: A.Expr, lo: A.Expr, hi: A.Expr) -> A.Between:
        return A.Between(e, lo, hi, False, self.meta(meta))

    @v_args(meta=True, inline=True)
    def not_between(self, meta: Any, e: A.Expr, lo: A.Expr, hi: A.Expr) -> A.Between:
        return A.Between(e, lo, hi, True, self.meta(meta))

    @v_args(meta=True, inline=True)
    def like(self, meta: Any, e: A.Expr, pattern: A.Expr) -> A.Like:
        return A.Like(e, pattern, False, self.meta(meta))

    @v_args(meta=True, inline=True)
    def not_like(self, meta: Any, e: A.Expr, pattern: A.Expr) -> A.Like:
        return A.Like(e, pattern, True, self.meta(meta))

    def int_lit(self, t: Token) -> A.Literal:
        return A.Literal(self._int(t), INT, self.tok(t))

    def float_lit(self, t: Token) -> A.Literal:
        span = self.tok(t)
        return A.Literal(finite_float(str(t), span), DOUBLE, span)

    def string_lit(self, t: Token) -> A.Literal:
        return A.Literal(string_value(t), STRING, self.tok(t))

    def duration_lit(self, t: Token) -> A.DurationLit:
        span = self.tok(t)
        return A.DurationLit(duration_millis(str(t), span), span)

    @v_args(meta=True)
    def true_lit(self, meta: Any, _c: list[Any]) -> A.Literal:
        return A.Literal(True, BOOL, self.meta(meta))

    @v_args(meta=True)
    def false_lit(self, meta: Any, _c: list[Any]) -> A.Literal:
        return A.Literal(False, BOOL, self.meta(meta))

    @v_args(meta=True)
    def null_lit(self, meta: Any, _c: list[Any]) -> A.Literal:
        return A.Literal(None, NULL, self.meta(meta))

    @v_args(meta=True, inline=True)
    def typed_lit(self, meta: Any, prefix: Token, text: Token) -> A.Literal:
        span = self.meta(meta)
        if str(prefix).lower() != "timestamp":
            hint = "is a ',' or an operator missing? (a timestamp literal is written " \
                "timestamp '2024-05-01 10:00:00')"
            flow_type = type_meant(str(prefix))
            if flow_type is not None:  # `bigint '5'`: SQL's typed literal
                hint = f"did you mean cast({text} as {flow_type})?"
            raise FlowSyntaxError(f"unexpected string after '{prefix}'", self.tok(text),
                                  hint=hint)
        millis = parse_timestamp(string_value(text))
        if millis is None:
            raise FlowSyntaxError(f"'{string_value(text)}' is not a timestamp", self.tok(text),
                                  hint="write an ISO-8601 date or time, such as "
                                  "'2024-05-01' or '2024-05-01 10:00:00.250' (UTC)")
        return A.Literal(millis, TIMESTAMP, span)

    def field_ref(self, t: Token) -> A.FieldRef:
        return self._ref(t)

    @v_args(meta=True, inline=True)
    def qualified_ref(self, meta: Any, q: Token, name: Token) -> A.FieldRef:
        return A.FieldRef(str(name), str(q), self.meta(meta))

    @v_args(meta=True)
    def call(self, meta: Any, c: list[Any]) -> A.Call:
        return A.Call(str(c[0]), tuple(c[1:]), self.meta(meta), self.tok(c[0]))

    @v_args(meta=True)
    def call_empty(self, meta: Any, c: list[Any]) -> A.Call:
        return A.Call(str(c[0]), (), self.meta(meta), self.tok(c[0]))

    @v_args(meta=True)
    def call_star(self, meta: Any, c: list[Any]) -> A.Call:
        return A.Call(str(c[0]), (), self.meta(meta), self.tok(c[0]), star=True)

    @v_args(meta=True)
    def call_distinct(self, meta: Any, c: list[Any]) -> A.Call:
        return A.Call(str(c[0]), (c[1],), self.meta(meta), self.tok(c[0]), distinct=True)

    @v_args(meta=True, inline=True)
    def cast(self, meta: Any, e: A.Expr, target: Type) -> A.Cast:
        return A.Cast(e, target, self.meta(meta))

    @v_args(meta=True)
    def case_(self, meta: Any, c: list[Any]) -> A.Case:
        whens = tuple(x for x in c if isinstance(x, A.When))
        default = c[-1] if not isinstance(c[-1], A.When) else None
        return A.Case(None, whens, default, self.meta(meta))

    @v_args(meta=True)
    def case_operand(self, meta: Any, c: list[Any]) -> A.Case:
        whens = tuple(x for x in c[1:] if isinstance(x, A.When))
        default = c[-1] if not isinstance(c[-1], A.When) else None
        return A.Case(c[0], whens, default, self.meta(meta))

    @v_args(meta=True, inline=True)
    def when_clause(self, meta: Any, cond: A.Expr, result: A.Expr) -> A.When:
        return A.When(cond, result, self.meta(meta))

    @v_args(meta=True)
    def array_lit(self, meta: Any, c: list[Any]) -> A.ArrayLit:
        return A.ArrayLit(tuple(x for x in c if x is not None), self.meta(meta))
