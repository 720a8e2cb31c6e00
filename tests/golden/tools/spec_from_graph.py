"""Derive a Flink-oracle pipeline spec from a flowc StreamGraph, so real Flink can plan the
same structure (used to check the examples' plans; see tests/test_examples_vs_flink.py).

Operator ids and chains depend on the graph's shape, uids, parallelism, slot groups,
chaining strategies and partitioners, not on what the operators compute, so the oracle's
stock operators stand in for ours: one-input ops become ``map`` (or ``reduce`` when keyed),
unions become ``union`` nodes, sinks ``sink`` (``print`` for the legacy print sink). Nodes keep flowc's creation order.

    python tests/golden/tools/spec_from_graph.py examples/clicks.flow > spec.json
"""

from __future__ import annotations

import json
import sys
from typing import Any

from flowc.planner.stream_graph import NodeKind, StreamGraph
from flowc.transformations import ChainingStrategy, PartitionerKind

PART = {PartitionerKind.FORWARD: "forward", PartitionerKind.REBALANCE: "rebalance",
        PartitionerKind.RESCALE: "rescale", PartitionerKind.SHUFFLE: "shuffle",
        PartitionerKind.BROADCAST: "broadcast", PartitionerKind.GLOBAL: "global"}


class Unsupported(Exception):
    pass


def spec_from_graph(g: StreamGraph) -> dict[str, Any]:
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
        if n.two_input:
            raise Unsupported("two-input operators")
        if n.chaining is ChainingStrategy.NEVER:
            node["chain"] = "disable"
        elif n.chaining is ChainingStrategy.HEAD:
            node["chain"] = "new_chain"
        ins = g.inputs(nid)
        if n.kind is NodeKind.SOURCE:
            node["op"] = "source"
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
            if n.kind is NodeKind.SINK and node.get("chain") == "new_chain":
                raise Unsupported("start_new_chain on a sink")
            if any(e.output_tag is not None for e in ins):
                raise Unsupported("side outputs")
            sources = [names[e.source_id] for e in ins]
            if len(sources) > 1:
                union = f"u{nid}"
                spec["nodes"].append({"id": union, "op": "union", "inputs": sources})
                sources = [union]
            node["inputs"] = sources
            if not keyed:
                node["partition"] = PART[kind]
        spec["nodes"].append(node)
    return spec


def main() -> None:
    from flowc.parser import compile_file

    env = compile_file(sys.argv[1]).env
    json.dump(spec_from_graph(env.get_stream_graph()), sys.stdout, indent=1)
    print()


if __name__ == "__main__":
    main()
