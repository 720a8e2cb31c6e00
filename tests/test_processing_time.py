"""Processing time (executor/runtime/clock.py, core.TimerService): processing-time timers of
process functions, the processing-time window assigners and triggers, under Flink's rules -
STREAMING fires a timer once the clock reaches it (between elements here) and drops the
ones not yet due at the end of a bounded input; BATCH fires none before the end of input,
then all of them after the event-time ones, ignoring timers registered meanwhile.

The clock is a ManualClock the user functions advance, so every run is deterministic."""

from __future__ import annotations

import pickle
from typing import Any

import pytest

from flowc.datastream import (
    AggregateFunction,
    CollectSink,
    KeyedProcessFunction,
    ProcessFunction,
    RuntimeExecutionMode,
    StreamExecutionEnvironment,
    TimeDomain,
)
from flowc.datastream.window import (
    ContinuousProcessingTimeTrigger,
    GlobalWindows,
    ProcessingTimeSessionWindows,
    ProcessingTimeTrigger,
    SlidingProcessingTimeWindows,
    TumblingProcessingTimeWindows,
)
from flowc.errors import FlowcError
from flowc.executor import run_reference
from flowc.executor.runtime.clock import ManualClock, processing_clock, using_clock
from flowc.executor.runtime.core import TimerService

STREAMING, BATCH = RuntimeExecutionMode.STREAMING, RuntimeExecutionMode.BATCH


def _env(mode: RuntimeExecutionMode) -> StreamExecutionEnvironment:
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(1)
    env.set_runtime_mode(mode)
    return env


def _collect(env: StreamExecutionEnvironment, clock: ManualClock) -> list[Any]:
    with using_clock(clock):
        return list(run_reference(env.get_job_graph()).collected["out"])


def _advance(ms: int) -> None:
    clock = processing_clock()
    assert isinstance(clock, ManualClock)
    clock.advance(ms)


# -- TimerService ---------------------------------------------------------------------


def test_timer_service_processing_timers_dedup_delete_order_and_pickle() -> None:
    ts = TimerService()
    fired: list[tuple[int, Any]] = []
    ts.register_processing(30, "a", "n")
    ts.register_processing(10, "b", "n")
    ts.register_processing(10, "b", "n")  # the same timer: once
    ts.register_processing(20, "c", "n")
    ts.delete_processing(20, "c", "n")
    ts.register(5, "e", "n")  # an event-time timer is not a processing-time one
    assert ts.processing_count() == 2 and len(ts) == 1
    restored = pickle.loads(pickle.dumps(ts))  # part of the operator's snapshot
    restored.advance_processing(10, lambda t, k, _: fired.append((t, k)))
    assert fired == [(10, "b")]
    restored.advance_processing(100, lambda t, k, _: fired.append((t, k)))
    assert fired == [(10, "b"), (30, "a")] and len(restored) == 1
    restored.quiesce_processing()
    restored.register_processing(40, "a", "n")  # quiesced: ignored
    assert restored.processing_count() == 0


# -- process functions ----------------------------------------------------------------


class Reminder(KeyedProcessFunction):
    """Registers a processing-time timer 100 ms after each element, then lets 60 ms of
    processing time pass (the test's clock: the executors copy functions, so they reach
    it as the running job's clock)."""

    def process_element(self, value: Any, ctx: Any) -> Any:
        now = ctx.timer_service().current_processing_time()
        ctx.timer_service().register_processing_time_timer(now + 100)
        _advance(60)
        yield ("in", value, now)

    def on_timer(self, timestamp: int, ctx: Any) -> Any:
        yield ("timer", ctx.get_current_key(), timestamp, ctx.time_domain().name)


def _reminders(mode: RuntimeExecutionMode, n: int) -> list[Any]:
    clock = ManualClock(1000)
    env = _env(mode)
    env.from_collection(list(range(n))).key_by(lambda v: v % 2) \
        .process(Reminder()).sink_to(CollectSink("out"))
    return _collect(env, clock)


def test_streaming_processing_timers_fire_once_the_clock_reaches_them() -> None:
    out = _reminders(STREAMING, 4)
    # Elements at 1000, 1060, 1120, 1180 register 1100, 1160, 1220, 1280. Before the
    # element at 1120, the clock has passed 1100 -> that timer fires first; before 1180,
    # 1160. At the end of input (clock 1240) 1220 is due and fires; 1280 never does
    # (Flink quiesces the processing-time service at the end of a bounded STREAMING job).
    assert out == [
        ("in", 0, 1000), ("in", 1, 1060),
        ("timer", 0, 1100, "PROCESSING_TIME"), ("in", 2, 1120),
        ("timer", 1, 1160, "PROCESSING_TIME"), ("in", 3, 1180),
        ("timer", 0, 1220, "PROCESSING_TIME"),
    ]


def test_batch_processing_timers_fire_all_at_the_end_of_input() -> None:
    out = _reminders(BATCH, 4)
    # BATCH: processing time never fires a timer during the input; at its end every
    # processing-time timer fires, in timestamp order.
    ins = [o for o in out if o[0] == "in"]
    timers = [o for o in out if o[0] == "timer"]
    assert out == ins + timers
    assert [t[2] for t in timers] == [1100, 1160, 1220, 1280]


class Mixed(KeyedProcessFunction):
    """An event-time and a processing-time timer per key; the processing-time timer
    registers another one when it fires."""

    def process_element(self, value: Any, ctx: Any) -> Any:
        ctx.timer_service().register_event_time_timer(ctx.timestamp() + 10)
        ctx.timer_service().register_processing_time_timer(5)
        return []

    def on_timer(self, timestamp: int, ctx: Any) -> Any:
        ctx.timer_service().register_processing_time_timer(timestamp + 1)
        yield (ctx.time_domain(), timestamp, ctx.timestamp())


def test_batch_fires_event_time_timers_first_and_ignores_timers_registered_while_firing() -> None:
    from flowc.datastream import WatermarkStrategy

    env = _env(BATCH)
    env.from_collection([("k", 100)]).assign_timestamps_and_watermarks(
        WatermarkStrategy.for_monotonous_timestamps().with_timestamp_assigner(
            lambda v, _: v[1])).key_by(lambda v: v[0]).process(Mixed()) \
        .sink_to(CollectSink("out"))
    out = _collect(env, ManualClock(0))
    assert out == [(TimeDomain.EVENT_TIME, 110, 110), (TimeDomain.PROCESSING_TIME, 5, 5)]


class NonKeyed(ProcessFunction):
    def process_element(self, value: Any, ctx: Any) -> Any:
        yield value, ctx.timer_service().current_processing_time()
        ctx.timer_service().register_processing_time_timer(1)


def test_non_keyed_process_reads_processing_time_but_cannot_set_timers() -> None:
    env = _env(STREAMING)
    env.from_collection([1]).process(NonKeyed()).sink_to(CollectSink("out"))
    with pytest.raises(FlowcError, match="Setting timers is only supported on a keyed"):
        _collect(env, ManualClock(77))


def test_processing_timer_outputs_carry_no_timestamp() -> None:
    from flowc.executor.runtime.core import TaskInfo
    from flowc.executor.runtime.factory import create_operator
    from flowc.operators import KeyedProcessOp

    clock = ManualClock(0)
    op = create_operator(KeyedProcessOp(Reminder()), TaskInfo("p", 0, 1, 128, False),
                         (lambda v: v,))
    got: list[Any] = []
    op.out = lambda v, ts: got.append((v[0], ts))
    with using_clock(clock):
        op.open()
        op.process("x", 42)  # registers 100, clock -> 60
        clock.advance(40)
        op.poll_processing_time()
    assert got == [("in", 42), ("timer", None)]  # Flink's collector.eraseTimestamp()


# -- windows ---------------------------------------------------------------------------


class Ticking(AggregateFunction):
    """Counts, and lets ``step`` ms of processing time pass per element."""

    def __init__(self, step: int) -> None:
        self.step = step

    def create_accumulator(self) -> Any:
        return 0

    def add(self, value: Any, acc: Any) -> Any:
        _advance(self.step)
        return acc + 1

    def get_result(self, acc: Any) -> Any:
        return acc

    def merge(self, a: Any, b: Any) -> Any:
        return a + b


def _windows(mode: RuntimeExecutionMode, assigner: Any, n: int, step: int,
             trigger: Any = None, start: int = 0) -> list[Any]:
    from flowc.datastream import ProcessWindowFunction

    class Span(ProcessWindowFunction):
        def process(self, key: Any, context: Any, elements: Any) -> Any:
            w = context.window()
            yield (key, getattr(w, "start", None), getattr(w, "end", None), list(elements)[0],
                   context.current_processing_time())

    clock = ManualClock(start)
    env = _env(mode)
    windowed = env.from_collection(["a"] * n).key_by(lambda v: v).window(assigner)
    if trigger is not None:
        windowed = windowed.trigger(trigger)
    windowed.aggregate(Ticking(step), Span()).sink_to(CollectSink("out"))
    return _collect(env, clock)


def test_tumbling_processing_time_windows_fire_as_the_clock_passes_their_end() -> None:
    # Elements at 0, 400, 800, ..., 2800: windows [0,1000) get 0/400/800, [1000,2000)
    # 1200/1600, [2000,3000) 2000/2400/2800. A window fires before the first element past
    # its end; the last one at the end of input (clock 3200: due, so it fires).
    out = _windows(STREAMING, TumblingProcessingTimeWindows.of(1000), 8, 400)
    assert [o[:4] for o in out] == [("a", 0, 1000, 3), ("a", 1000, 2000, 2),
                                    ("a", 2000, 3000, 3)]
    # each fired at the first clock reading past its max timestamp
    assert [o[4] for o in out] == [1200, 2000, 3200]


def test_streaming_window_not_due_at_end_of_input_never_fires() -> None:
    out = _windows(STREAMING, TumblingProcessingTimeWindows.of(10_000), 3, 100)
    assert out == []


def test_batch_processing_time_windows_fire_at_the_end_of_input() -> None:
    out = _windows(BATCH, TumblingProcessingTimeWindows.of(1000), 8, 400)
    assert [o[:4] for o in out] == [("a", 0, 1000, 3), ("a", 1000, 2000, 2),
                                    ("a", 2000, 3000, 3)]
    assert {o[4] for o in out} == {3200}  # all at the end
    # a window far from its end fires too in BATCH
    assert [o[:4] for o in _windows(BATCH, TumblingProcessingTimeWindows.of(10_000), 3, 100)] \
        == [("a", 0, 10_000, 3)]


def test_sliding_processing_time_windows() -> None:
    # two windows per element, so 150 ms per ``add``: elements at 0, 300, ..., 1500;
    # [1000, 2000) is not due at the end of input (clock 1800)
    out = _windows(STREAMING, SlidingProcessingTimeWindows.of(1000, 500), 6, 150)
    assert [o[:4] for o in out] == [("a", -500, 500, 2), ("a", 0, 1000, 4),
                                    ("a", 500, 1500, 3)]


def test_processing_time_session_windows_merge() -> None:
    class Gaps(AggregateFunction):
        def __init__(self) -> None:
            self.steps = iter([100, 100, 900, 100, 5000])

        def create_accumulator(self) -> Any:
            return 0

        def add(self, value: Any, acc: Any) -> Any:
            _advance(next(self.steps))
            return acc + 1

        def get_result(self, acc: Any) -> Any:
            return acc

        def merge(self, a: Any, b: Any) -> Any:
            return a + b

    clock = ManualClock(0)
    env = _env(STREAMING)
    env.from_collection(["a"] * 5).key_by(lambda v: v) \
        .window(ProcessingTimeSessionWindows.with_gap(500)) \
        .aggregate(Gaps()).sink_to(CollectSink("out"))
    # elements at 0, 100, 200 (one session [0, 700)), 1100, 1200 (a second [1100, 1700));
    # the first fires before 1100, the second once the clock reaches 6200.
    assert _collect(env, clock) == [3, 2]


def test_processing_time_trigger_and_continuous_trigger() -> None:
    explicit = _windows(STREAMING, TumblingProcessingTimeWindows.of(1000), 8, 400,
                        trigger=ProcessingTimeTrigger.create())
    assert [o[:4] for o in explicit] == [("a", 0, 1000, 3), ("a", 1000, 2000, 2),
                                         ("a", 2000, 3000, 3)]
    # Global window, fired every 1000 ms of processing time (aligned), contents kept.
    cont = _windows(STREAMING, GlobalWindows.create(), 6, 400,
                    trigger=ContinuousProcessingTimeTrigger.of(1000))
    # elements at 0..2000 step 400; fires at 1000 (before the element at 1200: 3 in)
    # and at 2000 (before the element at 2000: 5 in); at the end (clock 2400) nothing due.
    assert [o[3] for o in cont] == [3, 5]


def test_window_plan_names_follow_flink() -> None:
    env = _env(STREAMING)
    env.from_collection(["a"]).key_by(lambda v: v) \
        .window(TumblingProcessingTimeWindows.of(5000)).reduce(lambda a, b: a) \
        .sink_to(CollectSink("out"))
    names = [n.name + " / " + (n.description or "")
             for n in env.get_job_graph().stream_graph.nodes.values()]
    assert any("TumblingProcessingTimeWindows / Window(TumblingProcessingTimeWindows(5000), "
               "ProcessingTimeTrigger, " in n for n in names), names


# -- .flow ----------------------------------------------------------------------------

FLOW = """set mode = {mode};
source clicks (user_id string) from values ('a'), ('b'), ('a');
clicks
  | key by user_id
  | window {window}
  | aggregate count(*) as n
  | print;
"""


def _flow(window: str, mode: str = "batch") -> Any:
    from flowc.parser import compile_source

    return compile_source(FLOW.format(window=window, mode=mode),
                          "job.flow").env.get_job_graph()


def test_flow_window_on_processing_time_needs_no_event_time() -> None:
    jg = _flow("tumbling 5s on processing time")
    node = next(n for n in jg.stream_graph.nodes.values() if "Window" in n.name)
    assert node.name == "TumblingProcessingTimeWindows"
    assert type(node.operator.assigner).__name__ == "TumblingProcessingTimeWindows"
    with using_clock(ManualClock(12_345)):
        result = run_reference(jg)
    assert sorted(result.printed) == ["+I[a, 1970-01-01T00:00:10, 1970-01-01T00:00:15, 2]",
                                      "+I[b, 1970-01-01T00:00:10, 1970-01-01T00:00:15, 1]"]
    for window, cls in (("sliding 10s every 5s on processing time",
                         "SlidingProcessingTimeWindows"),
                        ("session gap 3s on processing time", "ProcessingTimeSessionWindows")):
        names = [n.name for n in _flow(window, "streaming").stream_graph.nodes.values()]
        assert cls in names


@pytest.mark.parametrize("window, message", [
    ("tumbling 5s", "a window needs event time"),
    ("tumbling 5s on processing time allowed lateness 1s", "has no late data"),
    ("tumbling 5s on processing time on processing time", "given twice"),
])
def test_flow_processing_time_window_errors(window: str, message: str) -> None:
    with pytest.raises(FlowcError, match=message):
        _flow(window)


# -- the Spark executors ------------------------------------------------------------------


@pytest.fixture(scope="module")
def spark() -> Any:
    from flowc.executor import get_spark

    return get_spark("local[2]")


@pytest.mark.spark
@pytest.mark.slow
@pytest.mark.parametrize("executor", ["row", "columnar"])
def test_batch_rule_on_spark_equals_the_reference(spark: Any, executor: str) -> None:
    """BATCH on Spark (row-wise and columnar): the driver's clock reaches the tasks; no
    processing-time timer fires before the end of input, then all do."""
    from flowc.executor import run_job_graph

    def job(window: bool) -> Any:
        env = _env(BATCH)
        env.set_option("flowc.executor", executor)
        keyed = env.from_collection(list(range(4))).key_by(lambda v: v % 2)
        if window:
            keyed.window(TumblingProcessingTimeWindows.of(100)).aggregate(Ticking(40)) \
                .sink_to(CollectSink("out"))
        else:
            keyed.process(Reminder()).sink_to(CollectSink("out"))
        return env.get_job_graph()

    for window in (False, True):
        with using_clock(ManualClock(1000)):
            ref = run_reference(job(window)).collected["out"]
        with using_clock(ManualClock(1000)):
            got = run_job_graph(job(window)).collected["out"]
        assert sorted(got) == sorted(ref)
        if window:  # keys 0, 1, 0, 1 at 1000, 1040, 1080, 1120; windows of 100 ms
            assert sorted(ref) == [1, 1, 2]
        else:
            assert [o[2] for o in ref if o[0] == "timer"] == [1100, 1160, 1220, 1280]


def test_keyed_broadcast_process_function_processing_time_timers() -> None:
    from flowc.common import Types
    from flowc.datastream import MapStateDescriptor
    from flowc.datastream.functions import KeyedBroadcastProcessFunction

    rules = MapStateDescriptor("rules", Types.STRING(), Types.INT())

    class Later(KeyedBroadcastProcessFunction):
        def process_element(self, value: Any, ctx: Any) -> Any:
            ctx.timer_service().register_processing_time_timer(
                ctx.timer_service().current_processing_time() + 10)
            return []

        def process_broadcast_element(self, value: Any, ctx: Any) -> None:
            return None

        def on_timer(self, timestamp: int, ctx: Any) -> Any:
            yield ctx.get_current_key(), timestamp, ctx.time_domain().name

    env = _env(BATCH)
    main = env.from_collection(["a", "b"]).key_by(lambda v: v)
    main.connect(env.from_collection([("r", 1)]).broadcast(rules)).process(Later()) \
        .sink_to(CollectSink("out"))
    assert sorted(_collect(env, ManualClock(500))) == [("a", 510, "PROCESSING_TIME"),
                                                        ("b", 510, "PROCESSING_TIME")]
