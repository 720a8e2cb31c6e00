"""Builds a program from a Flink-oracle pipeline spec (shared/testdata/flink-2.3/README.md)
through ``flowc.datastream``, exactly as FlinkOracle.java builds it with Flink's Java API
(and tests/golden/flink/ExtOracle.java for ``co_map``, ``keyed_co_process``, ``side`` and
``custom`` partitioning; see tests/golden/flink/README.md)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from flowc.datastream import (
    CoMapFunction,
    DataStream,
    Duration,
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
        elif op == "sink":
            s = inp.add_discarding_sink().name(nid)
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
