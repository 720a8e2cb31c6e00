"""Tumbling windows with allowed lateness and late data to a side output."""
from pyflink.common import Time, Types, WatermarkStrategy
from pyflink.common.watermark_strategy import TimestampAssigner
from pyflink.datastream import OutputTag, StreamExecutionEnvironment
from pyflink.datastream.window import TumblingEventTimeWindows

late = OutputTag("late", Types.TUPLE([Types.STRING(), Types.LONG(), Types.INT()]))


class Ts(TimestampAssigner):
    def extract_timestamp(self, value, record_timestamp):
        return value[1]


env = StreamExecutionEnvironment.get_execution_environment()
env.set_parallelism(1)
data = [("k", 1000), ("k", 2000), ("k", 7000), ("k", 1500), ("k", 12000), ("k", 3000),
        ("j", 6500)]
windows = (env.from_collection(data, type_info=Types.TUPLE([Types.STRING(), Types.LONG()]))
           .assign_timestamps_and_watermarks(
               WatermarkStrategy.for_monotonous_timestamps().with_timestamp_assigner(Ts()))
           .map(lambda v: (v[0], v[1], 1),
                output_type=Types.TUPLE([Types.STRING(), Types.LONG(), Types.INT()]))
           .key_by(lambda v: v[0])
           .window(TumblingEventTimeWindows.of(Time.seconds(5)))
           .allowed_lateness(1000)
           .side_output_late_data(late)
           .reduce(lambda a, b: (a[0], max(a[1], b[1]), a[2] + b[2])))
windows.print()
windows.get_side_output(late).print()
env.execute("late data")
