"""Evaluate vector expressions (``flowc.vector``) over Arrow record batches.

Each operator computes exactly what the row code computes (``parser/exprs.py``): SQL null
propagation, three-valued ``and``/``or``, Java long arithmetic (pyarrow's unchecked int64
kernels wrap around as Java does), ``/`` on doubles with null for a zero divisor, and a
null ``case``/``if`` condition taking the else branch. Where pyarrow's kernel could differ
from Python (case mapping outside ASCII) the values it cannot handle exactly go through
the Python definition. ``compile_expr`` returns None for a form it cannot evaluate exactly;
the operator then runs row by row.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from flowc.dates import DAY_MS
from flowc.executor.arrow import deckernels
from flowc.types import Type
from flowc.vector import VCall, VCol, VExpr, VLit

Kernel = Callable[[pa.RecordBatch], Any]  # an Array, or a Scalar for a constant

_SCALARS = {"string": pa.string(), "int": pa.int64(), "double": pa.float64(),
            "bool": pa.bool_(), "timestamp": pa.int64(), "duration": pa.int64(),
            "null": pa.null()}
_COMPARE = {"=": pc.equal, "!=": pc.not_equal, "<": pc.less, "<=": pc.less_equal,
            ">": pc.greater, ">=": pc.greater_equal}
_ARITH = {"+": pc.add, "-": pc.subtract, "*": pc.multiply}
_TRIM = {"trim": pc.utf8_trim, "ltrim": pc.utf8_ltrim, "rtrim": pc.utf8_rtrim}
_CASE = {"lower": (pc.ascii_lower, str.lower), "upper": (pc.ascii_upper, str.upper)}


def arrow_type(t: Type) -> pa.DataType:
    """A .flow type's column type: DECIMAL(p, s) is decimal128(p, s) (p <= 38 always), a
    MAP a map of its key and value types (entries in the dict's order: Java's HashMap
    order, ``flowc.maps``)."""
    if t.is_array:
        assert t.element is not None
        return pa.list_(arrow_type(t.element))
    if t.is_decimal:
        return pa.decimal128(t.precision, t.scale)
    if t.kind == "map":
        assert t.key is not None and t.element is not None
        return pa.map_(arrow_type(t.key), arrow_type(t.element))
    return _SCALARS[t.kind]


def as_array(value: Any, n: int) -> pa.Array:
    """A kernel result as an array of ``n`` values (constants are broadcast)."""
    if isinstance(value, pa.ChunkedArray):
        return value.combine_chunks()
    if isinstance(value, pa.Scalar):
        return pa.repeat(value, n)
    return value


def _cast(value: Any, t: pa.DataType) -> Any:
    return value if value.type == t else pc.cast(value, t, safe=False)


class _Compiler:
    def compile(self, e: VExpr) -> Kernel:
        """Iterative post-order: expressions may be thousands of terms long."""
        done: dict[int, Kernel] = {}
        stack: list[tuple[VExpr, bool]] = [(e, False)]
        while stack:
            node, ready = stack.pop()
            if id(node) in done:
                continue
            if isinstance(node, VCall) and not ready:
                stack.append((node, True))
                stack.extend((a, False) for a in node.args if id(a) not in done)
                continue
            done[id(node)] = self.node(node, [done[id(a)] for a in getattr(node, "args", ())])
        return done[id(e)]

    def node(self, e: VExpr, args: list[Kernel]) -> Kernel:
        if isinstance(e, VCol):
            i = e.index
            return lambda b: b.column(i)
        if isinstance(e, VLit):
            if isinstance(e.value, tuple):  # an 'in' list: its operator reads it
                return lambda b: None
            scalar = pa.scalar(e.value, arrow_type(e.type))
            return lambda b: scalar
        return self.call(e, args)

    def call(self, e: VCall, args: list[Kernel]) -> Kernel:
        op = e.op
        if deckernels.handles(e):
            return deckernels.compile_call(e, args)
        if e.type.is_decimal and op == "coalesce":
            return deckernels.coalesce(e, args)
        if e.type.is_decimal and op in ("case", "if"):
            args = deckernels.branches(e, args)
        out = arrow_type(e.type)
        types = [arrow_type(a.type) for a in e.args]
        if op in ("and", "or"):
            fn = pc.and_kleene if op == "and" else pc.or_kleene
            a, b = args
            return lambda batch: fn(_cast(a(batch), pa.bool_()), _cast(b(batch), pa.bool_()))
        if op == "not":
            (a,) = args
            return lambda batch: pc.invert(_cast(a(batch), pa.bool_()))
        if op in _COMPARE or op in _ARITH:
            fn = _COMPARE.get(op) or _ARITH[op]
            common = _common(types)
            a, b = args
            if op in _COMPARE:
                if set(types) == {pa.int64(), pa.float64()}:
                    return _mixed_compare(fn, a, b, e.args[0].type.kind == "int")
                return lambda batch: fn(_cast(a(batch), common), _cast(b(batch), common))
            return lambda batch: _cast(fn(_cast(a(batch), common), _cast(b(batch), common)),
                                       out)
        if op == "div":
            a, b = args
            zero = pa.scalar(0.0)

            def div(batch: pa.RecordBatch) -> Any:
                x = _cast(a(batch), pa.float64())
                y = _cast(b(batch), pa.float64())
                return pc.if_else(pc.equal(y, zero), pa.scalar(None, pa.float64()),
                                  pc.divide(x, y))
            return div
        if op == "neg":
            (a,) = args
            return lambda batch: _cast(pc.negate(_cast(a(batch), out)), out)
        if op in ("is_null", "is_not_null"):
            fn = pc.is_null if op == "is_null" else pc.is_valid
            (a,) = args
            return lambda batch: fn(a(batch))
        if op == "concat":
            a, b = args
            return lambda batch: pc.binary_join_element_wise(
                _cast(a(batch), pa.string()), _cast(b(batch), pa.string()), "")
        if op in _CASE:
            return _case_map(args[0], *_CASE[op])
        if op in _TRIM:
            fn = _TRIM[op]
            (a,) = args
            return lambda batch: fn(_cast(a(batch), pa.string()), characters=" ")
        if op == "length":
            (a,) = args
            return lambda batch: _cast(pc.utf8_length(_cast(a(batch), pa.string())), out)
        if op in ("starts_with", "ends_with", "contains"):
            fn = {"starts_with": pc.starts_with, "ends_with": pc.ends_with,
                  "contains": pc.match_substring}[op]
            pattern = e.args[1]
            assert isinstance(pattern, VLit)
            (a, _) = args
            return lambda batch: fn(_cast(a(batch), pa.string()), pattern=pattern.value)
        if op == "like":
            return _like(args[0], e.args[1])
        if op == "in":
            return _in(args[0], e.args[1], types[0])
        if op in ("case", "if"):
            return _case_when(op, args, out)
        if op == "coalesce":
            return lambda batch: pc.coalesce(*[_cast(k(batch), out) for k in args])
        if op == "map_get":  # dict.get: the value of an equal key, else null
            m, key = e.args
            assert isinstance(key, VLit)
            k = pa.scalar(key.value, arrow_type(m.type).key_type)
            return lambda batch: pc.map_lookup(as_array(args[0](batch), batch.num_rows), k,
                                               "first")
        if op == "map_size":
            return lambda batch: _map_size(as_array(args[0](batch), batch.num_rows))
        if op == "whole_days":  # integer divide truncates toward zero, as Flink's DATE +
            (a,) = args
            return lambda batch: pc.multiply(pc.divide(_cast(a(batch), pa.int64()), DAY_MS),
                                             DAY_MS)
        if op in ("to_double", "retype"):
            (a,) = args
            return lambda batch: _cast(a(batch), out)
        raise NotImplementedError(op)


def _map_size(m: pa.Array) -> pa.Array:
    """len() of each map (its entries: offsets apart), null for a null map."""
    lengths = pc.cast(pc.subtract(m.offsets[1:], m.offsets[:-1]), pa.int64())
    return pc.if_else(pc.is_valid(m), lengths, pa.scalar(None, pa.int64()))


_EXACT = 2 ** 53  # every int64 of at most this magnitude is exactly a double


def _mixed_compare(fn: Callable[..., Any], a: Kernel, b: Kernel, left_int: bool) -> Kernel:
    """int vs double: pyarrow compares them as doubles; Python compares exactly. Equal
    for ints of magnitude <= 2**53; a batch with a larger int is compared in Python."""
    import operator

    py = {pc.equal: operator.eq, pc.not_equal: operator.ne, pc.less: operator.lt,
          pc.less_equal: operator.le, pc.greater: operator.gt,
          pc.greater_equal: operator.ge}[fn]

    def run(batch: pa.RecordBatch) -> Any:
        x, y = a(batch), b(batch)
        ints = x if left_int else y
        big = pc.max(pc.abs(ints)).as_py() if isinstance(ints, pa.Array) else (
            abs(ints.as_py()) if ints.is_valid else None)
        if big is None or big <= _EXACT:
            return fn(_cast(x, pa.float64()), _cast(y, pa.float64()))
        n = batch.num_rows
        xs, ys = as_array(x, n).to_pylist(), as_array(y, n).to_pylist()
        return pa.array([None if p is None or q is None else py(p, q)
                         for p, q in zip(xs, ys)], pa.bool_())
    return run


def _common(types: list[pa.DataType]) -> pa.DataType:
    known = [t for t in types if t != pa.null()]
    if not known:
        return pa.null()
    if pa.float64() in known and pa.int64() in known:
        return pa.float64()
    return known[0]


def _case_map(arg: Kernel, ascii_fn: Callable[..., Any], py: Callable[[str], str]) -> Kernel:
    """lower/upper: pyarrow's ASCII kernel when every value is ASCII, Python's full case
    mapping (the row code's definition) otherwise."""
    def run(batch: pa.RecordBatch) -> Any:
        x = _cast(arg(batch), pa.string())
        if isinstance(x, pa.Scalar):
            return pa.scalar(None if not x.is_valid else py(x.as_py()), pa.string())
        if pc.all(pc.string_is_ascii(x)).as_py() is not False:
            return ascii_fn(x)
        return pa.array([None if v is None else py(v) for v in x.to_pylist()], pa.string())
    return run


def _like(arg: Kernel, pattern: VExpr) -> Kernel:
    from flowc.parser.runtime import like_regex

    assert isinstance(pattern, VLit)
    regex = r"(?s)\A(?:" + like_regex(pattern.value).pattern + r")\z"
    pc.match_substring_regex(pa.array([], pa.string()), pattern=regex)  # RE2 accepts it
    return lambda batch: pc.match_substring_regex(_cast(arg(batch), pa.string()),
                                                  pattern=regex)


def _in(arg: Kernel, values: VExpr, t: pa.DataType) -> Kernel:
    assert isinstance(values, VLit)
    value_set = pa.array(list(values.value), t)  # raises for values of another type
    null = pa.scalar(None, pa.bool_())

    def run(batch: pa.RecordBatch) -> Any:
        x = arg(batch)
        return pc.if_else(pc.is_null(x), null, pc.is_in(x, value_set=value_set))
    return run


def _case_when(op: str, args: list[Kernel], out: pa.DataType) -> Kernel:
    if op == "if":
        cond, yes, no = args
        return lambda batch: pc.if_else(pc.fill_null(_cast(cond(batch), pa.bool_()), False),
                                        _cast(yes(batch), out), _cast(no(batch), out))
    conds, results, default = args[0:-1:2], args[1:-1:2], args[-1]

    def run(batch: pa.RecordBatch) -> Any:
        n = batch.num_rows
        cs = [as_array(pc.fill_null(_cast(c(batch), pa.bool_()), False), n) for c in conds]
        rs = [as_array(_cast(r(batch), out), n) for r in results]
        d = as_array(_cast(default(batch), out), n)
        names = [f"c{i}" for i in range(len(cs))]
        return pc.case_when(pc.make_struct(*cs, field_names=names), *rs, d)
    return run


def compile_expr(e: VExpr) -> Kernel | None:
    """A kernel computing ``e``, or None when it has no exact vector evaluation."""
    try:
        return _Compiler().compile(e)
    except (NotImplementedError, pa.ArrowException, TypeError, ValueError, KeyError):
        return None
