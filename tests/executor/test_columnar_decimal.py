"""DECIMAL in the columnar executor: the kernels (``arrow/deckernels.py``) compute exactly
what the row code (``flowc.decimals``) computes.

Random .flow expressions over random DECIMAL data - values at the precision limits,
negative, zero, zero scale, nulls; arithmetic whose exact result fits 38 digits and whose
type is adjusted (it rounds), ``/`` and ``%``, casts that round HALF_UP or overflow to
NULL, comparisons, ``case`` / ``coalesce`` over branches of several scales - are compiled
by the real front end, then evaluated row by row (the definition) and over an Arrow batch
(the vector form); they must agree value for value, scale included (``str``). No Spark.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from flowc import decimals
from flowc.executor.arrow import convert, deckernels
from flowc.executor.arrow.chain import _kernels
from flowc.executor.arrow.kernels import as_array
from flowc.operators import MapOp
from flowc.parser import compile_source
from flowc.parser.runtime import ArithmeticException
from flowc.types import INT, STRING, Schema, decimal_of

COLUMNS = (("a", decimal_of(10, 2)), ("b", decimal_of(10, 4)), ("c", decimal_of(38, 10)),
           ("d", decimal_of(5, 0)), ("e", decimal_of(38, 0)), ("n", INT), ("s", STRING))
SCHEMA = Schema.of(*COLUMNS)


def decimals_of(p: int, s: int) -> st.SearchStrategy[Any]:
    """Values of DECIMAL(p, s): any, the largest and smallest, zero, one unit, nulls."""
    top = 10 ** p - 1
    units = st.one_of(st.integers(-top, top), st.sampled_from([top, -top, 0, 1, -1, 5, -5]),
                      st.integers(-10 ** min(p, 4), 10 ** min(p, 4)))
    return st.one_of(st.none(), units.map(lambda u: Decimal(f"{u}E-{s}")))


rows = st.lists(st.tuples(
    decimals_of(10, 2), decimals_of(10, 4), decimals_of(38, 10), decimals_of(5, 0),
    decimals_of(38, 0),
    st.one_of(st.none(), st.integers(-10**6, 10**6), st.sampled_from([2**63 - 1, -2**63])),
    st.one_of(st.none(), st.sampled_from(["1.005", " -2.5 ", "x", "1e3", "99999999.995",
                                          "", "-0.004"]))), min_size=1, max_size=20)

DEC = st.sampled_from(["a", "b", "c", "d", "e", "cast(null as decimal(4, 2))",
                       "cast(n as decimal(20, 0))", "cast(7 as decimal(3, 1))"])
# Number literals beside a DECIMAL are DECIMALs (``1.1`` DECIMAL(2, 1), ``3`` INT's DECIMAL(10, 0))
LITERALS = st.sampled_from(["1.1", "3", "0.005", "0", "123456789.123"])
CASTS = st.sampled_from(["decimal(5, 1)", "decimal(12, 2)", "decimal(4, 3)", "decimal(38, 0)",
                         "decimal(38, 37)", "decimal(10, 0)", "decimal(20, 10)"])


def _dec(depth: int) -> st.SearchStrategy[str]:
    if depth <= 0:
        return DEC
    sub = _dec(depth - 1)
    return st.one_of(
        DEC,
        st.tuples(sub, st.sampled_from(["+", "-", "*", "/", "%"]), sub).map(
            lambda t: f"({t[0]} {t[1]} {t[2]})"),
        st.tuples(sub, st.sampled_from(["+", "*"]), st.sampled_from(["n", "7"])).map(
            lambda t: f"({t[0]} {t[1]} {t[2]})"),
        st.tuples(sub, st.sampled_from(["+", "-", "*", "/"]), LITERALS).map(
            lambda t: f"({t[0]} {t[1]} {t[2]})"),
        # (a DOUBLE literal here makes the coalesce a DOUBLE: not a DECIMAL expression)
        st.tuples(sub, st.sampled_from(["3", "0"])).map(lambda t: f"coalesce({t[0]}, {t[1]})"),
        sub.map(lambda x: f"(-{x})"),
        st.tuples(sub, CASTS).map(lambda t: f"cast({t[0]} as {t[1]})"),
        st.sampled_from(["cast(s as decimal(6, 2))", "cast(cast(n as double) as decimal(9, 3))"]),
        st.tuples(sub, sub).map(lambda t: f"coalesce({t[0]}, {t[1]})"),
        st.tuples(sub, sub, sub).map(
            lambda t: f"case when {t[0]} > {t[1]} then {t[1]} else {t[2]} end"),
        st.tuples(sub, sub).map(lambda t: f"if({t[0]} is null, {t[1]}, {t[0]})"),
    )


def _top(depth: int) -> st.SearchStrategy[str]:
    sub = _dec(depth)
    cmp = st.sampled_from(["=", "!=", "<", "<=", ">", ">="])
    return st.one_of(
        sub,
        st.tuples(sub, cmp, st.one_of(sub, st.sampled_from(["n", "5"]))).map(
            lambda t: f"({t[0]} {t[1]} {t[2]})"),
        sub.map(lambda x: f"cast({x} as string)"),
        sub.map(lambda x: f"cast(cast({x} as decimal(18, 3)) as int)"),
        sub.map(lambda x: f"cast({x} as double)"),
        sub.map(lambda x: f"({x} is null)"),
    )


def _fn(expr: str) -> Any:
    fields = ", ".join(f"{n} {t}" for n, t in COLUMNS)
    text = f"source t ({fields}) from csv 'x.csv';\nt | map {expr} as x | print;\n"
    sg = compile_source(text, "t.flow").env.get_job_graph().stream_graph
    return next(n.operator.fn for n in sg.nodes.values() if isinstance(n.operator, MapOp))


def _run_rows(fn: Any, data: list[Any]) -> Any:
    try:
        return [fn(r)[0] for r in data]
    except ArithmeticException:
        return ArithmeticException


def _run_kernel(fn: Any, data: list[Any]) -> Any:
    kernels = _kernels(fn, SCHEMA)
    assert kernels is not None, "no vector form"
    batch = convert.from_rows(data, [None] * len(data), convert.arrow_schema(SCHEMA)).batch
    try:
        return as_array(kernels[0](batch), batch.num_rows).to_pylist()
    except ArithmeticException:
        return ArithmeticException


def _text(values: Any) -> Any:
    """Decimals by their text: the scale counts."""
    if not isinstance(values, list):
        return values
    return [str(v) if isinstance(v, Decimal) else v for v in values]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(expr=_top(3), data=rows)
@example(expr="(a * b)", data=[(Decimal("99999999.99"), Decimal("-999999.9999"), None,
                                None, None, None, None)])
@example(expr="(c * c)", data=[(None, None, Decimal("9" * 28 + ".9999999999"), None, None,
                                None, None)])
@example(expr="cast(a as decimal(5, 1))", data=[(Decimal("9999.95"), None, None, None, None,
                                                 None, None)])
@example(expr="cast(c as decimal(4, 3))", data=[(None, None, Decimal("-0.0004999999"), None,
                                                 None, None, None)])
@example(expr="(e + e)", data=[(None, None, None, None, Decimal("9" * 38), None, None)])
@example(expr="(-a)", data=[(Decimal("0.00"), None, None, None, None, None, None)])
def test_decimal_vector_form_equals_row_code(expr: str, data: list[Any]) -> None:
    fn = _fn(expr)
    if _kernels(fn, SCHEMA) is None:  # only a lazily reached division keeps the row code
        assert any(op in expr for op in ("/", "%")), expr
        return
    want = _run_rows(fn, data)
    got = _run_kernel(fn, data)
    assert _text(got) == _text(want), expr


@pytest.mark.parametrize("value, to, want", [
    ("1.25", (2, 1), "1.3"), ("-1.25", (2, 1), "-1.3"), ("9.95", (2, 1), None),
    ("9.94", (2, 1), "9.9"), ("-0.04", (2, 1), "0.0"), ("99.99", (4, 1), "100.0"),
    ("99.99", (3, 1), None), ("12.5", (2, 0), "13"), ("123", (5, 2), "123.00"),
    ("123", (4, 2), None), ("-999.999", (6, 2), "-1000.00"),
])
def test_rescale_rounds_half_up_and_overflows_to_null(value: str, to: tuple[int, int],
                                                      want: str | None) -> None:
    d = Decimal(value)
    scale = max(0, -d.as_tuple().exponent)  # type: ignore[operator]
    src = (max(len(d.as_tuple().digits), scale, 1), scale)
    arr = pa.array([d], pa.decimal128(*src))
    got = deckernels.rescale(arr, src, to).to_pylist()[0]
    assert (None if got is None else str(got)) == want
    fitted = decimals.fit(d, *to)
    assert (None if fitted is None else str(fitted)) == want  # the row code's rule


def test_no_negative_zero() -> None:
    # Java's BigDecimal has no -0: the row code's values print as Flink prints them, and
    # as decimal128 (which has none either) holds them.
    assert str(decimals.fit(Decimal("-0.001"), 5, 2)) == "0.00"
    assert str(decimals.negate(Decimal("0.00"))) == "0.00"
    assert str(decimals.dec_arith("*", Decimal("-1.0"), Decimal("0"), 5, 1)) == "0.0"


# -- reading ---------------------------------------------------------------------------------

CSV_SCHEMA = Schema.of(("k", STRING), ("a", decimal_of(10, 2)), ("z", decimal_of(5, 0)),
                       ("w", decimal_of(38, 10)))
decimal_texts = st.one_of(
    st.sampled_from(["1.005", "-1.005", "+2.5", "", "0", "-0.004", "99999999.99",
                     "99999999.995", "123456789012", "0.0000000000005", "1e3", " 1.5", "x",
                     "1.", ".5", "NaN", "-0", "00012.50", "9" * 39, "1." + "9" * 40, "NULL"]),
    st.decimals(allow_nan=False, allow_infinity=False, places=3,
                min_value=-10**9, max_value=10**9).map(str))
csv_lines = st.tuples(st.sampled_from(["a", "b"]), decimal_texts, decimal_texts,
                      decimal_texts).map(",".join)


@settings(max_examples=200, deadline=None, suppress_health_check=list(HealthCheck))
@given(body=st.lists(csv_lines, max_size=30), p=st.integers(1, 2), small=st.booleans(),
       dead=st.booleans())
def test_native_csv_decimals_equal_the_row_reader(tmp_path_factory: Any, body: list[str],
                                                  p: int, small: bool, dead: bool) -> None:
    from flowc.errors import ExecutionError
    from flowc.executor.arrow import csvsource
    from flowc.executor.runtime import files
    from flowc.operators import FileSource

    where = tmp_path_factory.mktemp("deccsv")
    path = where / "in.csv"
    path.write_text("\n".join(body) + ("\n" if body else ""))
    spec = FileSource(str(path), "csv", CSV_SCHEMA.as_pairs(), (("null_value", "NULL"),),
                      dead_letter=str(where / "dead") if dead else None)
    schema = convert.arrow_schema(CSV_SCHEMA)
    old_block, old_min = files.csvread.BLOCK, files.MIN_SPLIT
    try:
        if small:  # many blocks and splits: native and row blocks mix
            files.csvread.BLOCK, files.MIN_SPLIT = 64, 97
        splits = files.plan_splits("csv", files.list_files(str(path)), p)
        for k in range(p):
            mine = files.subtask_splits(splits, k, p)
            want_bad, got_bad = files.BadRows(spec), files.BadRows(spec)
            try:
                want: Any = list(files.read_local(spec, mine, want_bad))
            except ExecutionError as e:
                want = str(e)
            try:
                got: Any = []
                for s in mine:
                    with open(s.path, "rb") as fh:
                        got += [r for c in csvsource.read_split(spec, s, fh, got_bad, None,
                                                                schema, 7) for r in c.rows()]
            except ExecutionError as e:
                got = str(e)
            assert repr(got) == repr(want)  # Decimal reprs show the scale
            assert got_bad.lines == want_bad.lines
    finally:
        files.csvread.BLOCK, files.MIN_SPLIT = old_block, old_min


def test_plain_decimal_csv_takes_the_native_path(tmp_path: Any, monkeypatch: Any) -> None:
    from flowc.executor.arrow import csvsource
    from flowc.executor.runtime import files
    from flowc.operators import FileSource

    path = tmp_path / "c.csv"
    path.write_text("".join(f"k{n},{n}.{n % 1000:03d},{-n},{n}.5\n" for n in range(1000)))
    spec = FileSource(str(path), "csv", CSV_SCHEMA.as_pairs(), ())

    def boom(*_: Any, **__: Any) -> Any:
        raise AssertionError("the row reader was used")
    monkeypatch.setattr(files, "_read_text", boom)
    split = files.plan_splits("csv", files.list_files(str(path)), 1)[0]
    with open(path, "rb") as fh:
        chunks = list(csvsource.read_split(spec, split, fh, files.BadRows(spec), None,
                                           convert.arrow_schema(CSV_SCHEMA), 4096))
    rows = [r for c in chunks for r in c.rows()]
    assert chunks[0].batch.schema.field(1).type == pa.decimal128(10, 2)
    assert [str(v) for v in rows[7]] == ["k7", "7.01", "-7", "7.5000000000"]  # HALF_UP
    assert [str(rows[n][1]) for n in (998, 999)] == ["999.00", "1000.00"]


PQ_TYPES = [(pa.decimal128(10, 2), decimals_of(10, 2)), (pa.decimal128(38, 10), decimals_of(38, 10)),
            (pa.decimal128(5, 0), decimals_of(5, 0)), (pa.decimal128(20, 6), decimals_of(20, 6)),
            (pa.int64(), st.one_of(st.none(), st.integers(-2**63, 2**63 - 1))),
            (pa.int32(), st.one_of(st.none(), st.integers(-2**31, 2**31 - 1))),
            (pa.float64(), st.one_of(st.none(), st.floats(-1e6, 1e6)))]
PQ_DECLARED = ["decimal(10, 2)", "decimal(5, 1)", "decimal(38, 0)", "decimal(38, 37)",
               "decimal(12, 4)"]


@settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=st.data(), n=st.integers(0, 25), group=st.integers(1, 8))
def test_native_parquet_decimals_equal_the_row_reader(tmp_path_factory: Any, data: Any,
                                                      n: int, group: int) -> None:
    import pyarrow.parquet as pq

    from flowc.errors import ExecutionError
    from flowc.executor.arrow import parquetsource
    from flowc.executor.runtime import files
    from flowc.operators import FileSource
    from flowc.types import type_from_name

    kinds = data.draw(st.lists(st.sampled_from(range(len(PQ_TYPES))), min_size=1, max_size=3))
    declared = [(f"c{i}", data.draw(st.sampled_from(PQ_DECLARED))) for i in range(len(kinds))]
    arrays = [pa.array([data.draw(PQ_TYPES[k][1]) for _ in range(n)], PQ_TYPES[k][0])
              for k in kinds]
    path = tmp_path_factory.mktemp("decpq") / "in.parquet"
    pq.write_table(pa.table(arrays, names=[c for c, _ in declared]), path,
                   row_group_size=group)
    spec = FileSource(str(path), "parquet", tuple(declared), ())
    schema = convert.arrow_schema(Schema.of(*[(c, type_from_name(t)) for c, t in declared]))
    [split] = files.plan_splits("parquet", files.list_files(str(path)), 1)
    try:
        want: Any = list(files.read_local(spec, [split], files.BadRows(spec)))
    except ExecutionError as e:
        want = str(e)
    try:
        with open(path, "rb") as fh:
            got: Any = [r for c in parquetsource.read_split(spec, split, fh, files.BadRows(spec),
                                                            None, schema, 7) for r in c.rows()]
    except ExecutionError as e:
        got = str(e)
    assert repr(got) == repr(want)


def test_decimal_parquet_takes_the_native_path(tmp_path: Any, monkeypatch: Any) -> None:
    import pyarrow.parquet as pq

    from flowc.executor.arrow import parquetsource
    from flowc.executor.runtime import files
    from flowc.operators import FileSource

    path = tmp_path / "d.parquet"
    pq.write_table(pa.table({"a": pa.array([Decimal("1.005"), Decimal("-2.555"), None],
                                           pa.decimal128(6, 3)),
                             "b": pa.array([7, -8, 2**40], pa.int64())}), path)
    spec = FileSource(str(path), "parquet", (("a", "decimal(5, 2)"), ("b", "decimal(12, 1)")), ())

    def boom(*_: Any, **__: Any) -> Any:
        raise AssertionError("the row reader was used")
    monkeypatch.setattr(files, "_read_parquet", boom)
    [split] = files.plan_splits("parquet", files.list_files(str(path)), 1)
    schema = convert.arrow_schema(Schema.of(("a", decimal_of(5, 2)), ("b", decimal_of(12, 1))))
    with open(path, "rb") as fh:
        rows = [r for c in parquetsource.read_split(spec, split, fh, files.BadRows(spec), None,
                                                    schema, 7) for r in c.rows()]
    assert [[None if v is None else str(v) for v in r] for r in rows] == [
        ["1.01", "7.0"], ["-2.56", "-8.0"], [None, None]]  # 2**40 needs 13 digits: NULL


DECIMAL_STREAM = """set parallelism = 2;
{head}source clicks (user_id string, action string, score decimal(10, 2), ts timestamp)
  from csv '{src}' monitor every 100ms
  watermark ts - 2s
  dead letter '{src}../bad/'
  with (parallelism = {sp});
let kept = clicks | map user_id, score * 1.5 as s2, score, ts | filter s2 is null or s2 < 9;
kept
  | key by user_id
  | window tumbling 5s
  | aggregate count(*) as n, sum(score) as s, avg(s2) as a, max(score) as m
  | print 'win';
"""


def test_unbounded_decimal_batches_equal_row_batches(tmp_path: Any) -> None:
    # Structured Streaming's micro-batches (streaming/columnar.py, driven in this process):
    # the columnar path's outputs, stats and row-format snapshots equal the row path's
    from tests.streaming.test_streaming_columnar import Driver

    d = Driver(DECIMAL_STREAM, tmp_path)
    row = d.run("row", 5, lambda b: False)
    col = d.run("col", 5, lambda b: True)
    for b, (r, c) in enumerate(zip(row, col)):
        assert c["sinks"] == r["sinks"], b
        assert c["stats"] == r["stats"], b
        assert c["snapshots"] == r["snapshots"], b
    assert any(r["sinks"] for r in row)


@pytest.mark.parametrize("expr", ["coalesce(a, a / 0)", "if(a > 0, a % b, a)",
                                  "a is not null or a / b > 1"])
def test_a_lazily_reached_decimal_division_has_no_vector_form(expr: str) -> None:
    """The row code skips a coalesce / if / case / and / or argument it does not need, so
    its division by zero never raises there; a kernel evaluates every argument over every
    row and would: such an expression runs row by row inside the chain."""
    fn = _fn(expr)
    assert _kernels(fn, SCHEMA) is None
    data = [(Decimal("-1.00"), Decimal("0.000"), None, None, None, None, None)]
    assert _run_rows(fn, data) != ArithmeticException
    assert _kernels(_fn("a / b"), SCHEMA) is not None  # unconditional: vectorised
