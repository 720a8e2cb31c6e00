"""ReducingState keeping a maximum, and a ValueState counter, printed as named Rows."""
from pyflink.common import Row, Types
from pyflink.datastream import StreamExecutionEnvironment
from pyflink.datastream.functions import KeyedProcessFunction
from pyflink.datastream.state import ReducingStateDescriptor, ValueStateDescriptor


class Peak(KeyedProcessFunction):
    def open(self, runtime_context):
        self.peak = runtime_context.get_reducing_state(
            ReducingStateDescriptor("peak", lambda a, b: max(a, b), Types.INT()))
        self.n = runtime_context.get_state(ValueStateDescriptor("n", Types.INT()))

    def process_element(self, value, ctx):
        self.peak.add(value[1])
        self.n.update((self.n.value() or 0) + 1)
        yield Row(sensor=value[0], peak=self.peak.get(), readings=self.n.value())


env = StreamExecutionEnvironment.get_execution_environment()
env.set_parallelism(1)
data = [("t1", 20), ("t2", 31), ("t1", 25), ("t1", 22), ("t2", 30), ("t2", 35)]
(env.from_collection(data)
    .key_by(lambda v: v[0])
    .process(Peak(), output_type=Types.ROW_NAMED(["sensor", "peak", "readings"],
                                                 [Types.STRING(), Types.INT(), Types.INT()]))
    .print())
env.execute("reducing state")
