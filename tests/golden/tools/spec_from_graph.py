"""Derive a Flink-oracle pipeline spec from a flowc StreamGraph, so real Flink can plan the
same structure (used to check the examples' plans; see tests/test_examples_vs_flink.py).

Operator ids and chains depend on the graph's shape, uids, parallelism, slot groups,
chaining strategies and partitioners, not on what the operators compute, so the oracle's
stock operators stand in for ours: one-input ops become ``map`` (or ``reduce`` when keyed),
unions become ``union`` nodes, sinks ``sink`` (``print`` for the legacy print sink,
``file_sink`` for a FileSink, ExtOracle only). Nodes keep flowc's creation order.

    python tests/golden/tools/spec_from_graph.py examples/clicks.flow > spec.json
"""

from __future__ import annotations

import json
import sys
from typing import Any

from flowc.planner.sink_topology import has_committer
from flowc.planner.stream_graph import NodeKind, StreamGraph
from flowc.transformations import ChainingStrategy, PartitionerKind

PART = {PartitionerKind.FORWARD: "forward", PartitionerKind.REBALANCE: "rebalance",
        PartitionerKind.RESCALE: "rescale", PartitionerKind.SHUFFLE: "shuffle",
        PartitionerKind.BROADCAST: "broadcast", PartitionerKind.GLOBAL: "global"}


class Unsupported(Exception):
    pass


def spec_from_graph(g: StreamGraph, ext: bool = False) -> dict[str, Any]:
    """``ext``: for tests/golden/flink/ExtOracle.java, which also knows two-input operators
    (``co_map``; ``keyed_co_process`` when both inputs are keyed) and side outputs (a
    virtual ``side`` node per (operator, tag))."""
    c = g.config
    if c.mode.value != "STREAMING":
        raise Unsupported("the oracle corpus is STREAMING only")
    spec: dict[str, Any] = {"parallelism": c.parallelism if c.parallelism > 0 else 1,
                            "chaining": c.chaining_enabled, "nodes": []}
    if c.max_parallelism > 0:
        spec["max_parallelism"] = c.max_parallelism
    names: dict[int, str] = {}
    for nid in sorted(g.nodes):
        n = g.nodes[nid]
        name = n.uid if n.uid is not None else f"n{nid}"
        names[nid] = name
        node: dict[str, Any] = {"id": name, "parallelism": n.parallelism,
                                "slot_group": n.slot_sharing_group}
        if n.uid is not None:
            node["uid"] = True
        if n.max_parallelism > 0 and n.max_parallelism != c.max_parallelism:
            raise Unsupported("per-operator max parallelism")
        if n.two_input and not ext:
            raise Unsupported("two-input operators")
        if n.chaining is ChainingStrategy.NEVER:
            node["chain"] = "disable"
        elif n.chaining is ChainingStrategy.HEAD:
            node["chain"] = "new_chain"
        ins = g.inputs(nid)
        if n.kind is NodeKind.SOURCE:
            node["op"] = "source"
        elif n.two_input:
            _two_input(spec, g, n, names, node)
            spec["nodes"].append(node)
            continue
        else:
            kinds = {e.partitioner.kind for e in ins}
            if len(kinds) != 1:
                raise Unsupported("inputs with different partitioners")
            kind = kinds.pop()
            keyed = kind is PartitionerKind.HASH
            if keyed != n.is_keyed or kind is PartitionerKind.CUSTOM:
                raise Unsupported("keyed input without key state, or a custom partitioner")
            # A legacy sink (not a v2 writer) in flowc is print(): the oracle's "print".
            node["op"] = (("sink" if n.sink_writer else "print") if n.kind is NodeKind.SINK
                          else "reduce" if keyed else "map")
            if n.kind is NodeKind.SINK and has_committer(n.operator):
                if not ext:  # only ExtOracle has FileSink (a sink with a committer)
                    raise Unsupported("a file sink")
                node["op"] = "file_sink"
            if n.kind is NodeKind.SINK and node.get("chain") == "new_chain":
                raise Unsupported("start_new_chain on a sink")
            if any(e.output_tag is not None for e in ins) and not ext:
                raise Unsupported("side outputs")
            sources = [_side(spec, e, names) if e.output_tag is not None else names[e.source_id]
                       for e in ins]
            if len(sources) > 1:
                union = f"u{nid}"
                spec["nodes"].append({"id": union, "op": "union", "inputs": sources})
                sources = [union]
            node["inputs"] = sources
            if not keyed:
                node["partition"] = PART[kind]
        spec["nodes"].append(node)
    return spec


def _side(spec: dict[str, Any], e: Any, names: dict[int, str]) -> str:
    """The virtual ``side`` node of edge ``e``'s side output (one per operator and tag)."""
    sid = f"{names[e.source_id]}_{e.output_tag.tag_id}"
    if not any(x["id"] == sid for x in spec["nodes"]):
        spec["nodes"].append({"id": sid, "op": "side", "inputs": [names[e.source_id]],
                              "tag": e.output_tag.tag_id})
    return sid


def _two_input(spec: dict[str, Any], g: StreamGraph, n: Any, names: dict[int, str],
               node: dict[str, Any]) -> None:
    by_side: dict[int, list[Any]] = {1: [], 2: []}
    for e in g.inputs(n.id):
        by_side[e.type_number].append(e)
    if any(len(v) != 1 for v in by_side.values()):
        raise Unsupported("a two-input operator with a union on an input")
    (a,), (b,) = by_side[1], by_side[2]
    kinds = {a.partitioner.kind, b.partitioner.kind}
    if kinds == {PartitionerKind.HASH}:
        node["op"] = "keyed_co_process"
    elif PartitionerKind.HASH in kinds or n.is_keyed:
        raise Unsupported("a two-input operator keyed on one side only")
    else:
        if a.partitioner.kind != b.partitioner.kind:
            raise Unsupported("two-input operator inputs with different partitioners")
        node["op"] = "co_map"
        node["partition"] = PART[a.partitioner.kind]
    node["inputs"] = [_side(spec, e, names) if e.output_tag is not None
                      else names[e.source_id] for e in (a, b)]


def main() -> None:
    from flowc.parser import compile_file

    env = compile_file(sys.argv[1]).env
    json.dump(spec_from_graph(env.get_stream_graph()), sys.stdout, indent=1)
    print()


if __name__ == "__main__":
    main()
