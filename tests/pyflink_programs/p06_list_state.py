"""ListState: buffer per key and flush every third element."""
from pyflink.common import Types
from pyflink.datastream import StreamExecutionEnvironment
from pyflink.datastream.functions import KeyedProcessFunction
from pyflink.datastream.state import ListStateDescriptor


class Batch(KeyedProcessFunction):
    def open(self, runtime_context):
        self.buffer = runtime_context.get_list_state(ListStateDescriptor("buf", Types.INT()))

    def process_element(self, value, ctx):
        self.buffer.add(value[1])
        items = list(self.buffer.get())
        if len(items) == 3:
            self.buffer.clear()
            yield value[0], sum(items), str(items)


env = StreamExecutionEnvironment.get_execution_environment()
env.set_parallelism(1)
data = [("x", 1), ("y", 10), ("x", 2), ("x", 3), ("y", 20), ("x", 4), ("y", 30), ("x", 5),
        ("x", 6)]
(env.from_collection(data, type_info=Types.TUPLE([Types.STRING(), Types.INT()]))
    .key_by(lambda v: v[0])
    .process(Batch(), output_type=Types.TUPLE([Types.STRING(), Types.INT(), Types.STRING()]))
    .print())
env.execute("list state")
