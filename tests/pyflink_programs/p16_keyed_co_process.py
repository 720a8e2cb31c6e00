"""KeyedCoProcessFunction with per-key state for each input. (Its output does not depend on
how the two inputs interleave, which neither Flink nor flowc defines.)"""
from pyflink.common import Types
from pyflink.datastream import StreamExecutionEnvironment
from pyflink.datastream.functions import KeyedCoProcessFunction
from pyflink.datastream.state import ValueStateDescriptor


class Track(KeyedCoProcessFunction):
    def open(self, runtime_context):
        self.peak = runtime_context.get_state(ValueStateDescriptor("peak", Types.INT()))
        self.limits = runtime_context.get_state(ValueStateDescriptor("limits", Types.INT()))

    def process_element1(self, value, ctx):
        peak = max(self.peak.value() or value[1], value[1])
        self.peak.update(peak)
        yield f"{ctx.get_current_key()}: reading {value[1]}, peak so far {peak}"

    def process_element2(self, value, ctx):
        n = (self.limits.value() or 0) + 1
        self.limits.update(n)
        yield f"{ctx.get_current_key()}: limit #{n} is {value[1]}"


env = StreamExecutionEnvironment.get_execution_environment()
env.set_parallelism(1)
rules = env.from_collection([("a", 10), ("b", 5), ("a", 12)])
readings = env.from_collection([("a", 3), ("a", 12), ("b", 7), ("b", 1), ("a", 11)])
(readings.connect(rules)
         .key_by(lambda r: r[0], lambda r: r[0])
         .process(Track(), output_type=Types.STRING())
         .print())
env.execute("co process")
