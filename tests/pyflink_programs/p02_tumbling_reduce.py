"""Event-time tumbling windows with a reduce, typed tuples."""
from pyflink.common import Duration, Time, Types, WatermarkStrategy
from pyflink.common.watermark_strategy import TimestampAssigner
from pyflink.datastream import StreamExecutionEnvironment
from pyflink.datastream.window import TumblingEventTimeWindows


class Ts(TimestampAssigner):
    def extract_timestamp(self, value, record_timestamp):
        return value[1]


env = StreamExecutionEnvironment.get_execution_environment()
env.set_parallelism(1)
data = [("a", 1000, 1), ("b", 1500, 2), ("a", 4000, 3), ("a", 5200, 4), ("b", 9900, 5),
        ("a", 10100, 6), ("b", 3000, 7)]
events = env.from_collection(data, type_info=Types.TUPLE([Types.STRING(), Types.LONG(),
                                                          Types.INT()]))
strategy = WatermarkStrategy.for_bounded_out_of_orderness(Duration.of_seconds(1)) \
    .with_timestamp_assigner(Ts())
(events.assign_timestamps_and_watermarks(strategy)
       .key_by(lambda e: e[0], key_type=Types.STRING())
       .window(TumblingEventTimeWindows.of(Time.seconds(5)))
       .reduce(lambda a, b: (a[0], max(a[1], b[1]), a[2] + b[2]))
       .print())
env.execute("tumbling")
