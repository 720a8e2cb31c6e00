"""A source's own watermark strategy (Flink's ``fromSource(source, strategy, name)``) behaves
exactly like the source followed by ``assign_timestamps_and_watermarks(strategy)``."""

from __future__ import annotations

from typing import Any

import pytest

from flowc.datastream import OutputTag, TumblingEventTimeWindows, WatermarkStrategy
from flowc.executor import JobResult, run_job_graph, run_reference
from flowc.operators import CollectionSource
from flowc.planner.stream_graph import NodeKind

from .helpers import collect, env_for, ts_of

# Out of order on purpose: with 500 ms of out-of-orderness ("a", 1200) arrives
# after the watermark passed its window's end (STREAMING) and goes to the late output.
DATA = (("a", 100), ("b", 300), ("a", 2600), ("a", 1200), ("b", 4100), ("b", 900),
        ("a", 5000), ("c", 5100), ("c", 4900), ("a", 7800))


def _count(a: Any, b: Any) -> Any:
    return (a[0], max(a[1], b[1]), a[2] + b[2])


def _build(inline: bool, batch: bool) -> Any:
    env = env_for(2, batch=batch)
    strategy = WatermarkStrategy.for_bounded_out_of_orderness(500).with_timestamp_assigner(ts_of)
    spec = CollectionSource(DATA)
    if inline:
        src = env.from_source(spec, strategy, "events")
    else:
        src = env.from_source(spec, WatermarkStrategy.no_watermarks(), "events") \
            .assign_timestamps_and_watermarks(strategy)
    late = OutputTag("late")
    w = (src.map(lambda v: (v[0], v[1], 1)).key_by(lambda v: v[0])
         .window(TumblingEventTimeWindows.of(1000)).side_output_late_data(late).reduce(_count))
    collect(w)
    collect(w.get_side_output(late), "late")
    return env.get_job_graph()


def _outputs(r: JobResult) -> tuple[Any, ...]:
    return (r.collected, r.late_records_dropped, [v.records_in for v in r.vertices][:1])


def test_source_node_carries_the_strategy() -> None:
    jg = _build(inline=True, batch=False)
    sources = [n for n in jg.stream_graph.nodes.values() if n.kind is NodeKind.SOURCE]
    assert [n.watermark_strategy is not None for n in sources] == [True]
    assert not any(type(n.operator).__name__ == "TimestampsAndWatermarksOp"
                   for n in jg.stream_graph.nodes.values())


@pytest.mark.parametrize("batch", [False, True], ids=["streaming", "batch"])
def test_from_source_strategy_equals_assign_timestamps_reference(batch: bool) -> None:
    inline = run_reference(_build(inline=True, batch=batch))
    separate = run_reference(_build(inline=False, batch=batch))
    assert _outputs(inline) == _outputs(separate)
    if batch:
        assert inline["late"] == []  # BATCH: no watermarks, nothing is late
    else:
        assert sorted(inline["late"]) == [("a", 1200, 1)]


@pytest.mark.spark
@pytest.mark.parametrize("batch", [False, True], ids=["streaming", "batch"])
def test_from_source_strategy_equals_assign_timestamps_spark(spark: Any, batch: bool) -> None:
    expected = run_reference(_build(inline=False, batch=batch))
    inline = run_job_graph(_build(inline=True, batch=batch))
    separate = run_job_graph(_build(inline=False, batch=batch))
    if batch:
        # BATCH windows ending together may fire in another order (map-side combining).
        def norm(r: JobResult) -> Any:
            return {k: sorted(v) for k, v in r.collected.items()}
        assert norm(inline) == norm(separate) == norm(expected)
    else:
        assert inline.collected == separate.collected == expected.collected
        assert sorted(inline["late"]) == [("a", 1200, 1)]
    assert inline.late_records_dropped == expected.late_records_dropped
