"""Type-check .flow expressions and compile them to Python source (and callables).

Every expression becomes Python source over a record variable (``r[3]`` for a field) with SQL
null semantics: an operator on a null gives null, ``and``/``or`` are three-valued, and a
filter keeps a record only when its condition is true. Sub-results are bound once to
walrus temporaries (``_t1``) so nothing is evaluated twice. What an expression sees and
compiles to (``Scope``, ``Column``, ``Udf``, ``Typed``) is ``scope.py``.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from typing import Any

from flowc import decimals
from flowc.dates import whole_days
from flowc.errors import FlowNameError, FlowSyntaxError, FlowTypeError, Span, did_you_mean
from flowc.operators import CodeFn
from flowc.parser import ast as A
from flowc.parser import vectorize as V
from flowc.parser.decimal_types import udf_code
from flowc.parser.functions import AGGREGATES, PUBLIC_FUNCTIONS, lookup
from flowc.parser.optypes import CASTS, arith_type, conversion_hint, flavor_cast
from flowc.parser.runtime import HELPERS
from flowc.parser.scope import BrokenName, Scope, Typed, Udf, const_ids, make_code_fn
from flowc.parser.scope import Column as Column  # re-exported for callers
from flowc.parser.scope import Qualifiers as Qualifiers
from flowc.parser.scope import row_columns as row_columns
from flowc.types import (
    BOOL,
    DOUBLE,
    DURATION,
    INT,
    NULL,
    STRING,
    TIMESTAMP,
    Type,
    array_of,
    assignable,
    common_type,
    decimal_of,
    type_meant,
)

# Python's own parser rejects very deep nesting (about 200 parentheses); stop well before it
# with a clear message. Only true nesting counts: a chain `a + b + c ...` is one level.
MAX_DEPTH = 48
# Chains of more binary operators than this compile to flat Python code (see _Binary); shorter
# ones keep the nested form, which is faster and is what plan goldens show.
FLAT_CHAIN = 8
def _lit(value: Any, type_: Type) -> Typed:
    return Typed(type_, repr(value), nonnull=value is not None, const=True, value=value,
                 vec=V.literal(value, type_))


class ExprCompiler:
    """Compiles the expressions of one operator; ``env`` collects the names they use."""

    def __init__(self, scope: Scope, owner: object | None = None) -> None:
        """``owner``: the execution environment of the job the code runs in (constant names
        are unique per job); without one, the expressions are a namespace of their own."""
        self.scope = scope
        self._const_ids = itertools.count(1) if owner is None else const_ids(owner)
        self.env: dict[str, Any] = {}
        self._temps = itertools.count(1)

    # ------------------------------------------------------------------ public

    def compile(self, e: A.Expr, depth: int = 0) -> Typed:
        if depth > MAX_DEPTH:
            # "about": a short operator chain around a nested part spends one level per
            # operator (see _Binary), so the count is of Python's nesting, not the user's.
            raise FlowSyntaxError(f"expression is nested too deeply to compile (the limit is "
                                  f"about {MAX_DEPTH} levels of parentheses, function calls, "
                                  "'not', '-' or 'case' inside one another)", e.span,
                                  hint="compute inner parts in an earlier 'map' step")
        method = getattr(self, "_" + type(e).__name__)
        return method(e, depth + 1)

    def expect(self, e: A.Expr, want: Type, what: str) -> Typed:
        t = self.compile(e)
        if not assignable(t.type, want):
            raise FlowTypeError(f"{what} must be {want}, but this is {t.type}", e.span)
        return t

    def code_fn(self, source: str, params: tuple[str, ...], span: Span,
                vector: Any = None) -> CodeFn:
        return make_code_fn(source, params, self.env, span, vector)

    # ------------------------------------------------------------------ helpers

    def temp(self) -> str:
        return f"_t{next(self._temps)}"

    def helper(self, name: str) -> str:
        self.env["_rt_" + name] = HELPERS[name]
        return "_rt_" + name

    def const(self, value: Any) -> str:
        name = f"_k{next(self._const_ids)}"
        self.env[name] = value
        return name

    def long_op(self, result: Type, code: str) -> str:
        """``code`` (an int-valued operation) with Java's long overflow: it wraps around."""
        if result not in (INT, TIMESTAMP, DURATION):
            return code
        t = self.temp()
        return (f"({t} if -0x8000000000000000 <= ({t} := {code}) <= 0x7fffffffffffffff "
                f"else {self.helper('wrap64')}({t}))")

    def null_safe(self, args: Sequence[Typed], body: Callable[[list[str]], str]) -> str:
        """``body`` over the arguments, or None when any nullable argument is null."""
        names: list[str] = []
        checks: list[str] = []
        for a in args:
            if a.nonnull:
                names.append(a.code)
                continue
            t = self.temp()
            checks.append(f"({t} := {a.code}) is None")
            names.append(t)
        if not checks:
            return f"({body(names)})"
        return f"(None if {' or '.join(checks)} else {body(names)})"

    # ------------------------------------------------------------------ leaves

    def _Literal(self, e: A.Literal, depth: int) -> Typed:
        return _lit(e.value, e.type)

    def _DurationLit(self, e: A.DurationLit, depth: int) -> Typed:
        return Typed(DURATION, repr(e.millis), nonnull=True, const=True, value=e.millis,
                     vec=V.literal(e.millis, DURATION))

    def _FieldRef(self, e: A.FieldRef, depth: int) -> Typed:
        name = e.name if e.qualifier is None else self._qualified(e)
        col = self.scope.lookup(name)
        if col is None:
            names = [c.name for c in self.scope.columns]
            hint = did_you_mean(e.name, names)
            fields = ", ".join(names) if len(names) <= 12 else ", ".join(names[:12]) + ", ..."
            raise FlowNameError(f"unknown field '{name}'{self._where()}", e.span,
                                hint=hint or (f"the fields here are: {fields}" if names else None))
        return Typed(col.type, col.code, vec=V.column(col.code, col.type))

    def _where(self) -> str:
        return f" {self.scope.where}" if self.scope.where else ""

    def _qualified(self, e: A.FieldRef) -> str:
        """The column ``q.x`` names, or a positioned error; a qualifier is never dropped."""
        q = e.qualifier
        assert q is not None
        known = self.scope.qualifiers
        if q not in known:
            hint = did_you_mean(q, known)
            if hint is None and known:
                hint = f"the stream{'s' if len(known) > 1 else ''} here: " + \
                    ", ".join(f"'{k}'" for k in known)
            if hint is None and self.scope.lookup(e.name) is not None:
                hint = f"write '{e.name}' without a qualifier"
            notes = [] if known else ["after a step that reshapes the stream (map, flat_map, "
                                      "aggregate, union) its fields have no qualifier"]
            raise FlowNameError(f"unknown qualifier '{q}' in '{q}.{e.name}'{self._where()}",
                                e.span, hint=hint, notes=notes)
        mapping = known[q]
        if mapping is None:
            raise FlowNameError(f"'{q}' names both sides of the join, so '{q}.{e.name}' is "
                                "ambiguous", e.span,
                                hint="name the join's right side with 'as'")
        column = mapping.get(e.name)
        if column is None:
            raise FlowNameError(f"'{q}' has no field '{e.name}'{self._where()}", e.span,
                                hint=did_you_mean(e.name, mapping))
        return column

    def _ArrayLit(self, e: A.ArrayLit, depth: int) -> Typed:
        items = [self.compile(i, depth) for i in e.items]
        elem: Type = NULL
        for item, node in zip(items, e.items):
            c = common_type(elem, item.type)
            if c is None:
                raise FlowTypeError(f"array elements must have one type: {elem} and {item.type}",
                                    node.span)
            elem = c
        code = "[" + ", ".join(i.code for i in items) + "]"
        return Typed(array_of(elem), code, nonnull=True)

    # ------------------------------------------------------------------ operators

    def _Unary(self, e: A.Unary, depth: int) -> Typed:
        x = self.compile(e.operand, depth)
        if e.op == "not":
            self._want_bool(x, e.operand, "the operand of 'not'")
            return Typed(BOOL, self.null_safe([x], lambda a: f"not {a[0]}"),
                         vec=V.call("not", BOOL, x))
        if not (x.type.is_numeric or x.type in (DURATION, NULL)):
            raise FlowTypeError(f"cannot negate a {x.type}", e.span)
        result = x.type if not x.type.is_null else INT
        if result.is_decimal:  # exact: Decimal's own negation rounds to 28 digits
            return Typed(result, self.null_safe([x], lambda a: f"{self.helper('dec_negate')}"
                                                               f"({a[0]})"),
                         x.nonnull, vec=V.call("neg", result, x))
        return Typed(result, self.null_safe([x], lambda a: self.long_op(result, f"-{a[0]}")),
                     x.nonnull, vec=V.call("neg", result, x))

    def _want_bool(self, t: Typed, node: A.Expr, what: str) -> None:
        if t.type not in (BOOL, NULL):
            raise FlowTypeError(f"{what} must be bool, but this is {t.type}", node.span)

    def _Binary(self, e: A.Binary, depth: int) -> Typed:
        # `a + b + c + ...` is a left-deep tree, but flat for the user: its left spine is
        # walked in a loop, so only the right operands (and the leftmost one) nest deeper.
        spine: list[A.Binary] = []
        node: A.Expr = e
        while isinstance(node, A.Binary):
            spine.append(node)
            node = node.left
        flat = len(spine) > FLAT_CHAIN
        # Depth is spent as Python nesting: in the nested form an operand's code sits
        # inside every later step's code; in the flat form inside one step and the tuple.
        extra = 1 if flat else len(spine) - 1
        acc = self.compile(node, depth + extra)
        steps: list[str] = []
        for b in reversed(spine):
            acc = self._binary(b, acc, self.compile(b.right, depth + extra))
            extra = 1 if flat else max(0, extra - 1)
            if flat:
                # Each step's result is bound to a temporary in a tuple evaluated left to
                # right, so the Python code stays flat (Python's own parser has nesting
                # limits) and evaluates exactly what the nested form would, in its order.
                t = self.temp()
                steps.append(f"({t} := {acc.code})")
                acc = Typed(acc.type, t, acc.nonnull, vec=acc.vec)
        if flat:
            return Typed(acc.type, f"({', '.join(steps)})[-1]", acc.nonnull)
        return acc

    def _binary(self, e: A.Binary, left: Typed, right: Typed) -> Typed:
        if e.op in ("and", "or"):
            return self._logic(e, left, right)
        if e.op in ("=", "!=", "<", "<=", ">", ">="):
            return self._compare(e, left, right)
        if e.op == "||":
            for t, node in ((left, e.left), (right, e.right)):
                if t.type not in (STRING, NULL):
                    raise FlowTypeError(f"'||' joins strings, but this is {t.type}", node.span,
                                        hint="convert it with cast(... as string)")
            return Typed(STRING, self.null_safe([left, right], lambda a: f"{a[0]} + {a[1]}"),
                         left.nonnull and right.nonnull, vec=V.call("concat", STRING, left, right))
        return self._arith(e, left, right)

    def _logic(self, e: A.Binary, left: Typed, right: Typed) -> Typed:
        self._want_bool(left, e.left, f"the left side of '{e.op}'")
        self._want_bool(right, e.right, f"the right side of '{e.op}'")
        if left.nonnull and right.nonnull:
            return Typed(BOOL, f"({left.code} {e.op} {right.code})", nonnull=True,
                         vec=V.call(e.op, BOOL, left, right))
        a, b = self.temp(), self.temp()
        # Three-valued logic, short-circuiting like Python when the left side decides.
        if e.op == "and":
            code = (f"(False if ({a} := {left.code}) is False else "
                    f"(False if ({b} := {right.code}) is False else "
                    f"(None if {a} is None or {b} is None else True)))")
        else:
            code = (f"(True if ({a} := {left.code}) is True else "
                    f"(True if ({b} := {right.code}) is True else "
                    f"(None if {a} is None or {b} is None else False)))")
        return Typed(BOOL, code, vec=V.call(e.op, BOOL, left, right))

    def _compare(self, e: A.Binary, left: Typed, right: Typed) -> Typed:
        left, right = self._exact_literal(left, right.type), self._exact_literal(right, left.type)
        c = common_type(left.type, right.type)
        if c is None:
            raise FlowTypeError(f"cannot compare {left.type} with {right.type} using '{e.op}'",
                                e.span, hint=conversion_hint(left.type, right.type))
        if c.is_array and e.op not in ("=", "!="):
            raise FlowTypeError(f"arrays can only be compared with '=' or '!=', not '{e.op}'",
                                e.span)
        if c == BOOL and e.op not in ("=", "!="):
            raise FlowTypeError(f"bools can only be compared with '=' or '!=', not '{e.op}'",
                                e.span)
        op = "==" if e.op == "=" else e.op
        return Typed(BOOL, self.null_safe([left, right], lambda a: f"{a[0]} {op} {a[1]}"),
                     vec=V.compare(e.op, left, right))

    def _exact_literal(self, x: Typed, other: Type) -> Typed:
        """A number literal beside a DECIMAL as the DECIMAL it is in Flink SQL (``1.10`` is
        DECIMAL(3, 2), ``3`` an INT, DECIMAL(10, 0)); flowc's literals are DOUBLE / BIGINT
        otherwise."""
        exact = decimals.literal(x.value) if other.is_decimal and x.const else None
        if exact is None or x.type not in (DOUBLE, INT):
            return x
        t = decimal_of(*exact[1:])
        return Typed(t, self.const(exact[0]), nonnull=True, const=True, value=exact[0],
                     vec=V.literal(exact[0], t))

    def _arith(self, e: A.Binary, left: Typed, right: Typed) -> Typed:
        left, right = self._exact_literal(left, right.type), self._exact_literal(right, left.type)
        result = arith_type(e.op, left.type, right.type)
        if result is None:
            hint = "use '||' or concat() to join strings" if STRING in (left.type, right.type) \
                and e.op == "+" else None
            raise FlowTypeError(f"cannot apply '{e.op}' to {left.type} and {right.type}", e.span,
                                hint=hint)
        if result.flavor == "date" and DURATION in (left.type, right.type):
            left, right = (self._whole_days(x) for x in (left, right))
        if result.is_decimal:  # exact, rounded to the result's scale (flowc.decimals)
            return Typed(result, f"{self.helper('dec_arith')}({e.op!r}, {left.code}, "
                                 f"{right.code}, {result.precision}, {result.scale})",
                         vec=V.arith(e.op, result, left, right))
        if e.op in ("/", "%"):
            fn = self.helper("div" if e.op == "/" else "mod")
            return Typed(result, f"{fn}({left.code}, {right.code})",
                         vec=V.arith(e.op, result, left, right))
        return Typed(result, self.null_safe(
            [left, right], lambda a: self.long_op(result, f"{a[0]} {e.op} {a[1]}")),
            left.nonnull and right.nonnull, vec=V.arith(e.op, result, left, right))

    def _whole_days(self, x: Typed) -> Typed:
        """A DATE's interval operand as Flink adds it: its whole days (flowc.dates), so a
        DATE never carries a time of day."""
        if x.type != DURATION:
            return x
        if x.const:
            days = whole_days(x.value)
            return Typed(DURATION, repr(days), x.nonnull, const=True, value=days,
                         vec=V.literal(days, DURATION))
        return Typed(DURATION, f"{self.helper('whole_days')}({x.code})", x.nonnull,
                     vec=V.call("whole_days", DURATION, x))

    # ------------------------------------------------------------------ predicates

    def _IsNull(self, e: A.IsNull, depth: int) -> Typed:
        x = self.compile(e.operand, depth)
        if x.const:  # `1 is not None` would be a SyntaxWarning in the generated code
            return _lit((x.value is None) != e.negated, BOOL)
        return Typed(BOOL, f"({x.code} is {'not ' if e.negated else ''}None)", nonnull=True,
                     vec=V.call("is_not_null" if e.negated else "is_null", BOOL, x))

    def _InList(self, e: A.InList, depth: int) -> Typed:
        x = self.compile(e.operand, depth)
        items = [self.compile(i, depth) for i in e.items]
        for item, node in zip(items, e.items):
            if common_type(x.type, item.type) is None:
                raise FlowTypeError(f"cannot look for a {x.type} among {item.type} values",
                                    node.span)
        vec = None
        if all(i.const and i.value is not None for i in items):
            values = self.const(frozenset(i.value for i in items))
            code = self.null_safe([x], lambda a: f"{a[0]} in {values}")
            vec = V.in_list(x, [i.value for i in items])
        else:
            code = f"{self.helper('in_list')}({x.code}, ({', '.join(i.code for i in items)},))"
        if e.negated:
            code = self.null_safe([Typed(BOOL, code)], lambda a: f"not {a[0]}")
            vec = V.call("not", BOOL, Typed(BOOL, "", vec=vec))
        return Typed(BOOL, code, vec=vec)

    def _Between(self, e: A.Between, depth: int) -> Typed:
        # x between lo and hi == x >= lo and x <= hi (x is evaluated twice; it has no effects).
        ge = A.Binary(">=", e.operand, e.low, e.span)
        le = A.Binary("<=", e.operand, e.high, e.span)
        both: A.Expr = A.Binary("and", ge, le, e.span)
        if e.negated:
            both = A.Unary("not", both, e.span)
        return self.compile(both, depth)

    def _Like(self, e: A.Like, depth: int) -> Typed:
        x = self.compile(e.operand, depth)
        p = self.compile(e.pattern, depth)
        for t, node in ((x, e.operand), (p, e.pattern)):
            if t.type not in (STRING, NULL):
                raise FlowTypeError(f"'like' works on strings, but this is {t.type}", node.span)
        vec = None
        if p.const and p.value is not None:
            rx = self.const(HELPERS["like_regex"](p.value))
            code = self.null_safe([x], lambda a: f"{rx}.fullmatch({a[0]}) is not None")
            vec = V.like(x, p.value)
        else:
            code = f"{self.helper('like')}({x.code}, {p.code})"
        if e.negated:
            code = self.null_safe([Typed(BOOL, code)], lambda a: f"not {a[0]}")
            vec = V.call("not", BOOL, Typed(BOOL, "", vec=vec))
        return Typed(BOOL, code, vec=vec)

    def _Case(self, e: A.Case, depth: int) -> Typed:
        conds: list[Typed] = []
        results: list[Typed] = []
        flat = len(e.whens) > FLAT_CHAIN
        for i, w in enumerate(e.whens):
            # Nested form: branch i sits inside i conditionals (depth is Python nesting).
            at = depth + (1 if flat else i)
            cond_node: A.Expr = w.condition
            if e.operand is not None:
                cond_node = A.Binary("=", e.operand, w.condition, w.condition.span)
            c = self.compile(cond_node, at)
            self._want_bool(c, cond_node, "a 'when' condition")
            conds.append(c)
            results.append(self.compile(w.result, at))
        at = depth + (1 if flat else len(e.whens))
        default = self.compile(e.default, at) if e.default is not None else _lit(None, NULL)
        result_type = default.type
        for r, w in zip(results, e.whens):
            c = common_type(result_type, r.type)
            if c is None:
                raise FlowTypeError(f"'case' branches have different types: {result_type} "
                                    f"and {r.type}", w.result.span)
            result_type = c
        if flat:
            # Flat: the first branch whose condition is true binds the result and ends the
            # 'or' (a false or null condition goes on), so nothing nests however many whens.
            t = self.temp()
            tests = [f"({c.code} and (({t} := {r.code}), True)[1])"
                     for c, r in zip(conds, results)]
            code = f"({' or '.join(tests)} or (({t} := {default.code}), True)[1], {t})[-1]"
        else:
            code = default.code
            for c, r in zip(reversed(conds), reversed(results)):
                code = f"({r.code} if {c.code} else {code})"
        if result_type.is_decimal:  # every branch at the common type's scale, as Flink's
            code = f"{self.helper('cast_decimal')}({code}, {result_type.precision}, " \
                   f"{result_type.scale})"
        return Typed(result_type, code, vec=V.case(result_type, conds, results, default))

    def _Cast(self, e: A.Cast, depth: int) -> Typed:
        x = self.compile(e.operand, depth)
        src, dst = x.type, e.target
        flavored = flavor_cast(src, dst)
        if flavored is not None:
            return Typed(dst, f"{self.helper(flavored)}({x.code})")
        if src == dst or src.is_null:
            return Typed(dst, x.code, x.nonnull, vec=V.cast(x, dst, ""))
        if dst.flavor == "date":  # Flink casts only a timestamp or a string to DATE
            raise FlowTypeError(f"Cast function cannot convert value of type {src.sql_name} "
                                "to type DATE", e.span,
                                hint="make it a timestamp first: CAST(TO_TIMESTAMP_LTZ(x, 3) "
                                     "AS DATE)" if src.kind == "int" else None)
        helper = CASTS.get((src.kind, dst.kind))
        if helper is None:
            raise FlowTypeError(f"cannot cast {src} to {dst}", e.span)
        if helper == "":
            return Typed(dst, x.code, x.nonnull, vec=V.cast(x, dst, ""))
        if dst.is_decimal:
            return Typed(dst, f"{self.helper(helper)}({x.code}, {dst.precision}, {dst.scale})",
                         vec=V.cast(x, dst, helper))
        return Typed(dst, f"{self.helper(helper)}({x.code})", vec=V.cast(x, dst, helper))

    # ------------------------------------------------------------------ calls

    def _Call(self, e: A.Call, depth: int) -> Typed:
        name = e.name
        if name in AGGREGATES:
            raise FlowTypeError(f"'{name}' is an aggregate function; it can only be used in "
                                "'aggregate'", e.name_span,
                                hint="for example: key by ... | aggregate "
                                     f"{name}({'*' if name == 'count' else 'x'}) as n")
        if e.star or e.distinct:
            raise FlowSyntaxError(f"'{'*' if e.star else 'distinct'}' is only allowed in "
                                  "count(...) inside 'aggregate'", e.span)
        udf = None if e.internal else self.scope.udfs.get(name)
        if udf is not None:
            return self._udf_call(e, udf, depth)
        fn = lookup(name, e.internal)
        if fn is None and name in self.scope.broken_functions:
            raise BrokenName(name)
        if fn is None or (fn.datagen_only and self.scope.index_code is None):
            pool = [n for n, f in PUBLIC_FUNCTIONS.items()
                    if not f.datagen_only or self.scope.index_code is not None]
            hint = did_you_mean(name, pool + list(self.scope.udfs))
            if fn is not None:
                hint = f"'{name}' is only available in a datagen source's generators"
            elif type_meant(name) not in (None, "array") and len(e.args) == 1:
                arg = e.args[0].span.written() or "..."
                hint = f"did you mean cast({arg} as {type_meant(name)})?"
            raise FlowNameError(f"unknown function '{name}'", e.name_span,
                                hint=hint or "see docs/language.md for the function library; "
                                "Python functions are imported with 'import udf'")
        n = len(e.args)
        if n < fn.min_args or (fn.max_args is not None and n > fn.max_args):
            raise FlowTypeError(f"{name}() takes {_arity(fn.min_args, fn.max_args)}, "
                                f"got {n}", e.span, hint=f"{fn.signature}")
        # A short coalesce nests argument i inside i conditionals (see _call_code).
        nests = name == "coalesce" and n <= FLAT_CHAIN
        args = [self.compile(a, depth + (i if nests else 0)) for i, a in enumerate(e.args)]
        if name in _SQL_ARITH and any(a.type.is_decimal for a in args):  # SQL's / and %
            return self._arith(A.Binary(_SQL_ARITH[name], e.args[0], e.args[1], e.span), *args)
        result = fn.infer([a.type for a in args])
        if isinstance(result, str):
            raise FlowTypeError(f"{name}(): {result}", e.span, hint=fn.signature)
        code = self._call_code(fn.name, fn.template, fn.helper, args, e)
        if result.is_decimal and name in ("coalesce", "if", "nullif"):  # the common scale
            code = f"{self.helper('cast_decimal')}({code}, {result.precision}, {result.scale})"
        return Typed(result, code, nonnull=name == "coalesce" and any(a.nonnull for a in args),
                     vec=V.function(fn.name, result, args))

    def _call_code(self, name: str, template: str | None, helper: str | None,
                   args: list[Typed], e: A.Call) -> str:
        if name == "coalesce" and len(args) > FLAT_CHAIN:
            # Flat: stop at the first non-null argument; the temporary then holds it (or the
            # last argument's null).
            t = self.temp()
            tests = " or ".join(f"({t} := {a.code}) is not None" for a in args)
            return f"({tests}, {t})[-1]"
        if name == "coalesce":
            code = "None"
            for a in reversed(args):
                t = self.temp()
                code = f"({t} if ({t} := {a.code}) is not None else {code})"
            return code
        if name == "if":
            return f"({args[1].code} if {args[0].code} else {args[2].code})"
        if name == "date_trunc" and args[0].const and args[0].value not in (
                "year", "month", "day", "hour", "minute", "second"):
            raise FlowTypeError(f"date_trunc cannot truncate to '{args[0].value}'", e.args[0].span,
                                hint="use 'year', 'month', 'day', 'hour', 'minute' or 'second'")
        if template is not None:
            return self.null_safe(args, lambda a: template.format(*a))
        assert helper is not None
        codes = [a.code for a in args]
        if self.scope.index_code is not None and name.startswith("random_"):
            # The call site (its position in the script) salts the generator: the same
            # script gives the same data however many scripts the process compiled before.
            codes = [self.scope.index_code, str(e.span.line * 100_003 + e.span.column)] + codes
        return f"{self.helper(helper)}({', '.join(codes)})"

    def _udf_call(self, e: A.Call, udf: Udf, depth: int) -> Typed:
        if len(e.args) != len(udf.params):
            raise FlowTypeError(f"{udf.name}() takes {_arity(*[len(udf.params)] * 2)}, got "
                                f"{len(e.args)}", e.span, hint=_udf_signature(udf))
        codes = []
        for i, (node, want) in enumerate(zip(e.args, udf.params)):
            t = self.compile(node, depth)
            if not assignable(t.type, want):
                raise FlowTypeError(f"argument {i + 1} of {udf.name}() must be {want}, but "
                                    f"this is {t.type}", node.span, hint=_udf_signature(udf))
            codes.append(t.code)
        self.env[udf.env_name] = udf.fn
        return Typed(udf.returns, udf_code(udf.env_name, codes, udf.returns, self.helper))


_SQL_ARITH = {"_sql_div": "/", "_sql_mod": "%"}


def _udf_signature(udf: Udf) -> str:
    params = ", ".join(str(p) for p in udf.params)
    return f"declared as {udf.name}({params}) -> {udf.returns} (line {udf.span.line})"


def _arity(lo: int, hi: int | None) -> str:
    if hi == lo:
        return f"{lo} argument{'s' if lo != 1 else ''}"
    if hi is None:
        return f"at least {lo} argument{'s' if lo != 1 else ''}"
    return f"{lo} to {hi} arguments"
