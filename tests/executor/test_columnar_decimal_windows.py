"""Vectorised DECIMAL window aggregates (``arrow/windows.py``): ``sum`` (exact, in
decimal256; NULL from 10^38 on, the row code's SUM), ``avg`` (the row code's HALF_UP
quotient at DECIMAL(38, max(6, s))), ``first`` / ``last`` (by position: pyarrow has no
decimal first / last kernel), ``min`` / ``max`` and counts, on random DECIMAL(p, s) values
(nulls, negatives, zeros, the precision's limits) in BATCH tumbling / sliding / cumulating
windows
(folded, spilled) and STREAMING ones without allowed lateness (spilled) == the runtime
WindowOperator, scales compared (``repr`` of each ``Decimal``); a STREAMING window's state
through a row snapshot and back."""

from __future__ import annotations

import dataclasses
from decimal import Decimal
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from tests.executor.test_columnar_nan_extremes import (
    WINDOWS,
    _batch_chunks,
    _columnar,
    _runtime,
    _runtime_on,
    cumulating,
)
from tests.executor.test_columnar_rolling_distinct import _reference
from tests.executor.test_columnar_windows import MARKS, _chunks, _stream_member

from flowc.executor.arrow import convert, spill, windows
from flowc.executor.arrow.chain import ChainProgram
from flowc.executor.arrow.plan import plan_members
from flowc.executor.arrow.rolling import compile_start
from flowc.executor.arrow.sessions import session_window
from flowc.executor.arrow.stream_windows import StreamWindow
from flowc.executor.runtime.core import TaskInfo
from flowc.executor.runtime.factory import create_operator
from flowc.operators import CollectSink
from flowc.parser import compile_source

TYPES = [(5, 2), (38, 0), (12, 6), (20, 10)]
AGGS = ["sum(d) as sd", "avg(d) as ad", "first(d) as fd", "last(d) as ld", "min(d) as mn",
        "max(d) as mx", "count(d) as cd", "sum(x) as sx"]


def _values(p: int, s: int) -> st.SearchStrategy[Decimal | None]:
    top = 10 ** p - 1
    edge = st.sampled_from([top, -top, 0, 1, -1, top // 3])
    return st.one_of(st.none(), edge, st.integers(-top, top)).map(
        lambda u: None if u is None else Decimal(f"{u}e-{s}"))


@st.composite
def _case(draw: Any) -> tuple[tuple[int, int], list[Any]]:
    p, s = draw(st.sampled_from(TYPES))
    rows = draw(st.lists(st.tuples(st.sampled_from(["a", "b"]), _values(p, s),
                                   st.sampled_from([None, 0.5, -2.0]),
                                   st.integers(0, 30_000)), min_size=1, max_size=50))
    return (p, s), rows


def _member(ps: tuple[int, int], window: str, aggs: list[str], mode: str,
            kind: str = "window") -> Any:
    return cumulating(_stream_member(
        f"source s (k string, d decimal({ps[0]}, {ps[1]}), x double, ts timestamp) "
        "from csv 'x.csv' watermark ts - 1s;\n"
        f"let r = s | key by k | window {window.replace('cumulate', 'tumbling 10s')} "
        f"| aggregate {', '.join(aggs)};\n"
        "r | print;\n", kind, mode), window)


AGG_LISTS = st.lists(st.sampled_from(AGGS), min_size=1, max_size=4, unique=True)


@settings(max_examples=120, deadline=None, suppress_health_check=list(HealthCheck))
@given(case=_case(), aggs=AGG_LISTS, chunk=st.integers(1, 7), compact=st.integers(1, 9),
       limit=st.sampled_from([1, 1 << 30]),
       window=st.sampled_from(WINDOWS))
# 38 nines twice: the sum passes 10^38 (NULL), the average stays; first / last skip nulls.
@example(case=((38, 0), [("a", None, None, 0), ("a", Decimal(10 ** 38 - 1), None, 1),
                         ("a", Decimal(10 ** 38 - 1), None, 2), ("a", None, None, 3)]),
         aggs=["sum(d) as sd", "avg(d) as ad", "first(d) as fd", "last(d) as ld"], chunk=1,
         compact=1, limit=1, window="tumbling 5s")
# an average rounding HALF_UP at scale 6: 0.01 / 3, -0.02 / 3
@example(case=((5, 2), [("a", Decimal("0.01"), None, 0), ("a", Decimal("0.00"), None, 1),
                        ("a", Decimal("0.00"), None, 2), ("b", Decimal("-0.02"), None, 0),
                        ("b", Decimal("0.00"), None, 0), ("b", Decimal("0.00"), None, 0)]),
         aggs=["avg(d) as ad", "sum(d) as sd"], chunk=2, compact=2, limit=1 << 30,
         window="tumbling 5s")
def test_batch_decimal_windows_equal_runtime_operator(case: Any, aggs: list[str], chunk: int,
                                                      compact: int, limit: int,
                                                      window: str) -> None:
    ps, rows = case
    m = _member(ps, window, aggs, "batch")
    schema = convert.arrow_schema(m.in_schema)
    chunks = _batch_chunks(rows, chunk, schema)
    expected = _runtime(m, chunks, batch=True)
    old = windows.COMPACT_ROWS
    windows.COMPACT_ROWS = compact
    try:
        w = spill.SpillingWindow(m.spec, m.key, m.in_schema,
                                 convert.arrow_schema(m.out_schema), limit=limit)
        assert _columnar(w, chunks, schema, batch=True) == expected
    finally:
        windows.COMPACT_ROWS = old


@settings(max_examples=120, deadline=None, suppress_health_check=list(HealthCheck))
@given(case=_case(), aggs=AGG_LISTS, marks=MARKS,
       cuts=st.lists(st.integers(0, 100), max_size=4),
       window=st.sampled_from(WINDOWS),
       lateness=st.sampled_from(["", " allowed lateness 3s"]),
       limit=st.sampled_from([None, 1]))
def test_streaming_decimal_windows_equal_runtime_operator(case: Any, aggs: list[str],
                                                          marks: list[int], cuts: list[int],
                                                          window: str, lateness: str,
                                                          limit: int | None) -> None:
    """With allowed lateness the late firings are running aggregates (``running.py``)."""
    ps, rows = case
    m = _member(ps, window + lateness, aggs, "streaming")
    schema = convert.arrow_schema(m.in_schema)
    chunks = _chunks(rows, marks, cuts, schema)
    expected = _runtime(m, chunks, batch=False)
    out = convert.arrow_schema(m.out_schema)
    w = StreamWindow(m.spec, m.key, m.in_schema, out) if limit is None or lateness else \
        spill.SpillingStreamWindow(m.spec, m.key, m.in_schema, out, limit=limit)
    assert _columnar(w, chunks, schema, batch=False) == expected


def test_a_sum_beyond_its_type_fails_like_the_row_operators_record() -> None:
    """DECIMAL(38, 2) values summing past 10^36 (but below 10^38, where the row code's
    SUM is NULL) do not fit the output's DECIMAL(38, 2): the task fails as it did with
    the row operator inside the chain (its record converted to the declared columns)."""
    m = _member((38, 2), "tumbling 5s", ["sum(d) as sd"], "batch")
    schema = convert.arrow_schema(m.in_schema)
    big = Decimal(f"{10 ** 38 - 1}e-2")
    chunks = _batch_chunks([("a", big, None, 0), ("a", big, None, 1)], 2, schema)
    w = windows.BatchWindow(m.spec, m.key, m.in_schema, convert.arrow_schema(m.out_schema))
    with pytest.raises(TypeError, match="does not fit its declared type decimal128"):
        _columnar(w, chunks, schema, batch=True)


@settings(max_examples=120, deadline=None, suppress_health_check=list(HealthCheck))
@given(case=_case(), aggs=AGG_LISTS, marks=MARKS,
       cuts=st.lists(st.integers(0, 100), max_size=4), gap=st.sampled_from(["1s", "3s"]),
       mode=st.sampled_from(["batch", "streaming"]), chunk=st.integers(1, 9))
def test_decimal_sessions_equal_runtime_operator(case: Any, aggs: list[str], marks: list[int],
                                                 cuts: list[int], gap: str, mode: str,
                                                 chunk: int) -> None:
    ps, rows = case
    batch = mode == "batch"
    m = _member(ps, f"session gap {gap}", aggs, mode, "session")
    schema = convert.arrow_schema(m.in_schema)
    chunks = _batch_chunks(rows, chunk, schema) if batch else _chunks(rows, marks, cuts,
                                                                       schema)
    expected = _runtime(m, chunks, batch)
    w = session_window(m.spec, m.key, m.in_schema, convert.arrow_schema(m.out_schema),
                       streaming=not batch)
    assert _columnar(w, chunks, schema, batch) == expected


ROLLING_AGGS = ["sum(d) as sd", "avg(d) as ad", "first(d) as fd", "last(d) as ld",
                "min(d) as mn", "max(d) as mx", "count(distinct d) as dd"]


@settings(max_examples=120, deadline=None, suppress_health_check=list(HealthCheck))
@given(case=_case(), aggs=st.lists(st.sampled_from(ROLLING_AGGS), min_size=1, max_size=4,
                                   unique=True),
       cuts=st.lists(st.integers(0, 50), max_size=4),
       mode=st.sampled_from(["batch", "streaming"]))
def test_decimal_rolling_aggregates_equal_reference(tmp_path: Path, case: Any,
                                                    aggs: list[str], cuts: list[int],
                                                    mode: str) -> None:
    """The rolling ``aggregate`` of DECIMALs vectorised (exact running sums, the row
    code's averages per record; its changelog) == the reference executor, fed in one
    chunk or cut into several."""
    (p, s), rows = case
    data = tmp_path / "d.csv"
    data.write_text("k,d,ts\n" + "".join(
        f"{k},{'' if d is None else d},{t}\n" for k, d, _, t in rows))
    text = (f"source s (k string, d decimal({p}, {s}), ts timestamp) from csv '{data}' "
            "watermark ts - 1s;\n"
            f"let result = s | key by k | aggregate {', '.join(aggs)};\n")
    want = _reference(text, tmp_path, mode)
    values = [(k, d, t) for k, d, _, t in rows]
    assert _rolling(text, tmp_path, mode, values, []) == want, text
    assert _rolling(text, tmp_path, mode, values, cuts) == want, text


def _rolling(text: str, where: Path, mode: str, values: list[Any], cuts: list[int]
             ) -> list[str]:
    """The columnar members of the rolling aggregate fed the records in chunks
    (``test_columnar_rolling_distinct._chunked`` for records of any schema)."""
    script = compile_source(text, str(where / "job.flow"), options={"mode": mode})
    script.streams["result"].stream.sink_to(CollectSink("result"))
    members = plan_members(script.env.get_job_graph())
    assert isinstance(members, dict), members
    (start,) = [m for ms in members.values() for m in ms if m.kind == "rolling_start"]
    assert start.spec.agg is not None  # vectorised, not the row code (``RollingRows``)
    (vertex,) = [ms for ms in members.values() if ms[0].kind == "rolling"]
    vertex = [dataclasses.replace(m, outputs=[("slot", 0)]) if m.kind == "sink" else m
              for m in vertex]
    got: list[str] = []
    program = ChainProgram(vertex, 0, 1, 128, "t",
                           lambda _slot, c: got.extend(repr(r) for r in c.rows()),
                           mode == "streaming")
    step = compile_start(start.spec, convert.arrow_schema(start.out_schema))
    in_schema = convert.arrow_schema(start.in_schema)
    n = len(values)
    bounds = sorted({0, n, *(c % (n + 1) for c in cuts)})
    for lo, hi in zip(bounds, bounds[1:]):
        part = values[lo:hi]
        chunk = step(convert.from_rows(part, [r[-1] for r in part], in_schema))
        marks = (np.asarray([chunk.num_rows], np.int64), np.asarray([hi], np.int64))
        program.push(vertex[0].nid, convert.Chunk(chunk.batch, chunk.ts, marks)
                     if mode == "streaming" else chunk)
    program.finish()
    program.close()
    return got


def test_decimal_windows_plan_vectorised() -> None:
    """BATCH and STREAMING windows (allowed lateness too) run DECIMAL sums, averages,
    first and last vectorised."""
    def kinds(mode: str, lateness: str) -> list[str]:
        script = compile_source(
            "source s (k string, d decimal(10, 2), ts timestamp) from csv 'x.csv' "
            f"watermark ts - 1s;\ns | key by k | window tumbling 5s{lateness} "
            "| aggregate sum(d) as sd, avg(d) as ad, first(d) as fd, last(d) as ld "
            "| print;\n", "t.flow", options={"mode": mode})
        members = plan_members(script.env.get_job_graph())
        assert isinstance(members, dict), members
        return [m.kind for ms in members.values() for m in ms]
    assert "window" in kinds("batch", "")
    assert "window" in kinds("streaming", "")
    assert "window" in kinds("streaming", " allowed lateness 2s")
    for mode in ("batch", "streaming"):
        script = compile_source(
            "source s (k string, d decimal(10, 2), ts timestamp) from csv 'x.csv' "
            "watermark ts - 1s;\ns | key by k | window session gap 2s "
            "| aggregate sum(d) as sd, first(d) as fd | print;\n", "t.flow",
            options={"mode": mode})
        members = plan_members(script.env.get_job_graph())
        assert isinstance(members, dict), members
        assert "session" in [m.kind for ms in members.values() for m in ms], mode


def test_streaming_decimal_window_state_round_trips() -> None:
    """A STREAMING DECIMAL window's partials handed to the row operator (a snapshot) and
    back aggregate on to the row operator's values."""
    from flowc.executor.streaming.window_state import window_from_row, window_to_row

    m = _member((12, 6), "tumbling 5s", AGGS[:7], "streaming")
    schema = convert.arrow_schema(m.in_schema)
    out = convert.arrow_schema(m.out_schema)
    d = Decimal
    before = [("a", d("1.000001"), None, 1_000), ("a", None, None, 1_100),
              ("b", d("-0.000002"), None, 1_200)]
    after = [("a", d("2.5"), None, 1_500), ("b", None, None, 1_600),
             ("b", d("0.000001"), None, 1_700)]
    w = StreamWindow(m.spec, m.key, m.in_schema, out)
    w.add(_chunks(before, [0], [], schema)[0])
    op = create_operator(m.spec, TaskInfo("w", 0, 1, 128, False), (m.key,))
    op.open()
    window_to_row(w, op, m.in_schema)
    restored = StreamWindow(m.spec, m.key, m.in_schema, out)
    window_from_row(op, restored, m.in_schema)
    chunks = _chunks(after, [0], [], schema)
    expected = _runtime_on(op, chunks)
    assert _columnar(restored, chunks, schema, batch=False) == expected


def test_streaming_decimal_window_rows_round_trip_with_lateness() -> None:
    """With allowed lateness the state is the rows: a restored group's DECIMAL sum (wider
    than its column's precision) is one row of the widened sum column, and late firings
    aggregate on from it to the row operator's values."""
    from flowc.executor.streaming.window_state import window_from_row, window_to_row

    m = _member((5, 2), "tumbling 5s allowed lateness 3s",
                ["sum(d) as sd", "avg(d) as ad", "last(d) as ld", "count(d) as c"],
                "streaming")
    schema = convert.arrow_schema(m.in_schema)
    out = convert.arrow_schema(m.out_schema)
    d = Decimal
    before = [("a", d("999.99"), None, 1_000), ("a", d("999.99"), None, 1_100)]
    after = [("a", d("0.01"), None, 1_500), ("a", d("-5.00"), None, 1_600)]
    w = StreamWindow(m.spec, m.key, m.in_schema, out)
    w.add(_chunks(before, [0], [], schema)[0])
    op = create_operator(m.spec, TaskInfo("w", 0, 1, 128, False), (m.key,))
    op.open()
    window_to_row(w, op, m.in_schema)
    restored = StreamWindow(m.spec, m.key, m.in_schema, out)
    window_from_row(op, restored, m.in_schema)
    # the watermark passes the window's end (a firing), then late records fire it again
    chunks = _chunks(after, [6_000], [], schema)
    expected = _runtime_on(op, chunks)
    assert _columnar(restored, chunks, schema, batch=False) == expected
    assert len([r for r in expected[0] if "'wm'" not in r]) == 3  # fired, then twice late
