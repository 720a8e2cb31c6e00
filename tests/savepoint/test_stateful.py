"""Which operators of a plan hold state, with Flink's ids and state names."""

from __future__ import annotations

from pathlib import Path

from flowc.chaining import build_execution_graph
from flowc.parser import compile_source
from flowc.savepoint import stateful_operators

from .helpers import job, op_id, plan

PROGRAM = """
from flowc.common import Types, WatermarkStrategy
from flowc.common.watermark_strategy import TimestampAssigner
from flowc.datastream import StreamExecutionEnvironment
from flowc.datastream.functions import KeyedProcessFunction, RuntimeContext
from flowc.datastream.state import ListStateDescriptor, ValueStateDescriptor


class Ts(TimestampAssigner):
    def extract_timestamp(self, value, record_timestamp):
        return value[1]


class SumThenTimer(KeyedProcessFunction):
    def open(self, runtime_context: RuntimeContext):
        self.total = runtime_context.get_state(ValueStateDescriptor("total", Types.LONG()))
        self.seen = runtime_context.get_list_state(ListStateDescriptor("seen", Types.LONG()))

    def process_element(self, value, ctx):
        self.total.update((self.total.value() or 0) + value[2])
        ctx.timer_service().register_event_time_timer(ctx.timestamp() + 1000)


env = StreamExecutionEnvironment.get_execution_environment()
env.set_parallelism(3)
env.set_max_parallelism(64)
(env.from_collection([("a", 1000, 1)])
    .assign_timestamps_and_watermarks(
        WatermarkStrategy.for_monotonous_timestamps().with_timestamp_assigner(Ts()))
    .key_by(lambda e: e[0])
    .process(SumThenTimer(), output_type=Types.STRING()).uid("sum")
    .print())
"""


def test_window_and_source_with_flink_names() -> None:
    g = plan(job())
    ops = {o.name: o for o in stateful_operators(g)}
    assert set(ops) == {"Source: clicks", "TumblingEventTimeWindows"}
    w = ops["TumblingEventTimeWindows"]
    assert w.id == op_id(g, "TumblingEventTimeWindows")
    assert w.state_names == ("window-contents", "window-timers")
    assert w.keyed and w.uid is None and w.parallelism == 2
    assert w.max_parallelism == 128 and not w.max_parallelism_configured
    assert w.vertex_id == g.job_graph.node_vertex[w.node_id]
    assert ops["Source: clicks"].state_names == ("SourceReaderState",)
    assert not ops["Source: clicks"].keyed


def test_stateless_operators_are_left_out() -> None:
    names = {o.name for o in stateful_operators(plan(job(filter_=True)))}
    assert "Map" not in names and "Filter" not in names
    assert not any(n.startswith("Sink") for n in names)  # print keeps no state


def test_session_windows_keep_their_merging_set() -> None:
    text = job().replace("window tumbling 5s", "window session gap 30s")
    (w,) = [o for o in stateful_operators(plan(text)) if o.keyed]
    assert w.state_names == ("window-contents", "window-timers", "merging-window-set")


def test_rolling_aggregate_and_uid() -> None:
    text = job().replace("  | window tumbling 5s\n", "").replace(
        "as clicks", "as clicks with (uid = 'totals')")
    (r,) = [o for o in stateful_operators(plan(text)) if o.keyed]
    assert r.name == "Keyed Reduce" and r.uid == "totals"
    assert r.state_names == ("_op_state",)  # StreamGroupedReduceOperator.STATE_NAME


def test_file_sink_writer_and_configured_max_parallelism() -> None:
    text = job(max_parallelism=256).replace("  | print;", "  | write json 'out.json';")
    ops = {o.name: o for o in stateful_operators(plan(text))}
    assert ops["json out.json: Writer"].state_names == ("writer_raw_states",)
    assert all(o.max_parallelism == 256 and o.max_parallelism_configured
               for o in ops.values())


def test_python_program_user_state_names(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from flowc.cli import _compile, _parser

    (tmp_path / "prog.py").write_text(PROGRAM, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    env = _compile(_parser().parse_args(["explain", "prog.py"])).env
    graph = env.get_execution_graph()
    (k,) = [o for o in stateful_operators(graph) if o.keyed]
    assert k.name == "KeyedProcess" and k.uid == "sum"
    assert k.state_names == ("user-timers", "total", "seen")
    assert k.parallelism == 3 and k.max_parallelism == 64 and k.max_parallelism_configured
    ids = {o.id for v in graph.job_graph.vertices.values() for o in v.operators}
    assert k.id in ids


def test_ids_match_the_job_graph_for_every_example() -> None:
    root = Path(__file__).parents[2] / "examples"
    for name in ("clicks.flow", "join.flow", "sessions.flow", "hints.flow"):
        script = compile_source((root / name).read_text(), name, base_dir=str(root))
        g = build_execution_graph(script.env.get_job_graph())
        ops = stateful_operators(g)
        assert ops, name
        by_node = {o.node_id: o.id for v in g.job_graph.vertices.values() for o in v.operators}
        assert all(by_node[o.node_id] == o.id for o in ops)
