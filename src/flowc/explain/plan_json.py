"""Flink's ``getExecutionPlan()`` JSON (JSONGenerator), byte for byte.

Flink serialises with Jackson's default pretty printer (``toPrettyString``): two-space
indents, ``"key" : value``, arrays opened on the same line as ``[ {`` and closed as ``} ]``.
"""

from __future__ import annotations

import json
from typing import Any

from flowc.planner.stream_graph import UPDATING, NodeKind, StreamGraph


def _pretty(value: Any, indent: int = 0) -> str:
    pad = "  " * indent
    if isinstance(value, dict):
        if not value:
            return "{ }"
        inner = "  " * (indent + 1)
        items = [f'{inner}{json.dumps(k, ensure_ascii=False)} : {_pretty(v, indent + 1)}'
                 for k, v in value.items()]
        return "{\n" + ",\n".join(items) + "\n" + pad + "}"
    if isinstance(value, list):
        if not value:
            return "[ ]"
        return "[ " + ", ".join(_pretty(v, indent) for v in value) + " ]"
    return json.dumps(value, ensure_ascii=False)


def plan_nodes(graph: StreamGraph) -> list[dict[str, Any]]:
    # Non-sinks first, then sinks, each by id (JSONGenerator's comparator; its topological
    # visit degenerates to this order because it compares edges with ids).
    # Flink 2.x v2 sink writers are plain operators there (not in its sink ids).
    def legacy_sink(nid: int) -> bool:
        n = graph.nodes[nid]
        return n.kind is NodeKind.SINK and not n.sink_writer

    order = sorted(graph.nodes, key=lambda nid: (legacy_sink(nid), nid))
    modes = graph.changelog_modes()
    nodes = []
    for nid in order:
        n = graph.nodes[nid]
        pact = ("Data Source" if n.kind is NodeKind.SOURCE
                else "Data Sink" if legacy_sink(nid) else "Operator")
        node: dict[str, Any] = {"id": nid, "type": n.name, "pact": pact, "contents": n.description or n.name,
                                "parallelism": n.parallelism}
        if modes[nid] == UPDATING and n.kind is not NodeKind.SINK:
            # flowc's addition (as its text explain and Flink SQL's EXPLAIN show it): an
            # insert-only plan stays Flink's JSON byte for byte
            node["changelogMode"] = UPDATING
        if n.kind is not NodeKind.SOURCE:
            node["predecessors"] = [
                {"id": e.source_id, "ship_strategy": str(e.partitioner), "side": "second"}
                for e in graph.inputs(nid)
            ]
        nodes.append(node)
    return nodes


def execution_plan_json(graph: StreamGraph) -> str:
    return _pretty({"nodes": plan_nodes(graph)})
