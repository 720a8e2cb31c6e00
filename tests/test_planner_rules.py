"""One test (or a few) per planner / chaining / ExecutionGraph rule of flink-semantics.md."""

from __future__ import annotations

import pytest

from flowc.chaining import ChainBreak, build_execution_graph, chain_breaks
from flowc.datastream import (
    OutputTag,
    ProcessFunction,
    RuntimeExecutionMode,
    StreamExecutionEnvironment,
)
from flowc.errors import ApiError, PlanError
from flowc.transformations import ChainingStrategy, PartitionerKind


def env(p: int = 2) -> StreamExecutionEnvironment:
    e = StreamExecutionEnvironment.get_execution_environment()
    e.set_parallelism(p)
    return e


def inc(v: int) -> int:
    return v + 1


def key(v: int) -> int:
    return v % 7


# ------------------------------------------------------------------ §1 StreamGraph


def test_transformation_ids_count_partitions_and_unions() -> None:
    e = env()
    a = e.from_sequence(0, 1)  # 1
    b = a.rebalance()  # 2 (virtual)
    m = b.map(inc)  # 3
    u = m.union(a)  # 4 (virtual)
    u.add_discarding_sink()  # 5
    sg = e.get_stream_graph()
    # Translation draws 6 for the rebalance's virtual node and 7 for the sink's writer.
    assert sorted(sg.nodes) == [1, 3, 7]
    assert [x.source_id for x in sg.inputs(7)] == [3, 1]


def test_sink_nodes_v2_writer_and_legacy() -> None:
    e = env()
    s = e.from_sequence(0, 1).name("src")
    v2 = s.add_discarding_sink().name("w")  # transformation 2; its writer draws 4
    legacy = s.add_discarding_sink().name("old")  # transformation 3, kept as the node id
    e._update(legacy.transformation_id, legacy=True)
    legacy.set_uid_hash("0123456789abcdef0123456789abcdef")  # allowed on a legacy sink
    sg = e.get_stream_graph()
    assert {n.id: n.name for n in sg.nodes.values()} == {1: "Source: src", 3: "Sink: old",
                                                        4: "w: Writer"}
    assert v2.transformation_id == 2
    plan = e.get_execution_plan()
    # A v2 writer is an operator in Flink's plan; a legacy sink a "Data Sink", listed last.
    assert plan.index('"w: Writer"') < plan.index('"Sink: old"')
    assert '"pact" : "Data Sink"' in plan.split('"Sink: old"')[1]


def test_default_partitioner_forward_or_rebalance() -> None:
    e = env(2)
    s = e.from_sequence(0, 1)
    s.map(inc).name("same")
    s.map(inc).set_parallelism(3).name("other")
    sg = e.get_stream_graph()
    kinds = [x.partitioner.kind for x in sg.outputs(1)]
    assert kinds == [PartitionerKind.FORWARD, PartitionerKind.REBALANCE]


def test_forward_with_parallelism_change_fails_with_flinks_text_at_the_operator_line() -> None:
    e = env(2)
    s = e.from_sequence(0, 1).name("src")
    s.forward().map(inc).name("map").set_parallelism(3)  # this line
    with pytest.raises(PlanError) as info:
        e.get_stream_graph()
    assert str(info.value) == (
        "Forward partitioning does not allow change of parallelism. Upstream operation: "
        "Source: src-1 parallelism: 2, downstream operation: map-3 parallelism: 3 You must use "
        "another partitioning strategy, such as broadcast, rebalance, shuffle or global.")
    assert info.value.java_class == "UnsupportedOperationException"
    assert info.value.span is not None and info.value.span.file == __file__
    assert "s.forward().map(inc)" in info.value.format()


def test_partitioner_nearest_to_consumer_wins() -> None:
    e = env()
    e.from_sequence(0, 1).rebalance().shuffle().map(inc)
    (edge,) = e.get_stream_graph().edges
    assert edge.partitioner.kind is PartitionerKind.SHUFFLE


def test_side_output_edge_carries_tag_and_chains() -> None:
    tag = OutputTag("late")

    class P(ProcessFunction):
        def process_element(self, value, ctx):  # type: ignore[no-untyped-def]
            yield value

    e = env()
    p = e.from_sequence(0, 1).process(P())
    p.get_side_output(tag).map(inc)
    sg = e.get_stream_graph()
    (edge,) = sg.outputs(p.transformation_id)
    assert edge.output_tag == tag
    assert chain_breaks(edge, sg) == []


def test_edge_ids_count_parallel_edges() -> None:
    e = env()
    s = e.from_sequence(0, 1)
    s.union(s).map(inc)
    sg = e.get_stream_graph()
    assert [x.edge_id for x in sg.edges] == ["1_3_0_FORWARD_0", "1_3_0_FORWARD_1"]


def test_slot_sharing_group_inheritance() -> None:
    e = env()
    a = e.from_sequence(0, 1).slot_sharing_group("g")
    b = e.from_sequence(0, 1).slot_sharing_group("g")
    c = e.from_sequence(0, 1)
    same = a.union(b).map(inc)
    mixed = a.union(c).map(inc)
    explicit = mixed.map(inc).slot_sharing_group("x")
    sg = e.get_stream_graph()
    groups = {n: sg.nodes[n].slot_sharing_group for n in sg.nodes}
    assert groups[same.transformation_id] == "g"
    assert groups[mixed.transformation_id] == "default"
    assert groups[explicit.transformation_id] == "x"
    assert groups[c.transformation_id] == "default"


def test_parallelism_and_max_parallelism_defaults() -> None:
    e = StreamExecutionEnvironment.get_execution_environment()
    s = e.from_sequence(0, 1)
    e.set_parallelism(3)  # captured at creation time, as in Flink
    m = s.map(inc).set_max_parallelism(64)
    e.set_max_parallelism(256)
    sg = e.get_stream_graph()
    assert sg.nodes[1].max_parallelism == 256
    assert sg.nodes[m.transformation_id].parallelism == 3
    assert sg.nodes[m.transformation_id].max_parallelism == 64


def test_unset_parallelism_resolves_to_the_environment_at_translation() -> None:
    # Verified with Flink 2.3: an operator made while the environment's parallelism was unset
    # gets the environment's parallelism when the graph is generated; one made after
    # set_parallelism(3) keeps 3.
    e = StreamExecutionEnvironment.get_execution_environment()
    s = e.from_sequence(0, 1).name("src")
    s.map(inc).name("m").add_discarding_sink().name("k")
    e.set_parallelism(3)
    t = e.from_sequence(0, 1).name("src2")
    e.set_parallelism(5)
    t.map(inc).name("m2").add_discarding_sink().name("k2")
    sg = e.get_stream_graph()
    got = {n.name: n.parallelism for n in sg.nodes.values()}
    assert got == {"Source: src": 5, "m": 5, "Source: src2": 3, "m2": 5, "k: Writer": 5,
                   "k2: Writer": 5}
    assert '"parallelism" : 5' in e.get_execution_plan()
    # Unset everywhere: -1 until the ExecutionGraph, which uses 1.
    e2 = StreamExecutionEnvironment.get_execution_environment()
    e2.from_sequence(0, 1).add_discarding_sink()
    assert {n.parallelism for n in e2.get_stream_graph().nodes.values()} == {-1}


def test_batch_mode_keyed_operators_start_chains() -> None:
    e = env()
    e.set_runtime_mode(RuntimeExecutionMode.BATCH)
    r = e.from_sequence(0, 1).key_by(key).reduce(lambda a, b: a + b)
    sg = e.get_stream_graph()
    assert sg.nodes[r.transformation_id].chaining is ChainingStrategy.HEAD
    (edge,) = sg.inputs(r.transformation_id)
    assert [why for _, why in chain_breaks(edge, sg)] == [
        "Keyed Reduce starts a new chain (BATCH: keyed operators start chains)",
        "HASH partitioning"]


# ------------------------------------------------------------------ §2 chaining


def _breaks(e: StreamExecutionEnvironment) -> list[set[ChainBreak]]:
    sg = e.get_stream_graph()
    return [{b for b, _ in chain_breaks(x, sg)} for x in sg.edges]


def test_rule1_several_inputs() -> None:
    e = env()
    a, b = e.from_sequence(0, 1), e.from_sequence(0, 1)
    a.union(b).map(inc)
    assert all(ChainBreak.MULTIPLE_INPUTS in bs for bs in _breaks(e))


def test_rule2_chaining_disabled() -> None:
    e = env()
    e.disable_operator_chaining()
    e.from_sequence(0, 1).map(inc)
    assert _breaks(e) == [{ChainBreak.CHAINING_DISABLED}]


def test_rule3_slot_sharing_group() -> None:
    e = env()
    e.from_sequence(0, 1).map(inc).slot_sharing_group("other")
    assert _breaks(e) == [{ChainBreak.SLOT_SHARING_GROUP}]


@pytest.mark.parametrize("where", ["up_never", "down_never", "down_head"])
def test_rule4_chaining_strategies(where: str) -> None:
    e = env()
    s = e.from_sequence(0, 1).map(inc)
    if where == "up_never":
        # NEVER breaks both the edge into and the edge out of the operator.
        s.disable_chaining()
        s.map(inc)
        expected = [{ChainBreak.CHAINING_STRATEGY}, {ChainBreak.CHAINING_STRATEGY}]
    else:
        m = s.map(inc)
        m.disable_chaining() if where == "down_never" else m.start_new_chain()
        expected = [set(), {ChainBreak.CHAINING_STRATEGY}]
    assert _breaks(e) == expected


def test_rule4_head_with_sources_chains_only_to_a_source() -> None:
    # Not reachable through the API (Flink sets it on some of its own operators).
    e = env()
    a = e.from_sequence(0, 1).map(inc)
    b = a.map(inc)
    for t in (a, b):
        e._update(t.transformation_id, chaining=ChainingStrategy.HEAD_WITH_SOURCES)
    assert _breaks(e) == [set(), {ChainBreak.CHAINING_STRATEGY}]
    e.set_runtime_mode(RuntimeExecutionMode.BATCH)
    k = b.key_by(key).reduce(lambda x, y: x + y)
    e._update(k.transformation_id, chaining=ChainingStrategy.HEAD_WITH_SOURCES)
    sg = e.get_stream_graph()
    # BATCH: a keyed HEAD_WITH_SOURCES operator becomes HEAD (BatchExecutionUtils).
    assert sg.nodes[k.transformation_id].chaining is ChainingStrategy.HEAD
    assert sg.nodes[a.transformation_id].chaining is ChainingStrategy.HEAD_WITH_SOURCES


def test_duplicate_vertex_id_fails_with_flinks_text() -> None:
    from flowc.planner.generator import _Builder
    from flowc.planner.stream_graph import NodeKind, StreamNode

    b = _Builder(env().program())
    node = StreamNode(3, "map", NodeKind.OPERATOR, 1, -1, "default", ChainingStrategy.ALWAYS,
                      None)
    b.add_node(node)
    with pytest.raises(PlanError, match="^Duplicate vertexID 3$"):
        b.add_node(node)


def test_rule5_parallelism() -> None:
    e = env()
    e.from_sequence(0, 1).rescale().map(inc).set_parallelism(4)
    assert _breaks(e) == [{ChainBreak.PARALLELISM, ChainBreak.PARTITIONER}]


@pytest.mark.parametrize("part", ["rebalance", "rescale", "shuffle", "broadcast", "global_"])
def test_rule6_partitioner(part: str) -> None:
    e = env()
    getattr(e.from_sequence(0, 1), part)().map(inc)
    assert _breaks(e) == [{ChainBreak.PARTITIONER}]


def test_rule7_union_guard() -> None:
    e = env()
    s = e.from_sequence(0, 1)
    s.union(s).map(inc)
    assert all(ChainBreak.UNION_INPUT in bs for bs in _breaks(e))


def test_chained_names_and_post_order_operator_ids() -> None:
    # A->B->D, A->C, B->E: operators [D, E, B, C, A]
    e = env()
    a = e.from_sequence(0, 1).name("A")
    b = a.map(inc).name("B")
    c = a.map(inc).name("C")
    d = b.map(inc).name("D")
    ee = b.map(inc).name("E")
    jg = e.get_job_graph()
    (v,) = jg.vertices.values()
    assert v.name == "Source: A -> (B -> (D, E), C)"
    order = [x.transformation_id for x in (d, ee, b, c, a)]
    assert list(v.chain) == order
    assert [o.name for o in v.operators] == ["D", "E", "B", "C", "Source: A"]
    assert v.id == v.operators[-1].id


def test_job_edges_patterns_and_result_types() -> None:
    e = env()
    s = e.from_sequence(0, 1)
    s.rescale().map(inc)
    s.key_by(key).reduce(lambda a, b: a + b)
    jg = e.get_job_graph()
    got = sorted((x.ship_strategy, x.distribution_pattern, x.result_type)
                 for v in jg.vertices.values() for x in v.inputs)
    assert got == [("HASH", "ALL_TO_ALL", "PIPELINED_BOUNDED"),
                   ("RESCALE", "POINTWISE", "PIPELINED_BOUNDED")]


def test_batch_blocking_datasets_are_reused_and_regions_get_own_slot_groups() -> None:
    def build(mode: RuntimeExecutionMode) -> tuple[int, int, set[str], int]:
        e = env(2)
        e.set_runtime_mode(mode)
        s = e.from_sequence(0, 1)
        s.rebalance().map(inc)
        s.rebalance().map(inc)
        jg = e.get_job_graph()
        types = {x.result_type for v in jg.vertices.values() for x in v.inputs}
        groups = len({v.slot_sharing_group_index for v in jg.vertices.values()})
        return len(jg.datasets), groups, types, jg.slots_required()

    assert build(RuntimeExecutionMode.STREAMING) == (2, 1, {"PIPELINED_BOUNDED"}, 2)
    assert build(RuntimeExecutionMode.BATCH) == (1, 3, {"BLOCKING"}, 6)


def test_batch_dataset_reuse_compares_key_selectors_and_custom_partitioners() -> None:
    """Flink 2.3 (BATCH, static scheduler) shares one BLOCKING dataset between two keyBy
    consumers only when they use the same KeySelector object; partitionCustom needs the same
    partitioner and key selector too."""
    from flowc.datastream import KeySelector, Partitioner

    class Mod(KeySelector):
        def get_key(self, value):  # type: ignore[no-untyped-def]
            return value % 7

    class Part(Partitioner):
        def partition(self, key, num_partitions):  # type: ignore[no-untyped-def]
            return key % num_partitions

    def consumers(mode: RuntimeExecutionMode) -> list[int]:
        e = env(2)
        e.set_runtime_mode(mode)
        s = e.from_sequence(0, 9)
        m, p = Mod(), Part()
        outs = [
            s.key_by(m).reduce(lambda a, b: a + b),   # 0 \ same selector: shared
            s.key_by(m).reduce(lambda a, b: a + b),   # 1 /
            s.key_by(Mod()).reduce(lambda a, b: a + b),  # 2 another selector object
            s.partition_custom(p, m).map(inc),        # 3 \ same partitioner and key
            s.partition_custom(p, m).map(inc),        # 4 /
            s.partition_custom(Part(), m).map(inc),   # 5 another partitioner
            s.partition_custom(p, Mod()).map(inc),    # 6 another key selector
        ]
        jg = e.get_job_graph()
        return [jg.vertex_of_node(o.transformation_id).inputs[0].dataset for o in outs]

    d = consumers(RuntimeExecutionMode.BATCH)
    assert d[0] == d[1] and d[3] == d[4]
    assert len({d[0], d[2], d[3], d[5], d[6]}) == 5
    assert len(set(consumers(RuntimeExecutionMode.STREAMING))) == 7


# ------------------------------------------------------------------ §3 hashes


def test_uid_collision_fails_with_flinks_text() -> None:
    e = env()
    e.from_sequence(0, 1).uid("x").map(inc).uid("x")
    with pytest.raises(PlanError, match='Hash collision on user-specified ID "x". Most likely'):
        e.get_job_graph()


def test_uid_hash_is_murmur_of_uid_and_set_uid_hash_is_recorded() -> None:
    import mmh3

    e = env()
    e.disable_operator_chaining()
    src = e.from_sequence(0, 1).uid("src").set_uid_hash("0123456789abcdef0123456789ABCDEF")
    src.add_discarding_sink()  # an unconsumed source is not translated (as in Flink)
    v = e.get_job_graph().vertices_sorted()[0]
    assert v.id == mmh3.hash_bytes(b"src", 0).hex()
    assert v.operators[0].uid_hash == "0123456789abcdef0123456789abcdef"


def test_bad_uid_hash_rejected() -> None:
    with pytest.raises(ApiError, match="Node hash must be a 32 character String"):
        env().from_sequence(0, 1).set_uid_hash("xyz")


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


# ------------------------------------------------------------------ API validation


def test_api_validation_messages() -> None:
    e = env()
    with pytest.raises(ApiError, match="must be at least 1"):
        e.from_sequence(0, 1).set_parallelism(0)
    s = e.from_sequence(0, 1)
    with pytest.raises(ApiError, match="only be called on an operator"):
        s.union(s).name("u")


def _api_error(call) -> str:  # type: ignore[no-untyped-def]
    with pytest.raises(ApiError) as info:
        call()
    return info.value.message


def test_api_validation_texts_are_flinks() -> None:
    """Each text is what Flink 2.3 threw for the same call (a Java probe against the 2.3 jars).
    """
    e = env()
    src = e.from_sequence(0, 9)
    assert _api_error(lambda: e.set_parallelism(0)) == (
        "Parallelism must be at least one, or ExecutionConfig.PARALLELISM_DEFAULT "
        "(use system default).")
    assert _api_error(lambda: src.map(inc).set_parallelism(0)) == (
        "The parallelism of an operator must be at least 1, or "
        "ExecutionConfig.PARALLELISM_DEFAULT (use system default).")
    for bad in (0, 40000):
        assert _api_error(lambda b=bad: e.set_max_parallelism(b)) == (
            f"maxParallelism is out of bounds 0 < maxParallelism <= 32768. Found: {bad}")
    assert _api_error(lambda: src.map(inc).set_max_parallelism(0)) == (
        "The maximum parallelism must be greater than 0.")
    assert _api_error(lambda: src.map(inc).set_max_parallelism(40000)) == (
        "Maximum parallelism must be between 1 and 32768. Found: 40000")
    assert _api_error(lambda: e.from_sequence(3, 1)) == (
        "Start of sequence must not be greater than the end")
    assert _api_error(lambda: src.map(inc).uid("")) == "Empty string operator uid is not allowed"
    sink = src.add_discarding_sink()
    assert _api_error(lambda: sink.set_uid_hash("0123456789abcdef0123456789abcdef")) == (
        "Cannot set a custom UID hash on a non-legacy sink")
    m = src.map(inc)
    m.get_side_output(OutputTag("x", int))
    m.get_side_output(OutputTag("x", int))  # the same tag again is fine
    assert _api_error(lambda: m.get_side_output(OutputTag("x", str))) == (
        "A side output with a matching id was already requested with a different type. This "
        "is not allowed, side output ids need to be unique.")
    assert _api_error(lambda: src.key_by(lambda v: [v], key_type=list)) == (
        "Type list cannot be used as key. Contained UNSUPPORTED key types: list. Look at the "
        "keyBy() documentation for the conditions a type has to satisfy in order to be "
        "eligible for a key.")
    from flowc.types import INT, array_of

    assert _api_error(lambda: src.key_by(lambda v: [v], key_type=array_of(INT))).startswith(
        "Type array<int> cannot be used as key.")
    src.key_by(lambda v: (v, v), key_type=tuple)  # tuples are keys (Flink Tuples)


def test_side_output_only_from_operators() -> None:
    # Java has getSideOutput only on SingleOutputStreamOperator: not on a union, a
    # partitioned stream or another side output.
    e = env()
    s = e.from_sequence(0, 1)
    tag = OutputTag("t")
    for stream in (s.union(s), s.rebalance(), s.map(inc).get_side_output(tag)):
        assert "only be called on an operator" in _api_error(
            lambda st=stream: st.get_side_output(tag))
    # A side output of a source or of an operator that never emits one is an (empty) stream,
    # as in Flink.
    s.get_side_output(tag).add_discarding_sink()
    s.map(inc).get_side_output(tag).add_discarding_sink()
    e.get_job_graph()


def test_window_with_process_function_may_emit_any_side_output() -> None:
    from flowc.datastream import ProcessWindowFunction, TumblingEventTimeWindows

    class Emit(ProcessWindowFunction):
        def process(self, key, context, elements):  # type: ignore[no-untyped-def]
            context.output(OutputTag("extra"), key)
            yield from elements

    late = OutputTag("late")
    e = env()
    w = (e.from_sequence(0, 9).key_by(key).window(TumblingEventTimeWindows.of(1000))
         .side_output_late_data(late))
    with_fn = w.reduce(lambda a, b: a + b, window_function=Emit())
    with_fn.get_side_output(OutputTag("extra")).add_discarding_sink()
    e.get_job_graph()  # the window function emits "extra": not a typo
    plain = w.reduce(lambda a, b: a + b)
    plain.get_side_output(OutputTag("typo")).add_discarding_sink()
    with pytest.raises(PlanError, match="its late data goes to 'late'"):
        e.get_job_graph()


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
