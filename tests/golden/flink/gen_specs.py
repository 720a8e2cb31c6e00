"""Seeded random generator of Flink-oracle pipeline specs (the golden corpus's r_*.json).

The spec format is the one FlinkOracle.java reads (see shared/testdata/flink-2.3/README.md):

    {"parallelism": P, "max_parallelism": M?, "chaining": false?, "mode": "STREAMING",
     "nodes": [{"id": "n1", "op": ..., "inputs": [...], "partition": ..., "parallelism": p,
                "slot_group": g, "chain": "disable"|"new_chain", "uid": true}, ...]}

Generation is fully deterministic: spec number i uses ``random.Random(f"{seed}:{i}")``, so a
spec does not change when the count changes. Rules kept (so that specs are valid programs):

- ids are n1, n2, ... in list order; inputs always name earlier, non-sink nodes;
- keyed ops (reduce/process/window_reduce) never get a partition (they key the stream);
- unions have >= 2 inputs and no settings at all;
- sinks only ever get ``"chain": "disable"``;
- uids are the (unique) node ids;
- mode is always STREAMING (BATCH uses Flink's adaptive scheduler, which flowc does not copy).

An explicit ``forward`` whose upstream parallelism differs is a Flink error. Every tenth spec
(i % 10 == 9) gets one on purpose; everywhere else such a forward is repaired (the node's
parallelism aligned, or another partition chosen), so that about 10% of the corpus are error
goldens.

Usage: python gen_specs.py [--seed 2300] [--count 150] [--out specs]
"""

from __future__ import annotations

import argparse
import json
import random
from pathlib import Path

ONE_INPUT = ("map", "filter", "flat_map")
KEYED = ("reduce", "process", "window_reduce")
PARTITIONS = ("forward", "rebalance", "rescale", "shuffle", "broadcast", "global")
SLOT_GROUPS = ("default", "a", "b")
MAX_PARALLELISMS = (2, 4, 8, 16, 32, 128, 256, 1000, 4096, 32768)
ERROR_SHARE = 0.10
KEY_ORDER = ("id", "op", "inputs", "partition", "parallelism", "slot_group", "chain", "uid")


def _weighted(rng: random.Random, table: dict[str, float]) -> str:
    keys = list(table)
    return rng.choices(keys, weights=[table[k] for k in keys])[0]


def generate(rng: random.Random, allow_error: bool = False) -> tuple[dict, bool]:
    """One random spec, and whether it should be rejected (explicit forward, p mismatch).

    With ``allow_error`` the spec gets a deliberate forward-with-parallelism-change (if it has
    a node that can take one) and forwards are never repaired."""
    env_p = rng.randint(1, 4)
    spec: dict = {"parallelism": env_p}
    if rng.random() < 0.2:
        spec["max_parallelism"] = rng.choice(MAX_PARALLELISMS)
    if rng.random() < 0.15:
        spec["chaining"] = False
    spec["mode"] = "STREAMING"

    p_node_par = rng.choice((0.0, 0.15, 0.35, 0.6))      # per-node parallelism density
    p_partition = rng.choice((0.1, 0.3, 0.5))
    p_forward = 0.45 if allow_error else 0.2              # share of forward among partitions
    p_slot = rng.choice((0.0, 0.0, 0.15, 0.35))
    p_chain = rng.choice((0.0, 0.08, 0.2))
    uid_mode = rng.choices(("none", "all", "some"), weights=(6, 1.5, 2.5))[0]
    n_sources = rng.choices((1, 2, 3), weights=(5, 3, 2))[0]
    size = rng.randint(3, 12) if rng.random() < 0.9 else rng.randint(15, 30)
    size = max(size, n_sources + 1)
    # positions of the extra sources (the first node is always a source)
    source_at = {0} | set(rng.sample(range(1, size), n_sources - 1))

    error_at = rng.randint(1, max(1, size // 2))  # where an error spec puts its bad forward
    nodes: list[dict] = []
    par: dict[str, int] = {}            # effective parallelism of operator nodes
    real: dict[str, list[str]] = {}     # node id -> the operator ids it stands for (unions)
    uses: dict[str, int] = {}           # times a stream has been consumed
    streams: list[str] = []             # ids that may be consumed (non-sinks)
    error = False

    def pick_input(exclude: tuple[str, ...] = ()) -> str:
        cands = [s for s in streams if s not in exclude] or streams
        # prefer unconsumed and recent streams; consumed ones make fan-out
        weights = [(3.0 if uses[s] == 0 else 0.8) * (1.0 + i / len(cands))
                   for i, s in enumerate(cands)]
        return rng.choices(cands, weights=weights)[0]

    for i in range(size):
        nid = f"n{i + 1}"
        node: dict = {"id": nid}
        if i in source_at:
            op = "source"
        else:
            table = {"map": 3, "filter": 2, "flat_map": 2, "reduce": 1.5, "process": 1,
                     "window_reduce": 1, "union": 1.2 if len(streams) >= 2 else 0.15,
                     "sink": 2.0 if i > 1 else 0.5}
            op = _weighted(rng, table)
        node["op"] = op

        if op == "union":
            k = min(len(streams), rng.choices((2, 3, 4), weights=(6, 3, 1))[0])
            ins: list[str] = []
            for _ in range(max(k, 2)):
                if rng.random() < 0.08 and ins:
                    ins.append(rng.choice(ins))             # a stream unioned with itself
                else:
                    ins.append(pick_input(tuple(ins)))
            node["inputs"] = ins
            for s in ins:
                uses[s] += 1
            real[nid] = [r for s in ins for r in real[s]]
            uses[nid] = 0
            streams.append(nid)
            nodes.append(node)
            continue

        ups: list[str] = []
        if op != "source":
            src = pick_input()
            node["inputs"] = [src]
            uses[src] += 1
            ups = real[src]
            if op not in KEYED and allow_error and not error and i >= error_at:
                node["partition"] = "forward"               # the deliberate mismatch
            elif op not in KEYED and rng.random() < p_partition:
                part = "forward" if rng.random() < p_forward else rng.choice(PARTITIONS[1:])
                node["partition"] = part

        p = env_p
        if rng.random() < p_node_par:
            p = rng.randint(1, 4)
            node["parallelism"] = p
        if node.get("partition") == "forward":
            up_ps = {par[u] for u in ups}
            if allow_error and not error and up_ps == {p}:
                p = rng.choice([q for q in range(1, 5) if q not in up_ps])
                node["parallelism"] = p
            if up_ps != {p}:
                if allow_error:
                    error = True
                elif len(up_ps) == 1:
                    p = up_ps.pop()
                    if p == env_p and rng.random() < 0.5:
                        node.pop("parallelism", None)
                    else:
                        node["parallelism"] = p
                else:
                    node["partition"] = rng.choice(PARTITIONS[1:])
        par[nid] = p

        if rng.random() < p_slot:
            node["slot_group"] = rng.choice(SLOT_GROUPS)
        if rng.random() < p_chain:
            node["chain"] = "disable" if op == "sink" else rng.choice(("disable", "new_chain"))
        if uid_mode == "all" or (uid_mode == "some" and rng.random() < 0.5):
            node["uid"] = True

        nodes.append(node)
        if op != "sink":
            real[nid] = [nid]
            uses[nid] = 0
            streams.append(nid)

    # most programs end in a sink on their last stream (dangling operators stay possible)
    if nodes[-1]["op"] != "sink" and rng.random() < 0.8:
        last = streams[-1]
        nid = f"n{len(nodes) + 1}"
        sink: dict = {"id": nid, "op": "sink", "inputs": [last]}
        if uid_mode == "all":
            sink["uid"] = True
        nodes.append(sink)

    spec["nodes"] = [{k: n[k] for k in KEY_ORDER if k in n} for n in nodes]
    return spec, error


def dumps(spec: dict) -> str:
    """Pretty but compact: header on one line, one node per line (like shared/testdata)."""
    head = {k: v for k, v in spec.items() if k != "nodes"}
    lines = [json.dumps(head)[:-1] + ', "nodes": [']
    body = [" " + json.dumps(n) for n in spec["nodes"]]
    return "\n".join(lines + [",\n".join(body), "]}"]) + "\n"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seed", default="2300")
    ap.add_argument("--count", type=int, default=150)
    ap.add_argument("--out", type=Path, default=Path(__file__).parent / "specs")
    args = ap.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    errors = 0
    for i in range(args.count):
        allow_error = i % round(1 / ERROR_SHARE) == round(1 / ERROR_SHARE) - 1
        spec, error = generate(random.Random(f"{args.seed}:{i}"), allow_error)
        errors += error
        (args.out / f"r_{i:04d}.json").write_text(dumps(spec))
    print(f"wrote {args.count} specs to {args.out} ({errors} expected to be rejected by Flink)")


if __name__ == "__main__":
    main()
