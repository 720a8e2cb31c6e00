"""min / max of doubles holding NaN, -0.0 / 0.0, infinities and nulls: the vectorised
windows (BATCH tumbling / sliding, folded and spilled; STREAMING with and without allowed
lateness, spilled; cumulating ones as SQL's CUMULATE; BATCH and STREAMING sessions,
merges included) and the rolling
aggregate give exactly the row code's values - a NaN met first is kept, a later one is
skipped, the first of equal zeros is kept (Java's ``<`` / ``>`` on doubles, as Flink's
MinAggFunction / MaxAggFunction) - compared by ``repr`` (``nan``, ``-0.0``) against the
runtime operators and the reference executor."""

from __future__ import annotations

import dataclasses
from typing import Any

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from tests.executor.test_columnar_rolling_distinct import _chunked, _reference, _text, _write
from tests.executor.test_columnar_windows import MARKS, _chunks, _run, _stream_member

from flowc.executor.arrow import convert, spill, windows
from flowc.executor.arrow.sessions import session_window
from flowc.executor.arrow.stream_windows import StreamWindow
from flowc.executor.runtime.core import LONG_MAX, TaskInfo
from flowc.executor.runtime.factory import create_operator
from flowc.windowing import CumulativeEventTimeWindows

NAN = float("nan")
ODD = [NAN, -0.0, 0.0, float("inf"), float("-inf"), None, 1.5, -2.0]
ROWS = st.lists(st.tuples(st.sampled_from(["a", "b", None]), st.integers(0, 3),
                          st.sampled_from(ODD), st.integers(0, 30_000)),
                min_size=1, max_size=60)
AGGS = st.lists(st.sampled_from(["min(x) as mx", "max(x) as xx", "count(*) as c",
                                 "min(n) as mn", "max(x * -1.0) as nx", "first(x) as fx"]),
                min_size=1, max_size=3, unique=True).map(
    lambda a: a if any(s.startswith(("min(x", "max(x")) for s in a) else ["min(x) as mx", *a])
HEAD = ("source s (k string, n int, x double, ts timestamp) from csv 'x.csv' "
        "watermark ts - 1s;\n")


def _member(window: str, aggs: list[str], mode: str, kind: str = "window") -> Any:
    lateness = " late into late_r" if mode == "streaming" else ""
    tail = "r | print; late_r | print;\n" if lateness else "r | print;\n"
    return cumulating(_stream_member(
        HEAD + f"let r = s | key by k | window {window.replace('cumulate', 'tumbling 10s')}"
        f"{lateness} | aggregate {', '.join(aggs)};\n" + tail, kind, mode), window)


def cumulating(m: Any, window: str) -> Any:
    """``window`` ``cumulate ...``: the member with SQL CUMULATE's assigner (10 s epochs
    growing by 5 s; .flow has no cumulating window)."""
    if not window.startswith("cumulate"):
        return m
    return dataclasses.replace(m, spec=dataclasses.replace(
        m.spec, assigner=CumulativeEventTimeWindows.of(10_000, 5_000)))


WINDOWS = ["tumbling 5s", "sliding 10s every 5s", "cumulate"]


def _shown(out: list[Any]) -> list[str]:
    return [repr((tuple(r) if r != "wm" else r, t)) for r, t in out]


def _runtime(m: Any, chunks: list[Any], batch: bool) -> tuple[list[str], list[str]]:
    """The runtime WindowOperator fed the chunks' records (and watermarks) in order."""
    op = create_operator(m.spec, TaskInfo("w", 0, 1, 128, batch), (m.key,))
    op.open()
    return _runtime_on(op, chunks, batch)


def _runtime_on(op: Any, chunks: list[Any], batch: bool = False) -> tuple[list[str],
                                                                         list[str]]:
    """The opened operator ``op`` fed the chunks' records and watermarks, then the end."""
    out: list[Any] = []
    late: list[Any] = []
    op.out = lambda v, ts: out.append((v, ts))
    op.out_wm = lambda w: out.append(("wm", w))
    op.side = lambda tag, v, ts: late.append((v, ts))
    for c in chunks:
        pos, vals = c.marks if c.marks is not None else ([], [])
        k = 0
        rows, ts = c.rows(), c.timestamps()
        for i in range(len(rows) + 1):
            while k < len(pos) and pos[k] == i:
                op.on_watermark(int(vals[k]))
                k += 1
            if i < len(rows):
                op.process(rows[i], ts[i])
    if batch:
        op.finish()
    else:
        op.on_watermark(LONG_MAX)
    return _shown(out), _shown(late)


def _columnar(w: Any, chunks: list[Any], schema: Any, batch: bool) -> tuple[list[str],
                                                                            list[str]]:
    late: list[Any] = []

    def step(c: Any) -> Any:
        result = w.add(c)
        if getattr(w, "late", None) is not None:
            late.extend(r for r in _run(lambda x: x, [w.late]) if r[0] != "wm")
        return result
    if batch:
        for c in chunks:
            step(c)
        fired = list(w.fired()) if hasattr(w, "fired") else [w.fire()]
        return _shown(_run(lambda c: c, fired)), _shown(late)
    end = convert.empty(schema)
    final = convert.Chunk(end.batch, end.ts, ([0], [LONG_MAX]))
    out = _run(step, [*chunks, final])
    if hasattr(w, "fired"):  # a spilled window fires the final watermark at the end
        for c in w.fired():
            out += _run(lambda x: x, [c])
            if getattr(w, "late", None) is not None:
                late.extend(r for r in _run(lambda x: x, [w.late]) if r[0] != "wm")
                w.late = None
    return _shown(out), _shown(late)


def _batch_chunks(rows: list[Any], chunk: int, schema: Any) -> list[Any]:
    return [convert.from_rows(rows[i:i + chunk], [r[3] for r in rows[i:i + chunk]], schema)
            for i in range(0, len(rows), chunk)]


@settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
@given(rows=ROWS, aggs=AGGS, chunk=st.integers(1, 7), compact=st.integers(1, 9),
       limit=st.sampled_from([1, 1 << 30]),
       window=st.sampled_from(WINDOWS))
# A NaN first keeps the window NaN; a NaN later is skipped; 0.0 before -0.0 stays 0.0 -
# across a fold (compact 1) and a spill (limit 1) too.
@example(rows=[("a", 0, NAN, 0), ("a", 0, 1.5, 1), ("b", 0, 0.0, 2), ("b", 0, -0.0, 3),
               ("b", 0, NAN, 4), ("a", 0, -2.0, 5)],
         aggs=["min(x) as mx", "max(x) as xx"], chunk=1, compact=1, limit=1,
         window="tumbling 5s")
def test_batch_windows_equal_runtime_operator(rows: list[Any], aggs: list[str], chunk: int,
                                              compact: int, limit: int, window: str) -> None:
    m = _member(window, aggs, "batch")
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


@settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
@given(rows=ROWS, marks=MARKS, cuts=st.lists(st.integers(0, 100), max_size=4), aggs=AGGS,
       window=st.sampled_from(WINDOWS),
       lateness=st.sampled_from(["", " allowed lateness 3s"]),
       limit=st.sampled_from([None, 1]))
@example(rows=[("a", 0, 1.5, 1_000), ("a", 0, NAN, 2_000), ("a", 0, NAN, 500),
               ("a", 0, -0.0, 600), ("a", 0, 0.0, 700)], marks=[0, 3_000], cuts=[1, 3],
         aggs=["min(x) as mx", "max(x) as xx"], window="tumbling 5s",
         lateness=" allowed lateness 3s", limit=None)
def test_streaming_windows_equal_runtime_operator(rows: list[Any], marks: list[int],
                                                  cuts: list[int], aggs: list[str],
                                                  window: str, lateness: str,
                                                  limit: int | None) -> None:
    rows = [r for r in rows if r[0] is not None]
    m = _member(window + lateness, aggs, "streaming")
    schema = convert.arrow_schema(m.in_schema)
    chunks = _chunks(rows, marks, cuts, schema)
    expected = _runtime(m, chunks, batch=False)
    out = convert.arrow_schema(m.out_schema)
    w = StreamWindow(m.spec, m.key, m.in_schema, out) if limit is None or lateness else \
        spill.SpillingStreamWindow(m.spec, m.key, m.in_schema, out, limit=limit)
    assert _columnar(w, chunks, schema, batch=False) == expected


@settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
@given(rows=ROWS, marks=MARKS, cuts=st.lists(st.integers(0, 100), max_size=4), aggs=AGGS,
       gap=st.sampled_from(["1s", "3s", "7s"]), mode=st.sampled_from(["batch", "streaming"]),
       chunk=st.integers(1, 9))
# [5s, 8s) with 1.5, [10s, 13s) with NaN then -2.0: the bridge at 8s merges them, the
# earlier window's accumulator first (1.5), then the other's (NaN: skipped), then 0.0.
@example(rows=[("a", 0, NAN, 10_000), ("a", 0, -2.0, 10_500), ("a", 0, 1.5, 5_000),
               ("a", 0, 0.0, 8_000)], marks=[0, 1], cuts=[3], gap="3s",
         aggs=["min(x) as mx", "max(x) as xx"], mode="streaming", chunk=1)
@example(rows=[("a", 0, NAN, 10_000), ("a", 0, -2.0, 10_500), ("a", 0, 1.5, 5_000),
               ("a", 0, 0.0, 8_000)], marks=[0, 1], cuts=[3], gap="3s",
         aggs=["min(x) as mx", "max(x) as xx"], mode="batch", chunk=1)
def test_sessions_equal_runtime_operator(rows: list[Any], marks: list[int], cuts: list[int],
                                         aggs: list[str], gap: str, mode: str,
                                         chunk: int) -> None:
    batch = mode == "batch"
    m = _member(f"session gap {gap}", aggs, mode, "session")
    schema = convert.arrow_schema(m.in_schema)
    chunks = _batch_chunks(rows, chunk, schema) if batch else _chunks(rows, marks, cuts,
                                                                       schema)
    expected = _runtime(m, chunks, batch)
    w = session_window(m.spec, m.key, m.in_schema, convert.arrow_schema(m.out_schema),
                       streaming=not batch)
    assert _columnar(w, chunks, schema, batch) == expected


ROLLING_X = ["NaN", "-0.0", "0.0", "inf", "-inf", "", "1.5", "-2.0"]
rolling_rows = st.lists(st.tuples(st.sampled_from(["u1", "u2"]), st.sampled_from(["1", ""]),
                                  st.sampled_from(ROLLING_X),
                                  st.integers(0, 6).map(lambda t: t * 1000)),
                        min_size=1, max_size=40)


@settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
@given(rows=rolling_rows, cuts=st.lists(st.integers(0, 40), max_size=5),
       mode=st.sampled_from(["batch", "streaming"]),
       aggs=st.lists(st.sampled_from(["max(x) as xx", "first(x) as fx", "count(*) as c",
                                      "min(x * 2.0) as m2", "sum(x) as sx", "avg(x) as ax",
                                      "last(x) as lx"]), max_size=2, unique=True))
# A NaN min stays the accumulator's own NaN: no -U / +U for the rows after it.
@example(rows=[("u1", "1", "NaN", 0), ("u1", "1", "1.5", 0), ("u1", "1", "0.0", 0),
               ("u2", "1", "0.0", 0), ("u2", "1", "-0.0", 0), ("u2", "1", "NaN", 0),
               ("u2", "1", "-2.0", 0)], cuts=[2], mode="streaming", aggs=["max(x) as xx"])
# A NaN sum / last is a new float after a record with a value (-U / +U), the same one
# after a null (nothing); a NaN avg is a new quotient every time.
@example(rows=[("u1", "1", "NaN", 0), ("u1", "1", "", 0), ("u1", "1", "1.5", 0),
               ("u1", "1", "NaN", 0), ("u1", "1", "", 0)], cuts=[3], mode="streaming",
         aggs=["sum(x) as sx", "last(x) as lx"])
@example(rows=[("u1", "1", "NaN", 0), ("u1", "1", "", 0), ("u1", "1", "1.5", 0)], cuts=[],
         mode="streaming", aggs=["avg(x) as ax"])
def test_rolling_extremes_equal_reference(tmp_path_factory: Any, rows: list[Any],
                                          cuts: list[int], mode: str,
                                          aggs: list[str]) -> None:
    where = tmp_path_factory.mktemp("rollnan")
    text = _text(_write(where, rows), "user", ["min(x) as mx"] + aggs)
    want = _reference(text, where, mode)
    assert _chunked(text, where, mode, rows, "user", []) == want, text
    assert _chunked(text, where, mode, rows, "user", cuts) == want, text


def test_streaming_window_state_round_trips_nan_extremes() -> None:
    """A STREAMING window's state handed to the row operator (a snapshot) and back keeps
    each floating min / max's result (``restore_extremes``): aggregating on from it gives
    the row operator's values."""
    from flowc.executor.streaming.window_state import window_from_row, window_to_row

    m = _member("tumbling 5s", ["min(x) as mx", "max(x) as xx"], "streaming")
    schema = convert.arrow_schema(m.in_schema)
    out = convert.arrow_schema(m.out_schema)
    before = [("a", 0, NAN, 1_000), ("a", 0, 1.5, 1_100), ("b", 0, 0.0, 1_200),
              ("b", 0, -0.0, 1_300), ("c", 0, 3.0, 1_400)]
    after = [("a", 0, -2.0, 1_500), ("b", 0, NAN, 1_600), ("b", 0, -1.0, 1_700),
             ("c", 0, 0.0, 1_800)]
    w = StreamWindow(m.spec, m.key, m.in_schema, out)
    w.add(_chunks(before, [0], [], schema)[0])
    op = create_operator(m.spec, TaskInfo("w", 0, 1, 128, False), (m.key,))
    op.open()
    window_to_row(w, op, m.in_schema)
    assert sorted(repr(v) for v in op.state.values()) == [
        "(0.0, 0.0)", "(3.0, 3.0)", "(nan, nan)"]
    restored = StreamWindow(m.spec, m.key, m.in_schema, out)
    window_from_row(op, restored, m.in_schema)
    chunks = _chunks(after, [0], [], schema)
    expected = _runtime_on(op, chunks)
    assert _columnar(restored, chunks, schema, batch=False) == expected
