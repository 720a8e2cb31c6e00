"""One test (or a few) per ExecutionGraph rule of flink-semantics.md (§5), and planning at
scale without recursion."""

from __future__ import annotations

import pytest

from flowc.chaining import build_execution_graph
from flowc.datastream import OutputTag, RuntimeExecutionMode, StreamExecutionEnvironment
from flowc.errors import PlanError
from planner_helpers import env, inc, key

# ------------------------------------------------------------------ §5 ExecutionGraph


def _wiring(s: int, t: int, how: str) -> list[list[int]]:
    e = StreamExecutionEnvironment.get_execution_environment()
    e.disable_operator_chaining()
    src = e.from_sequence(0, 1).set_parallelism(s)
    getattr(src, how)().map(inc).set_parallelism(t)
    eg = e.get_execution_graph()
    (c,) = eg.vertices[1].inputs
    return [list(c.partitions(i)) for i in range(t)]


def test_pointwise_wiring() -> None:
    assert _wiring(2, 2, "forward") == [[0], [1]]
    assert _wiring(4, 2, "rescale") == [[0, 1], [2, 3]]
    assert _wiring(5, 2, "rescale") == [[0, 1], [2, 3, 4]]
    assert _wiring(2, 4, "rescale") == [[0], [0], [1], [1]]
    assert _wiring(2, 3, "rescale") == [[0], [0], [1]]


def test_all_to_all_wiring() -> None:
    assert _wiring(3, 2, "rebalance") == [[0, 1, 2], [0, 1, 2]]


def test_parallelism_defaults_and_bounds() -> None:
    e = StreamExecutionEnvironment.get_execution_environment()
    e.from_sequence(0, 1).map(inc).set_parallelism(300).set_max_parallelism(200)
    with pytest.raises(PlanError, match=r"Vertex Map's parallelism \(300\) is higher than the "
                                        r"max parallelism \(200\)\. Please lower"):
        e.get_execution_graph()
    e2 = StreamExecutionEnvironment.get_execution_environment()
    e2.from_sequence(0, 1).add_discarding_sink()
    (v,) = e2.get_execution_graph().vertices
    assert (v.parallelism, v.max_parallelism) == (1, 128)


def test_pipelined_regions() -> None:
    e = env(2)
    e.disable_operator_chaining()
    e.from_sequence(0, 1).map(inc)  # forward: two independent pipelines
    assert len(e.get_execution_graph().regions) == 2
    e = env(2)
    e.disable_operator_chaining()
    e.from_sequence(0, 1).rebalance().map(inc)
    assert len(e.get_execution_graph().regions) == 1
    e = env(2)
    e.set_runtime_mode(RuntimeExecutionMode.BATCH)
    e.from_sequence(0, 1).rebalance().map(inc)
    assert len(e.get_execution_graph().regions) == 4


def test_slots_required_sum_group_maxima_with_named_groups() -> None:
    def build(mode: RuntimeExecutionMode) -> tuple[int, int, int]:
        e = env(2)
        e.set_runtime_mode(mode)
        s = e.from_sequence(0, 9)  # p=2, default
        m = s.rebalance().map(inc).set_parallelism(4)  # default
        m.rebalance().map(inc).set_parallelism(3).slot_sharing_group("a").add_discarding_sink() \
            .set_parallelism(1).slot_sharing_group("a")
        eg = e.get_execution_graph()
        return eg.slots_required(), e.get_job_graph().slots_required(), len(eg.regions)

    # STREAMING: "default" shares one slot group (max 4), "a" another (max 3).
    assert build(RuntimeExecutionMode.STREAMING) == (7, 7, 1)
    # BATCH: every exchange blocks, so each "default" vertex is a region with its own group
    # (2 + 4); named groups still share across regions (max 3). 2+4+3+1 subtask regions.
    assert build(RuntimeExecutionMode.BATCH) == (9, 9, 10)


def test_parallelism_beyond_the_key_group_bound_fails_in_the_execution_graph() -> None:
    e = env(2)
    e.from_sequence(0, 1).map(inc).set_parallelism(40000)
    e.get_job_graph()  # as in Flink, the JobGraph is fine
    with pytest.raises(PlanError, match=r"^Operator parallelism not within bounds: 40000$"):
        e.get_execution_graph()


def _results_of(s: int, t: int, how: str) -> tuple:  # type: ignore[type-arg]
    e = StreamExecutionEnvironment.get_execution_environment()
    e.disable_operator_chaining()
    src = e.from_sequence(0, 1).set_parallelism(s)
    getattr(src, how)().map(inc).set_parallelism(t)
    eg = e.get_execution_graph()
    return eg, eg.results


def test_each_dataset_is_an_intermediate_result_with_a_partition_per_producer_subtask() -> None:
    eg, results = _results_of(3, 2, "rebalance")
    (r,) = results
    (ds,) = eg.job_graph.datasets
    src, dst = eg.vertices
    assert (r.id, r.dataset, r.producer, r.result_type) == (0, ds, src.id, "PIPELINED_BOUNDED")
    assert r.number_of_partitions == 3 and eg.result(0) is r
    assert eg.produced_results(src.id) == (r,) and eg.produced_results(dst.id) == ()
    assert [c.edge.target for c in r.consumers] == [dst.id]
    # ALL_TO_ALL: every partition is read by every consumer subtask, one subpartition each.
    assert [(p.index, p.consumers, p.subpartitions) for p in r.partitions()] == [
        (0, (range(0, 2),), 2), (1, (range(0, 2),), 2), (2, (range(0, 2),), 2)]
    with pytest.raises(IndexError):
        r.partition(3)


def test_pointwise_partitions_feed_the_section_5_consumer_ranges() -> None:
    # S < T: partition k feeds [(k*T + S - 1)//S, ((k+1)*T + S - 1)//S); 2 -> 5: [0,3), [3,5).
    _, (r,) = _results_of(2, 5, "rescale")
    assert [(p.consumers, p.subpartitions) for p in r.partitions()] == [
        ((range(0, 3),), 3), ((range(3, 5),), 2)]
    # S > T: each partition feeds exactly one consumer; 5 -> 2 reads [0,2) and [2,5).
    _, (r,) = _results_of(5, 2, "rescale")
    assert [p.consumers for p in r.partitions()] == [(range(0, 1),)] * 2 + [(range(1, 2),)] * 3
    assert {p.subpartitions for p in r.partitions()} == {1}
    _, (r,) = _results_of(3, 3, "forward")
    assert [p.consumers for p in r.partitions()] == [(range(k, k + 1),) for k in range(3)]


def test_a_reused_blocking_result_lists_every_consumer_edge() -> None:
    e = env(2)
    e.set_runtime_mode(RuntimeExecutionMode.BATCH)
    s = e.from_sequence(0, 1)
    a = s.rebalance().map(inc)
    b = s.rebalance().map(inc)
    eg = e.get_execution_graph()
    (r,) = eg.results
    jg = eg.job_graph
    assert r.result_type == "BLOCKING"
    assert [c.edge.target for c in r.consumers] == [
        jg.vertex_of_node(a.transformation_id).id, jg.vertex_of_node(b.transformation_id).id]
    assert [p.consumers for p in r.partitions()] == [(range(0, 2), range(0, 2))] * 2
    d = eg.to_dict()["results"][0]
    assert [c["consumer"] for c in d["consumers"]] == [c.edge.target for c in r.consumers]
    assert d["partitions"][1] == {"index": 1, "subpartitions": 2, "consumers": [[0, 2], [0, 2]]}


def test_wide_all_to_all_results_are_not_materialised_per_pair() -> None:
    import tracemalloc

    e = StreamExecutionEnvironment.get_execution_environment()
    e.from_sequence(0, 1).set_parallelism(5000).rebalance().map(inc).set_parallelism(5000) \
        .set_max_parallelism(8192)
    jg = e.get_job_graph()
    tracemalloc.start()
    eg = build_execution_graph(jg)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    # 25 million producer/consumer pairs would need gigabytes; the graph needs about 1 MB.
    assert peak < 16_000_000
    (r,) = eg.results
    assert r.partition(4999).consumers == (range(0, 5000),)
    assert r.partition(4999).subpartitions == 5000


# ------------------------------------------------------------------ scale


def test_hundred_thousand_operators_plan_without_recursion() -> None:
    e = env(2)
    s = e.from_sequence(0, 1)
    for _ in range(100_000):
        s = s.map(inc)
    s.add_discarding_sink()
    jg = e.get_job_graph()
    (v,) = jg.vertices.values()
    assert len(v.operators) == 100_002
    assert len(build_execution_graph(jg).vertices) == 1


@pytest.mark.parametrize("mode", [RuntimeExecutionMode.STREAMING, RuntimeExecutionMode.BATCH])
def test_deep_graphs_of_many_vertices_plan_and_render_without_recursion(mode) -> None:  # type: ignore[no-untyped-def]
    """Thousands of vertices in a row (beyond Python's recursion limit): partitions, unions,
    keyed operators, side outputs and parallelism changes, through every stage and every
    rendering."""
    import sys

    from flowc.datastream import KeyedProcessFunction
    from flowc.explain import render

    class P(KeyedProcessFunction):
        def process_element(self, value, ctx):  # type: ignore[no-untyped-def]
            yield value

    # Beyond the recursion limit (pytest plugins may raise it), and n = 8 (mod 12): the
    # vertex count below depends on where the 4- and 3-periodic patterns end.
    n = 2 * sys.getrecursionlimit()
    n += (8 - n) % 12
    e = env(2)
    e.set_runtime_mode(mode)
    s, b, tag = e.from_sequence(0, 1), e.from_sequence(0, 1), OutputTag("t")
    for i in range(n):
        r = i % 4
        if r == 0:
            s = s.rebalance().map(inc)
        elif r == 1:
            s = s.union(b.map(inc)).map(inc)
        elif r == 2:
            s = s.key_by(key).process(P()).get_side_output(tag)
        else:
            s = s.rescale().rescale().map(inc).set_parallelism(1 + i % 3)
    s.add_discarding_sink()
    jg = e.get_job_graph()
    eg = build_execution_graph(jg)
    assert len(jg.vertices) == n + 2
    for graph in (jg.stream_graph, jg, eg):
        for fmt in ("text", "json", "dot", "mermaid"):
            assert render(graph, fmt)
