"""Planner benchmark: time to plan (StreamGraph) + chain (JobGraph) + build the ExecutionGraph
for linear and random pipelines of 1k, 10k and 100k operators, and the growth per 10x.

    python benchmarks/planner.py [--sizes 1000,10000,100000] [--seed 7]

Baseline: linear growth (a 10x larger graph takes ~10x longer); target: 100k operators in
under 10 s on the CI machine (2 cores).
"""

from __future__ import annotations

import argparse
import random
import sys
import time

from flowc.chaining import build_execution_graph, create_job_graph
from flowc.datastream import DataStream, StreamExecutionEnvironment
from flowc.planner import generate_stream_graph


def _inc(v: int) -> int:
    return v + 1


def _key(v: int) -> int:
    return v % 7


def linear(n: int) -> StreamExecutionEnvironment:
    """source -> map x (n-2) -> sink: one long chain."""
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(2)
    s: DataStream = env.from_sequence(0, 10)
    for _ in range(n - 2):
        s = s.map(_inc)
    s.add_discarding_sink()
    return env


def random_dag(n: int, seed: int) -> StreamExecutionEnvironment:
    """A random DAG of n operators: sources, maps/filters, keyed reduces, unions, partitioners,
    parallelism changes, slot groups and chaining hints."""
    rng = random.Random(seed)
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(4)
    streams: list[DataStream] = [env.from_sequence(0, 10)]
    count = 1
    while count < n - 1:
        r = rng.random()
        # Mostly extend recent streams so the graph stays deep rather than bushy.
        base = streams[-1 - min(len(streams) - 1, int(rng.expovariate(0.5)))]
        if r < 0.02:
            s = env.from_sequence(0, 10)
        elif r < 0.08 and len(streams) > 1:
            s = base.union(rng.choice(streams)).map(_inc)
            count += 1
        elif r < 0.15:
            s = base.key_by(_key).reduce(lambda a, b: a + b)
        elif r < 0.22:
            part = rng.choice(["rebalance", "rescale", "shuffle", "broadcast", "global_"])
            s = getattr(base, part)().map(_inc)
            if part == "global_":
                s.set_parallelism(1)
        else:
            s = base.map(_inc) if rng.random() < 0.6 else base.filter(bool)
        if rng.random() < 0.05:
            s.set_parallelism(rng.choice([1, 2, 4, 8]))
            if rng.random() < 0.5 and s.get_parallelism() != base.get_parallelism():
                pass
        if rng.random() < 0.02:
            s.slot_sharing_group(rng.choice(["a", "b"]))
        if rng.random() < 0.02:
            s.start_new_chain()
        if rng.random() < 0.01:
            s.disable_chaining()
        streams.append(s)
        count += 1
    streams[-1].add_discarding_sink()
    return env


def measure(env: StreamExecutionEnvironment) -> tuple[float, int, int]:
    program = env.program()
    t0 = time.perf_counter()
    sg = generate_stream_graph(program)
    jg = create_job_graph(sg)
    build_execution_graph(jg)
    return time.perf_counter() - t0, len(sg.nodes), len(jg.vertices)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", default="1000,10000,100000")
    ap.add_argument("--seed", type=int, default=7)
    args = ap.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    print(f"{'graph':<8}{'operators':>11}{'nodes':>9}{'vertices':>10}{'seconds':>10}"
          f"{'x per 10x':>11}")
    for kind in ("linear", "random"):
        prev: tuple[int, float] | None = None
        for n in sizes:
            env = linear(n) if kind == "linear" else random_dag(n, args.seed)
            secs, nodes, vertices = measure(env)
            growth = ""
            if prev is not None:
                # Normalise to a factor per 10x more operators.
                ratio = (secs / prev[1]) ** (1 / max(1e-9, __import__("math").log10(n / prev[0])))
                growth = f"{ratio:.1f}"
            print(f"{kind:<8}{n:>11}{nodes:>9}{vertices:>10}{secs:>10.2f}{growth:>11}")
            sys.stdout.flush()
            prev = (n, secs)


if __name__ == "__main__":
    main()
