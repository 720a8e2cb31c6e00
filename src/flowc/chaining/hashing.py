"""Operator ids: Flink's StreamGraphHasherV2 (MurmurHash3 x64 128, seed 0)."""

from __future__ import annotations

import struct
from collections import deque

import mmh3

from flowc.chaining.rules import is_chainable
from flowc.errors import PlanError
from flowc.planner.stream_graph import StreamGraph

_INT = struct.Struct("<i")


def _hash_uid(uid: str) -> bytes:
    return mmh3.hash_bytes(uid.encode("utf-8"), 0)


def _deterministic_hash(graph: StreamGraph, node_id: int, hashes: dict[int, bytes]) -> bytes:
    n = len(hashes)
    data = bytearray(_INT.pack(n))
    for e in graph.outputs(node_id):
        if is_chainable(e, graph):
            data += _INT.pack(n)
    h = bytearray(mmh3.hash_bytes(bytes(data), 0))
    for e in graph.inputs(node_id):
        other = hashes[e.source_id]
        for j in range(16):
            # Java: (byte) (hash[j] * 37 ^ otherHash[j]) on signed bytes == this mod 256.
            h[j] = ((h[j] * 37) ^ other[j]) & 0xFF
    return bytes(h)


def operator_hashes(graph: StreamGraph) -> dict[int, bytes]:
    """Node id -> 16-byte hash, breadth-first from the sources sorted by id, deferring nodes
    whose inputs are not hashed yet (exactly Flink's traversal, so counts match)."""
    hashes: dict[int, bytes] = {}
    seen_hashes: set[bytes] = set()
    visited: set[int] = set()
    remaining: deque[int] = deque()
    for sid in graph.source_ids:
        remaining.append(sid)
        visited.add(sid)
    while remaining:
        nid = remaining.popleft()
        node = graph.nodes[nid]
        if node.uid is None:
            if any(e.source_id not in hashes for e in graph.inputs(nid)):
                visited.discard(nid)  # revisited when another input reaches it
                continue
            h = _deterministic_hash(graph, nid, hashes)
        else:
            h = _hash_uid(node.uid)
            if h in seen_hashes:
                raise PlanError(
                    f'Hash collision on user-specified ID "{node.uid}". Most likely cause is a '
                    "non-unique ID. Please check that all IDs specified via `uid(String)` are "
                    "unique.", node.span, java_class="IllegalArgumentException")
        hashes[nid] = h
        seen_hashes.add(h)
        for e in graph.outputs(nid):
            if e.target_id not in visited:
                remaining.append(e.target_id)
                visited.add(e.target_id)
    return hashes
