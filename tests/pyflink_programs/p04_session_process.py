"""Event-time session windows with a ProcessWindowFunction reading the window."""
from pyflink.common import Time, Types, WatermarkStrategy
from pyflink.common.watermark_strategy import TimestampAssigner
from pyflink.datastream import StreamExecutionEnvironment
from pyflink.datastream.functions import ProcessWindowFunction
from pyflink.datastream.window import EventTimeSessionWindows


class Ts(TimestampAssigner):
    def extract_timestamp(self, value, record_timestamp):
        return value[1]


class Describe(ProcessWindowFunction):
    def process(self, key, context, elements):
        w = context.window()
        clicks = [e[2] for e in elements]
        yield key, w.start, w.end, len(clicks), ",".join(sorted(clicks))


env = StreamExecutionEnvironment.get_execution_environment()
env.set_parallelism(1)
data = [("u1", 1000, "home"), ("u1", 2000, "news"), ("u2", 2500, "home"),
        ("u1", 9000, "sport"), ("u2", 3000, "mail"), ("u1", 9500, "home"),
        ("u2", 20000, "news")]
(env.from_collection(data)
    .assign_timestamps_and_watermarks(
        WatermarkStrategy.for_monotonous_timestamps().with_timestamp_assigner(Ts()))
    .key_by(lambda e: e[0])
    .window(EventTimeSessionWindows.with_gap(Time.seconds(3)))
    .process(Describe(), output_type=Types.TUPLE([Types.STRING(), Types.LONG(), Types.LONG(),
                                                 Types.INT(), Types.STRING()]))
    .print())
env.execute("sessions")
