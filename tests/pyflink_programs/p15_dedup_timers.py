"""De-duplication: the first event per id passes, repeats within 2 s go to a side output;
an event-time timer clears the id (state plus timers plus side output, on a typed stream)."""
from pyflink.common import Types, WatermarkStrategy
from pyflink.common.watermark_strategy import TimestampAssigner
from pyflink.datastream import OutputTag, StreamExecutionEnvironment
from pyflink.datastream.functions import KeyedProcessFunction
from pyflink.datastream.state import ValueStateDescriptor

repeats = OutputTag("repeats", Types.STRING())


class Ts(TimestampAssigner):
    def extract_timestamp(self, value, record_timestamp):
        return value[1]


class Dedup(KeyedProcessFunction):
    def open(self, runtime_context):
        self.seen = runtime_context.get_state(ValueStateDescriptor("seen", Types.LONG()))

    def process_element(self, value, ctx):
        if self.seen.value() is None:
            self.seen.update(ctx.timestamp())
            ctx.timer_service().register_event_time_timer(ctx.timestamp() + 2000)
            yield value[0], value[1]
        else:
            yield repeats, f"{value[0]} again at {value[1]}"

    def on_timer(self, timestamp, ctx):
        self.seen.clear()
        yield repeats, f"{ctx.get_current_key()} expires at {timestamp}"


env = StreamExecutionEnvironment.get_execution_environment()
env.set_parallelism(1)
data = [("e1", 1000), ("e2", 1100), ("e1", 1500), ("e1", 2500), ("e3", 4000), ("e2", 3900)]
events = (env.from_collection(data, type_info=Types.TUPLE([Types.STRING(), Types.LONG()]))
          .assign_timestamps_and_watermarks(
              WatermarkStrategy.for_monotonous_timestamps().with_timestamp_assigner(Ts())))
unique = events.key_by(lambda e: e[0]).process(
    Dedup(), output_type=Types.TUPLE([Types.STRING(), Types.LONG()]))
unique.print()
unique.get_side_output(repeats).print("side")
env.execute("dedup")
