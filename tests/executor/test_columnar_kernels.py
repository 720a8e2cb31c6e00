"""The columnar executor's kernels compute exactly what the row code computes.

Random typed .flow expressions over random nullable data: each is compiled by the real
front end (a ``map`` step), then evaluated row by row (the CodeFn, the definition) and over
an Arrow batch (its vector form through ``executor/arrow/kernels.py``); the two must agree
value for value (NaN equals NaN). No Spark needed.
"""

from __future__ import annotations

import math
from typing import Any

import pyarrow as pa
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from flowc.executor.arrow import convert
from flowc.executor.arrow.chain import _kernels
from flowc.executor.arrow.kernels import as_array
from flowc.operators import FilterOp, MapOp
from flowc.parser import compile_source

SCHEMA = "(a int, b double, c string, d timestamp, e bool, f int)"
LONG = 2**63 - 1

ints = st.one_of(st.none(), st.integers(-1000, 1000), st.sampled_from([LONG, -LONG - 1, 0]))
doubles = st.one_of(st.none(), st.floats(allow_nan=True, allow_infinity=True, width=64),
                    st.sampled_from([0.0, -0.0, 1.5]))
strings = st.one_of(st.none(), st.sampled_from(["", "a", "AbC", " x ", "ß", "İstanbul", "x%y",
                                                "ABC", "a_c", "Ünïcode"]),
                    st.text(max_size=6))
stamps = st.one_of(st.none(), st.integers(-10**12, 10**13))
bools = st.one_of(st.none(), st.booleans())
rows = st.lists(st.tuples(ints, doubles, strings, stamps, bools, ints), min_size=1,
                max_size=25)


def _expr(kind: str, depth: int) -> st.SearchStrategy[str]:
    leaves = {
        "int": st.sampled_from(["a", "f", "0", "7", "(0 - 3)", "9223372036854775807",
                                "cast(null as int)"]),
        "double": st.sampled_from(["b", "1.5", "0.0", "cast(a as double)"]),
        "string": st.sampled_from(["c", "'abc'", "'ABC'", "''", "' p '"]),
        "bool": st.sampled_from(["e", "true", "false", "a is null", "c is not null"]),
        "timestamp": st.sampled_from(["d"]),
    }[kind]
    if depth <= 0:
        return leaves
    sub = {k: _expr(k, depth - 1) for k in ("int", "double", "string", "bool", "timestamp")}
    if kind == "int":
        options = [
            st.tuples(sub["int"], st.sampled_from(["+", "-", "*"]), sub["int"]).map(
                lambda t: f"({t[0]} {t[1]} {t[2]})"),
            sub["int"].map(lambda x: f"(-({x}))"),
            sub["string"].map(lambda x: f"length({x})"),
            st.tuples(sub["bool"], sub["int"], sub["int"]).map(
                lambda t: f"case when {t[0]} then {t[1]} else {t[2]} end"),
            st.tuples(sub["int"], sub["int"]).map(lambda t: f"coalesce({t[0]}, {t[1]})"),
            st.tuples(sub["bool"], sub["int"], sub["int"]).map(
                lambda t: f"if({t[0]}, {t[1]}, {t[2]})"),
            sub["timestamp"].map(lambda x: f"epoch_millis({x})"),
        ]
    elif kind == "double":
        options = [
            st.tuples(sub["double"], st.sampled_from(["+", "-", "*", "/"]), sub["int"]).map(
                lambda t: f"({t[0]} {t[1]} {t[2]})"),
            st.tuples(sub["int"], sub["int"]).map(lambda t: f"({t[0]} / {t[1]})"),
            sub["int"].map(lambda x: f"cast({x} as double)"),
        ]
    elif kind == "string":
        options = [
            sub["string"].map(lambda x, fn=fn: f"{fn}({x})") for fn in ("lower", "upper", "trim",
                                                                   "ltrim", "rtrim")
        ] + [
            st.tuples(sub["string"], sub["string"]).map(lambda t: f"({t[0]} || {t[1]})"),
            st.tuples(sub["bool"], sub["string"]).map(
                lambda t: f"case when {t[0]} then {t[1]} end"),
        ]
    elif kind == "bool":
        cmp = st.sampled_from(["=", "!=", "<", "<=", ">", ">="])
        options = [
            st.tuples(sub["int"], cmp, sub["double"]).map(lambda t: f"({t[0]} {t[1]} {t[2]})"),
            st.tuples(sub["string"], cmp, sub["string"]).map(
                lambda t: f"({t[0]} {t[1]} {t[2]})"),
            st.tuples(sub["bool"], st.sampled_from(["and", "or"]), sub["bool"]).map(
                lambda t: f"({t[0]} {t[1]} {t[2]})"),
            sub["bool"].map(lambda x: f"(not {x})"),
            sub["int"].map(lambda x: f"({x} in (1, 7, 3))"),
            sub["string"].map(lambda x: f"({x} not in ('a', 'ABC'))"),
            sub["string"].map(lambda x: f"({x} like 'a%')"),
            sub["string"].map(lambda x: f"({x} like '%\\_c')"),
            sub["string"].map(lambda x: f"starts_with({x}, 'a')"),
            sub["string"].map(lambda x: f"contains({x}, 'b')"),
            st.tuples(sub["int"], sub["int"]).map(lambda t: f"({t[0]} between 0 and {t[1]})"),
            sub["timestamp"].map(lambda x: f"({x} > d - 5s)"),
            sub["double"].map(lambda x: f"({x} is null)"),
        ]
    else:
        options = [sub["timestamp"].map(lambda x: f"({x} + 5s)")]
    return st.one_of(leaves, *options)


def _compile(expr: str, what: str) -> Any:
    text = (f"source s {SCHEMA} from csv 'x.csv';\n"
            + (f"s | map {expr} as x | print;\n" if what == "map"
               else f"s | filter {expr} | print;\n"))
    script = compile_source(text, "t.flow")
    sg = script.env.get_job_graph().stream_graph
    ops = [n.operator for n in sg.nodes.values() if isinstance(n.operator, (MapOp, FilterOp))]
    return ops[0].fn


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, float) and isinstance(b, float):
        return (math.isnan(a) and math.isnan(b)) or (a == b and
                                                     math.copysign(1, a) == math.copysign(1, b))
    return type(a) is type(b) and a == b if a is not None else b is None


def _batch(data: list[tuple[Any, ...]]) -> pa.RecordBatch:
    from flowc.types import BOOL, DOUBLE, INT, STRING, TIMESTAMP, Schema

    schema = Schema.of(("a", INT), ("b", DOUBLE), ("c", STRING), ("d", TIMESTAMP),
                       ("e", BOOL), ("f", INT))
    return convert.from_rows(data, [None] * len(data), convert.arrow_schema(schema)).batch, \
        schema


@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(kind=st.sampled_from(["int", "double", "string", "bool"]), data=st.data(),
       values=rows)
def test_vector_form_equals_row_code(kind: str, data: Any, values: list[Any]) -> None:
    expr = data.draw(_expr(kind, 3))
    fn = _compile(expr, "map")
    batch, schema = _batch(values)
    kernels = _kernels(fn, schema)
    assert kernels is not None, f"no vector form for {expr}"
    got = as_array(kernels[0](batch), batch.num_rows).to_pylist()
    want = [fn(r)[0] for r in values]
    for r, g, w in zip(values, got, want):
        assert _same(g, w), f"{expr} on {r}: columnar {g!r}, row {w!r}"


def test_udf_has_no_vector_form(tmp_path: Any, monkeypatch: Any) -> None:
    """A Python UDF keeps the whole map row-wise (the chain runs it on rows)."""
    monkeypatch.syspath_prepend(str(tmp_path))
    (tmp_path / "colkern_udf.py").write_text("def twice(x: int) -> int:\n    return 2 * x\n")
    text = (f"import udf colkern_udf.twice(int) -> int;\nsource s {SCHEMA} from csv 'x.csv';\n"
            "s | map twice(a) as x, a | print;\n")
    script = compile_source(text, str(tmp_path / "t.flow"))
    sg = script.env.get_job_graph().stream_graph
    (op,) = [n.operator for n in sg.nodes.values() if isinstance(n.operator, MapOp)]
    assert op.fn.vector is None


def test_int_double_comparison_beyond_2_53_is_exact() -> None:
    """Python compares int and float exactly; a double-based kernel would say 2**63-1 ==
    float(2**63-1)."""
    fn = _compile("(f = cast(f as double))", "map")
    rows = [(None, None, None, None, None, 2**63 - 1), (None, None, None, None, None, 3)]
    batch, schema = _batch(rows)
    kernels = _kernels(fn, schema)
    assert kernels is not None
    assert as_array(kernels[0](batch), 2).to_pylist() == [fn(r)[0] for r in rows] == \
        [False, True]
