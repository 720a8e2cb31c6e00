"""Word count: flat_map to typed tuples, key_by, rolling reduce."""
from pyflink.common import Types
from pyflink.datastream import StreamExecutionEnvironment
from pyflink.datastream.functions import FlatMapFunction


class Split(FlatMapFunction):
    def flat_map(self, value):
        for word in value.lower().split():
            yield word, 1


env = StreamExecutionEnvironment.get_execution_environment()
env.set_parallelism(1)
lines = env.from_collection(["to be or not to be", "that is the question", "to be is to do"],
                            type_info=Types.STRING())
(lines.flat_map(Split(), output_type=Types.TUPLE([Types.STRING(), Types.INT()]))
      .key_by(lambda t: t[0], key_type=Types.STRING())
      .reduce(lambda a, b: (a[0], a[1] + b[1]))
      .print())
env.execute("wordcount")
