"""File sources and sinks through Spark's readers and writers."""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Iterator
from typing import Any

from flowc.errors import ExecutionError, UnsupportedError
from flowc.executor.sinks import abort, column_names, commit, temp_path
from flowc.operators import FileSink, FileSource

CORRUPT = "_flowc_corrupt"
FILE = "_flowc_file"


def _spark_type(name: str) -> Any:
    from pyspark.sql import types as T

    mapping = {"string": T.StringType(), "int": T.LongType(), "double": T.DoubleType(),
               "bool": T.BooleanType(), "timestamp": T.TimestampType()}
    if name not in mapping:
        raise UnsupportedError(f"field type '{name}' (supported: {', '.join(mapping)})")
    return mapping[name]


def read_source_rdd(spark: Any, spec: FileSource) -> Any:
    """RDD of Rows ``(*fields, corrupt text or None, file name)``; timestamps as epoch ms."""
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    if not os.path.exists(spec.path):
        raise ExecutionError(f"input path does not exist: {spec.path}")
    fields = [T.StructField(n, _spark_type(t), True) for n, t in spec.schema]
    fmt = spec.format
    reader = spark.read
    for k, v in spec.options:
        reader = reader.option(k, v)
    if fmt in ("csv", "json", "jsonl", "json-lines"):
        schema = T.StructType(fields + [T.StructField(CORRUPT, T.StringType(), True)])
        reader = (reader.schema(schema).option("mode", "PERMISSIVE")
                  .option("columnNameOfCorruptRecord", CORRUPT))
        df = reader.csv(spec.path) if fmt == "csv" else reader.json(spec.path)
        corrupt = F.col(CORRUPT)
    elif fmt == "parquet":
        df = reader.schema(T.StructType(fields)).parquet(spec.path)
        corrupt = F.lit(None).cast("string")
    else:
        raise UnsupportedError(f"file format '{fmt}'")
    cols = [F.unix_millis(F.col(n)).alias(n) if t == "timestamp" else F.col(n)
            for n, t in spec.schema]
    return df.select(*cols, corrupt.alias(CORRUPT), F.input_file_name().alias(FILE)).rdd


def clean_rows(rows: Iterable[Any], spec_path: str, dead_letter: bool,
               bad_out: list[Any]) -> Iterator[tuple[Any, ...]]:
    """Rows -> record tuples; a corrupt row fails the task naming file and row, or (with a
    dead-letter path) goes to ``bad_out``."""
    for row in rows:
        bad = row[-2]
        if bad is not None:
            if not dead_letter:
                raise ExecutionError(f"bad row in {row[-1] or spec_path}: {bad!r} does not "
                                     "match the declared schema")
            bad_out.append(json.dumps({"file": row[-1], "text": bad}))
            continue
        yield tuple(row[:-2])


def write_sink(spark: Any, spec: FileSink, rows_rdd: Any) -> None:
    """Write through Spark's writer into a temp dir, then rename into place."""
    from flowc.executor.sinks import as_row

    rows = rows_rdd.map(as_row)
    first = rows.take(1)
    width = len(first[0]) if first else len(spec.columns)
    cols = column_names(spec, width)
    tmp = temp_path(spec.path)
    try:
        if first:
            df = spark.createDataFrame(rows, cols, samplingRatio=None)
        else:
            from pyspark.sql import types as T

            df = spark.createDataFrame([], T.StructType(
                [T.StructField(c, T.StringType(), True) for c in cols]))
        w = df.write.mode("error")
        opts = dict(spec.options)
        if spec.format == "csv":
            w = w.option("header", opts.pop("header", "true"))
        for k, v in opts.items():
            w = w.option(k, v)
        fmt = {"jsonl": "json", "json-lines": "json"}.get(spec.format, spec.format)
        if fmt not in ("csv", "json", "parquet"):
            raise UnsupportedError(f"sink format '{spec.format}'")
        w.format(fmt).save(tmp)
        commit(tmp, spec.path)
    except BaseException:
        abort(tmp)
        raise


def write_dead_letter(spark: Any, path: str, lines: list[str]) -> None:
    tmp = temp_path(path)
    try:
        os.makedirs(tmp)
        with open(os.path.join(tmp, "part-00000.json"), "w", encoding="utf-8") as fh:
            fh.write("\n".join(lines) + ("\n" if lines else ""))
        commit(tmp, path)
    except BaseException:
        abort(tmp)
        raise
