"""One test (or a few) per StreamGraph and operator-hash rule of flink-semantics.md (§1, §3).

Chaining rules: test_chaining_rules.py; ExecutionGraph: test_execution_graph_rules.py; API
validation texts: test_api_validation.py."""

from __future__ import annotations

import pytest

from flowc.chaining import chain_breaks
from flowc.datastream import (
    OutputTag,
    ProcessFunction,
    RuntimeExecutionMode,
    StreamExecutionEnvironment,
)
from flowc.errors import ApiError, PlanError
from flowc.planner.stream_graph import NodeKind
from flowc.transformations import ChainingStrategy, PartitionerKind
from planner_helpers import env, inc, key

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


def test_print_is_flinks_legacy_print_sink_function_and_sink_to_print_sink_a_writer() -> None:
    """DataStream.print() in Flink 2.3 is addSink(new PrintSinkFunction()).name("Print to
    Std. Out"): one node with the sink's own id (tests/golden/flink/specs/t_print_*)."""
    from flowc.datastream import PrintSink

    e = env()
    s = e.from_sequence(0, 1)  # 1
    out = s.print()  # 2
    err = s.print_to_err()  # 3
    s.sink_to(PrintSink()).name("v2")  # 4; its writer draws 5
    out.set_uid_hash("0123456789abcdef0123456789abcdef")  # a legacy sink takes one
    sg = e.get_stream_graph()
    assert {n.id: n.name for n in sg.nodes.values()} == {
        1: "Source: Sequence Source", 2: "Sink: Print to Std. Out",
        3: "Sink: Print to Std. Err", 5: "v2: Writer"}
    assert (out.transformation_id, err.transformation_id) == (2, 3)
    assert sg.nodes[2].kind is NodeKind.SINK and not sg.nodes[2].sink_writer
    plan = e.get_execution_plan()
    assert plan.count('"pact" : "Data Sink"') == 2


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


def test_duplicate_vertex_id_fails_with_flinks_text() -> None:
    from flowc.planner.generator import _Builder
    from flowc.planner.stream_graph import NodeKind, StreamNode

    b = _Builder(env().program())
    node = StreamNode(3, "map", NodeKind.OPERATOR, 1, -1, "default", ChainingStrategy.ALWAYS,
                      None)
    b.add_node(node)
    with pytest.raises(PlanError, match="^Duplicate vertexID 3$"):
        b.add_node(node)


def test_file_sink_is_one_writer_node_a_documented_difference() -> None:
    """Flink expands a FileSink (SupportsCommitter) into "<name>: Writer" and
    "<name>: Committer"; flowc plans the writer only and commits in the executor.
    docs/flink-differences.md says so; this pins both sides of that statement."""
    from pathlib import Path

    from flowc.datastream import FileSink

    e = env()
    src = e.from_sequence(0, 9).name("src")
    src.sink_to(FileSink("out.csv", "csv")).name("files").uid("files")
    sg = e.get_stream_graph()
    assert sorted(n.name for n in sg.nodes.values()) == ["Source: src", "files: Writer"]
    (writer,) = [n for n in sg.nodes.values() if n.kind is NodeKind.SINK]
    assert writer.uid == "files" and not sg.outputs(writer.id)
    doc = (Path(__file__).parent.parent / "docs" / "flink-differences.md").read_text()
    row = next(line for line in doc.splitlines() if line.startswith("| file sinks"))
    for fact in ("`<name>: Writer`", "`<name>: Committer`", "`Sink Committer: <uid>`",
                 "POINTWISE BLOCKING", "SinkTransformationTranslator.java"):
        assert fact in row, fact


@pytest.mark.parametrize("mode", [RuntimeExecutionMode.STREAMING, RuntimeExecutionMode.BATCH])
def test_sink_committer_expansion_as_flinks_translator(mode: RuntimeExecutionMode) -> None:
    """flowc.sink_committers = true: a FileSink becomes Writer (id w) and Committer (id w+2;
    w+1 is the failover partition, w+3 its virtual node), Flink's SinkTransformationTranslator
    (verified against Flink 2.3 in tests/golden/flink/filesink)."""
    from flowc.datastream import FileSink
    from flowc.planner.sink_topology import SinkCommitterOp

    e = env(2)
    e.set_runtime_mode(mode)
    e.set_option("flowc.sink_committers", "true")
    src = e.from_sequence(0, 9).name("src")  # 1
    sink = src.sink_to(FileSink("out.csv", "csv")).name("files").uid("fs")  # 2
    src.print()  # 3: the legacy PrintSinkFunction, its own node (no writer, no committer)
    src.rebalance().map(inc).name("after")  # 4 (virtual), 5
    sg = e.get_stream_graph()
    by_name = {n.name: n for n in sg.nodes.values()}
    writer, committer = by_name["files: Writer"], by_name["files: Committer"]
    # Translation, roots in creation order: the file sink draws 6 (writer), 7 (partition),
    # 8 (committer), 9 (virtual); the legacy print sink keeps 3; the rebalance 10 (virtual).
    assert (writer.id, committer.id, by_name["Sink: Print to Std. Out"].id) == (6, 8, 3)
    assert sink.transformation_id == 2
    assert (writer.kind, committer.kind) == (NodeKind.SINK, NodeKind.OPERATOR)
    assert isinstance(committer.operator, SinkCommitterOp) and committer.operator.sink is \
        writer.operator
    assert (writer.uid, committer.uid) == ("fs", "Sink Committer: fs")
    assert (committer.parallelism, committer.slot_sharing_group) == (2, "default")
    (edge,) = sg.inputs(committer.id)
    assert (edge.source_id, edge.partitioner.kind) == (writer.id, PartitionerKind.FORWARD)
    batch = mode is RuntimeExecutionMode.BATCH
    assert edge.exchange_mode == ("BATCH" if batch else "UNDEFINED")
    assert [why for _, why in chain_breaks(edge, sg)] == (["blocking exchange"] if batch else [])
    assert sum("Committer" in n.name for n in sg.nodes.values()) == 1


def test_sink_committer_takes_the_sinks_settings_and_only_file_sinks_get_one() -> None:
    from flowc.datastream import FileSink

    e = env(2)
    e.set_option("flowc.sink_committers", "true")
    src = e.from_sequence(0, 9)
    src.sink_to(FileSink("a.csv", "csv")).name("a").set_parallelism(3) \
        .slot_sharing_group("g").disable_chaining().set_max_parallelism(64)
    src.add_discarding_sink().name("d")
    sg = e.get_stream_graph()
    by_name = {n.name: n for n in sg.nodes.values()}
    assert set(by_name) == {"Source: Sequence Source", "a: Writer", "a: Committer", "d: Writer"}
    for n in (by_name["a: Writer"], by_name["a: Committer"]):
        assert (n.parallelism, n.max_parallelism, n.slot_sharing_group, n.chaining) == (
            3, 64, "g", ChainingStrategy.NEVER)
    assert by_name["a: Committer"].uid is None  # the sink has no uid
    e.set_option("flowc.sink_committers", "false")
    assert "a: Committer" not in {n.name for n in e.get_stream_graph().nodes.values()}


# ------------------------------------------------------------------ §3 hashes


def test_uid_collision_fails_with_flinks_text() -> None:
    e = env()
    e.from_sequence(0, 1).uid("x").map(inc).uid("x")  # this line
    with pytest.raises(PlanError) as info:
        e.get_job_graph()
    # StreamGraphHasherV2.generateNodeHash, word for word (the backticks are Flink's).
    assert info.value.message == (
        'Hash collision on user-specified ID "x". Most likely cause is a non-unique ID. Please '
        "check that all IDs specified via `uid(String)` are unique.")
    assert str(info.value) == info.value.message
    assert info.value.java_class == "IllegalArgumentException"
    assert info.value.span is not None and "this line" in info.value.format()


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
