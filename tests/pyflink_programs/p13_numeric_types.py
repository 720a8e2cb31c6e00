"""FLOAT / DOUBLE / LONG / BOOLEAN outputs print as Java prints them."""
from pyflink.common import Types
from pyflink.datastream import StreamExecutionEnvironment

env = StreamExecutionEnvironment.get_execution_environment()
env.set_parallelism(1)
nums = env.from_collection([1, 7, 250000, 3], type_info=Types.INT())
nums.map(lambda v: v / 3, output_type=Types.FLOAT()).print()
nums.map(lambda v: v * 1e4 / 7, output_type=Types.DOUBLE()).print()
nums.map(lambda v: v ** 3, output_type=Types.LONG()).print()
nums.map(lambda v: v % 2 == 1, output_type=Types.BOOLEAN()).print()
nums.map(lambda v: 1 / (v * 1000), output_type=Types.DOUBLE()).print()
env.execute("numbers")
