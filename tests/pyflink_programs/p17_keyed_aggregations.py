"""Built-in keyed aggregations on tuple positions: sum, max, min_by."""
from pyflink.common import Types
from pyflink.datastream import StreamExecutionEnvironment

env = StreamExecutionEnvironment.get_execution_environment()
env.set_parallelism(1)
sales = env.from_collection(
    [("north", 3, 10), ("south", 5, 7), ("north", 1, 30), ("south", 9, 2), ("north", 4, 20)],
    type_info=Types.TUPLE([Types.STRING(), Types.INT(), Types.INT()]))
sales.key_by(lambda s: s[0]).sum(1).print("sum")
sales.key_by(lambda s: s[0]).max(2).print("max")
sales.key_by(lambda s: s[0]).min_by(2).print("min_by")
env.execute("aggregations")
