"""Sliding event-time windows with an AggregateFunction (average) and a typed result."""
from pyflink.common import Time, Types, WatermarkStrategy
from pyflink.common.watermark_strategy import TimestampAssigner
from pyflink.datastream import StreamExecutionEnvironment
from pyflink.datastream.functions import AggregateFunction
from pyflink.datastream.window import SlidingEventTimeWindows


class Ts(TimestampAssigner):
    def extract_timestamp(self, value, record_timestamp):
        return value[1]


class Average(AggregateFunction):
    def create_accumulator(self):
        return "", 0, 0

    def add(self, value, accumulator):
        return value[0], accumulator[1] + value[2], accumulator[2] + 1

    def get_result(self, accumulator):
        return accumulator[0], accumulator[1] / accumulator[2]

    def merge(self, a, b):
        return a[0], a[1] + b[1], a[2] + b[2]


env = StreamExecutionEnvironment.get_execution_environment()
env.set_parallelism(1)
data = [("s1", 1000, 10), ("s2", 1200, 20), ("s1", 2500, 30), ("s1", 4100, 50),
        ("s2", 6000, 40), ("s1", 7000, 70)]
(env.from_collection(data)
    .assign_timestamps_and_watermarks(
        WatermarkStrategy.for_monotonous_timestamps().with_timestamp_assigner(Ts()))
    .key_by(lambda e: e[0])
    .window(SlidingEventTimeWindows.of(Time.seconds(4), Time.seconds(2)))
    .aggregate(Average(), output_type=Types.TUPLE([Types.STRING(), Types.DOUBLE()]))
    .print())
env.execute("sliding")
