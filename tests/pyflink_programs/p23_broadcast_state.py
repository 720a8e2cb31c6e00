"""Broadcast state: a rule stream broadcast to every subtask, a keyed stream that buffers its
readings and checks them against the rules on an event-time timer (so the result does not
depend on how the two inputs interleave), and a non-keyed BroadcastProcessFunction."""
from pyflink.common import Types, WatermarkStrategy
from pyflink.common.watermark_strategy import TimestampAssigner
from pyflink.datastream import StreamExecutionEnvironment
from pyflink.datastream.functions import BroadcastProcessFunction, KeyedBroadcastProcessFunction
from pyflink.datastream.state import ListStateDescriptor, MapStateDescriptor

limits = MapStateDescriptor("limits", Types.STRING(), Types.INT())


class Ts(TimestampAssigner):
    def extract_timestamp(self, value, record_timestamp):
        return value[1]


class Check(KeyedBroadcastProcessFunction):
    def open(self, runtime_context):
        self.buffer = runtime_context.get_list_state(ListStateDescriptor("buf", Types.INT()))

    def process_element(self, value, ctx):
        self.buffer.add(value[2])
        ctx.timer_service().register_event_time_timer(10_000)

    def process_broadcast_element(self, value, ctx):
        ctx.get_broadcast_state(limits).put(value[0], value[1])

    def on_timer(self, timestamp, ctx):
        limit = ctx.get_broadcast_state(limits).get(ctx.get_current_key())
        for reading in self.buffer.get():
            verdict = "no limit" if limit is None else ("over" if reading > limit else "ok")
            yield f"{ctx.get_current_key()} {reading}: {verdict}"


class Count(BroadcastProcessFunction):
    def process_element(self, value, ctx):
        yield f"reading {value[0]}"

    def process_broadcast_element(self, value, ctx):
        yield f"rule {value[0]} <= {value[1]}"


env = StreamExecutionEnvironment.get_execution_environment()
env.set_parallelism(2)
strategy = WatermarkStrategy.for_monotonous_timestamps().with_timestamp_assigner(Ts())
rules = env.from_collection([("a", 10, 0), ("b", 5, 0)]).assign_timestamps_and_watermarks(
    strategy)
readings = env.from_collection([("a", 1000, 3), ("b", 1100, 7), ("a", 1200, 12),
                                ("c", 1300, 1)]).assign_timestamps_and_watermarks(strategy)
(readings.key_by(lambda r: r[0])
         .connect(rules.broadcast(limits))
         .process(Check(), output_type=Types.STRING())
         .print())
readings.connect(rules.broadcast(limits)).process(Count(), output_type=Types.STRING()).print()
env.execute("broadcast state")
