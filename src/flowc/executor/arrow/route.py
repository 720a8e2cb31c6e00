"""Route a chunk's records to consumer subtasks exactly as ``executor.routing`` does per
record, vectorised: HASH computes Flink's key group once per distinct key and takes it per
row; REBALANCE / RESCALE are counters over the producer's records; FORWARD and GLOBAL are
constants; BROADCAST copies; SHUFFLE and CUSTOM call the per-record selector."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pyarrow as pa

from flowc.executor import routing
from flowc.executor.arrow.convert import Chunk
from flowc.keygroups import java_hash_code, murmur_hash_array
from flowc.transformations import Partitioner, PartitionerKind
from flowc.vector import VCol, vector_of


class Router:
    def __init__(self, partitioner: Partitioner, *, producer: int, targets: Sequence[int],
                 t: int, max_par: int, seed: str) -> None:
        self.kind = partitioner.kind
        self.targets = list(targets)
        self.t = t
        self.max_par = max_par
        self.count = 0  # records routed so far (round-robin position)
        self.start = producer % t
        self.select = routing.make_selector(partitioner, producer=producer, targets=targets,
                                            t=t, max_par=max_par, seed=seed)
        key = partitioner.key
        self.columns: list[int] | None = None
        self.key_fn = None
        if self.kind is PartitionerKind.HASH:
            assert key is not None
            vec = vector_of(getattr(key, "fn", None))
            if isinstance(vec, tuple) and all(isinstance(v, VCol) for v in vec):
                self.columns = [v.index for v in vec]
                self.key_fn = routing.unwrap(key)
            self.route_key = routing.cached_key_router(None, max_par, t)

    def split(self, c: Chunk) -> list[tuple[int, Chunk]]:
        """(target subtask, records) pairs, each target once, records in order."""
        n = c.num_rows
        if n == 0:
            return []
        kind = self.kind
        if kind is PartitionerKind.BROADCAST:
            return [(t, c) for t in self.targets]
        if kind is PartitionerKind.GLOBAL:
            return [(0, c)]
        if kind is PartitionerKind.FORWARD or (kind is PartitionerKind.RESCALE
                                               and len(self.targets) == 1):
            return [(self.targets[0], c)]
        if kind is PartitionerKind.REBALANCE:
            pos = np.arange(self.count + 1, self.count + 1 + n, dtype=np.int64)
            dest = (self.start + pos) % self.t
        elif kind is PartitionerKind.RESCALE:
            pos = np.arange(self.count, self.count + n, dtype=np.int64) % len(self.targets)
            dest = np.asarray(self.targets, dtype=np.int64)[pos]
        elif kind is PartitionerKind.HASH and self.columns is not None:
            dest = self._hash(c)
        else:
            dest = np.fromiter((self.select(r) for r in c.rows()), dtype=np.int64, count=n)
        self.count += n
        return _split(c, dest)

    def _hash(self, c: Chunk) -> np.ndarray:
        assert self.columns is not None and self.key_fn is not None
        width = c.batch.num_columns
        if len(self.columns) == 1:
            col = c.batch.column(self.columns[0])
            encoded = col.dictionary_encode() if not pa.types.is_dictionary(col.type) else col
            indices = encoded.indices
            if indices.null_count:  # a null key: the per-record rule raises Flink's error
                return np.fromiter((self.route_key(self.key_fn(r)) for r in c.rows()),
                                   dtype=np.int64, count=c.num_rows)
            codes = java_hashes(encoded.dictionary)
            if codes is None:
                row: list[Any] = [None] * width
                i = self.columns[0]
                listed = []
                for v in encoded.dictionary.to_pylist():  # the key's Java hash per value
                    row[i] = v
                    listed.append(java_hash_code(self.key_fn(row)))
                codes = np.asarray(listed, dtype=np.int64)
            groups = murmur_hash_array(codes) % self.max_par
            table = groups * self.t // self.max_par
            return table[indices.to_numpy(zero_copy_only=False)]
        # Several fields: the key is a tuple (Flink's Tuple.hashCode: h = 31 * h + the
        # field's hash, 0 for null), each field's Java hash computed once per distinct
        # value, then murmur, key group and subtask over the whole column (numpy).
        h = np.zeros(c.num_rows, dtype=np.int64)
        for i in self.columns:
            enc = c.batch.column(i).dictionary_encode(null_encoding="encode")
            hashes = np.asarray([0 if v is None else java_hash_code(v)
                                 for v in enc.dictionary.to_pylist()], dtype=np.int64)
            h = 31 * h + hashes[enc.indices.to_numpy(zero_copy_only=False)]
            h = (h + (1 << 31)) % (1 << 32) - (1 << 31)  # a Java int
        groups = murmur_hash_array(h) % self.max_par
        return groups * self.t // self.max_par


def java_hashes(values: pa.Array) -> np.ndarray | None:
    """``keygroups.java_hash_code`` of each (non-null) value, vectorised for integers (a
    Long's hash) and ASCII strings (String.hashCode: sum of byte * 31^(n-1-i), 32-bit);
    None for other types and for strings with other characters (UTF-16 units differ from
    UTF-8 bytes there: the caller hashes them one by one)."""
    if pa.types.is_integer(values.type):
        u = values.to_numpy(zero_copy_only=False).astype(np.int64).view(np.uint64)
        h = (u ^ (u >> np.uint64(32))) & np.uint64(0xFFFFFFFF)
        return _as_int32(h)
    if not pa.types.is_string(values.type) and not pa.types.is_large_string(values.type):
        return None
    n = len(values)
    offsets = np.frombuffer(values.buffers()[1], dtype=np.int64 if
                            pa.types.is_large_string(values.type) else np.int32)
    offsets = offsets[values.offset:values.offset + n + 1].astype(np.int64)
    data = values.buffers()[2]
    raw = np.frombuffer(data, dtype=np.uint8) if data is not None else np.zeros(0, np.uint8)
    raw = raw[offsets[0]:offsets[-1]]
    if raw.size and raw.max() >= 128:
        return None
    lengths = np.diff(offsets)
    out = np.zeros(n, dtype=np.uint64)
    filled = np.flatnonzero(lengths)
    if raw.size:
        top = int(lengths.max())
        powers = np.ones(top, dtype=np.uint64)  # 31^k mod 2^32
        for k in range(1, top):
            powers[k] = (powers[k - 1] * np.uint64(31)) & np.uint64(0xFFFFFFFF)
        starts = offsets[:-1] - offsets[0]
        # Each byte's exponent: its string's length - 1 - its place in the string.
        owner = np.repeat(np.arange(n), lengths)
        exponent = (starts + lengths - 1)[owner] - np.arange(raw.size)
        terms = (raw.astype(np.uint64) * powers[exponent]) & np.uint64(0xFFFFFFFF)
        out[filled] = np.add.reduceat(terms, starts[filled]) & np.uint64(0xFFFFFFFF)
    return _as_int32(out)


def _as_int32(h: np.ndarray) -> np.ndarray:
    s = h.astype(np.int64)
    return np.where(s >= 1 << 31, s - (1 << 32), s)


def _split(c: Chunk, dest: np.ndarray) -> list[tuple[int, Chunk]]:
    order = np.argsort(dest, kind="stable")
    ordered = dest[order]
    bounds = np.flatnonzero(np.diff(ordered)) + 1
    out = []
    for part in np.split(order, bounds):
        out.append((int(dest[part[0]]), c.take(pa.array(part))))
    return out
