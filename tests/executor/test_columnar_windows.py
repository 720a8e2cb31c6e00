"""BATCH window state folded into partial aggregates gives the same results as one
aggregation over all rows (COMPACT_ROWS tiny vs huge), on the real front end's aggregates."""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from flowc.executor.arrow import convert, windows
from flowc.executor.arrow.plan import plan_members
from flowc.parser import compile_source

ROWS = st.lists(st.tuples(st.sampled_from(["a", "b", None, "ü"]),
                          st.one_of(st.none(), st.integers(-5, 5)),
                          st.one_of(st.none(), st.sampled_from([0.5, -2.0, 1e3])),
                          st.integers(0, 30_000)), min_size=1, max_size=80)


def _window_member(window: str, aggs: str) -> Any:
    text = ("source s (k string, n int, x double, ts timestamp) from csv 'x.csv' "
            "watermark ts - 1s;\n"
            f"s | key by k | window {window} | aggregate {aggs} | print;\n")
    script = compile_source(text, "t.flow", options={"mode": "batch"})
    members = plan_members(script.env.get_job_graph())
    assert isinstance(members, dict)
    (m,) = [m for ms in members.values() for m in ms if m.kind == "window"]
    return m


@settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
@given(rows=ROWS, window=st.sampled_from(["tumbling 5s", "sliding 10s every 5s"]),
       aggs=st.lists(st.sampled_from(["count(*) as c", "count(distinct n) as dn",
                                      "count(distinct k) as dk", "sum(x) as sx",
                                      "min(n) as mn", "max(k) as mk", "avg(n) as an",
                                      "first(x) as fx", "last(n) as ln", "count(x) as cx"]),
                     min_size=1, max_size=4, unique=True),
       chunk=st.integers(1, 7), compact=st.integers(1, 9))
def test_compacted_state_equals_one_aggregation(rows: list[Any], window: str, aggs: list[str],
                                                chunk: int, compact: int) -> None:
    m = _window_member(window, ", ".join(aggs))
    schema = convert.arrow_schema(m.in_schema)
    out = convert.arrow_schema(m.out_schema)

    def run(limit: int) -> list[Any]:
        old = windows.COMPACT_ROWS
        windows.COMPACT_ROWS = limit
        try:
            w = windows.BatchWindow(m.spec, m.key, m.in_schema, out)
            for i in range(0, len(rows), chunk):
                part = rows[i:i + chunk]
                c = convert.from_rows(part, [r[3] for r in part], schema)
                w.add(c)
            fired = w.fire()
            return [] if fired is None else list(zip(fired.rows(), fired.timestamps()))
        finally:
            windows.COMPACT_ROWS = old

    assert run(compact) == run(1 << 30)


def _stream_member(text: str, kind: str, mode: str = "streaming") -> Any:
    script = compile_source(text, "t.flow", options={"mode": mode})
    members = plan_members(script.env.get_job_graph())
    assert isinstance(members, dict), members
    (m,) = [m for ms in members.values() for m in ms if m.kind == kind]
    return m


MARKS = st.lists(st.integers(-2_000, 40_000), min_size=2, max_size=12)


def _chunks(rows: list[Any], marks: list[int], cuts: list[int], schema: Any) -> list[Any]:
    """The records with rising watermarks among them (mark j before record j * step),
    cut into chunks at ``cuts``."""
    import numpy as np

    values = sorted(set(marks))
    step = max(1, len(rows) // max(1, len(values)))
    places = [min(len(rows), j * step) for j in range(len(values))]
    bounds = sorted({0, len(rows), *(c % (len(rows) + 1) for c in cuts)})
    out = []
    for lo, hi in zip(bounds, bounds[1:]):
        part = rows[lo:hi]
        c = convert.from_rows(part, [r[3] for r in part], schema)
        mine = [(p - lo, v) for p, v in zip(places, values)
                if lo <= p < hi or (p == hi == len(rows))]
        out.append(convert.Chunk(c.batch, c.ts, (np.asarray([p for p, _ in mine], np.int64),
                                                 np.asarray([v for _, v in mine], np.int64))))
    return out


def _run(step: Any, chunks: list[Any]) -> list[Any]:
    """Everything a member produced, records and watermarks, in order."""
    out: list[Any] = []
    for c in chunks:
        r = step(c)
        if r is None:
            continue
        rows, ts = r.rows(), r.timestamps()
        pos, vals = r.marks if r.marks is not None else ([], [])
        k = 0
        for i in range(len(rows) + 1):
            while k < len(pos) and pos[k] == i:
                out.append(("wm", int(vals[k])))
                k += 1
            if i < len(rows):
                out.append((rows[i], ts[i]))
    return out


@settings(max_examples=120, deadline=None, suppress_health_check=list(HealthCheck))
@given(rows=ROWS, marks=MARKS, cuts=st.lists(st.integers(0, 100), min_size=1, max_size=4),
       window=st.sampled_from(["tumbling 5s", "sliding 10s every 5s"]),
       lateness=st.sampled_from(["", "allowed lateness 3s"]),
       aggs=st.lists(st.sampled_from(["count(*) as c", "count(distinct n) as dn",
                                      "sum(x) as sx", "max(k) as mk", "avg(n) as an",
                                      "first(x) as fx", "last(n) as ln"]),
                     min_size=1, max_size=3, unique=True))
def test_streaming_window_state_carries_across_chunks(rows: list[Any], marks: list[int],
                                                      cuts: list[int], window: str,
                                                      lateness: str, aggs: list[str]) -> None:
    """A STREAMING window fed the same elements in one chunk or cut into several gives the
    same results, late records and watermarks (state, running watermark and late firings
    carry over between chunks)."""
    from flowc.executor.arrow.stream_windows import StreamWindow

    m = _stream_member(
        "source s (k string, n int, x double, ts timestamp) from csv 'x.csv' "
        "watermark ts - 1s;\n"
        f"let r = s | filter k is not null | key by k | window {window} {lateness} "
        f"late into late_r | aggregate {', '.join(aggs)};\n"
        "r | print; late_r | print;\n", "window")
    rows = [r for r in rows if r[0] is not None]
    schema = convert.arrow_schema(m.in_schema)
    out = convert.arrow_schema(m.out_schema)

    def run(chunks: list[Any]) -> tuple[list[Any], list[Any]]:
        w = StreamWindow(m.spec, m.key, m.in_schema, out)
        late: list[Any] = []

        def step(c: Any) -> Any:
            result = w.add(c)
            late.extend(_run(lambda x: x, [w.late]))
            return result
        return _run(step, chunks), late

    assert run(_chunks(rows, marks, cuts, schema)) == run(_chunks(rows, marks, [], schema))


# Doubles whose sums round differently when added in pieces: 0.1 ten times is
# 0.9999999999999999 one by one but 1.0 as two folded halves; 1e16 + 1.0 + 1.0 loses both.
INEXACT = st.lists(st.tuples(st.sampled_from(["a", "b"]),
                             st.sampled_from([0.1, 0.2, 0.3, 1e16, 1.0, -1e16, None, -0.0]),
                             st.integers(0, 12_000)), min_size=1, max_size=60)


def _reference_sums(rows: list[Any], aggs: str, tmp: Any) -> list[Any]:
    """The reference executor's results of the window job over ``rows``."""
    from flowc.executor import run_reference
    from flowc.operators import CollectSink

    path = tmp / "d.csv"
    path.write_text("k,x,ts\n" + "".join(
        f"{k},{'' if x is None else repr(x)},{ts}\n" for k, x, ts in rows))
    script = compile_source(
        f"source s (k string, x double, ts timestamp) from csv '{path}' watermark ts - 1s;\n"
        f"let r = s | key by k | window tumbling 5s | aggregate {aggs};\n", "t.flow",
        options={"mode": "batch"})
    script.streams["r"].stream.sink_to(CollectSink("r"))
    return run_reference(script.env.get_job_graph()).collected["r"]


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(rows=INEXACT, chunk=st.integers(1, 7), compact=st.integers(1, 9),
       limit=st.sampled_from([1, 1 << 30]))
@example(rows=[("a", 0.1, 0)] * 10, chunk=1, compact=5, limit=1 << 30)  # folded halves
@example(rows=[("a", 0.1, 0)] * 10, chunk=2, compact=3, limit=1)  # spilled runs
def test_double_sums_add_in_record_order(tmp_path_factory: Any, rows: list[Any], chunk: int,
                                         compact: int, limit: int) -> None:
    """Folded (every ``compact`` rows) and spilled (``limit`` 1 byte) double sums and
    averages equal the reference executor's one-by-one adding, bit for bit."""
    from flowc.executor.arrow import spill

    aggs = "sum(x) as sx, avg(x) as ax, count(*) as c"
    text = ("source s (k string, x double, ts timestamp) from csv 'x.csv' "
            f"watermark ts - 1s;\ns | key by k | window tumbling 5s | aggregate {aggs} "
            "| print;\n")
    script = compile_source(text, "t.flow", options={"mode": "batch"})
    members = plan_members(script.env.get_job_graph())
    assert isinstance(members, dict)
    (m,) = [m for ms in members.values() for m in ms if m.kind == "window"]
    schema = convert.arrow_schema(m.in_schema)
    old = windows.COMPACT_ROWS
    windows.COMPACT_ROWS = compact
    try:
        w = spill.SpillingWindow(m.spec, m.key, m.in_schema,
                                 convert.arrow_schema(m.out_schema), limit=limit)
        for i in range(0, len(rows), chunk):
            part = rows[i:i + chunk]
            w.add(convert.from_rows(part, [r[2] for r in part], schema))
        actual = [r for c in w.fired() for r in c.rows()]
    finally:
        windows.COMPACT_ROWS = old
    expected = _reference_sums(rows, aggs, tmp_path_factory.mktemp("d"))
    # repr: 1.0 and 0.9999999999999999, 0.0 and -0.0 differ
    assert [repr(tuple(r)) for r in actual] == [repr(tuple(r)) for r in expected]


def test_double_sums_differ_when_folded_in_pieces() -> None:
    """The case the test above exists for: folding 0.1 x 10 in halves rounds differently."""
    assert sum([0.1] * 10) != sum([0.1] * 5) + sum([0.1] * 5)
