"""State TTL on every state kind (value, list, map, reducing, aggregating) with a TTL long
enough never to expire during the run, so the output does not depend on how fast it runs;
the builder's options and the config's getters. (Expiry itself is tested with an injected
clock in tests/test_pyflink_state_ttl.py.)"""
from pyflink.common import Time, Types
from pyflink.datastream import StreamExecutionEnvironment
from pyflink.datastream.functions import AggregateFunction, KeyedProcessFunction
from pyflink.datastream.state import (
    AggregatingStateDescriptor,
    ListStateDescriptor,
    MapStateDescriptor,
    ReducingStateDescriptor,
    StateTtlConfig,
    ValueStateDescriptor,
)

read_write = (StateTtlConfig.new_builder(Time.hours(1))
              .set_update_type(StateTtlConfig.UpdateType.OnReadAndWrite)
              .set_state_visibility(StateTtlConfig.StateVisibility.NeverReturnExpired)
              .cleanup_full_snapshot()
              .build())
create_write = (StateTtlConfig.new_builder(Time.minutes(30))
                .update_ttl_on_create_and_write()
                .return_expired_if_not_cleaned_up()
                .cleanup_incrementally(10, False)
                .build())
print("ttl", read_write.get_ttl().to_milliseconds(), read_write.is_enabled(),
      read_write.get_update_type(), read_write.get_state_visibility())
print("ttl", create_write.get_ttl().to_milliseconds(), create_write.get_update_type(),
      create_write.get_state_visibility(), create_write.get_ttl_time_characteristic())


class Average(AggregateFunction):
    def create_accumulator(self):
        return 0, 0

    def add(self, value, acc):
        return acc[0] + value, acc[1] + 1

    def get_result(self, acc):
        return acc[0] / acc[1]

    def merge(self, a, b):
        return a[0] + b[0], a[1] + b[1]


class Everything(KeyedProcessFunction):
    def open(self, runtime_context):
        last = ValueStateDescriptor("last", Types.INT())
        last.enable_time_to_live(read_write)
        items = ListStateDescriptor("items", Types.INT())
        items.enable_time_to_live(create_write)
        seen = MapStateDescriptor("seen", Types.INT(), Types.INT())
        seen.enable_time_to_live(read_write)
        total = ReducingStateDescriptor("total", lambda a, b: a + b, Types.INT())
        total.enable_time_to_live(create_write)
        avg = AggregatingStateDescriptor("avg", Average(),
                                         Types.TUPLE([Types.INT(), Types.INT()]))
        avg.enable_time_to_live(read_write)
        self.last = runtime_context.get_state(last)
        self.items = runtime_context.get_list_state(items)
        self.seen = runtime_context.get_map_state(seen)
        self.total = runtime_context.get_reducing_state(total)
        self.avg = runtime_context.get_aggregating_state(avg)

    def process_element(self, value, ctx):
        key, n = value
        previous = self.last.value()
        self.last.update(n)
        self.items.add(n)
        self.seen.put(n, (self.seen.get(n) or 0) + 1)
        self.total.add(n)
        self.avg.add(n)
        yield f"{key}: n={n} previous={previous} items={list(self.items.get())} seen={sorted(self.seen.items())} total={self.total.get()} avg={self.avg.get():.2f}"


env = StreamExecutionEnvironment.get_execution_environment()
env.set_parallelism(1)
data = [("a", 3), ("b", 5), ("a", 4), ("a", 3), ("b", 1), ("a", 10)]
(env.from_collection(data, type_info=Types.TUPLE([Types.STRING(), Types.INT()]))
    .key_by(lambda v: v[0], key_type=Types.STRING())
    .process(Everything(), output_type=Types.STRING())
    .print())
env.execute("state ttl")
