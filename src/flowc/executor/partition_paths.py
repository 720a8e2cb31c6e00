"""Partitioned file sinks (``FileSink.partition_by``) as Flink's filesystem sink writes
them: ``k=<value>/`` directories (names escaped, a null or blank value in the default
partition), the partition columns left out of the files, 'success-file' markers; the
reference executor's writer and the Spark writer's steps."""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable
from typing import Any

from flowc.executor.sinks import Columns, abort, sink_path, temp_path
from flowc.operators import FileSink


def escape_path_name(value: str) -> str:
    """Flink's (and Hive's, and Spark's) ``escapePathName``: control characters and
    ``"#%'*/:=?\\{[]^`` and DEL as ``%XX``."""
    return "".join(f"%{ord(c):02X}" if ord(c) < 0x20 or c in _ESCAPED else c for c in value)


_ESCAPED = frozenset('"#%\'*/:=?\\\x7f{[]^')


def partition_text(value: object, default: str) -> str:
    """A partition value as Flink's RowDataPartitionComputer writes it: its text, or the
    default name for a null or blank one."""
    text = default if value is None else ("true" if value is True else "false"
                                          if value is False else str(value))
    return text if text.strip() else default


def partition_dir(columns: tuple[str, ...], values: tuple[object, ...], default: str) -> str:
    """``dt=2024-05-01/k=3`` (Flink's generatePartitionPath)."""
    return "/".join(f"{escape_path_name(c)}={escape_path_name(partition_text(v, default))}"
                    for c, v in zip(columns, values))


def stage_partitioned(spec: FileSink, columns: Columns, rows: list[tuple[Any, ...]],
                      stage: Callable[[FileSink, Columns, list[tuple[Any, ...]]], str]) -> str:
    """The reference executor's partitioned writer: ``stage`` (the unpartitioned writer)
    writes each partition's rows, without the partition columns, and its output becomes that
    partition's directory in one temp dir, returned (committed with the job's other outputs)."""
    tmp = temp_path(sink_path(spec))
    os.makedirs(tmp)
    try:
        names = [c for c, _ in columns]
        at = [names.index(c) for c in spec.partition_by]
        keep = [i for i in range(len(names)) if i not in at]
        groups: dict[str, list[tuple[Any, ...]]] = {}  # null and '' share a directory
        for r in rows:
            d = partition_dir(spec.partition_by, tuple(r[i] for i in at),
                              spec.default_partition)
            groups.setdefault(d, []).append(tuple(r[i] for i in keep))
        flat = dataclasses.replace(spec, partition_by=(), success_file=None)
        for d, part in groups.items():
            os.renames(stage(flat, [columns[i] for i in keep], part), os.path.join(tmp, d))
        write_success_files(spec, tmp)
    except BaseException:
        abort(tmp)
        raise
    return tmp


def write_success_files(spec: FileSink, root: str) -> None:
    """Flink's 'success-file' partition commit policy: an empty file in every partition
    directory (``root/k1=../k2=..``), written when the job has finished."""
    if spec.success_file is None:
        return
    level = [root]
    for _ in spec.partition_by:
        level = [os.path.join(d, n) for d in level for n in sorted(os.listdir(d))
                 if "=" in n and os.path.isdir(os.path.join(d, n))]
    for d in level:
        with open(os.path.join(d, spec.success_file), "w", encoding="utf-8"):
            pass


def spark_partition_text(df: Any, spec: FileSink) -> Any:
    """``df`` with its partition columns as the directory text Flink writes (its default
    name for a null or blank value), for Spark's ``partitionBy``, which escapes as Flink."""
    from pyspark.sql import functions as F

    for c in spec.partition_by:
        text = F.col(c).cast("string")
        df = df.withColumn(c, F.when(text.isNull() | (F.trim(text) == ""),
                                     F.lit(spec.default_partition)).otherwise(text))
    return df


def finish_spark_partitions(spec: FileSink, tmp: str) -> None:
    """After Spark wrote ``tmp``: Flink's layout has only partition directories at the top
    (no job-level _SUCCESS), and the 'success-file' markers in each."""
    for marker in ("_SUCCESS", "._SUCCESS.crc"):
        if os.path.exists(os.path.join(tmp, marker)):
            os.remove(os.path.join(tmp, marker))
    write_success_files(spec, tmp)
