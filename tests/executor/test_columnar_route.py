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
