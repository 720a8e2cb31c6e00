"""Sink helpers shared by both executors: print formatting, row shaping, atomic commit."""

from __future__ import annotations

import os
import shutil
import uuid
from typing import Any

from flowc.errors import ExecutionError
from flowc.operators import FileSink, PrintSink


def print_prefix(spec: PrintSink, subtask: int, parallelism: int) -> str:
    """Flink's PrintSinkOutputWriter prefix: ``id:n> `` / ``n> `` / ``id> `` / nothing."""
    prefix = spec.sink_identifier or ""
    if parallelism > 1:
        prefix += (":" if prefix else "") + str(subtask + 1)
    return prefix + "> " if prefix else ""


def as_row(value: Any) -> tuple[Any, ...]:
    if isinstance(value, tuple):
        return value
    if isinstance(value, list):
        return tuple(value)
    if isinstance(value, dict):
        return tuple(value.values())
    return (value,)


def column_names(spec: FileSink, width: int) -> list[str]:
    cols = list(spec.columns)
    if cols and len(cols) != width:
        raise ExecutionError(f"sink {spec.path}: {len(cols)} columns declared but records have "
                             f"{width} fields")
    return cols or [f"f{i}" for i in range(width)]


def temp_path(final: str) -> str:
    parent = os.path.dirname(os.path.abspath(final)) or "."
    return os.path.join(parent, f".{os.path.basename(final)}.flowc-tmp-{uuid.uuid4().hex[:8]}")


def commit(tmp: str, final: str) -> None:
    """Replace ``final`` by the completed ``tmp`` directory (a rename: atomic on one file
    system, so readers see the old output or the new one, never a partial one)."""
    if os.path.exists(final):
        old = temp_path(final) + "-old"
        os.rename(final, old)
        os.rename(tmp, final)
        shutil.rmtree(old, ignore_errors=True)
    else:
        os.rename(tmp, final)


def abort(tmp: str) -> None:
    shutil.rmtree(tmp, ignore_errors=True)


def write_python(spec: FileSink, rows: list[tuple[Any, ...]]) -> None:
    """The reference executor's writer (one part file), committed atomically."""
    import csv
    import json

    tmp = temp_path(spec.path)
    os.makedirs(tmp)
    try:
        width = len(rows[0]) if rows else len(spec.columns)
        cols = column_names(spec, width)
        fmt = spec.format
        if fmt == "csv":
            header = dict(spec.options).get("header", "true").lower() == "true"
            with open(os.path.join(tmp, "part-00000.csv"), "w", newline="",
                      encoding="utf-8") as fh:
                w = csv.writer(fh)
                if header:
                    w.writerow(cols)
                w.writerows(rows)
        elif fmt in ("json", "jsonl", "json-lines"):
            with open(os.path.join(tmp, "part-00000.json"), "w", encoding="utf-8") as fh:
                for r in rows:
                    fh.write(json.dumps(dict(zip(cols, r))) + "\n")
        elif fmt == "parquet":
            import pyarrow as pa
            import pyarrow.parquet as pq

            table = pa.table({c: [r[i] for r in rows] for i, c in enumerate(cols)})
            pq.write_table(table, os.path.join(tmp, "part-00000.parquet"))
        else:
            raise ExecutionError(f"unknown sink format '{fmt}'")
        commit(tmp, spec.path)
    except BaseException:
        abort(tmp)
        raise
