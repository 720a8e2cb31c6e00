"""MapState: distinct items per user with their counts."""
from pyflink.common import Types
from pyflink.datastream import StreamExecutionEnvironment
from pyflink.datastream.functions import KeyedProcessFunction
from pyflink.datastream.state import MapStateDescriptor


class Counts(KeyedProcessFunction):
    def open(self, runtime_context):
        self.counts = runtime_context.get_map_state(
            MapStateDescriptor("counts", Types.STRING(), Types.INT()))

    def process_element(self, value, ctx):
        user, item = value
        n = (self.counts.get(item) or 0) + 1
        self.counts.put(item, n)
        seen = sorted(self.counts.keys())
        yield "{} saw {} x{} (distinct: {})".format(user, item, n, "/".join(seen))


env = StreamExecutionEnvironment.get_execution_environment()
env.set_parallelism(1)
data = [("ann", "tea"), ("bob", "coffee"), ("ann", "cake"), ("ann", "tea"), ("bob", "tea"),
        ("bob", "coffee"), ("ann", "tea")]
(env.from_collection(data)
    .key_by(lambda v: v[0])
    .process(Counts(), output_type=Types.STRING())
    .print())
env.execute("map state")
