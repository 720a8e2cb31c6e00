"""One test (or a few) per chaining / JobGraph rule of flink-semantics.md (§2)."""

from __future__ import annotations

import pytest

from flowc.chaining import ChainBreak, chain_breaks
from flowc.datastream import RuntimeExecutionMode, StreamExecutionEnvironment
from flowc.transformations import ChainingStrategy
from planner_helpers import env, inc, key

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
