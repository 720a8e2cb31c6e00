"""Deduplication with a TTL'd MapState (one day, refreshed on read: never expires in the
run), a per-user running count in a TTL'd ValueState, results printed and written through a
row-format FileSink (two writers behind a key_by); the program prints the written lines."""
import os
import tempfile

from pyflink.common import Row, Time, Types
from pyflink.common.serialization import Encoder
from pyflink.datastream import StreamExecutionEnvironment
from pyflink.datastream.connectors.file_system import BucketAssigner, FileSink
from pyflink.datastream.functions import KeyedProcessFunction
from pyflink.datastream.state import MapStateDescriptor, StateTtlConfig, ValueStateDescriptor


class FirstSeen(KeyedProcessFunction):
    def open(self, runtime_context):
        ttl = (StateTtlConfig.new_builder(Time.hours(24))
               .update_ttl_on_read_and_write().never_return_expired().build())
        seen = MapStateDescriptor("seen", Types.STRING(), Types.BOOLEAN())
        seen.enable_time_to_live(ttl)
        count = ValueStateDescriptor("count", Types.LONG())
        count.enable_time_to_live(ttl)
        self.seen = runtime_context.get_map_state(seen)
        self.count = runtime_context.get_state(count)

    def process_element(self, value, ctx):
        user, item = value
        if self.seen.contains(item):
            return
        self.seen.put(item, True)
        n = (self.count.value() or 0) + 1
        self.count.update(n)
        yield Row(user=user, item=item, nth=n)


root = tempfile.mkdtemp()
env = StreamExecutionEnvironment.get_execution_environment()
env.set_parallelism(2)
clicks = [("ann", "tea"), ("bob", "cake"), ("ann", "tea"), ("ann", "jam"), ("cid", "tea"),
          ("bob", "cake"), ("bob", "tea"), ("ann", "jam"), ("cid", "pie"), ("ann", "pie")]
firsts = (env.from_collection(clicks, type_info=Types.TUPLE([Types.STRING(), Types.STRING()]))
          .key_by(lambda c: c[0], key_type=Types.STRING())
          .process(FirstSeen(), output_type=Types.ROW_NAMED(
              ["user", "item", "nth"], [Types.STRING(), Types.STRING(), Types.LONG()])))
firsts.print()
firsts.sink_to(FileSink.for_row_format(os.path.join(root, "firsts"),
                                       Encoder.simple_string_encoder())
               .with_bucket_assigner(BucketAssigner.base_path_bucket_assigner()).build())
env.execute("ttl dedup")

written = []
for dirpath, _, names in os.walk(os.path.join(root, "firsts")):
    for name in names:
        with open(os.path.join(dirpath, name), encoding="utf-8") as fh:
            written.extend(fh.read().splitlines())
print("files written:", sum(len(n) for _, _, n in os.walk(os.path.join(root, "firsts"))) > 0)
for line in sorted(written):
    print("written:", line)
