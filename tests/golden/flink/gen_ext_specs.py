"""Seeded random generator of the extended golden corpus (ext/x_*.json) for ExtOracle.java.

Beyond gen_specs.py's vocabulary these programs use two-input operators (``co_map``:
``a.connect(b).map``, ``keyed_co_process``: ``a.connect(b).keyBy(k, k).process``, including a
stream connected with itself), side outputs (``side``: ``getSideOutput`` of an operator or
source, virtual like a union), ``custom`` partitioning, and both runtime modes (``"mode":
"BATCH"`` runs Flink's static scheduler, the one flowc's BATCH reproduces).

Programs are valid: an explicit ``forward`` is only used where parallelism does not change
(the error text is covered by the main corpus). Spec i uses ``random.Random(f"{seed}:{i}")``.

Usage: python gen_ext_specs.py [--seed ext-2300] [--count 120] [--out ext]
"""

from __future__ import annotations

import argparse
import random
from pathlib import Path

from gen_specs import dumps

PARTITIONS = ("forward", "rebalance", "rescale", "shuffle", "broadcast", "global", "custom")
KEYED = ("reduce", "process", "window_reduce", "keyed_co_process")
KEY_ORDER = ("id", "op", "inputs", "tag", "partition", "parallelism", "slot_group", "chain",
             "uid")


def generate(rng: random.Random) -> dict:
    env_p = rng.randint(1, 4)
    spec: dict = {"parallelism": env_p}
    if rng.random() < 0.2:
        spec["max_parallelism"] = rng.choice((4, 16, 128, 1000))
    if rng.random() < 0.12:
        spec["chaining"] = False
    spec["mode"] = rng.choice(("STREAMING", "BATCH"))
    p_par = rng.choice((0.0, 0.2, 0.4))
    p_part = rng.choice((0.15, 0.35))
    p_slot = rng.choice((0.0, 0.15))
    p_chain = rng.choice((0.0, 0.1))
    uid_mode = rng.choices(("none", "some", "all"), weights=(5, 3, 1))[0]
    size = rng.randint(4, 16)

    nodes: list[dict] = []
    streams: list[str] = []          # consumable ids
    operators: list[str] = []        # ids that may give side outputs (sources and operators)
    real: dict[str, list[str]] = {}  # id -> operator ids it stands for
    par: dict[str, int] = {}

    def pick() -> str:
        return rng.choice(streams[-5:]) if rng.random() < 0.8 else rng.choice(streams)

    for i in range(size):
        nid = f"n{i + 1}"
        node: dict = {"id": nid}
        if not streams or (i < size - 1 and rng.random() < 0.1):
            op = "source"
        else:
            table = {"map": 3, "filter": 1.5, "flat_map": 1.5, "reduce": 1.2, "process": 1,
                     "window_reduce": 0.8, "union": 1.0 if len(streams) > 1 else 0.2,
                     "co_map": 1.4, "keyed_co_process": 1.0, "side": 1.2 if operators else 0,
                     "sink": 1.5}
            op = rng.choices(list(table), weights=list(table.values()))[0]
        node["op"] = op
        if op in ("union", "side"):
            if op == "union":
                ins = [pick(), pick()] if rng.random() < 0.9 else [streams[-1]] * 2
            else:
                ins = [rng.choice(operators[-4:])]
                node["tag"] = rng.choice(("a", "b"))
            node["inputs"] = ins
            real[nid] = [r for s in ins for r in real[s]]
            streams.append(nid)
            nodes.append(node)
            continue
        if op != "source":
            ins = [pick()]
            if op in ("co_map", "keyed_co_process"):
                ins.append(pick() if rng.random() < 0.9 else ins[0])
            node["inputs"] = ins
        p = env_p
        if rng.random() < p_par:
            p = rng.randint(1, 4)
            node["parallelism"] = p
        if op not in KEYED and op != "source" and rng.random() < p_part:
            part = rng.choice(PARTITIONS if op != "co_map" else PARTITIONS[1:])
            if part == "forward":
                ups = {par[u] for u in real[node["inputs"][0]]}
                if len(ups) == 1:
                    p = ups.pop()
                    node["parallelism"] = p
                else:
                    part = "rebalance"
            node["partition"] = part
        par[nid] = p
        if rng.random() < p_slot:
            node["slot_group"] = rng.choice(("default", "a", "b"))
        if rng.random() < p_chain:
            node["chain"] = "disable" if op == "sink" else rng.choice(("disable", "new_chain"))
        if uid_mode == "all" or (uid_mode == "some" and rng.random() < 0.4):
            node["uid"] = True
        nodes.append(node)
        if op != "sink":
            real[nid] = [nid]
            streams.append(nid)
            operators.append(nid)
    if nodes[-1]["op"] != "sink" and rng.random() < 0.85:
        nodes.append({"id": f"n{len(nodes) + 1}", "op": "sink", "inputs": [streams[-1]]})
    spec["nodes"] = [{k: n[k] for k in KEY_ORDER if k in n} for n in nodes]
    return spec


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seed", default="ext-2300")
    ap.add_argument("--count", type=int, default=120)
    ap.add_argument("--out", type=Path, default=Path(__file__).parent / "ext")
    args = ap.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    for i in range(args.count):
        spec = generate(random.Random(f"{args.seed}:{i}"))
        (args.out / f"x_{i:04d}.json").write_text(dumps(spec))
    print(f"wrote {args.count} specs to {args.out}")


if __name__ == "__main__":
    main()
