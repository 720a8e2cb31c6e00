"""PyFlink parity: module layout, ``Types`` with effect, ``Row``, and print formatting.

Expected texts are what real PyFlink 2.3 printed for the same records (tests/pyflink_programs
has whole programs; these isolate one rule each)."""

from __future__ import annotations

import importlib
import pickle

import pytest

from flowc.common import Row, RowKind, Types
from flowc.common.typeinfo import hash_map_order, java_double_str, java_float_str
from flowc.datastream import StreamExecutionEnvironment
from flowc.executor import run_reference

# What PyFlink DataStream programs import, by module (flowc implements these names).
LAYOUT = {
    "flowc.common": ["Types", "Row", "RowKind", "WatermarkStrategy", "Duration", "Time",
                     "TypeInformation"],
    "flowc.common.typeinfo": ["Types", "TypeInformation", "RowTypeInfo", "TupleTypeInfo"],
    "flowc.common.types": ["Row", "RowKind"],
    "flowc.common.time": ["Duration", "Time"],
    "flowc.common.watermark_strategy": ["WatermarkStrategy", "TimestampAssigner"],
    "flowc.datastream": ["StreamExecutionEnvironment", "DataStream", "KeyedStream",
                         "MapFunction", "KeyedProcessFunction", "ProcessWindowFunction",
                         "RuntimeExecutionMode", "OutputTag", "TimeWindow", "KeySelector"],
    "flowc.datastream.functions": ["MapFunction", "FlatMapFunction", "ReduceFunction",
                                   "KeyedProcessFunction", "ProcessWindowFunction",
                                   "AggregateFunction", "RuntimeContext"],
    "flowc.datastream.state": ["ValueStateDescriptor", "ListStateDescriptor",
                               "MapStateDescriptor", "ReducingStateDescriptor", "ValueState",
                               "StateTtlConfig", "AggregatingStateDescriptor"],
    "flowc.datastream.window": ["TumblingEventTimeWindows", "SlidingEventTimeWindows",
                                "EventTimeSessionWindows", "TimeWindow"],
    "flowc.common.serialization": ["Encoder"],
    "flowc.datastream.connectors": ["FileSink", "FileSource", "StreamFormat"],
    "flowc.datastream.connectors.file_system": ["FileSink", "FileSource", "StreamFormat",
                                                "OutputFileConfig", "RollingPolicy",
                                                "BucketAssigner", "DefaultRollingPolicy",
                                                "OnCheckpointRollingPolicy"],
}


@pytest.mark.parametrize("module", sorted(LAYOUT))
def test_pyflink_names_import_from_the_same_path_under_flowc(module: str) -> None:
    m = importlib.import_module(module)
    assert [n for n in LAYOUT[module] if not hasattr(m, n)] == []


def test_row_positional_named_kind_and_repr_as_pyflink() -> None:
    r = Row(1, "a")
    assert (r[0], r[1], len(r), list(r)) == (1, "a", 2, [1, "a"])
    assert repr(r) == "<Row(1, 'a')>"
    n = Row(name="a", n=1)
    assert (n.name, n["n"], n.as_dict()) == ("a", 1, {"name": "a", "n": 1})
    assert repr(n) == "Row(name='a', n=1)"
    assert Row("name", "n")("a", 1) == n
    assert n == Row(n=1, name="a")  # named rows compare by name
    assert r != Row(1, "b") and r == Row(1, "a") and r != n
    assert str(r.get_row_kind()) == "+I"
    d = Row.of_kind(RowKind.DELETE, 1)
    assert str(d.get_row_kind()) == "-D" and d != Row(1)
    assert pickle.loads(pickle.dumps(n)) == n
    with pytest.raises(AttributeError):
        r.x = 1  # noqa: B018 - rows are not open objects


def test_types_convert_as_pyflinks_coders() -> None:
    row = Types.ROW_NAMED(["w", "f"], [Types.STRING(), Types.FLOAT()]).convert(("a", 1.1))
    assert isinstance(row, Row) and row.w == "a"
    assert row.f == pytest.approx(1.1) and row.f != 1.1  # FLOAT: rounded to 32 bits
    assert row.f == 1.100000023841858
    assert Types.TUPLE([Types.STRING(), Types.INT()]).convert(["a", 1]) == ("a", 1)
    assert Types.FLOAT().convert(3.3) == 3.299999952316284
    assert Types.DOUBLE().convert(3.3) == 3.3


@pytest.mark.parametrize(("value", "text"), [
    (1e7, "1.0E7"), (1.1, "1.1"), (3.3000000000000003, "3.3000000000000003"),
    (1.2345e-5, "1.2345E-5"), (0.001, "0.001"), (-2.5e-4, "-2.5E-4"), (100.0, "100.0"),
    (0.0, "0.0"), (float("nan"), "NaN"), (float("-inf"), "-Infinity"), (123456789.0,
                                                                        "1.23456789E8")])
def test_java_double_to_string(value: float, text: str) -> None:
    assert java_double_str(value) == text


def test_java_float_to_string_is_the_shortest_float32() -> None:
    assert [java_float_str(v) for v in (3.3, 1.1, 0.1, 1e10, 16777216.0)] == [
        "3.3", "1.1", "0.1", "1.0E10", "1.6777216E7"]


def test_hash_map_iterates_as_javas() -> None:
    # PyFlink 2.3 printed {zz=5, a=1} for the dict {'a': 1, 'zz': 5} typed MAP(STRING, INT).
    assert hash_map_order(["a", "zz"], Types.STRING().java_hash) == ["zz", "a"]
    m = Types.MAP(Types.STRING(), Types.INT())
    assert m.java_str({"a": 1, "zz": 5}) == "{zz=5, a=1}"
    # Integer keys hash to themselves; new HashMap<>(3) has 4 buckets: 17 and 1 share
    # bucket 1 (insertion order), 3 is in bucket 3.
    assert hash_map_order([17, 3, 1], Types.INT().java_hash) == [17, 1, 3]


def _printed(build) -> list[str]:  # type: ignore[no-untyped-def]
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(1)
    build(env)
    return run_reference(env.get_job_graph()).printed


def test_print_formats_records_as_pyflink_by_declared_type() -> None:
    def build(env):  # type: ignore[no-untyped-def]
        ds = env.from_collection([("a", 1), ("b", 2)],
                                 type_info=Types.TUPLE([Types.STRING(), Types.INT()]))
        ds.print()
        ds.map(lambda t: Row(t[0], None),
               output_type=Types.ROW([Types.STRING(), Types.INT()])).print()
        ds.map(lambda t: t[1] * 1e7, output_type=Types.DOUBLE()).print()
        ds.map(lambda t: t[1] == 2, output_type=Types.BOOLEAN()).print()
        ds.map(lambda t: [t[1], 2], output_type=Types.LIST(Types.INT())).print()
        ds.map(lambda t: (t[0], t[1] / 3)).print()  # pickled: Python's str()
        ds.map(lambda t: t[1] * 1.1, output_type=Types.FLOAT()).print()
        # A declared ROW turns the tuple a function returns into a Row downstream.
        ds.map(lambda t: (t[0], t[1]), output_type=Types.ROW_NAMED(
            ["k", "v"], [Types.STRING(), Types.LONG()])).map(lambda r: repr(r)).print()

    # The same records, lines and order as PyFlink 2.3 printed (parallelism 1).
    assert _printed(build) == [
        "(a,1)", "(b,2)", "+I[a,None]", "+I[b,None]", "1.0E7", "2.0E7", "false", "true",
        "[1, 2]", "[2, 2]", "('a', 0.3333333333333333)", "('b', 0.6666666666666666)",
        "1.1", "2.2", "Row(k='a', v=1)", "Row(k='b', v=2)"]


def test_function_and_window_base_classes_are_subscriptable_as_pyflinks_generics() -> None:
    from flowc.datastream.functions import KeyedProcessFunction, ProcessWindowFunction
    from flowc.datastream.window import TimeWindow, Trigger, WindowAssigner

    class P(ProcessWindowFunction[tuple, str, str, TimeWindow]):
        def process(self, key, context, elements):  # type: ignore[no-untyped-def]
            yield key

    class K(KeyedProcessFunction[str, int, int]):
        pass

    assert issubclass(P, ProcessWindowFunction) and issubclass(K, KeyedProcessFunction)
    assert Trigger[int, TimeWindow] is Trigger and WindowAssigner[int, TimeWindow] is \
        WindowAssigner
