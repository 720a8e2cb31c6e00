"""What each source subtask reads. Shared by both executors for in-memory sources; file
sources are read by Spark's readers in the Spark executor and by Python readers here (the
reference executor), with the same conversions (see ``convert_field``)."""

from __future__ import annotations

import csv
import datetime as dt
import glob
import json
import os
from collections.abc import Iterator
from typing import Any

from flowc.errors import ExecutionError, UnsupportedError
from flowc.operators import (
    CollectionSource,
    DatagenSource,
    FileSource,
    SequenceSource,
    TimestampsAndWatermarksOp,
)

FIELD_TYPES = ("string", "int", "double", "bool", "timestamp")


def split_range(start: int, end: int, parallelism: int, subtask: int) -> range:
    """Flink's NumberSequenceSource split ``subtask`` of ``[start, end]`` (inclusive):
    ``total // p`` numbers each, the first ``total % p`` splits one more. (Flink hands splits
    to readers on request; flowc gives split i to subtask i.)"""
    total = end - start + 1
    per, rem = divmod(total, parallelism)
    lo = start + subtask * per + min(subtask, rem)
    n = per + (1 if subtask < rem else 0)
    return range(lo, lo + n)


def source_watermarks(node: Any) -> TimestampsAndWatermarksOp | None:
    """The timestamps/watermarks step a SOURCE node applies itself (Flink's
    ``fromSource(source, watermarkStrategy, name)``), as the operator spec it is equivalent
    to: both executors run it exactly like a ``TimestampsAndWatermarksOp`` chained right
    after the source, so the two ways of writing a job give identical results."""
    strategy = getattr(node, "watermark_strategy", None)
    if strategy is None:
        return None
    return TimestampsAndWatermarksOp(strategy)


def source_values(spec: Any, subtask: int, parallelism: int) -> Iterator[Any]:
    if isinstance(spec, CollectionSource):
        r = split_range(0, len(spec.values) - 1, parallelism, subtask)
        return iter(spec.values[r.start:r.stop])
    if isinstance(spec, SequenceSource):
        return iter(split_range(spec.start, spec.end, parallelism, subtask))
    if isinstance(spec, DatagenSource):
        gen = spec.generator
        return (gen(i) for i in split_range(0, spec.rows - 1, parallelism, subtask))
    if isinstance(spec, FileSource):
        rows = list(read_file_source(spec))
        r = split_range(0, len(rows) - 1, parallelism, subtask)
        return iter(rows[r.start:r.stop])
    raise UnsupportedError(f"source kind '{type(spec).__name__}' is not supported")


def parse_timestamp(s: Any) -> int:
    """Timestamp text -> epoch millis (UTC when no zone is given), as Spark parses it."""
    if isinstance(s, dt.datetime):
        d = s
    else:
        d = dt.datetime.fromisoformat(str(s).strip().replace(" ", "T", 1))
    if d.tzinfo is None:
        d = d.replace(tzinfo=dt.timezone.utc)
    return int(round(d.timestamp() * 1000))


def convert_field(raw: Any, type_name: str) -> Any:
    """One field of a text row (csv) or a json value to its declared type; raises
    ValueError on a bad value. Empty csv fields and JSON nulls are None."""
    if raw is None or raw == "":
        return None
    if type_name == "string":
        return str(raw)
    if type_name == "int":
        if isinstance(raw, bool) or isinstance(raw, float):
            raise ValueError(f"not an int: {raw!r}")
        return int(raw)
    if type_name == "double":
        if isinstance(raw, bool):
            raise ValueError(f"not a double: {raw!r}")
        return float(raw)
    if type_name == "bool":
        if isinstance(raw, bool):
            return raw
        low = str(raw).strip().lower()
        if low in ("true", "false"):
            return low == "true"
        raise ValueError(f"not a bool: {raw!r}")
    if type_name == "timestamp":
        return parse_timestamp(raw)
    raise UnsupportedError(f"field type '{type_name}' (supported: {', '.join(FIELD_TYPES)})")


def file_list(path: str) -> list[str]:
    if os.path.isdir(path):
        return sorted(p for p in glob.glob(os.path.join(path, "*"))
                      if os.path.isfile(p) and not os.path.basename(p).startswith((".", "_")))
    if not os.path.exists(path):
        raise ExecutionError(f"input path does not exist: {path}")
    return [path]


def read_file_source(spec: FileSource) -> Iterator[tuple[Any, ...]]:
    """Python reader for the reference executor: files in name order, rows in file order."""
    opts = dict(spec.options)
    types = [t for _, t in spec.schema]
    bad: list[str] = []
    for path in file_list(spec.path):
        if spec.format == "parquet":
            import pyarrow.parquet as pq

            table = pq.read_table(path, columns=[n for n, _ in spec.schema])
            for row in zip(*(c.to_pylist() for c in table.columns)):
                yield tuple(parse_timestamp(v) if t == "timestamp" and v is not None and
                            not isinstance(v, int) else v for v, t in zip(row, types))
            continue
        with open(path, encoding="utf-8", newline="") as fh:
            if spec.format == "csv":
                reader = csv.reader(fh, delimiter=opts.get("delimiter", opts.get("sep", ",")))
                if opts.get("header", "false").lower() == "true":
                    next(reader, None)
                rows: Any = ((i, r, None) for i, r in enumerate(reader, 1))
            elif spec.format in ("json", "jsonl", "json-lines"):
                rows = ((i, None, line) for i, line in enumerate(fh, 1) if line.strip())
            else:
                raise UnsupportedError(f"file format '{spec.format}'")
            for lineno, fields, line in rows:
                try:
                    if line is not None:
                        obj = json.loads(line)
                        fields = [obj.get(n) for n, _ in spec.schema]
                    if len(fields) != len(types):
                        raise ValueError(f"expected {len(types)} fields, got {len(fields)}")
                    yield tuple(convert_field(f, t) for f, t in zip(fields, types))
                except (ValueError, TypeError, AttributeError) as e:
                    text = line.rstrip("\n") if line is not None else ",".join(fields)
                    if spec.dead_letter is None:
                        raise ExecutionError(
                            f"bad row in {path} (row {lineno}): {text!r}: {e}") from None
                    bad.append(json.dumps({"file": path, "row": lineno, "text": text,
                                           "error": str(e)}))
    if bad:
        assert spec.dead_letter is not None
        os.makedirs(spec.dead_letter, exist_ok=True)
        with open(os.path.join(spec.dead_letter, "part-00000.json"), "w",
                  encoding="utf-8") as fh:
            fh.write("\n".join(bad) + "\n")
