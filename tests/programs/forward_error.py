from flowc.datastream import StreamExecutionEnvironment

env = StreamExecutionEnvironment.get_execution_environment()
env.set_parallelism(2)
src = env.from_sequence(0, 10).name("src")
src.forward().map(lambda v: v + 1).name("wide").set_parallelism(3).print()
env.execute()
