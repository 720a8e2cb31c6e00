"""FileSink row format on more declared Types: a named Row with LONG, DOUBLE, BOOLEAN,
SQL_TIMESTAMP, LIST, MAP and a nested Row, nulls, a Tuple holding a Row; a date-time
bucket assigner with its own pattern and zone, a bucket check interval. The program lists
the part files (the uuid and the date masked) and prints their lines."""
import datetime
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
at = datetime.datetime(2026, 3, 1, 12, 30, 0, 250000)
row_type = Types.ROW_NAMED(
    ["id", "big", "score", "ok", "at", "tags", "counts", "point"],
    [Types.INT(), Types.LONG(), Types.DOUBLE(), Types.BOOLEAN(), Types.SQL_TIMESTAMP(),
     Types.LIST(Types.STRING()), Types.MAP(Types.STRING(), Types.INT()),
     Types.ROW([Types.INT(), Types.INT()])])
rows = env.from_collection(
    [Row(1, 2 ** 40, 1e7, True, at, ["x", "y"], {"b": 2, "a": 1, "zz": 5}, Row(3, 4)),
     Row(2, -7, 0.001, False, at, [], {}, Row(0, -1)),
     Row(3, 0, 123.5, True, at, ["only"], {"k": 9}, Row(5, 6))],
    type_info=row_type)
pairs = rows.map(lambda r: (r.id * 10, Row(r.ok, r.score)),
                 output_type=Types.TUPLE([Types.LONG(),
                                          Types.ROW([Types.BOOLEAN(), Types.DOUBLE()])]))
rows.sink_to(FileSink.for_row_format(os.path.join(root, "rows"),
                                     Encoder.simple_string_encoder())
             .with_bucket_assigner(BucketAssigner.date_time_bucket_assigner("yyyy/MM/dd", "UTC"))
             .with_bucket_check_interval(1000)
             .build())

pairs.sink_to(FileSink.for_row_format(os.path.join(root, "pairs"),
                                      Encoder.simple_string_encoder())
              .with_output_file_config(OutputFileConfig.builder().with_part_suffix(".out")
                                       .build())
              .with_rolling_policy(RollingPolicy.default_rolling_policy(part_size=1))
              .with_bucket_assigner(BucketAssigner.base_path_bucket_assigner())
              .build())
env.execute("file sink types")

uuid = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
for sink in ("rows", "pairs"):
    for dirpath, _, names in os.walk(os.path.join(root, sink)):
        rel = os.path.relpath(dirpath, root).split(os.sep)
        if len(rel) == 4:  # rows/yyyy/MM/dd: the date in UTC (today, or yesterday at 0:00)
            now = datetime.datetime.now(datetime.timezone.utc)
            days = [now, now - datetime.timedelta(minutes=5)]
            print("date bucket is today (UTC):",
                  rel[1:] in [d.strftime("%Y/%m/%d").split("/") for d in days])
            rel = [rel[0], "<yyyy>", "<MM>", "<dd>"]
        for name in sorted(names):
            with open(os.path.join(dirpath, name), encoding="utf-8") as fh:
                lines = fh.read().splitlines()
            print("file {}: {} lines".format("/".join(rel + [uuid.sub("<uuid>", name)]),
                                             len(lines)))
            for line in lines:
                print(f"{sink}: {line}")
