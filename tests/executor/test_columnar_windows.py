"""BATCH window state folded into partial aggregates gives the same results as one
aggregation over all rows (COMPACT_ROWS tiny vs huge), on the real front end's aggregates."""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
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
