"""Value semantics of every library function and of the arithmetic operators.

Each case compiles an expression over typed columns and evaluates it twice: through the
compiled callable and through its generated source (what the Spark executor inlines), which
must agree. Numbers follow Flink (Java): 64-bit ints wrap around, ``%`` is the truncated
remainder, double results follow IEEE 754; every function of a null is null unless stated.
"""

from __future__ import annotations

import datetime as dt
import math
from typing import Any

import pytest

from flowc.errors import FlowcError, Span
from flowc.parser import ast as A
from flowc.parser import compile_source, parse_source
from flowc.parser.aggregates import AggSpec, RowAggregate
from flowc.parser.exprs import MAX_DEPTH, Column, ExprCompiler, Scope, Udf, row_columns
from flowc.parser.functions import FUNCTIONS, PUBLIC_FUNCTIONS
from flowc.types import BOOL, DOUBLE, INT, STRING, TIMESTAMP, Type, array_of, map_of

LONG_MAX = 2**63 - 1
LONG_MIN = -(2**63)
NAN = math.nan
INF = math.inf
ARR = array_of(STRING)


def ms(*parts: int) -> int:
    d = dt.datetime(*parts, tzinfo=dt.timezone.utc)  # type: ignore[misc]
    return int(d.timestamp() * 1000)


TS = ms(2024, 5, 1, 10, 1, 2) + 345  # 2024-05-01 10:01:02.345 UTC

# Columns every expression can read (and their null twins ns, ni, nd, nt, na).
COLUMNS: dict[str, tuple[Type, Any]] = {
    "s": (STRING, "Hello"), "ns": (STRING, None),
    "i": (INT, 7), "ni": (INT, None), "big": (INT, LONG_MAX), "small": (INT, LONG_MIN),
    "d": (DOUBLE, 2.5), "nd": (DOUBLE, None), "inf": (DOUBLE, INF), "nan": (DOUBLE, NAN),
    "huge": (DOUBLE, 1e300),
    "ts": (TIMESTAMP, TS), "nt": (TIMESTAMP, None), "far": (TIMESTAMP, LONG_MAX),
    "arr": (ARR, ["a", "b", "c"]), "na": (ARR, None), "b": (BOOL, True), "nb": (BOOL, None),
    "unit": (STRING, "week"),
}


def _parse(expr: str) -> A.Expr:
    stmt = parse_source(f"s | map {expr} as out | print;").statements[0]
    assert isinstance(stmt, A.PipelineStmt)
    step = stmt.pipeline.steps[0]
    assert isinstance(step, A.MapStep) and step.items[0].expr is not None
    return step.items[0].expr


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    return type(a) is type(b) and a == b


def evaluate(expr: str) -> tuple[Type, Any]:
    names = list(COLUMNS)
    types = [COLUMNS[n][0] for n in names]
    row = tuple(COLUMNS[n][1] for n in names)
    compiler = ExprCompiler(Scope(row_columns(names, types)))
    node = _parse(expr)
    typed = compiler.compile(node)
    fn = compiler.code_fn(typed.code, ("r",), node.span)
    value = fn(row)
    inlined = eval(f"lambda r: {fn.source}", dict(fn.env))(row)  # noqa: S307 - test only
    assert _same(value, inlined), (expr, value, inlined)
    return typed.type, value


def datagen(expr: str, index: int) -> Any:
    compiler = ExprCompiler(Scope([Column("index", INT, "i")], index_code="i"))
    node = _parse(expr)
    fn = compiler.code_fn(compiler.compile(node).code, ("i",), node.span)
    return fn(index)


# (expression, result type, value); the function each case covers is the first call in it.
CASES: list[tuple[str, Type, Any]] = [
    ("lower(s)", STRING, "hello"), ("lower(ns)", STRING, None), ("lower(null)", STRING, None),
    ("upper(s)", STRING, "HELLO"), ("upper(ns)", STRING, None),
    # Flink trims spaces only, not tabs or newlines.
    ("trim('  a b \t ')", STRING, "a b \t"), ("trim(ns)", STRING, None),
    ("ltrim('  a ')", STRING, "a "), ("ltrim(ns)", STRING, None),
    ("rtrim('  a ')", STRING, "  a"), ("rtrim(ns)", STRING, None),
    ("length(s)", INT, 5), ("length('')", INT, 0), ("length(arr)", INT, 3),
    ("length(ns)", INT, None), ("length(na)", INT, None),
    ("substr(s, 2)", STRING, "ello"), ("substr(s, 2, 3)", STRING, "ell"),
    ("substr(s, 0, 2)", STRING, "He"), ("substr(s, -5, 2)", STRING, "He"),
    ("substr(s, 10)", STRING, ""), ("substr(s, 2, 0)", STRING, ""),
    ("substr(s, 2, -1)", STRING, ""), ("substr(ns, 1)", STRING, None),
    ("substr(s, ni)", STRING, None), ("substr(s, 1, ni)", STRING, None),
    ("concat(s, ' ', 'world')", STRING, "Hello world"), ("concat(s)", STRING, "Hello"),
    ("concat(s, ns)", STRING, None),
    ("replace(s, 'l', 'L')", STRING, "HeLLo"), ("replace(s, 'x', 'y')", STRING, "Hello"),
    ("replace(s, ns, 'y')", STRING, None), ("replace(ns, 'l', 'y')", STRING, None),
    ("starts_with(s, 'He')", BOOL, True), ("starts_with(s, 'he')", BOOL, False),
    ("starts_with(s, '')", BOOL, True), ("starts_with(ns, 'a')", BOOL, None),
    ("ends_with(s, 'lo')", BOOL, True), ("ends_with(s, 'l')", BOOL, False),
    ("ends_with(s, ns)", BOOL, None),
    ("contains(s, 'ell')", BOOL, True), ("contains(s, 'x')", BOOL, False),
    ("contains(ns, 'x')", BOOL, None),
    ("abs(-i)", INT, 7), ("abs(-d)", DOUBLE, 2.5), ("abs(ni)", INT, None),
    ("abs(small)", INT, LONG_MIN),  # Java: Math.abs(Long.MIN_VALUE) overflows to itself
    ("abs(-inf)", DOUBLE, INF),
    # round: half away from zero; ints stay ints (also with negative digits)
    ("round(d)", DOUBLE, 3.0), ("round(-d)", DOUBLE, -3.0), ("round(2.4)", DOUBLE, 2.0),
    ("round(2.675, 2)", DOUBLE, 2.68), ("round(1.005, 2)", DOUBLE, 1.01),
    ("round(1234.5, -2)", DOUBLE, 1200.0), ("round(0.125, 400)", DOUBLE, 0.125),
    ("round(huge, -400)", DOUBLE, 0.0),
    ("round(i)", INT, 7), ("round(15, -1)", INT, 20), ("round(-15, -1)", INT, -20),
    ("round(14, -1)", INT, 10), ("round(i, 2)", INT, 7), ("round(i, -30)", INT, 0),
    ("round(big, -1)", INT, LONG_MAX + 3 - 2**64),  # wraps like a Java long
    ("round(inf)", DOUBLE, INF), ("round(nan, 1)", DOUBLE, NAN),
    ("round(nd)", DOUBLE, None), ("round(d, ni)", DOUBLE, None), ("round(ni, 1)", INT, None),
    ("floor(d)", INT, 2), ("floor(-d)", INT, -3), ("floor(i)", INT, 7),
    ("floor(inf)", INT, None), ("floor(nan)", INT, None), ("floor(huge)", INT, None),
    ("floor(nd)", INT, None),
    ("ceil(d)", INT, 3), ("ceil(-d)", INT, -2), ("ceil(i)", INT, 7), ("ceil(-inf)", INT, None),
    ("ceil(nan)", INT, None), ("ceil(huge)", INT, None), ("ceil(ni)", INT, None),
    ("sqrt(6.25)", DOUBLE, 2.5), ("sqrt(4)", DOUBLE, 2.0), ("sqrt(-1)", DOUBLE, NAN),
    ("sqrt(inf)", DOUBLE, INF), ("sqrt(nd)", DOUBLE, None),
    ("power(2, 10)", DOUBLE, 1024.0), ("power(d, 2)", DOUBLE, 6.25),
    ("power(10, 400)", DOUBLE, INF), ("power(-10, 401)", DOUBLE, -INF),
    ("power(-8, 0.5)", DOUBLE, NAN), ("power(0, -1)", DOUBLE, INF),
    ("power(ni, 2)", DOUBLE, None), ("power(2, nd)", DOUBLE, None),
    ("coalesce(ns, s, 'x')", STRING, "Hello"), ("coalesce(ns, null)", STRING, None),
    ("coalesce(ni, d)", DOUBLE, 2.5), ("coalesce(ni, 1)", INT, 1),
    ("if(b, 'yes', 'no')", STRING, "yes"), ("if(not b, 'yes', 'no')", STRING, "no"),
    ("if(nb, 'yes', 'no')", STRING, "no"),  # an unknown condition is not true
    ("if(b, ni, 2)", INT, None),
    ("year(ts)", INT, 2024), ("year(nt)", INT, None), ("year(far)", INT, None),
    ("month(ts)", INT, 5), ("month(nt)", INT, None),
    ("day(ts)", INT, 1), ("day(nt)", INT, None),
    ("hour(ts)", INT, 10), ("hour(nt)", INT, None),
    ("minute(ts)", INT, 1), ("minute(nt)", INT, None),
    ("second(ts)", INT, 2), ("second(nt)", INT, None), ("second(far)", INT, None),
    ("date_trunc('year', ts)", TIMESTAMP, ms(2024, 1, 1)),
    ("date_trunc('month', ts)", TIMESTAMP, ms(2024, 5, 1)),
    ("date_trunc('day', ts)", TIMESTAMP, ms(2024, 5, 1)),
    ("date_trunc('hour', ts)", TIMESTAMP, ms(2024, 5, 1, 10)),
    ("date_trunc('minute', ts)", TIMESTAMP, ms(2024, 5, 1, 10, 1)),
    ("date_trunc('second', ts)", TIMESTAMP, ms(2024, 5, 1, 10, 1, 2)),
    ("date_trunc(unit, ts)", TIMESTAMP, None), ("date_trunc('day', nt)", TIMESTAMP, None),
    ("date_trunc(ns, ts)", TIMESTAMP, None), ("date_trunc('day', far)", TIMESTAMP, None),
    ("epoch_millis(ts)", INT, TS), ("epoch_millis(nt)", INT, None),
    ("to_timestamp(1000)", TIMESTAMP, 1000),
    ("to_timestamp('2024-05-01T10:01:02.345Z')", TIMESTAMP, TS),
    ("to_timestamp('2024-05-01 12:01:02.345+02:00')", TIMESTAMP, TS),
    ("to_timestamp('2024-05-01')", TIMESTAMP, ms(2024, 5, 1)),
    ("to_timestamp('not a time')", TIMESTAMP, None), ("to_timestamp(ni)", TIMESTAMP, None),
    ("to_timestamp(ns)", TIMESTAMP, None),
    ("split('a,b,,c', ',')", ARR, ["a", "b", "", "c"]), ("split('abc', '')", ARR, ["a", "b", "c"]),
    ("split(ns, ',')", ARR, None), ("split(s, ns)", ARR, None),
    ("size(arr)", INT, 3), ("size(split('', ','))", INT, 1), ("size(na)", INT, None),
    ("str_to_map('a=1,b')", map_of(STRING, STRING), {"a": "1", "b": None}),
    ("str_to_map('a:1;b:2', ';', ':')", map_of(STRING, STRING), {"a": "1", "b": "2"}),
    ("size(str_to_map('a=1,b=2'))", INT, 2), ("str_to_map(ns)", map_of(STRING, STRING), None),
    ("element_at(arr, 1)", STRING, "a"), ("element_at(arr, 3)", STRING, "c"),
    ("element_at(arr, -1)", STRING, "c"), ("element_at(arr, 0)", STRING, None),
    ("element_at(arr, 4)", STRING, None), ("element_at(arr, -4)", STRING, None),
    ("element_at(na, 1)", STRING, None), ("element_at(arr, ni)", STRING, None),
    ("array_contains(arr, 'b')", BOOL, True), ("array_contains(arr, 'x')", BOOL, False),
    ("array_contains(arr, ns)", BOOL, None), ("array_contains(na, 'a')", BOOL, None),
    ("array_contains([1, 2], 2)", BOOL, True),
    ("position('l', s)", INT, 3), ("position('x', s)", INT, 0), ("position('l', s, 4)", INT, 4),
    ("position('l', s, 0)", INT, 0), ("position(ns, s)", INT, None),
    ("nullif(i, 7)", INT, None), ("nullif(i, 8)", INT, 7), ("nullif(ni, 1)", INT, None),
    ("nullif(s, ns)", STRING, "Hello"),
    ("date_format(ts)", STRING, "2024-05-01 10:01:02"),
    ("date_format(ts, 'yyyy/MM/dd HH:mm:ss.SSS')", STRING, "2024/05/01 10:01:02.345"),
    ("date_format(nt)", STRING, None), ("date_format(ts, ns)", STRING, None),
    ("to_timestamp_ltz(1000, 0)", TIMESTAMP, 1_000_000), ("to_timestamp_ltz(1500)", TIMESTAMP, 1500),
    ("to_timestamp_ltz(ni)", TIMESTAMP, None),
    # java.time letters in the en_US locale (Sunday-first weeks, minimal days 1), as Flink
    ("date_format(to_timestamp('2023-01-01T10:20:30Z'), 'yyyy-ww W u YYYY e')", STRING,
     "2023-01 1 2023 2023 1"),
    ("date_format(to_timestamp('2024-12-30T00:00:00Z'), 'YYYY-ww EEE QQQ')", STRING,
     "2025-01 Mon Q4"),
    ("date_format(ts, 'yyyy''T''''''')", STRING, "2024T'"),
    # SimpleDateFormat letters: u is the day's number (Monday 1)
    ("from_unixtime(1700000000)", STRING, "2023-11-14 22:13:20"),
    ("from_unixtime(1700000000, 'YYYY ww u')", STRING, "2023 46 2"),
    ("from_unixtime(-1)", STRING, "1969-12-31 23:59:59"), ("from_unixtime(ni)", STRING, None),
    ("unix_timestamp('2023-11-14 22:13:20')", INT, 1_700_000_000),
    ("unix_timestamp('2023-11-14', 'yyyy-MM-dd')", INT, 1_699_920_000),
    ("unix_timestamp('1969-12-31 23:59:59')", INT, -1),
    ("unix_timestamp('garbage')", INT, LONG_MIN), ("unix_timestamp(ns)", INT, None),
    ("regexp_extract('foothebar', 'foo(.*?)(bar)', 2)", STRING, "bar"),
    ("regexp_extract('foothebar', 'foo(.*?)(bar)')", STRING, "foothebar"),
    ("regexp_extract('foothebar', 'foo(.*?)(bar)', 3)", STRING, None),
    ("regexp_extract('foothebar', 'foo(x)?the', 1)", STRING, None),
    ("regexp_extract('foothebar', '(', 1)", STRING, None),
    ("regexp_extract(ns, 'a', 1)", STRING, None),
    ("regexp_extract('2024-05', '(?<y>[0-9]+)-([0-9]+)', 2)", STRING, "05"),
    ("regexp_replace('foobar', '(o+)', '[$1]')", STRING, "f[$1]bar"),
    ("regexp_replace('foobar', '', '-')", STRING, "-f-o-o-b-a-r-"),
    ("regexp_replace(ns, 'o', 'x')", STRING, None),
    ("split_index('Jack,John,Mary', ',', 2)", STRING, "Mary"),
    ("split_index('Jack,John,Mary', ',', 3)", STRING, None),
    ("split_index('Jack,John,Mary', ',', -1)", STRING, None),
    ("split_index('a||b||c', '||', 1)", STRING, "b"), ("split_index('', ',', 0)", STRING, None),
    ("split_index(ns, ',', 0)", STRING, None),
    ("concat_ws('~', 'AA', ns, 'BB', '', 'CC')", STRING, "AA~BB~~CC"),
    ("concat_ws(ns, 'a', 'b')", STRING, None), ("concat_ws('-', ns)", STRING, ""),
]

# Operators: Java long arithmetic (wraps around), truncated remainder, double division.
OPERATORS: list[tuple[str, Type, Any]] = [
    ("big + 1", INT, LONG_MIN), ("small - 1", INT, LONG_MAX), ("big * 2", INT, -2),
    ("-small", INT, LONG_MIN), ("9223372036854775807 + 1", INT, LONG_MIN),
    ("i + 1", INT, 8), ("i - 10", INT, -3), ("i * i", INT, 49), ("-i", INT, -7),
    ("big + 1.0", DOUBLE, float(LONG_MAX) + 1.0), ("ni + 1", INT, None),
    ("far + 1s", TIMESTAMP, LONG_MIN + 999), ("ts - 1s", TIMESTAMP, TS - 1000),
    ("ts - ts", INT, 0), ("cast(5s * i as int)", INT, 35000),
    ("cast(2s * big as int)", INT, -2000),
    ("7 % 3", INT, 1), ("-7 % 3", INT, -1), ("7 % -3", INT, 1), ("-7 % -3", INT, -1),
    ("big % 10", INT, 7),  # math.fmod would give 8 (it goes through a double)
    ("small % -1", INT, 0), ("small % 10", INT, -8), ("i % 0", INT, None), ("i % ni", INT, None),
    ("7.5 % 2", DOUBLE, 1.5), ("-7.5 % 2", DOUBLE, -1.5), ("inf % 2", DOUBLE, NAN),
    ("d % 0", DOUBLE, None),
    ("7 / 2", DOUBLE, 3.5), ("i / 0", DOUBLE, None), ("i / 0.0", DOUBLE, None),
    ("9007199254740993 / 1", DOUBLE, 9007199254740992.0), ("ni / 2", DOUBLE, None),
    ("cast(huge as int)", INT, None), ("cast(nan as int)", INT, None),
    ("cast(inf as int)", INT, None), ("cast('99999999999999999999' as int)", INT, None),
    ("cast('-12' as int)", INT, -12), ("cast(-d as int)", INT, -2),
    ("cast(far as string)", STRING, None),
    ("cast(ts as string)", STRING, "2024-05-01 10:01:02.345"),
]

# Predicates and conditionals, with SQL's three-valued logic: null is "unknown".
PREDICATES: list[tuple[str, Type, Any]] = [
    ("null and false", BOOL, False), ("false and null", BOOL, False),
    ("null and true", BOOL, None), ("nb and b", BOOL, None), ("b and b", BOOL, True),
    ("null or true", BOOL, True), ("true or null", BOOL, True), ("null or false", BOOL, None),
    ("nb or nb", BOOL, None), ("not nb", BOOL, None), ("not b", BOOL, False),
    ("2 in (1, 2)", BOOL, True), ("2 in (1, null)", BOOL, None), ("2 in (1, 3)", BOOL, False),
    ("2 in (2, null)", BOOL, True), ("ni in (1, 2)", BOOL, None),
    ("2 not in (1, null)", BOOL, None), ("2 not in (1, 3)", BOOL, True),
    ("i in (ni, 7)", BOOL, True), ("s in ('Hello', ns)", BOOL, True),
    ("i between 1 and 7", BOOL, True), ("i between 8 and 9", BOOL, False),
    ("i between ni and 9", BOOL, None), ("i between ni and 5", BOOL, False),
    ("i not between 1 and 5", BOOL, True), ("i not between 1 and 7", BOOL, False),
    ("ni not between 1 and 5", BOOL, None), ("d between 2 and 3", BOOL, True),
    (r"'a_c' like 'a\_c'", BOOL, True), (r"'abc' like 'a\_c'", BOOL, False),
    ("'abc' like 'a_c'", BOOL, True), (r"'a%c' like 'a\%c'", BOOL, True),
    ("'abbbc' like 'a%c'", BOOL, True), ("'ab' like 'a%c'", BOOL, False),
    ("'a.c' like 'a.c'", BOOL, True), ("'abc' like 'a.c'", BOOL, False),
    ("s like ns", BOOL, None), ("ns like 'a%'", BOOL, None),
    ("s not like 'H%'", BOOL, False), ("s not like 'x%'", BOOL, True),
    ("ns not like 'x%'", BOOL, None), ("s like unit", BOOL, False),
    ("case when b then 1 else 2 end", INT, 1), ("case when nb then 1 else 2 end", INT, 2),
    ("case when false then 1 end", INT, None), ("case when ni = 1 then 'x' end", STRING, None),
    ("case i when 7 then 'seven' when 8 then 'eight' else 'other' end", STRING, "seven"),
    ("case i when 1 then 'one' else 'other' end", STRING, "other"),
    ("case ni when 1 then 'one' else 'other' end", STRING, "other"),
    ("case i when ni then 'null' end", STRING, None),
    ("case i when 7 then 1 when 7 then 2 end", INT, 1),
    ("i <> 7", BOOL, False), ("i == 7", BOOL, True), ("i != ni", BOOL, None),
    ("'it''s' = 'it' || '''' || 's'", BOOL, True), ("length('''')", INT, 1),
]


@pytest.mark.parametrize("expr,type_,value", CASES, ids=[c[0] for c in CASES])
def test_function(expr: str, type_: Type, value: Any) -> None:
    t, v = evaluate(expr)
    assert t == type_
    assert _same(v, value), v


@pytest.mark.parametrize("expr,type_,value", OPERATORS, ids=[c[0] for c in OPERATORS])
def test_operator(expr: str, type_: Type, value: Any) -> None:
    t, v = evaluate(expr)
    assert t == type_
    assert _same(v, value), v


@pytest.mark.parametrize("expr,type_,value", PREDICATES, ids=[c[0] for c in PREDICATES])
def test_predicate(expr: str, type_: Type, value: Any) -> None:
    t, v = evaluate(expr)
    assert t == type_
    assert _same(v, value), v


def test_every_library_function_is_covered() -> None:
    called = {expr.split("(", 1)[0] for expr, _, _ in CASES}
    called |= {"random_int", "random_double", "random_choice"}  # below
    # Internal functions are the SQL translator's own (SQL's integer '/' and '%'), each
    # named with a leading '_'.
    assert called == set(PUBLIC_FUNCTIONS)
    assert set(FUNCTIONS) - set(PUBLIC_FUNCTIONS) == {n for n in FUNCTIONS if n[0] == "_"}


def test_random_functions_are_deterministic_and_in_range() -> None:
    ints = [datagen("random_int(1, 10)", i) for i in range(200)]
    assert set(ints) == set(range(1, 11))
    assert ints == [datagen("random_int(1, 10)", i) for i in range(200)]
    assert datagen("random_int(5, 1)", 0) is None
    assert datagen("random_int(null, 1)", 0) is None
    doubles = [datagen("random_double()", i) for i in range(200)]
    assert all(0.0 <= x < 1.0 for x in doubles) and len(set(doubles)) == 200
    choices = [datagen("random_choice('a', 'b', null)", i) for i in range(200)]
    assert set(choices) == {"a", "b", None}
    # Two call sites in one expression are independent streams.
    pairs = [datagen("random_int(0, 1000) - random_int(0, 1000)", i) for i in range(50)]
    assert sum(p != 0 for p in pairs) > 40


def test_random_functions_outside_datagen_are_rejected() -> None:
    with pytest.raises(FlowcError, match="unknown function 'random_int'") as info:
        evaluate("random_int(1, 2)")
    assert info.value.hint == "'random_int' is only available in a datagen source's generators"


def test_date_trunc_unknown_constant_unit_is_an_error() -> None:
    with pytest.raises(FlowcError, match="date_trunc cannot truncate to 'week'"):
        evaluate("date_trunc('week', ts)")


def test_sum_of_ints_wraps_like_a_long() -> None:
    agg = RowAggregate([AggSpec("sum", lambda r: r, "s", INT),
                        AggSpec("sum", lambda r: float(r), "f", DOUBLE)])
    acc = agg.create_accumulator()
    for v in (LONG_MAX, 1):
        acc = agg.add(v, acc)
    assert agg.get_result(acc) == (LONG_MIN, float(LONG_MAX) + 1.0)
    merged = agg.merge(agg.add(LONG_MAX, agg.create_accumulator()),
                       agg.add(LONG_MAX, agg.create_accumulator()))
    assert agg.get_result(merged)[0] == -2


def _wrap(v: int) -> int:
    return (v + 2**63) % 2**64 - 2**63


def _chains(n: int) -> list[tuple[str, Type, Any]]:
    """Chains of one operator, n operands long (n > 8 compiles to flat Python code)."""
    doubles = float(_wrap(LONG_MAX + 1))
    for _ in range(n):
        doubles += 2.5  # the int part wrapped before the doubles were added, as in Java
    return [
        (" + ".join(["i"] * n), INT, 7 * n),
        (" + ".join(["big"] * n), INT, _wrap(LONG_MAX * n)),
        ("big" + " + 1" * n, INT, _wrap(LONG_MAX + n)),
        ("small" + " - 1" * n, INT, _wrap(LONG_MIN - n)),
        (" * ".join(["i"] * n), INT, _wrap(7**n)),
        ("big + 1" + " + d" * n, DOUBLE, doubles),
        ("i" + " + i * 2 - 1" * n, INT, 7 + 13 * n),
        ("d" + " / 2" * n, DOUBLE, 2.5 / 2**n),
        ("i + ni" + " + i" * n, INT, None),
        ("ni" + " * i" * n, INT, None),
        (" and ".join(["b"] * n), BOOL, True),
        (" and ".join(["b"] * n + ["nb"]), BOOL, None),
        (" and ".join(["nb"] * n + ["false"]), BOOL, False),
        (" or ".join(["false"] * n + ["nb"]), BOOL, None),
        (" or ".join(["nb"] * n + ["true"]), BOOL, True),
        (" or ".join(["not b"] * n), BOOL, False),
        (" || ".join(["s"] * n), STRING, "Hello" * n),
        (" || ".join(["s"] * n + ["ns"]), STRING, None),
        ("i = " + " + ".join(["1"] * 7) + " and s || '!' = 'Hello!'", BOOL, True),
        ("case" + "".join(f" when i = {k} then {k}" for k in range(n)) + " else -1 end", INT,
         7 if n > 7 else -1),
        ("case i" + "".join(f" when {k} then {k * 2}" for k in range(n)) + " end", INT,
         14 if n > 7 else None),
        ("coalesce(" + "ni, " * n + "i)", INT, 7), ("coalesce(" + "ni, " * n + "ni)", INT, None),
    ]


@pytest.mark.parametrize("n", [3, 8, 9, 1000])
def test_flat_chains_of_any_length(n: int) -> None:
    # The user wrote no nesting, so no length is "nested too deeply"; short chains compile
    # nested, long ones flat, with the same null, short-circuit and overflow semantics.
    for expr, type_, value in _chains(n):
        t, v = evaluate(expr)
        assert t == type_, expr[:60]
        assert _same(v, value), (expr[:60], v)


def _counting(expr: str) -> tuple[Any, int]:
    """Evaluates ``expr`` with ``f(x)`` a UDF that counts its calls (and returns true)."""
    calls = []
    udf = Udf("f", lambda x: calls.append(x) or True, (INT,), BOOL, Span("u.flow", 1, 1))
    names = list(COLUMNS)
    scope = Scope(row_columns(names, [COLUMNS[n][0] for n in names]), udfs={"f": udf})
    compiler = ExprCompiler(scope)
    node = _parse(expr)
    fn = compiler.code_fn(compiler.compile(node).code, ("r",), node.span)
    return fn(tuple(COLUMNS[n][1] for n in names)), len(calls)


@pytest.mark.parametrize("n", [3, 1000])
def test_flat_chains_short_circuit(n: int) -> None:
    # A UDF behind a decided 'and'/'or', a null operand or a taken 'case' branch is not
    # called, in the flat form as in the nested one (it may be guarded by the condition).
    assert _counting("false" + " and f(i)" * n) == (False, 0)
    assert _counting("b and nb" + " and f(i)" * n) == (None, n)
    assert _counting("true" + " or f(i)" * n) == (True, 0)
    assert _counting("nb" + " or f(i)" * n) == (True, 1)
    assert _counting("case" + " when b then true when f(i) then false" * n + " end") == (True, 0)
    assert _counting("coalesce(b" + ", f(i)" * n + ")") == (True, 0)


def test_only_true_nesting_has_a_limit() -> None:
    assert evaluate("-(" * MAX_DEPTH + "i" + ")" * MAX_DEPTH) == (INT, 7)
    assert evaluate("abs(" * (MAX_DEPTH - 1) + "i + i" + ")" * (MAX_DEPTH - 1)) == (INT, 14)
    with pytest.raises(FlowcError) as info:
        evaluate("-(" * (MAX_DEPTH + 1) + "i" + ")" * (MAX_DEPTH + 1))
    assert info.value.message == (
        "expression is nested too deeply to compile (the limit is about 48 levels of "
        "parentheses, function calls, 'not', '-' or 'case' inside one another)")
    assert info.value.hint == "compute inner parts in an earlier 'map' step"



def test_internal_functions_are_hidden_from_scripts() -> None:
    # _sql_div/_sql_mod are what the SQL translator emits for '/' and '%'; a script cannot
    # call them, and no hint offers them
    for name in ("_sql_div", "_sql_mod"):
        with pytest.raises(FlowcError, match=f"unknown function '{name}'") as info:
            evaluate(f"{name}(i, 2)")
        assert "_sql" not in (info.value.hint or "")
    with pytest.raises(FlowcError, match="unknown function 'sql_div'") as info:
        evaluate("sql_div(i, 2)")
    assert "_sql_div" not in (info.value.hint or "")
    with pytest.raises(FlowcError, match="unknown aggregate function '_sql_mod'"):
        compile_source("source s (i int) values (1);\n"
                       "s | key by i | aggregate _sql_mod(i, 2) as m | print;", "a.flow")
    # the translator's own calls still compile
    span = Span("q.sql", 1, 1)
    node = A.Call("_sql_div", (A.Literal(7, INT, span), A.Literal(2, INT, span)), span, span,
                  internal=True)
    compiler = ExprCompiler(Scope([]))
    typed = compiler.compile(node)
    assert typed.type == INT and compiler.code_fn(typed.code, ("r",), span)(()) == 3
