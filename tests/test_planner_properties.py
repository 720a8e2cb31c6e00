"""Hypothesis property tests of the planner over random pipelines (specs in the oracle format,
built through flowc.datastream by tests/flink_spec.py).

The invariants are checked against independent restatements of flink-semantics.md (the
chaining rule, the POINTWISE formulas, pipelined regions, slot sharing, dataset reuse) and
against facts of the random program itself, not against the planner's own helpers.
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import mmh3
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import flink_spec
from flowc.chaining import build_execution_graph, chain_breaks, is_chainable
from flowc.chaining.job_graph import (
    ALL_TO_ALL,
    BLOCKING,
    PIPELINED_BOUNDED,
    POINTWISE,
    JobGraph,
)
from flowc.errors import PlanError
from flowc.keygroups import default_max_parallelism
from flowc.planner.stream_graph import NodeKind, StreamEdge, StreamGraph
from flowc.transformations import ChainingStrategy, PartitionerKind

ONE_INPUT = ["map", "filter", "flat_map"]
KEYED = ["reduce", "process", "window_reduce"]
PARTS = [None, None, None, "forward", "rebalance", "rescale", "shuffle", "broadcast", "global",
         "custom"]


def random_spec(seed: int, size: int = 14, two_input: bool = False) -> dict[str, Any]:
    """A random DAG: sources, one-input and keyed ops, unions, sinks, partitioners (custom
    too), parallelism changes, slot groups, chaining hints, uids, side outputs, STREAMING or
    BATCH (and, with ``two_input``, connected co-maps and keyed co-process functions)."""
    rng = random.Random(seed)
    p = rng.randint(1, 4)
    spec: dict[str, Any] = {"parallelism": p, "chaining": rng.random() > 0.15, "nodes": [],
                            "mode": "BATCH" if rng.random() < 0.3 else "STREAMING"}
    if rng.random() < 0.2:
        spec["max_parallelism"] = rng.choice([4, 16, 128, 1024])
    streams: list[str] = []
    operators: list[str] = []  # may give side outputs (sources and operators)
    parallelism: dict[str, int] = {}
    for i in range(rng.randint(3, size)):
        nid = f"n{i}"
        node: dict[str, Any] = {"id": nid}
        r = rng.random()
        if not streams or r < 0.12:
            node["op"] = "source"
        elif r < 0.22 and len(streams) >= 2:
            node["op"] = "union"
            node["inputs"] = rng.sample(streams, 2) if rng.random() < 0.9 else [streams[-1]] * 2
        elif r < 0.28 and operators:
            node["op"] = "side"
            node["inputs"] = [rng.choice(operators[-4:])]
            node["tag"] = rng.choice(["a", "b"])
        elif two_input and r < 0.38 and len(streams) >= 2:
            node["op"] = rng.choice(["co_map", "keyed_co_process"])
            node["inputs"] = rng.sample(streams, 2)
            if node["op"] == "co_map" and rng.random() < 0.5:
                node["partition"] = rng.choice(["rebalance", "shuffle", "broadcast", "custom"])
        else:
            node["op"] = rng.choice(ONE_INPUT * 2 + KEYED + ["sink"])
            node["inputs"] = [rng.choice(streams[-4:])]
            if node["op"] not in KEYED:
                part = rng.choice(PARTS)
                if part is not None:
                    node["partition"] = part
        if node["op"] not in ("union", "side"):
            if rng.random() < 0.25:
                node["parallelism"] = rng.randint(1, 4)
            if rng.random() < 0.1:
                node["slot_group"] = rng.choice(["a", "b"])
            hint = rng.random()
            if hint < 0.08:
                node["chain"] = "disable"
            elif hint < 0.16 and node["op"] != "sink":
                node["chain"] = "new_chain"
            if rng.random() < 0.15:
                node["uid"] = True
        # Keep forward edges valid most of the time (forward errors are tested separately).
        if node.get("partition") == "forward":
            up = parallelism[node["inputs"][0]]
            if rng.random() < 0.9:
                node["parallelism"] = up
        spec["nodes"].append(node)
        if node["op"] != "sink":
            streams.append(nid)
            if node["op"] in ("union", "side"):
                parallelism[nid] = parallelism[node["inputs"][0]]
            else:
                parallelism[nid] = node.get("parallelism", p)
                operators.append(nid)
    return spec


seeds = st.integers(min_value=0, max_value=2**32 - 1)
SETTINGS = settings(max_examples=400, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])


def plan(spec: dict[str, Any]) -> JobGraph | None:
    env = flink_spec.build(spec)
    try:
        return env.get_job_graph()
    except PlanError as e:
        # The two ways Flink rejects a program at this stage.
        assert ("Forward partitioning does not allow change of parallelism" in e.message
                or e.message == "No operators defined in streaming topology. Cannot execute.")
        return None


def test_random_programs_exercise_every_feature() -> None:
    """The generator is not degenerate: over 300 seeds the planned programs include every
    partitioner, both modes, both chaining settings, two-input operators, side outputs, uids,
    slot groups, every chaining hint, and chained as well as cut edges."""
    seen: Counter[str] = Counter()
    planned = 0
    for seed in range(300):
        jg = plan(random_spec(seed, two_input=True))
        if jg is None:
            continue
        planned += 1
        sg = jg.stream_graph
        seen[sg.config.mode.value] += 1
        seen[f"chaining={sg.config.chaining_enabled}"] += 1
        for e in sg.edges:
            seen[e.partitioner.kind.value] += 1
            seen["side output" if e.output_tag else "main output"] += 1
        for n in sg.nodes.values():
            seen["two-input" if n.two_input else n.kind.value] += 1
            seen[n.chaining.value] += 1
            seen["uid" if n.uid else "no uid"] += 1
            seen[f"group {n.slot_sharing_group}"] += 1
        for v in jg.vertices.values():
            seen["chained" if v.chained_edges else "alone"] += 1
            seen[v.inputs[0].result_type if v.inputs else "input vertex"] += 1
    assert planned >= 250
    for feature in ("STREAMING", "BATCH", "chaining=True", "chaining=False", "FORWARD",
                    "REBALANCE", "RESCALE", "SHUFFLE", "BROADCAST", "GLOBAL", "HASH", "CUSTOM",
                    "side output", "two-input", "source", "sink", "NEVER", "HEAD", "uid",
                    "group a", "group default", "chained", "alone", PIPELINED_BOUNDED,
                    BLOCKING):
        assert seen[feature] >= 5, (feature, seen)


# ------------------------------------------------------------------ independent restatements


def spec_chainable(e: StreamEdge, sg: StreamGraph) -> bool:
    """flink-semantics.md §2, the seven conditions, written out again."""
    up, down = sg.nodes[e.source_id], sg.nodes[e.target_id]
    ins = sg.inputs(down.id)
    if up.chaining is ChainingStrategy.NEVER:
        strategies = False
    elif down.chaining in (ChainingStrategy.NEVER, ChainingStrategy.HEAD):
        strategies = False
    elif down.chaining is ChainingStrategy.HEAD_WITH_SOURCES:
        strategies = up.kind is NodeKind.SOURCE
    else:
        strategies = True
    return (len(ins) == 1
            and sg.config.chaining_enabled
            and up.slot_sharing_group == down.slot_sharing_group
            and strategies
            and up.parallelism == down.parallelism
            and e.partitioner.kind is PartitionerKind.FORWARD and e.exchange_mode != "BATCH"
            and not any(o is not e and o.type_number == e.type_number for o in ins))


def expected_partitions(s: int, t: int, pattern: str, i: int) -> list[int]:
    """§5: the producer partitions consumer subtask ``i`` of ``t`` reads."""
    if pattern == ALL_TO_ALL:
        return list(range(s))
    if s == t:
        return [i]
    if s > t:
        return list(range(i * s // t, (i + 1) * s // t))
    return [k for k in range(s) if (k * t + s - 1) // s <= i < ((k + 1) * t + s - 1) // s]


def chained_name(sg: StreamGraph, outs: dict[int, list[StreamEdge]], nid: int) -> str:
    kids = [chained_name(sg, outs, e.target_id) for e in outs.get(nid, [])]
    name = sg.nodes[nid].name
    if len(kids) == 1:
        return f"{name} -> {kids[0]}"
    return f"{name} -> ({', '.join(kids)})" if kids else name


def post_order(outs: dict[int, list[StreamEdge]], nid: int) -> list[int]:
    return [x for e in outs.get(nid, []) for x in post_order(outs, e.target_id)] + [nid]


# ------------------------------------------------------------------ properties


@SETTINGS
@given(seeds)
def test_every_stream_node_in_exactly_one_job_vertex(seed: int) -> None:
    spec = random_spec(seed, two_input=True)
    jg = plan(spec)
    if jg is None:
        return
    sg = jg.stream_graph
    counts = Counter(n for v in jg.vertices.values() for n in v.chain)
    assert set(counts) == set(sg.nodes)
    assert all(c == 1 for c in counts.values())
    for v in jg.vertices.values():
        assert v.chain[-1] == v.head and v.id == v.operators[-1].id
        assert [o.node_id for o in v.operators] == list(v.chain)
        assert (v.parallelism, v.max_parallelism) == (sg.nodes[v.head].parallelism,
                                                      sg.nodes[v.head].max_parallelism)
    # Facts of the program itself: nodes that can never be chained to their input.
    by_name = {n.name: n for n in sg.nodes.values()}
    batch = spec["mode"] == "BATCH"
    for node in spec["nodes"]:
        n = by_name.get(node["id"])
        if n is None:
            continue  # a union / side output (virtual) or an untranslated source
        must_head = (node["op"] in ("source", "co_map", "keyed_co_process")
                     or node["op"] in KEYED
                     or node.get("chain") in ("disable", "new_chain")
                     or len(sg.inputs(n.id)) != 1)
        if must_head:
            assert jg.vertex_of_node(n.id).head == n.id
        if node.get("chain") == "disable":
            assert len(jg.vertex_of_node(n.id).chain) == 1
        if batch and node["op"] in KEYED + ["keyed_co_process"] and node.get("chain") is None:
            assert n.chaining is ChainingStrategy.HEAD


@SETTINGS
@given(seeds)
def test_chained_edges_satisfy_every_rule_and_cut_edges_break_one(seed: int) -> None:
    jg = plan(random_spec(seed, two_input=True))
    if jg is None:
        return
    sg = jg.stream_graph
    chained = [e for v in jg.vertices.values() for e in v.chained_edges]
    cut = [x.stream_edge for v in jg.vertices.values() for x in v.inputs]
    assert sorted(map(id, chained + cut)) == sorted(map(id, sg.edges))
    # Two-input operators get their inputs with type numbers 1 and 2, never chained.
    for n in sg.nodes.values():
        if n.two_input:
            assert {e.type_number for e in sg.inputs(n.id)} == {1, 2}
    for e in chained:
        assert spec_chainable(e, sg)
        assert jg.node_vertex[e.source_id] == jg.node_vertex[e.target_id]
    for e in cut:
        assert not spec_chainable(e, sg)
        assert jg.node_vertex[e.source_id] != jg.node_vertex[e.target_id]
    # The helpers explain and hashing use agree with the rule on every edge.
    for e in sg.edges:
        assert is_chainable(e, sg) == spec_chainable(e, sg) == (chain_breaks(e, sg) == [])
    # Names and operator order follow from the chained edges (§2).
    outs: dict[int, list[StreamEdge]] = {}
    for e in sg.edges:
        if spec_chainable(e, sg):
            outs.setdefault(e.source_id, []).append(e)
    for v in jg.vertices.values():
        assert v.name == chained_name(sg, outs, v.head)
        assert list(v.chain) == post_order(outs, v.head)


@SETTINGS
@given(seeds)
def test_job_edges_result_types_patterns_and_dataset_reuse(seed: int) -> None:
    jg = plan(random_spec(seed, two_input=True))
    if jg is None:
        return
    batch = jg.config.mode.value == "BATCH"
    for v in jg.vertices.values():
        for e in v.inputs:
            assert e.result_type == (BLOCKING if batch else PIPELINED_BOUNDED)
            assert e.distribution_pattern == (
                POINTWISE if e.ship_strategy in ("FORWARD", "RESCALE") else ALL_TO_ALL)
            assert e.ship_strategy == e.stream_edge.partitioner.kind.value
    sg = jg.stream_graph
    for ds in jg.datasets:
        assert ds.consumers, "a dataset nobody reads"
        if not batch:
            assert len(ds.consumers) == 1  # pipelined outputs are never shared
        for c in ds.consumers:
            t = sg.nodes[c.stream_edge.target_id]
            first = sg.nodes[ds.consumers[0].stream_edge.target_id]
            assert c.stream_edge.source_id == ds.producer_node
            assert (t.parallelism, t.max_parallelism) == (first.parallelism,
                                                          first.max_parallelism)
            assert c.stream_edge.output_tag == ds.consumers[0].stream_edge.output_tag
            assert c.partitioner.kind is ds.consumers[0].partitioner.kind
    if batch:
        # A BLOCKING output is reused whenever Flink's conditions hold (HASH and CUSTOM never
        # do here: every key_by of the spec builder uses a fresh key selector).
        keys = Counter()
        for ds in jg.datasets:
            c = ds.consumers[0]
            t = sg.nodes[c.stream_edge.target_id]
            if c.partitioner.kind not in (PartitionerKind.HASH, PartitionerKind.CUSTOM):
                keys[(ds.producer_node, t.parallelism, t.max_parallelism,
                      c.stream_edge.output_tag, c.partitioner.kind)] += 1
        assert all(n == 1 for n in keys.values())


@SETTINGS
@given(seeds)
def test_wiring_regions_and_slots(seed: int) -> None:
    jg = plan(random_spec(seed, two_input=True))
    if jg is None:
        return
    try:
        eg = build_execution_graph(jg)
    except PlanError as e:
        assert "is higher than the max parallelism" in e.message
        return
    par = {v.id: v.parallelism for v in eg.vertices}
    assert all(eg.vertex(v.id) is v for v in eg.vertices)
    for v in eg.vertices:
        jv = v.job_vertex
        assert v.parallelism == (jv.parallelism if jv.parallelism > 0 else 1)
        assert v.max_parallelism == (jv.max_parallelism if jv.max_parallelism > 0
                                     else default_max_parallelism(v.parallelism))
        for c in v.inputs:
            s, t = c.producer_parallelism, c.consumer_parallelism
            assert (s, t) == (par[c.edge.source], v.parallelism)
            reads = [list(c.partitions(i)) for i in range(t)]
            assert reads == [expected_partitions(s, t, c.pattern, i) for i in range(t)]
            if c.pattern == ALL_TO_ALL:
                assert sum(map(len, reads)) == s * t
                assert [c.subpartition(i) for i in range(t)] == list(range(t))
            else:
                assert sum(map(len, reads)) == max(s, t)
                assert sorted({k for r in reads for k in r}) == list(range(s))
                for k in range(s):
                    assert list(c.consumers_of(k)) == [i for i in range(t) if k in reads[i]]
                # Consumers sharing a partition read distinct subpartitions 0, 1, ...
                for k in range(s):
                    assert [c.subpartition(i) for i in c.consumers_of(k)] == (
                        list(range(len(c.consumers_of(k)))) if s < t else [0])
    # Pipelined regions (§5): connected components over pipelined subtask wiring.
    link: dict[tuple[str, int], set[tuple[str, int]]] = {
        (v.id, i): set() for v in eg.vertices for i in range(v.parallelism)}
    for v in eg.vertices:
        for c in v.inputs:
            if c.edge.result_type == BLOCKING:
                continue
            for i in range(c.consumer_parallelism):
                for k in expected_partitions(c.producer_parallelism, c.consumer_parallelism,
                                             c.pattern, i):
                    link[(v.id, i)].add((c.edge.source, k))
                    link[(c.edge.source, k)].add((v.id, i))
    components: list[frozenset] = []  # type: ignore[type-arg]
    done: set[tuple[str, int]] = set()
    for start in link:
        if start in done:
            continue
        todo, comp = [start], {start}
        while todo:
            for nxt in link[todo.pop()]:
                if nxt not in comp:
                    comp.add(nxt)
                    todo.append(nxt)
        done |= comp
        components.append(frozenset(comp))
    assert sorted(map(sorted, components)) == sorted(map(sorted, eg.regions))
    # Slot sharing (§2): STREAMING one group per name; BATCH "default" per pipelined region
    # (every vertex is its own region when all exchanges block). Slots = sum of group maxima.
    batch = jg.config.mode.value == "BATCH"

    def group(v) -> object:  # type: ignore[no-untyped-def]
        name = v.job_vertex.slot_sharing_group
        return (name, v.id) if batch and name == "default" else name

    for a in eg.vertices:
        for b in eg.vertices:
            same_index = (a.job_vertex.slot_sharing_group_index
                          == b.job_vertex.slot_sharing_group_index)
            assert same_index == (group(a) == group(b))
    best: dict[object, int] = {}
    for v in eg.vertices:
        best[group(v)] = max(best.get(group(v), 0), v.parallelism)
    assert eg.slots_required() == sum(best.values())


@SETTINGS
@given(seeds)
def test_ids_deterministic_and_vertices_topological(seed: int) -> None:
    spec = random_spec(seed, two_input=True)
    a, b = plan(spec), plan(spec)
    if a is None:
        return
    assert b is not None and a.to_dict() == b.to_dict() and a.dump() == b.dump()
    seen: set[str] = set()
    for v in a.vertices_sorted():
        assert all(e.source in seen for e in v.inputs)
        seen.add(v.id)
    ops = [o.id for v in a.vertices.values() for o in v.operators]
    assert len(ops) == len(set(ops))
    for v in a.vertices.values():
        for o in v.operators:
            if o.uid is not None:
                assert o.id == mmh3.hash_bytes(o.uid.encode(), 0).hex()


def _ids(jg: JobGraph) -> dict[str, str]:
    return {o.name: o.id for v in jg.vertices.values() for o in v.operators}


@SETTINGS
@given(seeds, st.integers(min_value=0, max_value=50), st.booleans())
def test_adding_downstream_operator_keeps_uid_ids(seed: int, pick: int, all_uids: bool) -> None:
    spec = random_spec(seed, two_input=True)
    ops = [n for n in spec["nodes"] if n["op"] not in ("union", "side")]
    if all_uids:
        for n in ops:
            n["uid"] = True
    streams = [n for n in ops if n["op"] != "sink"]
    target = streams[pick % len(streams)]
    target["uid"] = True
    before = plan(spec)
    if before is None:
        return
    bigger = json.loads(json.dumps(spec))
    bigger["nodes"].append({"id": "extra", "op": "map", "inputs": [target["id"]]})
    bigger["nodes"].append({"id": "extra_sink", "op": "sink", "inputs": ["extra"]})
    after = plan(bigger)
    if after is None:
        return
    old, new = _ids(before), _ids(after)
    uids = {o.name for v in before.vertices.values() for o in v.operators if o.uid}
    # Every uid'd operator keeps its id (the target among them, when it was translated).
    assert all(new[name] == old[name] for name in uids)
    if all_uids:
        # With uids everywhere, nothing that existed changes: operators and vertices alike
        # (a vertex's id is its head's).
        assert {n: new[n] for n in old} == old
        assert set(before.vertices) <= set(after.vertices)


def test_ids_of_operators_without_uid_may_change_and_uids_pin_them() -> None:
    """Why the property above needs uids: without them, adding an operator downstream of a
    source changes the ids of operators hashed after the new one (Flink's hash counts the
    nodes hashed so far)."""
    def spec(uid: bool, extra: bool) -> dict[str, Any]:
        nodes: list[dict[str, Any]] = [
            {"id": "s", "op": "source", "uid": uid},
            {"id": "a", "op": "map", "inputs": ["s"], "partition": "rebalance", "uid": uid},
            {"id": "b", "op": "reduce", "inputs": ["a"], "uid": uid},
            {"id": "k", "op": "sink", "inputs": ["b"], "uid": uid}]
        if extra:
            nodes.insert(1, {"id": "x", "op": "map", "inputs": ["s"], "partition": "shuffle"})
        return {"parallelism": 2, "nodes": nodes}

    plain, plain_x = _ids(plan(spec(False, False))), _ids(plan(spec(False, True)))
    assert any(plain[n] != plain_x[n] for n in plain)
    pinned, pinned_x = _ids(plan(spec(True, False))), _ids(plan(spec(True, True)))
    assert all(pinned[n] == pinned_x[n] for n in pinned)


@SETTINGS
@given(st.integers(min_value=1, max_value=32768), st.data())
def test_key_group_ranges_partition_the_key_groups(max_parallelism: int, data: Any) -> None:
    """§4: subtask i owns [(i*M + p - 1) // p, ((i+1)*M - 1) // p], exactly the key groups
    that kg * p // M sends to it; the ranges cover 0..M-1 without overlap."""
    from flowc.keygroups import key_group_range, operator_index_for_key_group

    p = data.draw(st.integers(min_value=1, max_value=min(max_parallelism, 512)))
    m = max_parallelism
    ranges = [key_group_range(m, p, i) for i in range(p)]
    assert ranges[0][0] == 0 and ranges[-1][1] == m - 1
    assert all(ranges[i][1] + 1 == ranges[i + 1][0] for i in range(p - 1))
    for kg in data.draw(st.lists(st.integers(min_value=0, max_value=m - 1), max_size=50)):
        i = operator_index_for_key_group(m, p, kg)
        assert ranges[i][0] <= kg <= ranges[i][1]


def test_tuple_key_with_a_null_field_hashes_like_flinks_tuple() -> None:
    from flowc.keygroups import java_hash_code

    # Tuple2.hashCode: 31 * (f0 == null ? 0 : f0.hashCode()) + f1.hashCode()
    assert java_hash_code((None, "a")) == java_hash_code("a")
    assert java_hash_code(("a", None)) == 31 * java_hash_code("a")


# ------------------------------------------------------------------ across processes

_DUMP_CODE = """
import json, sys
sys.path.insert(0, 'tests')
import flink_spec
from test_planner_properties import random_spec
from flowc.chaining import build_execution_graph
from flowc.errors import PlanError
out = []
for s in range(int(sys.argv[1])):
    try:
        jg = flink_spec.build(random_spec(s, two_input=True)).get_job_graph()
        eg = build_execution_graph(jg)
        out.append([jg.to_dict(), eg.to_dict(), jg.stream_graph.to_dict()])
    except PlanError as e:
        out.append(f"{e.java_class}: {e.message}")
print(json.dumps(out, sort_keys=True))
"""


def _dump_here(n: int) -> str:
    out: list[Any] = []
    for s in range(n):
        try:
            jg = flink_spec.build(random_spec(s, two_input=True)).get_job_graph()
            eg = build_execution_graph(jg)
            out.append([jg.to_dict(), eg.to_dict(), jg.stream_graph.to_dict()])
        except PlanError as e:
            out.append(f"{e.java_class}: {e.message}")
    return json.dumps(out, sort_keys=True)


def test_ids_and_plans_identical_across_processes() -> None:
    """Two interpreters with different string-hash salts (and this one, with a third) give
    byte-identical JobGraph, ExecutionGraph and StreamGraph JSON for 40 random programs."""
    n = 40
    root = Path(__file__).parent.parent
    runs = []
    for salt in ("0", "4242"):
        env = {**os.environ, "PYTHONHASHSEED": salt}
        runs.append(subprocess.run([sys.executable, "-c", _DUMP_CODE, str(n)], cwd=root,
                                   capture_output=True, text=True, check=True, env=env
                                   ).stdout.strip())
    here = _dump_here(n)
    assert runs[0] == runs[1] == here
    planned = [x for x in json.loads(here) if isinstance(x, list)]
    assert len(planned) >= 30  # mostly real plans, not error strings
