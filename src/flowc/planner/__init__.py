"""Transformations -> StreamGraph."""

from flowc.planner.generator import generate_stream_graph
from flowc.planner.stream_graph import NodeKind, StreamEdge, StreamGraph, StreamNode

__all__ = ["NodeKind", "StreamEdge", "StreamGraph", "StreamNode", "generate_stream_graph"]
