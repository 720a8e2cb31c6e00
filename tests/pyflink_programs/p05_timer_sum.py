"""The classic event-time timer: a running sum per key, emitted 1 s after each record."""
from pyflink.common import Types, WatermarkStrategy
from pyflink.common.watermark_strategy import TimestampAssigner
from pyflink.datastream import StreamExecutionEnvironment
from pyflink.datastream.functions import KeyedProcessFunction, RuntimeContext
from pyflink.datastream.state import ValueStateDescriptor


class Ts(TimestampAssigner):
    def extract_timestamp(self, value, record_timestamp):
        return value[1]


class SumThenTimer(KeyedProcessFunction):
    def open(self, runtime_context: RuntimeContext):
        self.total = runtime_context.get_state(ValueStateDescriptor("total", Types.LONG()))

    def process_element(self, value, ctx):
        self.total.update((self.total.value() or 0) + value[2])
        ctx.timer_service().register_event_time_timer(ctx.timestamp() + 1000)

    def on_timer(self, timestamp, ctx):
        yield f"{ctx.get_current_key()} at {timestamp}: {self.total.value()}"


env = StreamExecutionEnvironment.get_execution_environment()
env.set_parallelism(1)
data = [("a", 1000, 1), ("a", 1500, 2), ("b", 1200, 5), ("a", 3000, 3), ("b", 4000, 1),
        ("a", 5000, 4)]
(env.from_collection(data)
    .assign_timestamps_and_watermarks(
        WatermarkStrategy.for_monotonous_timestamps().with_timestamp_assigner(Ts()))
    .key_by(lambda e: e[0])
    .process(SumThenTimer(), output_type=Types.STRING())
    .print())
env.execute("timers")
