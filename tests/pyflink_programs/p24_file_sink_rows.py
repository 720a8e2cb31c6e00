"""FileSink row format: simple_string_encoder on typed streams (a Tuple, a named Row with a
FLOAT, strings), OutputFileConfig part prefix / suffix, rolling by part size, the
base-path and the default date-time bucket assigners, a sink with two writers. After the
job the program lists the part files (the random uuid and the hour bucket masked) and
prints each file's lines."""
import os
import re
import tempfile

from pyflink.common import Row, Types
from pyflink.common.serialization import Encoder
from pyflink.datastream import StreamExecutionEnvironment
from pyflink.datastream.connectors.file_system import (
    BucketAssigner,
    FileSink,
    OutputFileConfig,
    RollingPolicy,
)

root = tempfile.mkdtemp()
env = StreamExecutionEnvironment.get_execution_environment()
env.set_parallelism(1)
words = env.from_collection(["apple", "kiwi", "banana", "fig", "cherry", "lime", "plum"],
                            type_info=Types.STRING())

counts = words.map(lambda w: (w, len(w)), output_type=Types.TUPLE([Types.STRING(), Types.INT()]))
counts.sink_to(FileSink.for_row_format(os.path.join(root, "tuples"),
                                       Encoder.simple_string_encoder())
               .with_output_file_config(OutputFileConfig.builder().with_part_prefix("words")
                                        .with_part_suffix(".txt").build())
               .with_rolling_policy(RollingPolicy.default_rolling_policy(part_size=20))
               .with_bucket_assigner(BucketAssigner.base_path_bucket_assigner())
               .build())

rows = words.map(lambda w: Row(name=w, weight=len(w) / 3.0, short=len(w) < 5),
                 output_type=Types.ROW_NAMED(["name", "weight", "short"],
                                             [Types.STRING(), Types.FLOAT(), Types.BOOLEAN()]))
rows.sink_to(FileSink.for_row_format(os.path.join(root, "rows"),
                                     Encoder.simple_string_encoder()).build())

words.map(lambda w: w.upper(), output_type=Types.STRING()).sink_to(
    FileSink.for_row_format(os.path.join(root, "upper"), Encoder.simple_string_encoder())
    .with_rolling_policy(RollingPolicy.on_checkpoint_rolling_policy())
    .with_bucket_assigner(BucketAssigner.base_path_bucket_assigner())
    .build()).set_parallelism(2)
env.execute("file sink rows")

uuid = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
hour = re.compile(r"^\d{4}-\d{2}-\d{2}--\d{2}$")
for sink in ("tuples", "rows", "upper"):
    for dirpath, _, names in os.walk(os.path.join(root, sink)):
        rel = os.path.relpath(dirpath, root).split(os.sep)
        rel = [("<yyyy-MM-dd--HH>" if hour.match(p) else p) for p in rel]
        for name in sorted(names):
            with open(os.path.join(dirpath, name), encoding="utf-8") as fh:
                lines = fh.read().splitlines()
            shown = "/".join(rel + [uuid.sub("<uuid>", name)])
            print(f"file {shown}: {len(lines)} lines")
            for line in lines:
                print(f"{sink}: {line}")
