"""window_all with a ProcessAllWindowFunction and an AllWindowFunction, a keyed
WindowFunction through apply(), and session windows with a dynamic gap."""
from pyflink.common import Time, Types, WatermarkStrategy
from pyflink.common.watermark_strategy import TimestampAssigner
from pyflink.datastream import StreamExecutionEnvironment
from pyflink.datastream.functions import AllWindowFunction, ProcessAllWindowFunction, WindowFunction
from pyflink.datastream.window import (
    EventTimeSessionWindows,
    SessionWindowTimeGapExtractor,
    TumblingEventTimeWindows,
)


class Ts(TimestampAssigner):
    def extract_timestamp(self, value, record_timestamp):
        return value[1]


class Everyone(ProcessAllWindowFunction):
    def process(self, context, elements):
        w = context.window()
        yield f"[{w.start}, {w.end}): {sorted(e[0] for e in elements)}"


class Total(AllWindowFunction):
    def apply(self, window, inputs):
        yield f"total until {window.end}: {sum(e[2] for e in inputs)}"


class PerKey(WindowFunction):
    def apply(self, key, window, inputs):
        yield f"{key} [{window.start}, {window.end}) x{len(list(inputs))}"


class GapByUser(SessionWindowTimeGapExtractor):
    def extract(self, element):
        return 1000 if element[0] == "a" else 5000


env = StreamExecutionEnvironment.get_execution_environment()
env.set_parallelism(2)
data = [("a", 1000, 1), ("b", 1200, 2), ("a", 2500, 3), ("c", 4800, 4), ("b", 5100, 5),
        ("a", 6000, 6), ("b", 9900, 7)]
events = (env.from_collection(data)
          .assign_timestamps_and_watermarks(
              WatermarkStrategy.for_monotonous_timestamps().with_timestamp_assigner(Ts())))
events.window_all(TumblingEventTimeWindows.of(Time.seconds(5))) \
    .process(Everyone(), output_type=Types.STRING()).print()
events.window_all(TumblingEventTimeWindows.of(Time.seconds(5))) \
    .apply(Total(), output_type=Types.STRING()).print()
events.key_by(lambda e: e[0]).window(TumblingEventTimeWindows.of(Time.seconds(5))) \
    .apply(PerKey(), output_type=Types.STRING()).print()
events.key_by(lambda e: e[0]).window(EventTimeSessionWindows.with_dynamic_gap(GapByUser())) \
    .apply(PerKey(), output_type=Types.STRING()).print()
env.execute("window all")
