"""The columnar join operators (``executor/arrow/joins.py``) against the row runtime's
operators on random merged inputs: records of both sides and watermarks in any order
(STREAMING: late records, buffers cleaned at every watermark rise, recreated buckets) or
no watermarks (BATCH), inclusive and exclusive interval bounds, tumbling and sliding
window joins, declarative (column takes) and Python join functions. No Spark."""

from __future__ import annotations

from typing import Any

import numpy as np
import pyarrow as pa
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from flowc.api.connected import CoGroupWindowFunction, UnionKey
from flowc.api.functions import ProcessJoinFunction
from flowc.executor.arrow import convert, joins
from flowc.executor.runtime.core import LONG_MAX, LONG_MIN, TaskInfo
from flowc.executor.runtime.factory import create_operator
from flowc.operators import CodeFn, IntervalJoinOp, WindowOp
from flowc.transformations import KeySelector
from flowc.types import INT, STRING, Field, Schema
from flowc.vector import VCol, VJoinRows
from flowc.windowing import SlidingEventTimeWindows, TumblingEventTimeWindows

SIDE = Schema((Field("k", STRING), Field("i", INT)))
OUT = Schema((*SIDE.fields, Field("k2", STRING), Field("i2", INT)))
KEY = KeySelector(CodeFn(lambda r: (r[0],), "(r[0],)", ("r",), vector=(VCol(0, STRING),)),
                  ("k",), "k")

events = st.lists(st.one_of(
    st.tuples(st.just("rec"), st.integers(0, 1), st.sampled_from(["a", "b", None]),
              st.integers(0, 12)),
    # Watermarks often equal to record timestamps (the cleanup boundary cases).
    st.tuples(st.just("wm"), st.integers(-2, 14)),
), max_size=40)


class Rows(ProcessJoinFunction):
    """A Python join function (row by row on the pairs) that reads the context."""

    def process_element(self, left: Any, right: Any, ctx: Any) -> Any:
        yield left + (f"{right[0]}@{ctx.get_left_timestamp()}-{ctx.get_right_timestamp()}",
                      right[1] * 1000 + ctx.timestamp())


class Concat(ProcessJoinFunction):
    vector = VJoinRows()

    def process_element(self, left: Any, right: Any, ctx: Any) -> Any:
        yield tuple(left) + tuple(right)


def _reference(op: Any, seq: list[Any], streaming: bool) -> tuple[list[Any], int]:
    out: list[Any] = []
    op.out = lambda v, ts: out.append((tuple(v), ts))
    op.open()
    for i, e in enumerate(seq):
        if e[0] == "wm":
            if streaming:
                op.on_watermark(e[1])
            continue
        _, side, key, ts = e
        if op.two_input:
            (op.process1 if side == 0 else op.process2)((key, i), ts)
        else:
            op.process((side + 1, (key, i)), ts)
    if streaming:
        op.on_watermark(LONG_MAX)
    else:
        op.finish()
    return out, op.late_records_dropped


def _columnar(join: Any, seq: list[Any], streaming: bool) -> tuple[list[Any], int]:
    schema = convert.arrow_schema(SIDE)
    sides = []
    wm, place = LONG_MIN, 0
    recs: list[list[Any]] = [[], []]
    for i, e in enumerate(seq):
        if e[0] == "wm":
            wm = max(wm, e[1]) if streaming else wm
            continue
        recs[e[1]].append(((e[2], i), e[3], place, wm))
        place += 1
    for side in (0, 1):
        r = recs[side]
        c = convert.from_rows([x[0] for x in r], [x[1] for x in r], schema)
        sides.append(joins.Side(c, np.asarray([x[2] for x in r], np.int64),
                                np.asarray([x[3] for x in r], np.int64)))
    got = join.run(joins.JoinInput((sides[0], sides[1])))
    return ([] if got is None else list(zip(got.rows(), got.timestamps())), join.dropped)


@settings(max_examples=400, deadline=None, suppress_health_check=list(HealthCheck))
@given(seq=events, streaming=st.booleans(), lower=st.integers(-6, 3), width=st.integers(0, 6),
       lower_inclusive=st.booleans(), upper_inclusive=st.booleans(), python=st.booleans())
# Buckets of one key in creation order, not timestamp order (a@1 before a@0).
@example(seq=[("rec", 0, "a", 1), ("rec", 0, "a", 0), ("rec", 0, "a", 1), ("rec", 1, "a", 0)],
         streaming=False, lower=-2, width=3, lower_inclusive=False, upper_inclusive=False,
         python=False)
def test_interval_join_equals_row_operator(seq: list[Any], streaming: bool, lower: int,
                                           width: int, lower_inclusive: bool,
                                           upper_inclusive: bool, python: bool) -> None:
    fn = Rows() if python else Concat()
    spec = IntervalJoinOp(lower, lower + width, fn, lower_inclusive, upper_inclusive)
    op = create_operator(spec, TaskInfo("j", 0, 1, 128, not streaming), (KEY, KEY))
    expected = _reference(op, seq, streaming)
    plan = joins.JoinPlan("interval_join", spec, (0, 1), (SIDE, SIDE), ([0], [0]),
                          not python, spec.fn)
    join = joins.compile_join(plan, convert.arrow_schema(OUT), streaming)
    assert _columnar(join, seq, streaming) == expected


@settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))
@given(seq=events, streaming=st.booleans(), sliding=st.booleans(), python=st.booleans())
def test_window_join_equals_row_operator(seq: list[Any], streaming: bool, sliding: bool,
                                         python: bool) -> None:
    assigner = SlidingEventTimeWindows(9, 3) if sliding else TumblingEventTimeWindows(5)
    if python:
        fn: Any = lambda a, b: (a[0], a[1] * 10, f"{b[0]}!", b[1])  # noqa: E731
    else:
        fn = CodeFn(lambda a, b: a + b, "a + b", ("a", "b"), vector=VJoinRows())
    spec = WindowOp(assigner, window_fn=CoGroupWindowFunction(fn))
    union = KeySelector(UnionKey(KEY, KEY), (), "UnionKeySelector")
    op = create_operator(spec, TaskInfo("w", 0, 1, 128, not streaming), (union,))
    expected = _reference(op, seq, streaming)
    plan = joins.JoinPlan("window_join", spec, (0, 1), (SIDE, SIDE), ([0], [0]), not python)
    join = joins.compile_join(plan, convert.arrow_schema(OUT), streaming)
    assert _columnar(join, seq, streaming) == expected


def test_key_codes_match_equal_keys_only() -> None:
    """Codes are equal exactly when the key tuples are (nulls equal, -0.0 == 0.0)."""
    left = [pa.array(["a", None, "b", "a"]), pa.array([0.0, 1.0, None, -0.0])]
    right = [pa.array([None, "a", "b"]), pa.array([1.0, 0.0, None])]
    lc, rc = joins.key_codes(left, right)
    assert lc[0] == lc[3] == rc[1] and lc[1] == rc[0] and lc[2] == rc[2]
    assert len({lc[0], lc[1], lc[2]}) == 3


def _interval(seq: list[Any], lower: int, upper: int) -> tuple[Any, Any]:
    spec = IntervalJoinOp(lower, upper, Concat())
    op = create_operator(spec, TaskInfo("j", 0, 1, 128, False), (KEY, KEY))
    plan = joins.JoinPlan("interval_join", spec, (0, 1), (SIDE, SIDE), ([0], [0]), True,
                          spec.fn)
    join = joins.compile_join(plan, convert.arrow_schema(OUT), True)
    return _reference(op, seq, True), _columnar(join, seq, True)


def test_interval_join_buffer_registered_at_the_watermark_lives_until_it_rises() -> None:
    # upper 0: the left record's cleanup timer (its own timestamp) is at the watermark
    # already; it fires at the next rise, so the right record still finds it.
    expected, actual = _interval([("wm", 5), ("rec", 0, "a", 5), ("rec", 1, "a", 5)], -2, 0)
    assert expected == actual == ([(("a", 1, "a", 2), 5)], 0)


def test_interval_join_recreated_bucket_comes_after_the_older_ones() -> None:
    # The rise to 5 removes bucket a@5; the next a@5 (not late) starts a new bucket after
    # a@6, and the right record meets a@6 first, as the row operator's dict orders them.
    seq = [("wm", 3), ("rec", 0, "a", 5), ("rec", 0, "a", 6), ("wm", 5), ("rec", 0, "a", 5),
           ("rec", 1, "a", 5)]
    expected, actual = _interval(seq, -2, 0)
    assert expected == actual == ([(("a", 2, "a", 5), 6), (("a", 4, "a", 5), 5)], 0)
