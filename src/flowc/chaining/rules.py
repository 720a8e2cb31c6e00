"""The chaining rule, in one place (Flink's ``StreamingJobGraphGenerator.isChainable``).

``chain_breaks`` lists every condition an edge violates; an edge is chainable iff the list is
empty. Explain uses the same list to say why an edge starts a new chain.
"""

from __future__ import annotations

from enum import Enum

from flowc.planner.stream_graph import NodeKind, StreamEdge, StreamGraph
from flowc.transformations import ChainingStrategy, PartitionerKind, RuntimeExecutionMode


class ChainBreak(Enum):
    """One chaining condition (flink-semantics.md §2), numbered as there."""

    MULTIPLE_INPUTS = 1
    CHAINING_DISABLED = 2
    SLOT_SHARING_GROUP = 3
    CHAINING_STRATEGY = 4
    PARALLELISM = 5
    PARTITIONER = 6
    UNION_INPUT = 7


def _p(p: int) -> str:
    return "default" if p == -1 else str(p)


def chain_breaks(edge: StreamEdge, graph: StreamGraph) -> list[tuple[ChainBreak, str]]:
    """Every violated condition with a plain-words reason; empty means chainable."""
    up = graph.nodes[edge.source_id]
    down = graph.nodes[edge.target_id]
    out: list[tuple[ChainBreak, str]] = []
    in_edges = graph.inputs(down.id)
    if len(in_edges) != 1:
        out.append((ChainBreak.MULTIPLE_INPUTS, f"{down.name} has {len(in_edges)} inputs"))
    if not graph.chaining_enabled:
        out.append((ChainBreak.CHAINING_DISABLED, "operator chaining is disabled for the job"))
    if up.slot_sharing_group != down.slot_sharing_group:
        out.append((ChainBreak.SLOT_SHARING_GROUP,
                    f"slot sharing group changes ({up.slot_sharing_group!r} -> "
                    f"{down.slot_sharing_group!r})"))
    if up.chaining is ChainingStrategy.NEVER:
        out.append((ChainBreak.CHAINING_STRATEGY, f"{up.name} has chaining disabled"))
    if down.chaining is ChainingStrategy.NEVER:
        out.append((ChainBreak.CHAINING_STRATEGY, f"{down.name} has chaining disabled"))
    elif down.chaining is ChainingStrategy.HEAD:
        why = (" (BATCH: keyed operators start chains)"
               if down.is_keyed and graph.config.mode is RuntimeExecutionMode.BATCH else "")
        out.append((ChainBreak.CHAINING_STRATEGY, f"{down.name} starts a new chain{why}"))
    elif down.chaining is ChainingStrategy.HEAD_WITH_SOURCES and up.kind is not NodeKind.SOURCE:
        out.append((ChainBreak.CHAINING_STRATEGY,
                    f"{down.name} only chains to sources"))
    if up.parallelism != down.parallelism:
        out.append((ChainBreak.PARALLELISM,
                    f"parallelism changes ({_p(up.parallelism)} -> {_p(down.parallelism)})"))
    if edge.partitioner.kind is not PartitionerKind.FORWARD:
        out.append((ChainBreak.PARTITIONER, f"{edge.partitioner} partitioning"))
    elif edge.exchange_mode == "BATCH":
        out.append((ChainBreak.PARTITIONER, "blocking exchange"))
    for other in in_edges:
        if other is not edge and other.type_number == edge.type_number:
            out.append((ChainBreak.UNION_INPUT, "another input of the same side (a union)"))
            break
    return out


def is_chainable(edge: StreamEdge, graph: StreamGraph) -> bool:
    # Fast path with the same conditions as chain_breaks, without building reasons; the
    # hasher and the chain walk call this once per edge on graphs of 100k operators.
    up = graph.nodes[edge.source_id]
    down = graph.nodes[edge.target_id]
    in_edges = graph.inputs(down.id)
    if len(in_edges) != 1 or not graph.chaining_enabled:
        return False
    if up.slot_sharing_group != down.slot_sharing_group or up.parallelism != down.parallelism:
        return False
    if up.chaining is ChainingStrategy.NEVER:
        return False
    dc = down.chaining
    if dc is ChainingStrategy.NEVER or dc is ChainingStrategy.HEAD:
        return False
    if dc is ChainingStrategy.HEAD_WITH_SOURCES and up.kind is not NodeKind.SOURCE:
        return False
    if edge.partitioner.kind is not PartitionerKind.FORWARD or edge.exchange_mode == "BATCH":
        return False
    return True
