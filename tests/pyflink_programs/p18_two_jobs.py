"""Two execute() calls: the second job runs only what was added after the first."""
from pyflink.common import Types
from pyflink.datastream import StreamExecutionEnvironment

env = StreamExecutionEnvironment.get_execution_environment()
env.set_parallelism(1)
env.from_collection([1, 2, 3], type_info=Types.INT()).map(lambda v: v * 10,
                                                          output_type=Types.INT()).print()
env.execute("first")
env.from_collection(["x", "y"], type_info=Types.STRING()).print("second")
env.execute("second")
