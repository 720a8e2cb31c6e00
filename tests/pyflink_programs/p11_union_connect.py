"""union of two streams, then connect with a third through a CoMapFunction."""
from pyflink.common import Types
from pyflink.datastream import StreamExecutionEnvironment
from pyflink.datastream.functions import CoMapFunction


class Tag(CoMapFunction):
    def map1(self, value):
        return "number " + str(value)

    def map2(self, value):
        return "word " + value


env = StreamExecutionEnvironment.get_execution_environment()
env.set_parallelism(1)
small = env.from_collection([1, 2, 3], type_info=Types.INT())
big = env.from_collection([100, 200], type_info=Types.INT())
words = env.from_collection(["alpha", "beta"], type_info=Types.STRING())
numbers = small.union(big).map(lambda v: v * 2, output_type=Types.INT())
numbers.connect(words).map(Tag(), output_type=Types.STRING()).print()
env.execute("union connect")
