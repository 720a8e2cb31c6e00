"""Tumbling and sliding count windows: reduce, aggregate and a ProcessWindowFunction."""
from pyflink.common import Types
from pyflink.datastream import StreamExecutionEnvironment
from pyflink.datastream.functions import AggregateFunction, ProcessWindowFunction


class Mean(AggregateFunction):
    def create_accumulator(self):
        return 0, 0

    def add(self, value, accumulator):
        return accumulator[0] + value[1], accumulator[1] + 1

    def get_result(self, accumulator):
        return accumulator[0] / accumulator[1]

    def merge(self, a, b):
        return a[0] + b[0], a[1] + b[1]


class Listing(ProcessWindowFunction):
    def process(self, key, context, elements):
        yield f"{key} window {context.window().id}: {[e[1] for e in elements]}"


env = StreamExecutionEnvironment.get_execution_environment()
env.set_parallelism(1)
data = [("a", 1), ("b", 10), ("a", 2), ("a", 3), ("b", 20), ("a", 4), ("a", 5), ("b", 30),
        ("a", 6), ("a", 7), ("b", 40)]
keyed = env.from_collection(data, type_info=Types.TUPLE([Types.STRING(), Types.INT()])) \
    .key_by(lambda v: v[0], key_type=Types.STRING())
keyed.count_window(3).reduce(lambda x, y: (x[0], x[1] + y[1])).print("tumbling")
keyed.count_window(2).aggregate(Mean(), output_type=Types.DOUBLE()).print("mean")
keyed.count_window(3, 2).process(Listing(), output_type=Types.STRING()).print("sliding")
env.execute("count windows")
