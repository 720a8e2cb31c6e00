"""Which consumer subtask receives a record, per Flink partitioner; shared by both executors.

- HASH: Flink's key groups on the consumer's resolved max parallelism (flowc.keygroups).
- REBALANCE: round robin over all consumers. Flink's RebalancePartitioner starts at a
  *random* channel and increments before each send; flowc replaces the random draw by the
  producer subtask index, so producer ``k``'s first record goes to ``(k + 1) % n``.
- RESCALE: round robin within the producer's pointwise consumer range, first record to the
  first consumer of the range (Flink's RescalePartitioner starts at -1).
- FORWARD: the pointwise consumer (same index). GLOBAL: 0. BROADCAST: every consumer.
- SHUFFLE: ``random.Random(<edge id>:<producer subtask>)`` (Flink's is unseeded).
- CUSTOM: ``partition(key, n)``.
Watermarks are broadcast to every consumer the producer subtask is connected to. Which
consumers those are (the wiring) comes from the ExecutionGraph (``flowc.executor.wiring``).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from typing import Any

from flowc.errors import ExecutionError
from flowc.executor.runtime.core import unwrap
from flowc.keygroups import assign_key_to_parallel_operator
from flowc.transformations import Partitioner, PartitionerKind

BROADCAST = -1


def cached_key_router(key: Callable[[Any], Any] | None, max_par: int,
                      t: int) -> Callable[[Any], int]:
    """``value -> subtask`` by key group, memoised per key: Java-hashCode + murmur in pure
    Python costs microseconds, a dict hit tens of nanoseconds, and keys repeat."""
    cache: dict[Any, int] = {}
    key = unwrap(key) if key is not None else None

    def route(v: Any) -> int:
        k = key(v) if key is not None else v
        tk = type(k)
        # Only str and (non-bool) int keys are cached: 1 == 1.0 == True in a dict, but
        # Java hashes Long, Double and Boolean differently.
        if tk is str or tk is int:
            r = cache.get(k)
            if r is None:
                if len(cache) > 200_000:
                    cache.clear()
                r = cache[k] = assign_key_to_parallel_operator(k, max_par, t)
            return r
        return assign_key_to_parallel_operator(k, max_par, t)
    return route


def make_selector(partitioner: Partitioner, *, producer: int, targets: Sequence[int], t: int,
                  max_par: int, seed: str) -> Callable[[Any], int]:
    """``select(value) -> consumer subtask`` (or ``BROADCAST``) for one producer subtask;
    ``targets`` are the consumers it is connected to (``Wiring.consumers_of``), ``t`` the
    consumer parallelism."""
    kind = partitioner.kind
    if kind is PartitionerKind.HASH:
        key = partitioner.key
        assert key is not None
        return cached_key_router(key, max_par, t)
    if kind is PartitionerKind.BROADCAST:
        return lambda v: BROADCAST
    if kind is PartitionerKind.GLOBAL:
        return lambda v: 0
    if kind is PartitionerKind.REBALANCE:
        state = [producer % t]

        def select_rebalance(v: Any) -> int:
            n = (state[0] + 1) % t
            state[0] = n
            return n
        return select_rebalance
    if kind in (PartitionerKind.RESCALE, PartitionerKind.FORWARD):
        if kind is PartitionerKind.FORWARD or len(targets) == 1:
            only = targets[0]
            return lambda v: only
        pos = [-1]

        def select_rescale(v: Any) -> int:
            pos[0] = (pos[0] + 1) % len(targets)
            return targets[pos[0]]
        return select_rescale
    if kind is PartitionerKind.SHUFFLE:
        rnd = random.Random(f"{seed}:{producer}")
        return lambda v: rnd.randrange(t)
    if kind is PartitionerKind.CUSTOM:
        key, custom = partitioner.key, partitioner.custom
        assert key is not None and custom is not None

        def select_custom(v: Any) -> int:
            c = custom(key(v), t)
            if not isinstance(c, int) or not 0 <= c < t:
                raise ExecutionError(f"custom partitioner returned {c!r}, not a channel in "
                                     f"[0, {t})")
            return c
        return select_custom
    raise ExecutionError(f"unknown partitioner {kind}")
