"""LIST and MAP outputs (Java List / HashMap toString) and tuples of mixed types."""
from pyflink.common import Types
from pyflink.datastream import StreamExecutionEnvironment

env = StreamExecutionEnvironment.get_execution_environment()
env.set_parallelism(1)
words = env.from_collection(["apple", "kiwi", "banana"], type_info=Types.STRING())
words.map(lambda w: [len(w), w.count("a")], output_type=Types.LIST(Types.INT())).print()
words.map(lambda w: {w: len(w), "first": ord(w[0]), "zz": 0},
          output_type=Types.MAP(Types.STRING(), Types.INT())).print()
words.map(lambda w: (w, len(w), len(w) > 4, len(w) / 2),
          output_type=Types.TUPLE([Types.STRING(), Types.INT(), Types.BOOLEAN(),
                                   Types.DOUBLE()])).print()
words.map(lambda w: (w[0], w)).print()
env.execute("collections")
