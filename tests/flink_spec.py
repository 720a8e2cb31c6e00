"""Builds a program from a Flink-oracle pipeline spec (shared/testdata/flink-2.3/README.md)
through ``flowc.datastream``, exactly as FlinkOracle.java builds it with Flink's Java API
(and tests/golden/flink/ExtOracle.java for ``co_map``, ``keyed_co_process``, ``side``,
``file_sink`` and ``custom`` partitioning; see tests/golden/flink/README.md)."""

from __future__ import annotations

import json
import random
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol, TypeVar

from hypothesis import strategies as st

from flowc.datastream import (
    CoMapFunction,
    DataStream,
    Duration,
    FileSink,
    KeyedCoProcessFunction,
    KeyedProcessFunction,
    KeySelector,
    OutputTag,
    Partitioner,
    ReduceFunction,
    RuntimeExecutionMode,
    StreamExecutionEnvironment,
    TumblingEventTimeWindows,
)


class Sum(ReduceFunction):
    def reduce(self, a: int, b: int) -> int:
        return a + b


class Proc(KeyedProcessFunction):
    def process_element(self, value: Any, ctx: Any):  # type: ignore[no-untyped-def]
        yield value


class Mod(KeySelector):
    """FlinkOracle's ``new Mod()``: a fresh selector object per keyBy, which matters for
    BATCH dataset reuse (Flink compares key selectors with ``equals``)."""

    def get_key(self, v: int) -> int:
        return v % 7


class Part(Partitioner):
    def partition(self, key: int, num_partitions: int) -> int:
        return key % num_partitions


class CoMap(CoMapFunction):
    def map1(self, v: int) -> int:
        return v

    def map2(self, v: int) -> int:
        return -v


class CoProc(KeyedCoProcessFunction):
    def process_element1(self, v: Any, ctx: Any):  # type: ignore[no-untyped-def]
        yield v

    def process_element2(self, v: Any, ctx: Any):  # type: ignore[no-untyped-def]
        yield v


def build(spec: dict[str, Any]) -> StreamExecutionEnvironment:
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(spec.get("parallelism", 1))
    if "max_parallelism" in spec:
        env.set_max_parallelism(spec["max_parallelism"])
    if not spec.get("chaining", True):
        env.disable_operator_chaining()
    env.set_runtime_mode(RuntimeExecutionMode[spec.get("mode", "STREAMING")])
    if spec.get("sink_committers"):
        env.set_option("flowc.sink_committers", "true")
    streams: dict[str, DataStream] = {}
    for n in spec["nodes"]:
        nid, op = n["id"], n["op"]
        ins = [streams[i] for i in n.get("inputs", [])]
        inp = _partition(ins[0], n.get("partition")) if ins else None
        if op == "source":
            out = env.from_sequence(0, 1000).name(nid)
        elif op == "map":
            out = inp.map(lambda v: v + 1)
        elif op == "filter":
            out = inp.filter(lambda v: v % 2 == 0)
        elif op == "flat_map":
            out = inp.flat_map(lambda v: [v, v])
        elif op == "reduce":
            out = inp.key_by(Mod()).reduce(Sum())
        elif op == "process":
            out = inp.key_by(Mod()).process(Proc())
        elif op == "window_reduce":
            out = (inp.key_by(Mod()).window(TumblingEventTimeWindows.of(Duration.of_seconds(5)))
                   .reduce(Sum()))
        elif op == "co_map":
            # Not in FlinkOracle's vocabulary; tests/golden/flink/ExtOracle.java has it.
            out = inp.connect(_partition(ins[1], n.get("partition"))).map(CoMap())
        elif op == "keyed_co_process":
            out = inp.connect(ins[1]).key_by(Mod(), Mod()).process(CoProc())
        elif op == "union":
            streams[nid] = ins[0].union(*ins[1:])
            continue
        elif op == "side":
            # ExtOracle: getSideOutput(new OutputTag<Long>(tag)) of an operator (virtual).
            streams[nid] = ins[0].get_side_output(OutputTag(n.get("tag", "side"), int))
            continue
        elif op in ("sink", "file_sink", "print"):
            # ExtOracle's "file_sink" is Flink's FileSink (a sink with a committer); "print" is
            # FlinkOracle's print(), the legacy PrintSinkFunction.
            s = (inp.add_discarding_sink() if op == "sink" else inp.print() if op == "print"
                 else inp.sink_to(FileSink(f"{nid}.csv", "csv"))).name(nid)
            if n.get("uid"):
                s.uid(nid)
            if "parallelism" in n:
                s.set_parallelism(n["parallelism"])
            if "slot_group" in n:
                s.slot_sharing_group(n["slot_group"])
            if n.get("chain", "default") == "disable":
                s.disable_chaining()
            continue
        else:
            raise ValueError(f"unknown op {op}")
        out.name(nid)
        if n.get("uid"):
            out.uid(nid)
        if "parallelism" in n:
            out.set_parallelism(n["parallelism"])
        if "slot_group" in n:
            out.slot_sharing_group(n["slot_group"])
        chain = n.get("chain", "default")
        if chain == "disable":
            out.disable_chaining()
        if chain == "new_chain":
            out.start_new_chain()
        streams[nid] = out
    return env


def _partition(s: DataStream, p: str | None) -> DataStream:
    if p is None or p == "hash":
        return s
    if p == "custom":
        return s.partition_custom(Part(), Mod())
    return {"forward": s.forward, "rebalance": s.rebalance, "rescale": s.rescale,
            "shuffle": s.shuffle, "broadcast": s.broadcast, "global": s.global_}[p]()


def load(path: Path) -> StreamExecutionEnvironment:
    return build(json.loads(path.read_text()))


def describe(path: Path) -> str:
    """What FlinkOracle prints for the spec: the JobGraph dump or ``error <class>: <msg>``."""
    from flowc.errors import PlanError

    try:
        return load(path).get_job_graph().dump()
    except PlanError as e:
        return f"error {e.java_class}: {e.message}\n"


# ------------------------------------------------------------------ random programs

T = TypeVar("T")

ONE_INPUT = ["map", "filter", "flat_map"]
KEYED = ["reduce", "process", "window_reduce"]
SINKS = ("sink", "file_sink")
PARTS: list[str | None] = [None, None, None, "forward", "rebalance", "rescale", "shuffle",
                           "broadcast", "global", "custom"]


class Choices(Protocol):
    """Where a random program's decisions come from. Every decision's simplest outcome is
    the one a shrinking search should move to: ``integer`` towards ``lo``, ``chance``
    towards False, ``pick`` towards the first option."""

    def integer(self, lo: int, hi: int) -> int: ...

    def chance(self, percent: int) -> bool: ...

    def pick(self, options: Sequence[T]) -> T: ...

    def another(self, index: int, least: int, most: int) -> bool:
        """Whether to add element ``index`` (from 0) to a sequence of ``least`` to ``most``."""
        ...


class SeededChoices:
    """Decisions from ``random.Random(seed)``: the same program for the same seed, in every
    process (the cross-process determinism test needs that)."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.length = 0

    def integer(self, lo: int, hi: int) -> int:
        return self.rng.randint(lo, hi)

    def chance(self, percent: int) -> bool:
        return self.rng.randrange(100) < percent

    def pick(self, options: Sequence[T]) -> T:
        return self.rng.choice(options)

    def another(self, index: int, least: int, most: int) -> bool:
        if index == 0:
            self.length = self.rng.randint(least, most)
        return index < self.length


class DrawnChoices:
    """Decisions drawn from hypothesis (through ``st.randoms()``, whose every call is a
    recorded choice), so a failing program shrinks: fewer nodes, fewer partitioners and
    hints, smaller parallelism, earlier inputs. Each decision is oriented so that the
    shrinker's target, 0, is the simplest outcome."""

    def __init__(self, rnd: random.Random) -> None:
        self.rnd = rnd

    def integer(self, lo: int, hi: int) -> int:
        return self.rnd.randint(lo, hi)

    def chance(self, percent: int) -> bool:
        return self.rnd.randrange(100) >= 100 - percent  # 0 is "no"

    def pick(self, options: Sequence[T]) -> T:
        return options[self.rnd.randrange(len(options))]

    def another(self, index: int, least: int, most: int) -> bool:
        # One "more?" decision per optional element (as hypothesis's own lists do), so the
        # shrinker drops an element by deleting its decisions; 0 stops.
        if index < least or index >= most:
            return index < least
        return self.chance(92)


def random_program(c: Choices, size: int = 14, two_input: bool = False) -> dict[str, Any]:
    """A random DAG in the oracle's spec format: sources, one-input and keyed ops, unions,
    sinks, partitioners (custom too), parallelism changes, slot groups, chaining hints, uids,
    side outputs, STREAMING or BATCH (and, with ``two_input``, connected co-maps and keyed
    co-process functions)."""
    p = c.integer(1, 4)
    spec: dict[str, Any] = {"parallelism": p, "chaining": not c.chance(15), "nodes": [],
                            "mode": "BATCH" if c.chance(30) else "STREAMING"}
    if c.chance(20):
        spec["max_parallelism"] = c.pick([4, 16, 128, 1024])
    if c.chance(50):
        spec["sink_committers"] = True  # file sinks plan Flink's Committer too
    streams: list[str] = []
    operators: list[str] = []  # may give side outputs (sources and operators)
    parallelism: dict[str, int] = {}
    i = 0
    while c.another(i, 3, size):
        nid = f"n{i}"
        i += 1
        node: dict[str, Any] = {"id": nid}
        # 0 (where shrinking goes) is the plainest node: a one-input operator.
        kind = c.integer(0, 99)
        if not streams or kind >= 88:
            node["op"] = "source"
        elif kind >= 78 and len(streams) >= 2:
            node["op"] = "union"
            if c.chance(10):
                node["inputs"] = [streams[-1]] * 2  # a stream with itself
            else:
                first = c.pick(streams)
                node["inputs"] = [first, c.pick([s for s in streams if s != first])]
        elif kind >= 72 and operators:
            node["op"] = "side"
            node["inputs"] = [c.pick(operators[-4:])]
            node["tag"] = c.pick(["a", "b"])
        elif two_input and kind >= 62 and len(streams) >= 2:
            node["op"] = c.pick(["co_map", "keyed_co_process"])
            first = c.pick(streams)
            node["inputs"] = [first, c.pick([s for s in streams if s != first])]
            if node["op"] == "co_map" and c.chance(50):
                node["partition"] = c.pick(["rebalance", "shuffle", "broadcast", "custom"])
        else:
            node["op"] = c.pick(ONE_INPUT * 2 + KEYED + ["sink"])
            if node["op"] == "sink" and c.chance(30):
                node["op"] = "file_sink"  # a sink with a committer
            node["inputs"] = [c.pick(streams[-4:])]
            if node["op"] not in KEYED:
                part = c.pick(PARTS)
                if part is not None:
                    node["partition"] = part
        if node["op"] not in ("union", "side"):
            if c.chance(25):
                node["parallelism"] = c.integer(1, 4)
            if c.chance(10):
                node["slot_group"] = c.pick(["a", "b"])
            hint = c.integer(0, 99)
            if hint >= 92:
                node["chain"] = "disable"
            elif hint >= 84 and node["op"] not in SINKS:
                node["chain"] = "new_chain"
            if c.chance(15):
                node["uid"] = True
        # Keep forward edges valid most of the time (forward errors are tested separately).
        if node.get("partition") == "forward" and not c.chance(10):
            node["parallelism"] = parallelism[node["inputs"][0]]
        spec["nodes"].append(node)
        if node["op"] not in SINKS:
            streams.append(nid)
            if node["op"] in ("union", "side"):
                parallelism[nid] = parallelism[node["inputs"][0]]
            else:
                parallelism[nid] = node.get("parallelism", p)
                operators.append(nid)
    return spec


def random_spec(seed: int, size: int = 14, two_input: bool = False) -> dict[str, Any]:
    """``random_program`` with seeded decisions."""
    return random_program(SeededChoices(seed), size, two_input)


def programs(size: int = 14, two_input: bool = False) -> st.SearchStrategy[dict[str, Any]]:
    """``random_program`` as a hypothesis strategy (failing programs shrink)."""
    return st.randoms(use_true_random=False, note_method_calls=False).map(
        lambda rnd: random_program(DrawnChoices(rnd), size, two_input))
