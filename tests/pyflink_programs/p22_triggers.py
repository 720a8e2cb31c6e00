"""Triggers: GlobalWindows with CountTrigger and PurgingTrigger, ContinuousEventTimeTrigger
on tumbling windows, a user Trigger subclass, and window_all with a trigger."""
from pyflink.common import Time, Types, WatermarkStrategy
from pyflink.common.watermark_strategy import TimestampAssigner
from pyflink.datastream import StreamExecutionEnvironment
from pyflink.datastream.window import (
    ContinuousEventTimeTrigger,
    CountTrigger,
    GlobalWindows,
    PurgingTrigger,
    Trigger,
    TriggerResult,
    TumblingEventTimeWindows,
)


class Ts(TimestampAssigner):
    def extract_timestamp(self, value, record_timestamp):
        return value[1]


class FireOnBig(Trigger):
    """Fires (and purges) when an element of 5 or more arrives, and at the window's end."""

    def on_element(self, element, timestamp, window, ctx):
        if element[2] >= 5:
            return TriggerResult.FIRE_AND_PURGE
        ctx.register_event_time_timer(window.max_timestamp())
        return TriggerResult.CONTINUE

    def on_processing_time(self, time, window, ctx):
        return TriggerResult.CONTINUE

    def on_event_time(self, time, window, ctx):
        return TriggerResult.FIRE if time == window.max_timestamp() else TriggerResult.CONTINUE

    def on_merge(self, window, ctx):
        pass

    def clear(self, window, ctx):
        ctx.delete_event_time_timer(window.max_timestamp())


def total(a, b):
    return a[0], max(a[1], b[1]), a[2] + b[2]


env = StreamExecutionEnvironment.get_execution_environment()
env.set_parallelism(1)
data = [("a", 1000, 1), ("b", 1100, 2), ("a", 1500, 3), ("a", 2600, 7), ("b", 3400, 4),
        ("a", 4200, 2), ("b", 5100, 6), ("a", 6300, 5), ("a", 9000, 1)]
events = (env.from_collection(data, type_info=Types.TUPLE([Types.STRING(), Types.LONG(),
                                                           Types.INT()]))
          .assign_timestamps_and_watermarks(
              WatermarkStrategy.for_monotonous_timestamps().with_timestamp_assigner(Ts())))
keyed = events.key_by(lambda e: e[0], key_type=Types.STRING())
keyed.window(GlobalWindows.create()).trigger(CountTrigger.of(2)).reduce(total).print("count")
keyed.window(GlobalWindows.create()).trigger(PurgingTrigger.of(CountTrigger.of(2))) \
    .reduce(total).print("purging")
keyed.window(TumblingEventTimeWindows.of(Time.seconds(10))) \
    .trigger(ContinuousEventTimeTrigger.of(Time.seconds(2))).reduce(total).print("continuous")
keyed.window(TumblingEventTimeWindows.of(Time.seconds(5))).trigger(FireOnBig()) \
    .reduce(total).print("big")
events.window_all(TumblingEventTimeWindows.of(Time.seconds(5))) \
    .trigger(PurgingTrigger.of(CountTrigger.of(3))).reduce(total).print("all")
env.execute("triggers")
