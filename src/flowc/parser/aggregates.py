"""``aggregate count(*), sum(x), ...``: type-checking and the run-time aggregate functions.

One accumulator slot per aggregate; every aggregate ignores nulls like SQL (``count(*)``
counts rows). The same accumulators serve windowed aggregation (a Flink AggregateFunction,
``merge`` used by session windows) and rolling aggregation over an insert-only input (a
keyed reduce over ``(key..., state)`` records, flowc.parser.changes).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from itertools import islice
from typing import Any

from flowc import decimals
from flowc.api.functions import AggregateFunction, ProcessJoinFunction, ProcessWindowFunction
from flowc.decimals import average, plus, sum_result
from flowc.errors import (
    FlowcError,
    FlowNameError,
    FlowSyntaxError,
    FlowTypeError,
    MultipleErrors,
    did_you_mean,
)
from flowc.operators import CodeFn
from flowc.parser import ast as A
from flowc.parser.exprs import ExprCompiler
from flowc.parser.functions import AGGREGATES, lookup
from flowc.parser.runtime import wrap64
from flowc.types import DOUBLE, INT, Type, decimal_of
from flowc.vector import VAggregate, VJoinRows, VWindowRow


@dataclass(frozen=True)
class AggSpec:
    """One aggregate: ``kind`` (count, count_star, count_distinct, sum, ...) over ``arg``."""

    kind: str
    arg: CodeFn | None
    name: str
    type: Type
    # min / max over an updating stream ignore retracted rows (Flink's MAX over a column
    # that only grows; set by the SQL translator through an internal call)
    monotone: bool = False


def _default_name(call: A.Call) -> str | None:
    if call.star:
        return call.name
    if len(call.args) == 1 and isinstance(call.args[0], A.FieldRef):
        prefix = f"{call.name}_distinct" if call.distinct else call.name
        return f"{prefix}_{call.args[0].name}"
    return None


def compile_aggregates(items: tuple[A.SelectItem, ...], compiler: ExprCompiler,
                       key_names: tuple[str, ...]) -> list[AggSpec]:
    specs: list[AggSpec] = []
    # The items are independent: each bad one is reported, not just the first.
    errors: list[FlowcError] = []
    for item in items:
        try:
            specs.append(_item(item, compiler, key_names))
        except FlowcError as err:
            errors.append(err)
    if errors:
        raise errors[0] if len(errors) == 1 else MultipleErrors(errors)
    return specs


def _item(item: A.SelectItem, compiler: ExprCompiler, key_names: tuple[str, ...]) -> AggSpec:
    e = item.expr
    if isinstance(e, A.Call) and e.name not in AGGREGATES \
            and lookup(e.name, e.internal) is None \
            and e.name not in compiler.scope.udfs \
            and e.name not in compiler.scope.broken_functions:
        raise FlowNameError(f"unknown aggregate function '{e.name}'", e.name_span,
                            hint=did_you_mean(e.name, AGGREGATES) or "aggregates are "
                            + ", ".join(f"{a}(...)" for a in AGGREGATES))
    if item.star or not isinstance(e, A.Call) or e.name not in AGGREGATES:
        hint = None
        if isinstance(e, A.FieldRef) and e.name in key_names:
            hint = f"'{e.name}' is a key field: it is in the output already"
        raise FlowSyntaxError("each 'aggregate' item must be an aggregate function: "
                              + ", ".join(f"{a}(...)" for a in AGGREGATES), item.span,
                              hint=hint)
    name = item.alias or _default_name(e)
    if name is None:
        raise FlowSyntaxError("give this aggregate a name: add 'as <name>'", item.span)
    return _one(e, name, compiler)


def _one(e: A.Call, name: str, compiler: ExprCompiler) -> AggSpec:
    if e.star:
        if e.name != "count":
            raise FlowSyntaxError(f"only count accepts '*', not {e.name}", e.span)
        return AggSpec("count_star", None, name, INT)
    if len(e.args) != 1:
        raise FlowTypeError(f"{e.name}() takes one argument, got {len(e.args)}", e.span)
    if e.distinct and e.name != "count":
        raise FlowSyntaxError(f"'distinct' is only supported in count(distinct ...), not in "
                              f"{e.name}", e.span)
    typed = compiler.compile(e.args[0])
    t = typed.type
    arg = compiler.code_fn(typed.code, ("r",), e.span, typed.vec)
    if e.name == "count":
        return AggSpec("count_distinct" if e.distinct else "count", arg, name, INT)
    if t.is_null:
        raise FlowTypeError(f"{e.name}(null) has no type", e.args[0].span)
    if e.name in ("sum", "avg") and not t.is_numeric:
        raise FlowTypeError(f"{e.name}() needs a number, but this is {t}", e.args[0].span)
    if e.name in ("min", "max") and t.kind not in ("int", "double", "decimal", "string",
                                                   "timestamp"):
        raise FlowTypeError(f"{e.name}() needs a number, string or timestamp, but this is {t}",
                            e.args[0].span)
    if t.kind == "duration":
        raise FlowTypeError(f"{e.name}() cannot aggregate a duration", e.args[0].span)
    return AggSpec(e.name, arg, name, _result_type(e.name, t),
                   monotone=e.internal and e.name in ("min", "max"))


def _result_type(kind: str, t: Type) -> Type:
    """SUM of DECIMAL(p, s) is DECIMAL(38, s), AVG DECIMAL(38, max(6, s)) (Flink's
    LogicalTypeMerging); AVG of other numbers is DOUBLE."""
    if t.is_decimal and kind in ("sum", "avg"):
        return decimal_of(*(decimals.sum_type if kind == "sum" else decimals.avg_type)(t.ps))
    return DOUBLE if kind == "avg" else t


def check_output_names(names: list[str], items: tuple[A.SelectItem, ...],
                       offset: int) -> None:
    seen: set[str] = set()
    for i, n in enumerate(names):
        if n in seen:
            span = items[i - offset].span if i >= offset else items[0].span
            raise FlowNameError(f"column '{n}' appears twice in the output of 'aggregate'",
                                span, hint="rename it with 'as'")
        seen.add(n)


# ---------------------------------------------------------------- run time


class DistinctSet:
    """The accumulator of ``count(distinct ...)``: an immutable value (like the tuples and
    numbers of the other aggregates) that is still O(1) to extend.

    Versions share one insertion-ordered dict, value -> position: version ``n`` holds its
    first ``n`` keys. Extending the newest version appends in place (older versions keep
    their ``n`` and never see the new key); extending an older one copies its prefix. A
    frozenset copied per record made a key with n distinct values cost O(n^2)."""

    __slots__ = ("_d", "n")

    def __init__(self, d: dict[Any, int] | None = None, n: int = 0) -> None:
        self._d: dict[Any, int] = {} if d is None else d
        self.n = n

    def __contains__(self, v: Any) -> bool:
        i = self._d.get(v)
        return i is not None and i < self.n

    def __len__(self) -> int:
        return self.n

    def __iter__(self) -> Any:
        return islice(self._d, self.n)

    def add(self, v: Any) -> DistinctSet:
        d, n = self._d, self.n
        i = d.get(v)
        if i is not None and i < n:
            return self
        if n == 0:  # the shared empty value is never extended in place
            d = {}
        elif len(d) != n:  # an older version: branch off with a copy of its prefix
            d = dict(islice(d.items(), n))
        d[v] = n
        return DistinctSet(d, n + 1)

    def union(self, other: DistinctSet) -> DistinctSet:
        # the larger one is extended: a rolling merge adds one value to the whole set
        big, small = (self, other) if self.n >= other.n else (other, self)
        for v in list(small):  # a list: ``small`` may share the dict ``add`` extends
            big = big.add(v)
        return big

    def __eq__(self, other: object) -> bool:
        return isinstance(other, DistinctSet) and set(self) == set(other)

    def __hash__(self) -> int:
        return hash(frozenset(self))

    def __repr__(self) -> str:
        return f"DistinctSet({list(self)!r})"

    def __reduce__(self) -> tuple[Any, ...]:
        # only this version's values travel (not later versions' keys in the shared dict)
        return (_distinct_set, (list(self),))


def _distinct_set(values: list[Any]) -> DistinctSet:
    return DistinctSet({v: i for i, v in enumerate(values)}, len(values))


_EMPTY_DISTINCT = DistinctSet()


def _init(kind: str) -> Any:
    if kind in ("count", "count_star"):
        return 0
    if kind == "count_distinct":
        return _EMPTY_DISTINCT
    if kind == "avg":
        return (0, 0)
    return None


def _add(kind: str, acc: Any, v: Any) -> Any:
    if kind == "count_star":
        return acc + 1
    if v is None:
        return acc
    if kind == "count":
        return acc + 1
    if kind == "count_distinct":
        return acc.add(v)
    if kind == "sum":
        return v if acc is None else _sum(acc, v)
    if kind == "avg":
        return (plus(acc[0], v), acc[1] + 1)
    if kind == "min":
        return v if acc is None or v < acc else acc
    if kind == "max":
        return v if acc is None or v > acc else acc
    if kind == "first":
        return v if acc is None else acc
    return v  # last


def _sum(a: Any, b: Any) -> Any:
    """A sum of ints wraps around like Flink's SUM on BIGINT (a Java long); one of DECIMALs
    is exact (``Decimal``'s own ``+`` rounds to 28 digits)."""
    s = plus(a, b)
    return wrap64(s) if isinstance(s, int) else s


def _merge(kind: str, a: Any, b: Any) -> Any:
    if kind in ("count", "count_star"):
        return a + b
    if kind == "count_distinct":
        return a.union(b)
    if kind == "avg":
        return (plus(a[0], b[0]), a[1] + b[1])
    if a is None:
        return b
    if b is None:
        return a
    if kind == "sum":
        return _sum(a, b)
    if kind == "min":
        return min(a, b)
    if kind == "max":
        return max(a, b)
    return a if kind == "first" else b


def _result(kind: str, acc: Any) -> Any:
    if kind == "count_distinct":
        return len(acc)
    if kind == "avg":
        return average(acc[0], acc[1]) if acc[1] else None
    if kind == "sum":
        return sum_result(acc)
    return acc


# Per kind, the generated form of ``_add`` (value ``v``, accumulator ``a``), ``_merge``
# (``a``, ``b``) and ``_result`` (``a``): the same rules without a dispatch per value.
_ADD = {
    "count_star": "a + 1",
    "count": "a if v is None else a + 1",
    "count_distinct": "a if v is None else a.add(v)",
    "sum": "a if v is None else (v if a is None else _sum(a, v))",
    "avg": "a if v is None else (_plus(a[0], v), a[1] + 1)",
    "min": "a if v is None else (v if a is None or v < a else a)",
    "max": "a if v is None else (v if a is None or v > a else a)",
    "first": "a if v is None else (v if a is None else a)",
    "last": "a if v is None else v",
}
_MERGE = {
    "count_star": "a + b", "count": "a + b", "count_distinct": "a.union(b)",
    "avg": "(_plus(a[0], b[0]), a[1] + b[1])",
    "sum": "b if a is None else a if b is None else _sum(a, b)",
    "min": "b if a is None else a if b is None else min(a, b)",
    "max": "b if a is None else a if b is None else max(a, b)",
    "first": "b if a is None else a",
    "last": "b if a is None else a if b is None else b",
}
_RESULT = {"count_distinct": "len(a)", "avg": "(_average(a[0], a[1]) if a[1] else None)",
           "sum": "_sum_result(a)"}


def _specialised(kinds: tuple[str, ...], args: tuple[Any, ...]) -> dict[str, Any]:
    """``add``, ``merge`` and ``get_result`` for these aggregates as generated functions."""
    import re

    ns: dict[str, Any] = {"_sum": _sum, "_plus": plus, "_average": average,
                          "_sum_result": sum_result}
    n = len(kinds)

    def sub(template: str, i: int) -> str:
        return re.sub(r"\b([avb])\b", lambda m: f"{m.group(1)}{i}", template)

    accs = ", ".join(f"a{i}" for i in range(n)) + ("," if n else "")
    others = ", ".join(f"b{i}" for i in range(n)) + ("," if n else "")
    lines = ["def add(value, acc):", f"    {accs} = acc" if n else "    pass"]
    for i, f in enumerate(args):
        if f is not None:
            ns[f"f{i}"] = f.fn if isinstance(f, CodeFn) else f
            lines.append(f"    v{i} = f{i}(value)")
        elif kinds[i] != "count_star":
            lines.append(f"    v{i} = None")
    lines.append("    return (" + "".join(f"{sub(_ADD[k], i)}, " for i, k in enumerate(kinds))
                 + ")")
    lines += ["def merge(acc_a, acc_b):"]
    lines += [f"    {accs} = acc_a", f"    {others} = acc_b"] if n else []
    lines.append("    return (" + "".join(f"{sub(_MERGE[k], i)}, " for i, k in enumerate(kinds))
                 + ")")
    lines += ["def get_result(acc):", f"    {accs} = acc" if n else "    pass"]
    lines.append("    return (" + "".join(f"{sub(_RESULT.get(k, 'a'), i)}, "
                                          for i, k in enumerate(kinds)) + ")")
    exec(compile("\n".join(lines) + "\n", "<flowc-aggregate>", "exec"), ns)  # noqa: S102
    return {k: ns[k] for k in ("add", "merge", "get_result")}


class RowAggregate(AggregateFunction):
    """The AggregateFunction of ``aggregate``: accumulators are tuples (immutable), so a
    value can be shared between windows and merged without copying.

    ``add``, ``merge`` and ``get_result`` are generated per instance (the per-kind rules
    of ``_add``, ``_merge`` and ``_result`` without their dispatch: this is the hot path of
    every windowed and rolling aggregation); they are not pickled but rebuilt."""

    def __init__(self, specs: list[AggSpec]) -> None:
        self.kinds = tuple(s.kind for s in specs)
        self.args = tuple(s.arg for s in specs)
        self._types = tuple(s.type for s in specs)  # for the vector form
        self.__dict__.update(_specialised(self.kinds, self.args))
        # Accumulators are immutable (tuples, DistinctSets, numbers): one initial value serves.
        self._initial = tuple(_init(k) for k in self.kinds)

    def __getstate__(self) -> dict[str, Any]:
        return {"kinds": self.kinds, "args": self.args, "_types": self._types}

    @property
    def vector(self) -> VAggregate | None:
        """The declarative form, when every argument has a vector form."""
        args = tuple(None if a is None else a.vector for a in self.args)
        if any(a is None and k != "count_star" for a, k in zip(args, self.kinds)):
            return None
        return VAggregate(self.kinds, args, self._types)

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self.__dict__.update(_specialised(self.kinds, self.args))
        self._initial = tuple(_init(k) for k in self.kinds)

    def create_accumulator(self) -> tuple[Any, ...]:
        return self._initial

    # The generic forms (the generated ones replace them per instance).
    def add(self, value: Any, accumulator: tuple[Any, ...]) -> tuple[Any, ...]:
        return tuple(_add(k, acc, None if f is None else f(value))
                     for k, acc, f in zip(self.kinds, accumulator, self.args))

    def get_result(self, accumulator: tuple[Any, ...]) -> tuple[Any, ...]:
        return tuple(_result(k, acc) for k, acc in zip(self.kinds, accumulator))

    def merge(self, acc_a: tuple[Any, ...], acc_b: tuple[Any, ...]) -> tuple[Any, ...]:
        return tuple(_merge(k, a, b) for k, a, b in zip(self.kinds, acc_a, acc_b))


class WindowRow(ProcessWindowFunction):
    """Emits ``(key fields..., window_start, window_end, aggregates...)`` per window."""

    def __init__(self, key_count: int) -> None:
        self.key_count = key_count

    @property
    def vector(self) -> VWindowRow:
        return VWindowRow(self.key_count)

    def process(self, key: Any, context: Any, elements: Iterable[Any]) -> Iterable[Any]:
        # a SQL row key is a tuple even for one field; a DataStream one-field key is not
        keys = tuple(key) if isinstance(key, tuple) else (key,)
        window = context.window()
        for result in elements:
            yield keys + (window.start, window.end) + tuple(result)


class JoinRows(ProcessJoinFunction):
    """Interval join output: the left row's fields, then the right row's."""

    vector = VJoinRows()

    def process_element(self, left: Any, right: Any, ctx: Any) -> Iterable[Any]:
        yield tuple(left) + tuple(right)
