"""The streaming executor's unbounded sources: for each source kind, the Spark streaming
DataFrame whose offsets log decides what each micro-batch holds, how the driver splits a
batch among the source's subtasks, and what a subtask reads from its share.

- monitored files: Spark's file stream source lists new files (only their paths are used;
  the tasks read them with flowc's readers, ``runtime.files``);
- socket: Spark's socket source (lines; not replayable: a restart does not see the lines
  of an unfinished batch again, as Flink's socket source neither);
- datagen without a row limit: Spark's ``rate-micro-batch`` source only numbers the rows
  (offset = rows generated so far, so a replayed batch generates the same rows); the tasks
  generate each row from its index (the rows the checkpoint counts as read before, plus
  the batch's) with the table's generators, so a restored job goes on from the savepoint's
  row;
- Kafka: Spark's Kafka source, Flink's options mapped by ``kafka_options`` (after a
  restore, the savepoint's offsets: ``kafka_resume``).

A job with several unbounded sources is still one query: ``query_dataframe`` tags each
source's rows with its number (``src``) and unions them (Spark's offsets log tracks every
source); each batch is split by ``src`` again. Bounded sources are not in the query: their
subtasks read their whole split in the first micro-batch (``bounded_shares``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from typing import Any

from flowc.errors import ExecutionError, Span
from flowc.executor.runtime import files
from flowc.executor.runtime.sources import read_lines, source_values, split_range
from flowc.operators import (
    FileSource,
    KafkaSource,
    RateDatagenSource,
    SocketSource,
    TextLineFileSource,
)

UNBOUNDED_KINDS = (FileSource, TextLineFileSource, SocketSource, RateDatagenSource,
                   KafkaSource)
_KAFKA_STARTUP = {"earliest-offset": "earliest", "latest-offset": "latest"}


@dataclasses.dataclass(frozen=True)
class BatchShares:
    """One micro-batch's input: ``shares[i]`` what source subtask ``i`` reads, ``units``
    how many files or rows that is (counted in the checkpoint), ``label`` for the log."""

    shares: list[Any]
    units: int
    label: str


def _plural(n: int, word: str) -> str:
    return f"{n:,} {word}{'s' if n != 1 else ''}"


# -- driver side: the query's DataFrame ------------------------------------------------------


def check_source(spec: Any, span: Span | None) -> None:
    """What can be checked before Spark starts."""
    import os

    if isinstance(spec, (FileSource, TextLineFileSource)):
        given = spec.paths[0] if isinstance(spec, TextLineFileSource) else spec.path
        src = files.local_path(given) or given
        if os.path.isfile(src):
            raise ExecutionError(
                f"{given} is a file: a monitored source watches a directory for new files",
                span, hint=f"monitor its directory ({os.path.dirname(src) or '.'}), or drop "
                           "the monitor interval to read the file once")
        if not os.path.isdir(src):
            raise ExecutionError(f"the monitored directory {given} does not exist", span,
                                 hint="create it first (files landing later are read as "
                                      "they appear)")


def default_interval(spec: Any) -> int:
    """The trigger interval (ms) when ``--trigger`` is not given."""
    if isinstance(spec, (FileSource, TextLineFileSource)):
        return spec.monitor_interval or 0
    return 1000 if isinstance(spec, RateDatagenSource) else 0


def source_dataframe(spark: Any, spec: Any, interval_ms: int, span: Span | None = None) -> Any:
    """The streaming DataFrame of the job's source (one query per job); ``span``: the
    source's, for errors."""
    import os

    from pyspark.sql import functions as F  # noqa: N812

    if isinstance(spec, (FileSource, TextLineFileSource)):
        # Whole files as rows; only their paths are used. Spark skips files starting with
        # '.' or '_', as flowc's listing does. maxFileAge: Spark would ignore a new file
        # whose modification time is a week older than the newest file's; Flink reads
        # every file that appears.
        given = spec.paths[0] if isinstance(spec, TextLineFileSource) else spec.path
        directory = os.path.abspath(files.local_path(given) or given)
        reader = spark.readStream.format("text").option("wholetext", "true") \
            .option("maxFileAge", "36500d")
        if isinstance(spec, TextLineFileSource):
            reader = reader.option("recursiveFileLookup", "true")  # Flink lists recursively
        return reader.load(directory).select(F.col("_metadata.file_path").alias("path"))
    if isinstance(spec, SocketSource):
        return spark.readStream.format("socket").option("host", spec.hostname) \
            .option("port", str(spec.port)).load()
    if isinstance(spec, RateDatagenSource):
        return spark.readStream.format("rate-micro-batch") \
            .option("rowsPerBatch", str(datagen_rows_per_batch(spec, interval_ms))) \
            .option("numPartitions", "1").load().select(F.col("value").alias("row"))
    if isinstance(spec, KafkaSource):
        return kafka_dataframe(spark, spec, span)
    raise ExecutionError(f"'{type(spec).__name__}' is not an unbounded source")


def query_dataframe(spark: Any, sources: list[tuple[int, Any, Span | None]],
                    interval_ms: int) -> Any:
    """The job's one streaming DataFrame: each unbounded source's rows (``source_dataframe``)
    tagged ``src`` = its number, unioned by column name (a column another source lacks is
    null)."""
    from pyspark.sql import functions as F  # noqa: N812

    df = None
    for index, spec, span in sources:
        one = source_dataframe(spark, spec, interval_ms, span) \
            .withColumn("src", F.lit(index))
        df = one if df is None else df.unionByName(one, allowMissingColumns=True)
    assert df is not None
    return df


def source_of(df: Any, index: int, several: bool) -> Any:
    """Source ``index``'s rows of a micro-batch of ``query_dataframe``."""
    from pyspark.sql import functions as F  # noqa: N812

    return df.filter(F.col("src") == index) if several else df


def datagen_rows_per_batch(spec: RateDatagenSource, interval_ms: int) -> int:
    """Rows per micro-batch: ``rows-per-second`` times the trigger interval (a batch every
    second by default), at least one."""
    return max(1, spec.rows_per_second * (interval_ms or 1000) // 1000)


def kafka_options(spec: KafkaSource) -> dict[str, str]:
    """Flink's Kafka options as Spark's Kafka source options (``properties.*`` become
    ``kafka.*``; the startup mode becomes ``startingOffsets`` / ``startingTimestamp``)."""
    import json

    out: dict[str, str] = {"kafka.bootstrap.servers": spec.bootstrap_servers}
    if spec.topic_pattern is not None:
        out["subscribePattern"] = spec.topic_pattern
    else:
        out["subscribe"] = ",".join(spec.topics)
    if spec.group_id is not None:
        out["kafka.group.id"] = spec.group_id
    for key, value in spec.properties:
        if key not in ("bootstrap.servers", "group.id"):
            out[f"kafka.{key}"] = value
    mode = spec.startup
    if mode in _KAFKA_STARTUP:
        out["startingOffsets"] = _KAFKA_STARTUP[mode]
    elif mode == "timestamp":
        out["startingTimestamp"] = str(spec.timestamp_millis)
    elif mode == "specific-offsets":
        offsets: dict[str, dict[str, int]] = {}
        for topic, partition, offset in spec.specific_offsets:
            offsets.setdefault(topic, {})[str(partition)] = offset
        out["startingOffsets"] = json.dumps(offsets, sort_keys=True)
    elif mode == "group-offsets":
        # Spark's source keeps its own offsets in the checkpoint and never reads the
        # group's committed ones; it starts at the latest offsets, as Flink's default
        # OffsetResetStrategy does for a group without committed offsets.
        out["startingOffsets"] = "latest"
    # A deleted topic or aged-out offsets fail the query (Flink's source fails too).
    out["failOnDataLoss"] = "true"
    return out


def kafka_resume(spec: KafkaSource, offsets: dict[str, dict[str, int]]) -> KafkaSource:
    """The Kafka source restored from a savepoint: it starts at the savepoint's offsets
    (Spark's offsets-log entry of the savepoint's last batch: topic -> partition -> the
    next offset to read, which Flink's restored splits hold too), whatever its startup
    mode (Flink ignores the startup mode for restored splits as well)."""
    specific = tuple((topic, int(partition), int(offset))
                     for topic, parts in sorted(offsets.items())
                     for partition, offset in sorted(parts.items(), key=lambda t: int(t[0])))
    return dataclasses.replace(spec, startup="specific-offsets", specific_offsets=specific)


def kafka_packages() -> str:
    """The ``--packages`` coordinates of Spark's Kafka connector for this PySpark."""
    import pyspark

    return f"org.apache.spark:spark-sql-kafka-0-10_2.13:{pyspark.__version__}"


def kafka_dataframe(spark: Any, spec: KafkaSource, span: Span | None = None) -> Any:
    reader = spark.readStream.format("kafka")
    for k, v in kafka_options(spec).items():
        reader = reader.option(k, v)
    try:
        df = reader.load()
    except Exception as e:  # noqa: BLE001 - Spark's AnalysisException, without the jar
        from flowc.executor.streaming.kafka_sink import MISSING, missing_connector

        if MISSING not in str(e):
            raise
        raise missing_connector(span) from None
    return df.selectExpr("CAST(value AS STRING) AS value", "topic", "partition", "offset",
                         "CAST(timestamp AS LONG) * 1000 AS ts")


def source_failure(spec: Any, error: BaseException, span: Span | None) -> ExecutionError:
    """The query failed outside flowc's batches (in Spark's source): a user error naming
    the source, with Spark's reason (its first line, without the query dump)."""
    text = str(error)
    reason = text.split("terminated with exception: ", 1)[-1].split("\n", 1)[0]
    reason = reason.split(" SQLSTATE:", 1)[0].strip()
    if isinstance(spec, SocketSource):
        return ExecutionError(f"cannot read the socket {spec.hostname}:{spec.port}: {reason}",
                              span, hint="start the server first (for example `nc -lk "
                                         f"{spec.port}`); the source connects once")
    if isinstance(spec, KafkaSource):
        return ExecutionError(f"the Kafka source failed: {reason}", span)
    return ExecutionError(f"the streaming query failed: {reason}", span)


# -- driver side: one micro-batch's shares ------------------------------------------------


def batch_shares(spec: Any, df: Any, before: int, p: int) -> BatchShares:
    """Split the micro-batch's DataFrame ``df`` among ``p`` source subtasks; ``before``:
    the units read in earlier batches (from the checkpoint)."""
    if isinstance(spec, (FileSource, TextLineFileSource)):
        # The job's n-th file goes to subtask n % p (round robin over the batches, as the
        # enumerator hands splits to readers in turn; one file per batch still reaches
        # every subtask, so none holds the watermark back for long).
        paths = sorted({files.local_path(r.path) or r.path for r in df.collect()})
        return BatchShares(file_shares(paths, before, p), len(paths),
                           _plural(len(paths), "file"))
    if isinstance(spec, SocketSource):
        lines = [r.value for r in df.collect()]
        return BatchShares([[x for k, x in enumerate(lines) if (before + k) % p == idx]
                            for idx in range(p)], len(lines), _plural(len(lines), "line"))
    if isinstance(spec, RateDatagenSource):
        from pyspark.sql import functions as F  # noqa: N812

        row = df.agg(F.min("row").alias("lo"), F.max("row").alias("hi"),
                     F.count("row").alias("n")).collect()[0]
        n = int(row.n)
        if n == 0:
            return BatchShares([(0, 0)] * p, 0, "0 rows")
        lo, hi = int(row.lo), int(row.hi)
        if hi - lo + 1 != n:
            raise ExecutionError(f"the datagen batch's row numbers {lo}..{hi} are not "
                                 f"contiguous ({n} rows)")
        # Rows are numbered from the rows read before (``before``), not from Spark's count:
        # a query restored from a savepoint counts from 0 again, the job goes on where the
        # savepoint's stopped (in a run without restore the two are equal).
        ranges = [split_range(before, before + n - 1, p, idx) for idx in range(p)]
        return BatchShares([(r.start, r.stop) for r in ranges], n, _plural(n, "row"))
    if isinstance(spec, KafkaSource):
        rows = sorted((r.topic, r.partition, r.offset, r.value, r.ts) for r in df.collect())
        shares: list[list[tuple[str, int]]] = [[] for _ in range(p)]
        for topic, partition, _, value, ts in rows:
            shares[kafka_split_owner(topic, partition, p)].append((value, ts))
        return BatchShares(shares, len(rows), _plural(len(rows), "record"))
    raise ExecutionError(f"'{type(spec).__name__}' is not an unbounded source")


def file_shares(paths: list[str], before: int, p: int) -> list[list[str]]:
    """A micro-batch's new files (sorted) among ``p`` source subtasks: the job's n-th file
    to subtask n % p (``before``: the files of earlier batches). The reference executor's
    micro-batch model (``executor.reference_batches``) assigns them the same way."""
    return [[f for k, f in enumerate(paths) if (before + k) % p == idx] for idx in range(p)]


def bounded_shares(spec: Any, p: int) -> BatchShares:
    """A bounded source's whole input, split as the bounded executors split it: file splits
    (``files.local_splits``, ``subtask_splits``) or, for in-memory sources and text-line
    files, the subtask index (``runtime.sources.source_values``)."""
    if isinstance(spec, FileSource):
        splits = files.local_splits(spec, p)
        return BatchShares([files.subtask_splits(splits, idx, p) for idx in range(p)], 0,
                           "bounded")
    return BatchShares([(idx, p) for idx in range(p)], 0, "bounded")


def kafka_split_owner(topic: str, partition: int, readers: int) -> int:
    """The reader Flink's KafkaSourceEnumerator gives a partition (``getSplitOwner``)."""
    from flowc.keygroups import string_hash

    start = ((string_hash(topic) * 31) & 0x7FFFFFFF) % readers
    return (start + partition) % readers


# -- task side: what a source subtask reads -------------------------------------------------


def source_records(spec: Any, share: Any, bad: files.BadRows | None
                   ) -> Iterator[tuple[Any, Any]]:
    """(record, timestamp) pairs of a subtask's share (timestamp None: none; Kafka records
    carry their Kafka timestamp, as Flink's KafkaSource emits them)."""
    if spec.bounded:  # the whole split of a bounded source (``bounded_shares``)
        if isinstance(spec, FileSource):
            assert bad is not None
            return ((r, None) for r in files.read_local(spec, share, bad))
        return ((v, None) for v in source_values(spec, *share))
    if isinstance(spec, TextLineFileSource):
        return ((line, None) for p in share for line in read_lines(p))
    if isinstance(spec, FileSource):
        assert bad is not None
        return ((r, None) for r in files.read_local(
            spec, [files.Split(p, 0, -1) for p in share], bad))
    if isinstance(spec, RateDatagenSource):
        gen = spec.generator
        return ((gen(i), None) for i in range(*share))
    if isinstance(spec, SocketSource):
        values = parse_lines(spec, f"socket {spec.hostname}:{spec.port}", share, bad)
        return ((v, None) for v in values)
    if isinstance(spec, KafkaSource):
        return _kafka_records(spec, share, bad)
    raise ExecutionError(f"'{type(spec).__name__}' is not an unbounded source")


def _kafka_records(spec: KafkaSource, share: list[tuple[str, int]],
                   bad: files.BadRows | None) -> Iterator[tuple[Any, Any]]:
    where = f"kafka {','.join(spec.topics) or spec.topic_pattern}"
    for value, ts in share:
        for rec in parse_lines(spec, where, [value], bad):
            yield rec, ts


def bad_rows(spec: Any) -> files.BadRows | None:
    """The subtask's dead-letter collector: for sources that parse rows."""
    if isinstance(spec, FileSource):
        return files.BadRows(spec)
    if isinstance(spec, (SocketSource, KafkaSource)) and spec.format is not None:
        return files.BadRows(line_format(spec, ""))
    return None


def line_format(spec: SocketSource | KafkaSource, where: str) -> FileSource:
    """The csv / json line format of a socket or Kafka source, as a file format (the same
    parsing and errors as the file readers; a csv line has no header)."""
    options = tuple((k, v) for k, v in spec.options if k != "header") + (("header", "false"),)
    return FileSource(where, spec.format or "csv", spec.schema, options)


def parse_lines(spec: SocketSource | KafkaSource, where: str, lines: list[str],
                bad: files.BadRows | None) -> Iterator[Any]:
    """Lines as records: the lines themselves without a format, else parsed rows (a bad
    row fails the job naming the source, or goes to the dead letters)."""
    if spec.format is None:
        return iter(lines)
    assert bad is not None
    data = "".join(line + "\n" for line in lines).encode("utf-8")
    return files.read_chunk(line_format(spec, where), where, data, False, 0, bad)
