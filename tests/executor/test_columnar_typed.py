"""Python API streams with declared Types on the columnar executor (``arrow/typed.py``).

The codec gives back exactly the objects the row executor passes on (Row with names and
kind, tuples, 32-bit floats; anything a column would change travels pickled); the plan
runs typed jobs columnar under ``auto`` and untyped ones on the row executor; random typed
pipelines on the columnar executor (Spark) equal the reference executor."""

from __future__ import annotations

import os
import pickle
from typing import Any

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from flowc.common import Row, RowKind, Types
from flowc.datastream import (
    CollectSink,
    KeyedProcessFunction,
    OutputTag,
    StreamExecutionEnvironment,
    WatermarkStrategy,
)
from flowc.datastream.state import ValueStateDescriptor
from flowc.datastream.window import TumblingEventTimeWindows
from flowc.executor import run_job_graph, run_reference
from flowc.executor.arrow import convert, typed
from flowc.executor.arrow.plan import plan_members
from flowc.transformations import RuntimeExecutionMode


def _same(a: Any, b: Any) -> bool:
    """Equal, of the same Python type, Rows with the same names and kind (recursively)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, Row):
        return a.get_field_names() == b.get_field_names() and \
            a.get_row_kind() == b.get_row_kind() and \
            len(a._values) == len(b._values) and all(map(_same, a._values, b._values))
    if isinstance(a, tuple):
        return len(a) == len(b) and all(map(_same, a, b))
    if isinstance(a, float) and a != a:
        return b != b
    return bool(a == b)


def _roundtrip(type_info: Any, values: list[Any]) -> tuple[list[Any], pa.RecordBatch]:
    schema = convert.arrow_schema(type_info)
    chunk = convert.from_rows(values, [None] * len(values), schema)
    # Through IPC, as a shuffle carries it.
    back = convert.from_ipc(convert.to_ipc(chunk), schema)
    return back.rows(), chunk.batch


ROW = Types.ROW_NAMED(["k", "n", "x"], [Types.STRING(), Types.INT(), Types.FLOAT()])


def test_declared_rows_are_columns_and_come_back_with_names_and_kind() -> None:
    values = [ROW.convert(("a", 1, 0.1)), ROW.convert(("b", None, None)),
              ROW.convert(Row.of_kind(RowKind.UPDATE_BEFORE, "c", -5, 2.5))]
    back, batch = _roundtrip(ROW, values)
    assert all(map(_same, back, values))
    assert batch.column(batch.num_columns - 1).null_count == 3  # nothing pickled
    assert batch.schema.field(2).type == pa.float32()
    assert batch.column(0).to_pylist() == ["a", "b", "c"]
    assert back[2].get_row_kind() is RowKind.UPDATE_BEFORE and back[0].x == ROW.convert(
        ("a", 1, 0.1)).x


def test_values_a_column_would_change_travel_pickled() -> None:
    odd = [("a", 1, 0.5),                      # a tuple where a Row is declared
           Row("a", 1, 0.5),                   # a Row without the declared names
           Row(k="a", n=1 << 40, x=0.5),       # an int outside INT
           Row(k="a", n=True, x=0.5),          # a bool is not an int
           Row(k="a", n=1, x=0.1),             # not a 32-bit float
           Row(k="a\ud800", n=1, x=0.5),       # not UTF-8 encodable
           None]
    back, _ = _roundtrip(ROW, odd)
    assert all(map(_same, back, odd))
    doubles = [1, 2.5, None, "x"]  # an int / str where DOUBLE is declared (not wrapped)
    back, batch = _roundtrip(Types.DOUBLE(), doubles)
    assert all(map(_same, back, doubles))
    assert batch.column(1).null_count == 2


def test_tuples_basic_types_and_pickled_streams() -> None:
    tup = Types.TUPLE([Types.STRING(), Types.LONG(), Types.BOOLEAN(), Types.DOUBLE()])
    values = [("a", 1 << 62, True, 1e300), (None, None, None, None), ("", -1, False, -0.0)]
    back, batch = _roundtrip(tup, values)
    assert all(map(_same, back, values)) and batch.column(4).null_count == 3
    for t, vs in [(Types.INT(), [1, None, -(1 << 31)]), (Types.STRING(), ["x", "", None]),
                  (Types.FLOAT(), [0.5, float("nan"), None])]:
        back, _ = _roundtrip(t, vs)
        assert all(map(_same, back, vs))
    lists = Types.ROW([Types.LIST(Types.STRING()), Types.LIST(Types.FLOAT())])
    values = [lists.convert((["a", None], [0.5, None])), lists.convert((None, [])),
              Row(f0=("a",), f1=[0.1])]  # a tuple / a non-32-bit float: pickled
    values[2].set_field_names(["f0", "f1"])
    back, batch = _roundtrip(lists, values)
    assert all(map(_same, back, values)) and batch.column(3).null_count == 2
    back, _ = _roundtrip(Types.LIST(Types.INT()), [[1, None], None, [], [1 << 40]])
    assert back == [[1, None], None, [], [1 << 40]]
    anything = [{"a": 1}, [1, 2], Row(1, Row(2)), None]
    for t in (None, Types.PICKLED_BYTE_ARRAY(), Types.MAP(Types.STRING(), Types.INT())):
        back, _ = _roundtrip(t, anything)
        assert back == anything
    assert not typed.exact(Types.MAP(Types.STRING(), Types.INT()))
    assert pickle.loads(convert.arrow_schema(ROW).metadata[typed.KEY]) == ROW


def _typed_job(executor: str) -> Any:
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(2)
    env.set_option("flowc.executor", executor)
    s = env.from_collection([("a", 1), ("b", 2)], type_info=Types.TUPLE(
        [Types.STRING(), Types.INT()]))
    s.map(lambda t: t[1] * 1.5, output_type=Types.DOUBLE()).print()
    return env


def test_auto_runs_typed_jobs_columnar_and_untyped_ones_row_wise() -> None:
    env = _typed_job("auto")
    assert isinstance(plan_members(env.get_job_graph()), dict)
    env.from_collection([1, 2]).map(lambda v: v).print()  # no declared type
    reason = plan_members(env.get_job_graph())
    assert reason == "'Source: Collection Source' declares no Types with columns (none; " \
        "see typed.py)"
    env.set_option("flowc.executor", "columnar")  # forced: pickled records in a column
    assert isinstance(plan_members(env.get_job_graph()), dict)


# -- random typed pipelines: columnar (Spark) == reference --------------------------------

T_ROW = Types.ROW_NAMED(["k", "n"], [Types.STRING(), Types.INT()])
T_TUP = Types.TUPLE([Types.STRING(), Types.DOUBLE()])
T_ROWF = Types.ROW([Types.STRING(), Types.FLOAT(), Types.BOOLEAN()])
TYPES = {"row": T_ROW, "tuple": T_TUP, "rowf": T_ROWF, "float": Types.FLOAT(),
         "long": Types.LONG(), "loose": Types.DOUBLE()}


def key_of(v: Any) -> str:
    return v[0] if isinstance(v, (tuple, Row)) else "x"


def num_of(v: Any) -> Any:
    return v[1] if isinstance(v, (tuple, Row)) else v


def make(kind: str, k: str, n: Any) -> Any:
    """A value for ``kind`` as a user function returns it (converted by the declared type
    when the function is wrapped, passed on as it is otherwise)."""
    if kind == "row":
        return Row(k=k, n=None if n is None else int(n))
    if kind == "tuple":
        return (k, None if n is None else float(n))
    if kind == "rowf":
        return Row(k, None if n is None else n / 3, None if n is None else n > 0)
    if kind in ("float", "long"):
        return None if n is None else (n / 3 if kind == "float" else int(n) * 3)
    return None if n is None else int(n)  # "loose": an int where DOUBLE is declared


stages = st.lists(st.one_of(
    st.tuples(st.just("map"), st.sampled_from(sorted(TYPES)), st.integers(1, 3)),
    st.tuples(st.just("filter"), st.just(""), st.integers(1, 3)),
    st.tuples(st.just("flat_map"), st.sampled_from(sorted(TYPES)), st.integers(1, 3)),
    st.tuples(st.just("reduce"), st.just(""), st.integers(1, 3)),
    st.tuples(st.just("rebalance"), st.just(""), st.integers(1, 3)),
    # Event time: watermarks generated here (a vertex head or inside a chain), then a
    # window reduce (the runtime WindowOperator in the chain) or a keyed process function
    # with a side output and Row kinds.
    st.tuples(st.just("timestamps"), st.sampled_from(["0", "300"]), st.integers(1, 3)),
    st.tuples(st.just("window"), st.sampled_from(["500", "2000"]), st.integers(1, 3)),
    st.tuples(st.just("process"), st.just(""), st.integers(1, 3)),
), min_size=1, max_size=4)
pipelines = st.fixed_dictionaries({
    "batch": st.booleans(),
    "source": st.sampled_from(sorted(TYPES)),
    "values": st.lists(st.tuples(st.sampled_from(["a", "b", "ü"]),
                                 st.one_of(st.none(), st.integers(-2_000_000_000, 2_000_000_000),
                                           st.integers(-9, 9))), max_size=25),
    "stages": stages,
})


def _pipeline(prog: dict[str, Any], executor: str) -> Any:
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(2)
    env.set_option("flowc.executor", executor)
    if prog["batch"]:
        env.set_runtime_mode(RuntimeExecutionMode.BATCH)
    kind = prog["source"]
    timed = False
    s = env.from_collection([make(kind, k, n) for k, n in prog["values"]],
                            type_info=TYPES[kind])
    for op, arg, p in prog["stages"]:
        if op == "map":
            s = s.map(lambda v, a=arg: make(a, key_of(v), num_of(v)), output_type=TYPES[arg])
            kind = arg
        elif op == "filter":
            s = s.filter(lambda v: num_of(v) is None or num_of(v) >= 0)
        elif op == "flat_map":
            s = s.flat_map(lambda v, a=arg: [make(a, key_of(v), num_of(v))] * (
                int(abs(num_of(v) or 0)) % 3), output_type=TYPES[arg])
            kind = arg
        elif op == "reduce":
            s = s.key_by(key_of).reduce(lambda a, b, kd=kind: make(
                kd, key_of(a), (num_of(a) or 0) + (num_of(b) or 0)))
        elif op == "timestamps":
            s = s.assign_timestamps_and_watermarks(
                WatermarkStrategy.for_bounded_out_of_orderness(int(arg))
                .with_timestamp_assigner(event_time))
            timed = True
        elif op == "window" and timed:
            s = s.key_by(key_of).window(TumblingEventTimeWindows.of(int(arg))).reduce(
                lambda a, b, kd=kind: make(kd, key_of(a), (num_of(a) or 0) + (num_of(b) or 0)))
        elif op == "process":
            s = s.key_by(key_of).process(Marked(), output_type=TYPES[kind])
            s.get_side_output(SIDE).sink_to(CollectSink("side"))
        else:
            s = s.rebalance()
            continue
        s = s.set_parallelism(p)
    s.print()
    s.sink_to(CollectSink("out"))
    return env.get_job_graph()


SIDE = OutputTag("negative", Types.ROW_NAMED(["k", "n"], [Types.STRING(), Types.LONG()]))


def event_time(v: Any, _: int) -> int:
    n = num_of(v)
    return int(abs(n)) % 5000 if n is not None and n == n and abs(n) < 1e18 else 0


class Marked(KeyedProcessFunction):
    """Passes each record on (a Row as an update-after), counts per key in state, sends
    negative numbers to a side output."""

    def open(self, runtime_context: Any) -> None:
        self.count = runtime_context.get_state(ValueStateDescriptor("c", Types.LONG()))

    def process_element(self, value: Any, ctx: Any) -> Any:
        c = (self.count.value() or 0) + 1
        self.count.update(c)
        if isinstance(value, Row):
            value = Row(*value._values)
            value.set_row_kind(RowKind.UPDATE_AFTER)
        yield value
        n = num_of(value)
        if n is not None and n < 0:
            yield SIDE, Row(k=key_of(value), n=c)


@pytest.mark.spark
@settings(max_examples=int(os.environ.get("FLOWC_DIFF_EXAMPLES", "12")), deadline=None,
          suppress_health_check=list(HealthCheck))
@given(pipelines)
@example({"batch": False, "source": "row", "values": [("a", 5), ("b", -3), ("a", -7), ("ü", None)],
          "stages": [("timestamps", "0", 2), ("process", "", 2), ("window", "500", 1)]})
@example({"batch": True, "source": "rowf", "values": [("a", 1), ("a", 2), ("b", 2_000_000_000)],
          "stages": [("flat_map", "row", 3), ("reduce", "", 2), ("map", "loose", 1)]})
def test_random_typed_pipelines_columnar_equal_reference(spark: Any,
                                                         prog: dict[str, Any]) -> None:
    job = _pipeline(prog, "columnar")
    assert isinstance(plan_members(job), dict)
    expected = run_reference(_pipeline(prog, "row"))
    actual = run_job_graph(job)
    for name in expected.collected:
        got, want = actual.collected.get(name, []), expected.collected[name]
        assert len(got) == len(want) and all(map(_same, got, want)), (name, got, want)
    assert actual.late_records_dropped == expected.late_records_dropped
    assert actual.printed == expected.printed
    assert [(v.name, v.records_in, v.records_out) for v in actual.vertices] == \
        [(v.name, v.records_in, v.records_out) for v in expected.vertices]
