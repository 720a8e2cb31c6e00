"""Vectorised HASH routing of keys made of several fields (``arrow/route.py``: distinct
combinations once, then a take) == the per-record rule of ``executor.routing``, nulls,
-0.0 and NaN included."""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from flowc.executor import routing
from flowc.executor.arrow import convert
from flowc.executor.arrow.route import Router
from flowc.operators import CodeFn
from flowc.transformations import KeySelector, Partitioner, PartitionerKind
from flowc.types import DOUBLE, INT, STRING, Field, Schema
from flowc.vector import VCol

SCHEMA = Schema((Field("s", STRING), Field("n", INT), Field("x", DOUBLE)))
KEY = KeySelector(CodeFn(lambda r: (r[0], r[1], r[2]), "(r[0], r[1], r[2],)", ("r",),
                         vector=(VCol(0, STRING), VCol(1, INT), VCol(2, DOUBLE))),
                  ("s", "n", "x"), "s, n, x")


@settings(max_examples=200, deadline=None, suppress_health_check=list(HealthCheck))
@given(rows=st.lists(st.tuples(st.sampled_from(["a", "b", "ü", None]),
                               st.sampled_from([0, 1, -7, 1 << 40, None]),
                               st.sampled_from([0.0, -0.0, 1.5, float("nan"), None])),
                     min_size=1, max_size=60),
       t=st.integers(1, 5), max_par=st.sampled_from([7, 128]))
def test_multi_field_hash_routing_equals_per_record(rows: list[Any], t: int,
                                                    max_par: int) -> None:
    part = Partitioner(PartitionerKind.HASH, KEY)
    args = dict(producer=0, targets=list(range(t)), t=t, max_par=max_par, seed="e")
    select = routing.make_selector(part, **args)
    chunk = convert.from_rows(rows, [None] * len(rows), convert.arrow_schema(SCHEMA))
    expected: dict[int, list[Any]] = {}
    for r in chunk.rows():
        expected.setdefault(select(r), []).append(r)
    got = {target: part_.rows() for target, part_ in Router(part, **args).split(chunk)}
    assert got.keys() == expected.keys()
    for target, want in expected.items():  # NaN != NaN: compare the texts
        assert repr(got[target]) == repr(want)


@settings(max_examples=200, deadline=None, suppress_health_check=list(HealthCheck))
@given(words=st.lists(st.text(max_size=40), min_size=1, max_size=30),
       longs=st.lists(st.integers(-(1 << 63), (1 << 63) - 1), min_size=1, max_size=30),
       cut=st.integers(0, 5))
def test_vectorised_java_hashes_equal_java_hash_code(words: list[str], longs: list[int],
                                                     cut: int) -> None:
    """``java_hashes`` (ASCII strings and integers, numpy) == ``java_hash_code`` per value;
    a string array with another character is left to the per-value code (None)."""
    import pyarrow as pa

    from flowc.executor.arrow.route import java_hashes
    from flowc.keygroups import java_hash_code

    ascii_words = [w.encode("ascii", "ignore").decode() for w in words]
    for arr, values in ((pa.array(ascii_words), ascii_words),
                        (pa.array(ascii_words, pa.large_string()), ascii_words),
                        (pa.array(longs, pa.int64()), longs)):
        assert list(java_hashes(arr)) == [java_hash_code(v) for v in values]
        part = arr.slice(min(cut, len(values)))  # an array with an offset
        assert list(java_hashes(part)) == [java_hash_code(v) for v in values[cut:]]
    if any(ord(ch) >= 128 for w in words for ch in w):
        assert java_hashes(pa.array(words)) is None


@settings(max_examples=100, deadline=None, suppress_health_check=list(HealthCheck))
@given(keys=st.lists(st.sampled_from(["u1", "u20", "", "ü", "abc" * 9]), min_size=1,
                     max_size=60), t=st.integers(1, 5), max_par=st.sampled_from([7, 128]))
def test_one_field_hash_routing_equals_per_record(keys: list[str], t: int,
                                                  max_par: int) -> None:
    schema = Schema((Field("s", STRING), Field("n", INT)))
    key = KeySelector(CodeFn(lambda r: r[0], "r[0]", ("r",), vector=(VCol(0, STRING),)),
                      ("s",), "s")
    part = Partitioner(PartitionerKind.HASH, key)
    args = dict(producer=0, targets=list(range(t)), t=t, max_par=max_par, seed="e")
    select = routing.make_selector(part, **args)
    rows = [(k, i) for i, k in enumerate(keys)]
    chunk = convert.from_rows(rows, [None] * len(rows), convert.arrow_schema(schema))
    expected: dict[int, list[Any]] = {}
    for r in chunk.rows():
        expected.setdefault(select(r), []).append(r)
    got = {target: list(c.rows()) for target, c in Router(part, **args).split(chunk)}
    assert got == expected
