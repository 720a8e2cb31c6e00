"""Direct tests of ``flowc.executor.routing``: one selector per Flink partitioner."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest

from flowc.errors import ExecutionError
from flowc.executor.routing import BROADCAST, cached_key_router, make_selector
from flowc.transformations import KeySelector, Partitioner, PartitionerKind

GOLDEN = Path(__file__).resolve().parents[1] / "golden" / "flink-2.3" / "keygroups.json"


def _sel(kind: PartitionerKind, producer: int = 0, targets: Any = (0, 1, 2), t: int = 3,
         max_par: int = 128, seed: str = "e1", **kw: Any) -> Any:
    return make_selector(Partitioner(kind, **kw), producer=producer, targets=list(targets),
                         t=t, max_par=max_par, seed=seed)


def _take(sel: Any, n: int) -> list[int]:
    return [sel(i) for i in range(n)]


def test_rebalance_starts_after_the_producer_index() -> None:
    # Flink: nextChannel = random.nextInt(n) at setup, then (next + 1) % n before each send;
    # flowc draws the producer index, so producer k's first record goes to (k + 1) % n.
    assert _take(_sel(PartitionerKind.REBALANCE, producer=0), 7) == [1, 2, 0, 1, 2, 0, 1]
    assert _take(_sel(PartitionerKind.REBALANCE, producer=2), 4) == [0, 1, 2, 0]
    assert _take(_sel(PartitionerKind.REBALANCE, producer=4), 4) == [2, 0, 1, 2]  # 4 % 3
    assert _take(_sel(PartitionerKind.REBALANCE, producer=0, targets=[0], t=1), 3) == [0, 0, 0]
    # Every producer spreads evenly over all consumers.
    sel = _sel(PartitionerKind.REBALANCE, producer=1, t=4, targets=range(4))
    counts = [0] * 4
    for c in _take(sel, 400):
        counts[c] += 1
    assert counts == [100] * 4


def test_rescale_round_robin_in_the_pointwise_range_from_its_first_consumer() -> None:
    # Flink's RescalePartitioner starts at -1: the first record goes to the range's first.
    assert _take(_sel(PartitionerKind.RESCALE, producer=1, targets=[2, 3], t=4), 5) == \
        [2, 3, 2, 3, 2]
    assert _take(_sel(PartitionerKind.RESCALE, producer=0, targets=[0, 1, 2], t=6), 4) == \
        [0, 1, 2, 0]
    assert _take(_sel(PartitionerKind.RESCALE, producer=5, targets=[2], t=3), 3) == [2, 2, 2]


def test_global_always_zero_and_broadcast_all() -> None:
    assert set(_take(_sel(PartitionerKind.GLOBAL, producer=2, targets=range(5), t=5), 50)) \
        == {0}
    assert set(_take(_sel(PartitionerKind.BROADCAST, producer=1), 10)) == {BROADCAST}


def test_forward_same_index() -> None:
    assert _take(_sel(PartitionerKind.FORWARD, producer=2, targets=[2], t=3), 4) == [2] * 4


def test_shuffle_is_seeded_per_edge_and_producer() -> None:
    a = _take(_sel(PartitionerKind.SHUFFLE, producer=1, seed="edge-7", t=5,
                   targets=range(5)), 200)
    again = _take(_sel(PartitionerKind.SHUFFLE, producer=1, seed="edge-7", t=5,
                       targets=range(5)), 200)
    rnd = random.Random("edge-7:1")
    assert a == again == [rnd.randrange(5) for _ in range(200)]
    assert set(a) == set(range(5))
    other_producer = _take(_sel(PartitionerKind.SHUFFLE, producer=0, seed="edge-7", t=5,
                                targets=range(5)), 200)
    other_edge = _take(_sel(PartitionerKind.SHUFFLE, producer=1, seed="edge-8", t=5,
                            targets=range(5)), 200)
    assert other_producer != a and other_edge != a


def test_hash_routes_like_flink_key_groups() -> None:
    vectors = json.loads(GOLDEN.read_text())
    for v in vectors:
        if v["java_type"] not in ("String", "Long", "Boolean", "Double"):
            continue
        key = float("nan") if v["key"] == "NaN" and v["java_type"] == "Double" else v["key"]
        if v["java_type"] == "Double":
            key = float(key)
        sel = _sel(PartitionerKind.HASH, t=3, max_par=128,
                   key=KeySelector(lambda r: r[0]))
        assert sel((key, "payload")) == v["subtask_p3_m128"], v
        sel7 = _sel(PartitionerKind.HASH, t=7, max_par=4096, targets=range(7),
                    key=KeySelector(lambda r: r[0]))
        assert sel7((key,)) == v["subtask_p7_m4096"], v


def test_cached_router_keeps_int_bool_and_float_keys_apart() -> None:
    # 1 == 1.0 == True in a Python dict, but Java hashes Long 1, Double 1.0 and Boolean
    # true differently: the memo must not answer one with another's subtask.
    from flowc.keygroups import assign_key_to_parallel_operator

    route = cached_key_router(None, 128, 128)
    for k in (1, True, 1.0, 1, True, 1.0):
        assert route(k) == assign_key_to_parallel_operator(k, 128, 128)
    assert len({route(1), route(True), route(1.0)}) > 1


def test_custom_partitioner_checks_the_channel() -> None:
    sel = _sel(PartitionerKind.CUSTOM, key=KeySelector(lambda r: r), custom=lambda k, n: k % n)
    assert _take(sel, 5) == [0, 1, 2, 0, 1]
    bad = _sel(PartitionerKind.CUSTOM, key=KeySelector(lambda r: r), custom=lambda k, n: n)
    with pytest.raises(ExecutionError, match=r"custom partitioner returned 3, not a channel"):
        bad(1)
