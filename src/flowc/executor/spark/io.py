"""File sources and sinks on Spark.

Sources are parsed inside the source subtasks by ``runtime.files`` (the reference
executor's code, so conversions, errors, dead letters and the split rule are the same):
local files are opened by the task that owns the split; URIs (``hdfs://``, ``s3a://``,
``file:/``, globs in them) are listed and fetched with Spark's ``binaryFile`` source and each
split's bytes shuffled to its subtask. Sinks go through Spark's writers with an explicit
schema into a temp dir that the runner renames into place once the whole job succeeded.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable, Iterator
from typing import Any

from flowc import decimals
from flowc.errors import ExecutionError, FlowcError
from flowc.executor import partition_paths
from flowc.executor.failures import blame
from flowc.executor.runtime import files
from flowc.executor.sinks import (
    Columns,
    Inferred,
    abort,
    csv_writer_options,
    declared_columns,
    narrow_ints,
    row_checker,
    shaper,
    sink_path,
    temp_path,
)
from flowc.executor.spark import tasks
from flowc.operators import FileSink, FileSource, RowFormatFileSink

DEAD = -1  # the slot of a file source's dead letters in its vertex RDD
SINK_FORMATS = {"csv": "csv", "json": "json", "jsonl": "json", "json-lines": "json",
                "parquet": "parquet"}

Reader = Callable[[int, Iterator[Any], files.BadRows], Iterator[tuple[Any, ...]]]


def _identity(k: int) -> int:
    return k


def source_input(spark: Any, spec: FileSource, p: int) -> tuple[Any, Reader]:
    """An RDD of ``p`` partitions and ``read(subtask, partition items, bad rows)`` giving
    the records of that subtask's splits."""
    sc = spark.sparkContext
    if files.is_remote(spec.path):
        return _remote_input(spark, spec, p)
    splits = files.plan_splits(spec.format, files.list_files(spec.path), p)
    mine = [[files.Split(os.path.abspath(s.path), s.start, s.end) for s in
             files.subtask_splits(splits, i, p)] for i in range(p)]
    shown = {os.path.abspath(s.path): s.path for s in splits}

    def read(idx: int, _items: Iterator[Any], bad: files.BadRows) -> Iterator[tuple[Any, ...]]:
        for s in mine[idx]:
            try:
                fh = open(s.path, "rb")  # noqa: SIM115 - closed by the with below
            except OSError as e:
                raise ExecutionError(f"cannot read {shown[s.path]}: {e.strerror or e}") from None
            with fh:
                yield from files.read_split(spec, s, fh, bad, shown[s.path])

    return sc.parallelize(range(p), p), read


def _remote_input(spark: Any, spec: FileSource, p: int) -> tuple[Any, Reader]:
    try:
        df = spark.read.format("binaryFile").load(spec.path)
        listing = [(r[0], int(r[1])) for r in df.select("path", "length").collect()]
    except Exception as e:  # noqa: BLE001 - Spark's AnalysisException / Py4J errors
        text = str(e)
        if "PATH_NOT_FOUND" in text or "does not exist" in text:
            raise ExecutionError(f"input path does not exist: {spec.path}") from None
        raise ExecutionError(f"cannot list {spec.path}: {spark_message(e)}") from None
    splits = files.plan_splits(spec.format, listing, p)
    plan: dict[str, list[tuple[int, int, int]]] = {}
    for k, s in enumerate(splits):
        plan.setdefault(s.path, []).append((k, s.start, s.end))

    def cut(row: Any) -> Iterator[tuple[int, tuple[int, str, bool, int, bytes]]]:
        path, data = row[0], bytes(row[1])
        for k, start, end in plan.get(path, []):
            if spec.format == "parquet":
                yield k % p, (k, path, True, 0, data)
                continue
            begin, stop = files.chunk_bounds(data, start, end)
            yield k % p, (k, path, start == 0, data.count(b"\n", 0, begin), data[begin:stop])

    rdd = df.select("path", "content").rdd.flatMap(cut).partitionBy(p, _identity)

    def read(_idx: int, items: Iterator[Any], bad: files.BadRows) -> Iterator[tuple[Any, ...]]:
        for _, (_k, path, file_start, before, data) in sorted(items, key=lambda x: x[1][0]):
            yield from files.read_chunk(spec, path, data, file_start, before, bad)

    return rdd, read


# -- sinks -------------------------------------------------------------------------------------

def _spark_type(type_name: str) -> Any:
    """Spark type of a column as written before the parquet timestamp conversion
    (timestamps are epoch milliseconds, LongType)."""
    from pyspark.sql import types as T

    depth, scalar = files.parse_type(type_name)
    ps = decimals.parse_name(scalar)
    t: Any = T.DecimalType(*ps) if ps is not None else {
        "string": T.StringType(), "int": T.LongType(), "double": T.DoubleType(),
        "bool": T.BooleanType(), "timestamp": T.LongType(), "date": T.LongType()}[scalar]
    for _ in range(depth):
        t = T.ArrayType(t, True)
    return t


def _parquet_column(name: str, type_name: str, declared: Any = None) -> Any:
    """The column as parquet stores it: timestamps (also inside arrays) as TIMESTAMP; a
    declared narrower Arrow type (int32, float32, ...) by a cast to its Spark type."""
    from pyspark.sql import functions as F

    col = F.col("`" + name.replace("`", "``") + "`")
    depth, scalar = files.parse_type(type_name)
    if scalar == "date":  # a DATE (epoch ms of its midnight) as parquet's DATE (date32)
        return F.date_from_unix_date(F.floor(col / 86_400_000).cast("int")).alias(name)
    if scalar != "timestamp":
        if declared is not None:
            from pyspark.sql.pandas.types import from_arrow_type

            return col.cast(from_arrow_type(declared)).alias(name)
        return col
    fn: Callable[[Any], Any] = F.timestamp_millis
    for _ in range(depth):
        fn = _transform_with(fn)
    return fn(col).alias(name)


def _transform_with(inner: Callable[[Any], Any]) -> Callable[[Any], Any]:
    from pyspark.sql import functions as F

    return lambda c: F.transform(c, inner)


def _inferrer(columns: tuple[str, ...]) -> Callable[[Iterator[Any]], Iterator[Inferred]]:
    def infer(it: Iterator[Any]) -> Iterator[Inferred]:
        inf = Inferred(columns)
        for v in it:
            inf.add(v)
        yield inf
    return infer


def sink_columns(spec: FileSink, declared: Any, values: Any) -> Columns:
    """The sink's columns: from the stream's schema, else inferred from all records (one
    more pass over the persisted RDD)."""
    columns = declared_columns(spec, declared)
    if columns is not None:
        return columns
    total = Inferred(tuple(spec.columns))
    for part in values.mapPartitions(_inferrer(tuple(spec.columns))).collect():
        total.merge(part, spec)
    return total.columns(spec)


def stage_sink(spark: Any, spec: FileSink, node_id: int, columns: Columns,
               values: Any, schema: Any = None) -> str:
    """Write the records (an RDD) through Spark's writer into a temp dir; returns it.
    ``schema``: the Arrow schema of declared Types (parquet gets int32, float32, ...)."""
    from pyspark.sql import types as T

    tmp = temp_path(sink_path(spec))
    if not columns:  # no columns known and no records: an empty output
        os.makedirs(tmp)
        return tmp
    check = row_checker(spec.path, columns, shaper([c for c, _ in columns]))
    narrow = narrow_ints(spec.path, schema)

    def checked(it: Iterator[Any]) -> Iterator[tuple[Any, ...]]:
        try:
            for v in it:
                yield narrow(check(v))
        except FlowcError as e:
            raise tasks.task_error(e, "", {}, node_id) from None

    struct = T.StructType([T.StructField(c, _spark_type(t), True) for c, t in columns])
    df = spark.createDataFrame(values.mapPartitions(checked), struct, verifySchema=False)
    if spec.partition_by:
        df = partition_paths.spark_partition_text(df, spec)
    fmt = SINK_FORMATS[spec.format]
    if fmt == "parquet":
        spark.conf.set("spark.sql.parquet.outputTimestampType", "TIMESTAMP_MILLIS")
        df = df.select(*[_parquet_column(c, t, None if schema is None else schema.field(i).type)
                         for i, (c, t) in enumerate(columns)])
    w = df.write.mode("error")
    if fmt == "csv":
        o = csv_writer_options(spec)
        w = (w.option("header", str(o["header"]).lower()).option("sep", o["delimiter"])
             .option("quote", o["quote"]).option("escape", o["quote"])
             .option("nullValue", o["null_value"])
             .option("ignoreLeadingWhiteSpace", "false")
             .option("ignoreTrailingWhiteSpace", "false"))
    elif fmt == "json":
        w = w.option("ignoreNullFields", "false")
    if spec.partition_by:
        w = w.partitionBy(*spec.partition_by)
    try:
        w.format(fmt).save(tmp)
        if spec.partition_by:
            partition_paths.finish_spark_partitions(spec, tmp)
    except BaseException:
        abort(tmp)
        raise
    return tmp


def stage_row_sink(spec: RowFormatFileSink, record_type: Any, values: Any) -> str:
    """PyFlink's row-format FileSink on Spark: partition *i* (sink subtask *i*) writes its
    part files into the temp dir itself (runtime/row_files.py), with the driver's clock."""
    from flowc.executor.runtime.clock import processing_clock, using_clock
    from flowc.executor.runtime.row_files import encoder_for, write_subtask

    tmp = temp_path(sink_path(spec))
    os.makedirs(tmp)
    encode = encoder_for(record_type)
    clock = processing_clock()

    def write(index: int, it: Iterator[Any]) -> Iterator[int]:
        # Each task attempt writes into a hidden dir of its own and moves its files into
        # the temp dir only once it wrote them all: a failed (retried) attempt leaves
        # nothing behind in the output.
        from pyspark import TaskContext

        ctx = TaskContext.get()
        attempt = os.path.join(tmp, f".attempt-{index}-{ctx.attemptNumber() if ctx else 0}")
        with using_clock(clock):
            n = write_subtask(spec, attempt, encode, it)
        for dirpath, _, names in os.walk(attempt):
            for name in names:
                src = os.path.join(dirpath, name)
                dst = os.path.join(tmp, os.path.relpath(src, attempt))
                # exist_ok: subtasks running at once create the same bucket directories
                # (os.renames' makedirs raced: FileExistsError)
                os.makedirs(os.path.dirname(dst), exist_ok=True)
                os.replace(src, dst)
        shutil.rmtree(attempt, ignore_errors=True)
        yield n
    try:
        values.mapPartitionsWithIndex(write).collect()
        for name in os.listdir(tmp):  # attempts that failed
            if name.startswith(".attempt-"):
                shutil.rmtree(os.path.join(tmp, name), ignore_errors=True)
    except BaseException:
        abort(tmp)
        raise
    return tmp


def spark_message(e: BaseException) -> str:
    """The most specific message in a Spark / Py4J error, without Java stack frames."""
    import re

    java = getattr(e, "java_exception", None)
    if java is not None:
        best = ""
        try:
            t = java
            while t is not None:
                msg = t.getMessage()
                if msg:
                    best = f"{t.getClass().getSimpleName()}: {msg}"
                t = t.getCause()
        except Exception:  # noqa: BLE001 - the JVM may be gone
            pass
        if best:
            return best.strip().splitlines()[0]
    lines = str(e).strip().splitlines()
    errors = [ln for ln in lines if re.match(r"^[A-Za-z_][\w.]*(Error|Exception): ", ln)]
    if errors:
        return errors[-1]
    return lines[0] if lines else type(e).__name__


def translate_failure(sg: Any, e: BaseException) -> FlowcError:
    """A failed Spark job as the user's error: a task's failure blamed on its operator (and
    script line), anything else Spark's own message."""
    if isinstance(e, FlowcError):
        return e
    info = tasks.parse_task_error(str(e))
    if info is None:
        return ExecutionError(f"the Spark job failed: {spark_message(e)}")
    node = sg.nodes.get(info["node"])
    if node is None:
        return ExecutionError(f"{info['type']}: {info['message']}")
    return blame(sg, node, info["type"], info["message"], is_flowc=info["flowc"])
