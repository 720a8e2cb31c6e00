"""A PyFlink DataStream program that runs on flowc by changing its imports.

    flowc explain examples/wordcount.py          # the plan, as Flink would build it
    python examples/wordcount.py                 # runs it on an embedded local Spark
"""

from flowc.datastream import StreamExecutionEnvironment

LINES = [
    "to be or not to be",
    "that is the question",
    "whether tis nobler in the mind to suffer",
]

env = StreamExecutionEnvironment.get_execution_environment()
env.set_parallelism(2)
(
    env.from_collection(LINES).name("lines")
    .flat_map(lambda line: [(w, 1) for w in line.split()]).name("split")
    .key_by(lambda pair: pair[0])
    .reduce(lambda a, b: (a[0], a[1] + b[1])).name("count")
    .print()
)
env.execute("wordcount")
