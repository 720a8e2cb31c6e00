"""FileSource with the text-line format over a directory (nested, a hidden file skipped,
CRLF line ends), word counts on the lines."""
import os
import tempfile

from pyflink.common import Types, WatermarkStrategy
from pyflink.datastream import StreamExecutionEnvironment
from pyflink.datastream.connectors.file_system import FileSource, StreamFormat

root = tempfile.mkdtemp()
os.makedirs(os.path.join(root, "more"))
with open(os.path.join(root, "a.txt"), "w", newline="") as fh:
    fh.write("the quick fox\r\njumps over\r\n\r\nthe lazy dog")
with open(os.path.join(root, "more", "b.txt"), "w", newline="") as fh:
    fh.write("the end\n")
with open(os.path.join(root, ".hidden"), "w") as fh:
    fh.write("never read\n")

env = StreamExecutionEnvironment.get_execution_environment()
env.set_parallelism(1)
source = FileSource.for_record_stream_format(StreamFormat.text_line_format(), root).build()
# Two readers share the files; the print sinks (parallelism 1) print without a prefix.
lines = env.from_source(source, WatermarkStrategy.no_watermarks(), "lines").set_parallelism(2)
lines.map(lambda line: f"line [{line}]", output_type=Types.STRING()).print()
(lines.flat_map(lambda line: [(w, 1) for w in line.split()],
                output_type=Types.TUPLE([Types.STRING(), Types.INT()]))
      .key_by(lambda t: t[0], key_type=Types.STRING())
      .reduce(lambda a, b: (a[0], a[1] + b[1]))
      .filter(lambda t: t[0] == "the")
      .print())
env.execute("file lines")
