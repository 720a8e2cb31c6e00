"""The StreamGraph IR: one node per operator, edges carrying partitioner and side-output tag."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import Enum
from typing import Any

from flowc.errors import Span
from flowc.transformations import (
    ChainingStrategy,
    Config,
    KeySelector,
    OutputTag,
    Partitioner,
)


class NodeKind(Enum):
    SOURCE = "source"
    OPERATOR = "operator"
    SINK = "sink"


@dataclass(frozen=True, eq=False)
class StreamNode:
    id: int
    name: str
    kind: NodeKind
    parallelism: int
    max_parallelism: int
    slot_sharing_group: str
    chaining: ChainingStrategy
    # The OperatorSpec / SourceSpec / SinkSpec the executor runs.
    operator: Any
    # State key selector per input (one entry for one-input nodes, two for two-input).
    keys: tuple[KeySelector | None, ...] = ()
    uid: str | None = None
    uid_hash: str | None = None
    span: Span | None = None
    output_type: Any = None
    description: str = ""
    two_input: bool = False
    # A Flink 2.x v2 sink writer (``<name>: Writer``): an operator in Flink's StreamGraph,
    # not one of its (legacy) sink ids, so the plan JSON calls it "Operator".
    sink_writer: bool = False
    # Sources only: the WatermarkStrategy the source applies itself (Flink's fromSource).
    watermark_strategy: Any = None

    def __str__(self) -> str:
        # Flink's StreamNode.toString(), used in error texts.
        return f"{self.name}-{self.id}"

    @property
    def is_keyed(self) -> bool:
        return any(k is not None for k in self.keys)


INSERT_ONLY = "[I]"
UPDATING = "[I,UB,UA,D]"


@dataclass(frozen=True, eq=False)
class StreamEdge:
    source_id: int
    target_id: int
    type_number: int
    partitioner: Partitioner
    output_tag: OutputTag | None
    # Flink's StreamExchangeMode; flowc only ever produces UNDEFINED (chaining allowed).
    exchange_mode: str
    unique_id: int

    @property
    def edge_id(self) -> str:
        return (f"{self.source_id}_{self.target_id}_{self.type_number}_"
                f"{self.partitioner}_{self.unique_id}")

    def __repr__(self) -> str:
        return f"StreamEdge({self.edge_id})"


@dataclass(frozen=True, eq=False)
class StreamGraph:
    config: Config
    nodes: Mapping[int, StreamNode]
    edges: tuple[StreamEdge, ...]
    # Edge lists in creation order, per node.
    out_edges: Mapping[int, tuple[StreamEdge, ...]]
    in_edges: Mapping[int, tuple[StreamEdge, ...]]
    source_ids: tuple[int, ...]
    sink_ids: tuple[int, ...]

    @property
    def chaining_enabled(self) -> bool:
        return self.config.chaining_enabled

    def node(self, node_id: int) -> StreamNode:
        return self.nodes[node_id]

    def outputs(self, node_id: int) -> tuple[StreamEdge, ...]:
        return self.out_edges.get(node_id, ())

    def inputs(self, node_id: int) -> tuple[StreamEdge, ...]:
        return self.in_edges.get(node_id, ())

    def changelog_modes(self) -> dict[int, str]:
        """Each node's output changelog mode, in Flink's EXPLAIN spelling: ``[I]`` for an
        insert-only stream, ``[I,UB,UA,D]`` for an updating one. A node is updating when
        its function says it emits updates (``emits_updates``, e.g. a rolling aggregate's
        changelog) or an input is updating. In topological order, without recursion."""
        pending = {nid: len(self.inputs(nid)) for nid in self.nodes}
        ready = sorted(nid for nid, k in pending.items() if k == 0)
        updating: dict[int, bool] = {}
        while ready:
            nid = ready.pop()
            fn = getattr(self.nodes[nid].operator, "fn", None)
            updating[nid] = bool(getattr(fn, "emits_updates", False)) or any(
                updating.get(e.source_id, False) for e in self.inputs(nid))
            for e in self.outputs(nid):
                pending[e.target_id] -= 1
                if pending[e.target_id] == 0:
                    ready.append(e.target_id)
        return {nid: UPDATING if updating.get(nid) else INSERT_ONLY for nid in self.nodes}

    def to_dict(self) -> dict[str, Any]:
        """Stable JSON rendering (docs/plan-format.md)."""
        modes = self.changelog_modes()
        return {
            "mode": self.config.mode.value,
            "chaining": self.config.chaining_enabled,
            "parallelism": self.config.parallelism,
            "max_parallelism": self.config.max_parallelism,
            "nodes": [
                {
                    "id": n.id,
                    "name": n.name,
                    "kind": n.kind.value,
                    "parallelism": n.parallelism,
                    "max_parallelism": n.max_parallelism,
                    "slot_sharing_group": n.slot_sharing_group,
                    "chaining_strategy": n.chaining.value,
                    "uid": n.uid,
                    "uid_hash": n.uid_hash,
                    "keyed": n.is_keyed,
                    "line": n.span.line if n.span else None,
                    # as the text explain: a sink's own mode is not shown
                    "changelog_mode": None if n.kind is NodeKind.SINK else modes[n.id],
                }
                for n in sorted(self.nodes.values(), key=lambda n: n.id)
            ],
            "edges": [
                {
                    "id": e.edge_id,
                    "source": e.source_id,
                    "target": e.target_id,
                    "type_number": e.type_number,
                    "partitioner": str(e.partitioner),
                    "output_tag": e.output_tag.tag_id if e.output_tag else None,
                }
                for e in self.edges
            ],
        }
