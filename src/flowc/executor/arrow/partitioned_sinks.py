"""Partitioned file sinks and sinks of Python API streams, written from Arrow chunks.

The rest of ``sinks.py``'s route (csv / json / parquet formatted from the chunks inside the
sink's tasks, each task attempt in a hidden dir of its own, the temp dir committed with the
job's other outputs) for two more kinds of sink, with the row executor's files (Spark's
writers):

- **partitioned** (``FileSink.partition_by``): Spark's dynamic-partition writer. Within a
  task the rows are sorted by the partition columns' texts (a stable sort, so each
  partition's rows keep their arrival order) and each partition a task saw gets one file
  ``<col>=<value>/.../part-<i:05d>-<uuid>.c000.<ext>`` (note the ``.c000``) with its
  ``.crc``; the partition columns are left out of the files; a value's text is Spark's
  cast to string, a null or one of spaces only (Spark's ``trim``) is the default
  partition name, and names and values are escaped as Spark's ``escapePathName``. No file
  for an empty subtask 0, no top-level ``_SUCCESS``; the 'success-file' markers as
  ``partition_paths.write_success_files``.
- **Python API streams with declared Types** (``arrow/typed.py``'s columns): the columns
  of ``sink_types.typed_columns`` formatted as flowc's types (an INT column as an int, a
  FLOAT as the double it holds), parquet with the declared Arrow types. A chunk with
  records carried pickled (``_obj``: whatever a function returned) is decoded and checked
  record by record as the row executor checks them (same errors), then formatted.
"""

from __future__ import annotations

import dataclasses
import os
import shutil
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from flowc.errors import FlowcError
from flowc.executor import sinks as row_sinks
from flowc.executor.arrow import convert, sinks, typed
from flowc.executor.partition_paths import escape_path_name, write_success_files
from flowc.executor.sinks import abort, temp_path
from flowc.operators import FileSink
from flowc.types import DATE, Schema, array_of, type_from_name


@dataclass(frozen=True)
class ColumnarSink:
    """How a partitioned or typed stream's file sink is written from chunks."""

    sink: sinks.ArrowSink  # the data columns' format (partition columns left out)
    data: tuple[int, ...]  # the data columns' places among the sink's columns
    partition: tuple[int, ...]  # the partition columns' places
    parquet: pa.Schema  # the data columns' parquet schema
    columns: tuple[tuple[str, str], ...]  # every sink column (name, flowc type)
    type_info: Any = None  # a Python API stream's declared type (its chunks may be pickled)


def plan(spec: FileSink, declared: Any) -> ColumnarSink | None:
    """The Arrow writer of a partitioned .flow / SQL sink or of a Python API stream with
    declared Types, or None (the row route: Spark's writers decide)."""
    from flowc.common.typeinfo import TypeInformation
    from flowc.executor.sink_types import arrow_schema_of, writes_declared

    type_info = None
    if isinstance(declared, TypeInformation):
        if not typed.exact(declared) or not writes_declared(declared):
            return None
        type_info = declared
    elif not isinstance(declared, Schema) or not spec.partition_by:
        return None  # an unpartitioned .flow / SQL sink is sinks.plan's
    try:
        columns = row_sinks.declared_columns(spec, declared)
    except FlowcError:
        return None  # the row route reports it
    if not columns:
        return None
    names = [c for c, _ in columns]
    if any(c not in names for c in spec.partition_by):
        return None
    part = tuple(names.index(c) for c in spec.partition_by)
    if any(columns[i][1] not in ("string", "int", "bool") for i in part):
        return None
    data = tuple(i for i in range(len(columns)) if i not in part)
    if not data:
        return None  # Spark refuses it: its message
    flat = dataclasses.replace(spec, partition_by=(), success_file=None,
                               columns=tuple(names[i] for i in data))
    schema = Schema.of(*((names[i], _type(columns[i][1])) for i in data))
    sink = sinks.plan(flat, schema)
    if sink is None:
        return None
    exact = arrow_schema_of(spec, declared) if type_info is not None else None
    parquet = pa.schema([exact.field(i) for i in data]) if exact is not None \
        else sinks.parquet_schema(sink)
    return ColumnarSink(sink, data, part, parquet, tuple(columns), type_info)


def _type(name: str) -> Any:
    """The flowc type of a column type name (``array<double>``)."""
    depth = 0
    while name.startswith("array<"):
        depth, name = depth + 1, name[len("array<"):-1]
    t = DATE if name == "date" else type_from_name(name)  # a parquet DATE (date32) column
    for _ in range(depth):
        t = array_of(t)
    return t


# -- a chunk's columns --------------------------------------------------------------------

def _columns(chunk: convert.Chunk, plan: ColumnarSink, path: str) -> list[pa.Array]:
    """The sink's columns of a chunk as flowc's types (a typed stream's int32 as int64,
    float32 as double); pickled records checked as the row executor checks them."""
    batch = chunk.batch
    # timestamps and DATEs as the chunks hold them, epoch milliseconds (sinks.py formats
    # those)
    types = [row_sinks.arrow_type("int" if t == "date" else t.replace("timestamp", "int"))
             for _, t in plan.columns]
    if plan.type_info is not None:
        obj = batch.column(batch.num_columns - 1)
        if obj.null_count < batch.num_rows:  # records a column could not hold
            return _checked(chunk.rows(), plan, path, types)
    return [sinks._flat(batch.column(i)).cast(t) for i, t in enumerate(types)]


def _checked(records: list[Any], plan: ColumnarSink, path: str,
             types: list[pa.DataType]) -> list[pa.Array]:
    from flowc.executor.sink_types import arrow_schema_of, int_width_check

    names = [c for c, _ in plan.columns]
    check = row_sinks.row_checker(path, list(plan.columns), row_sinks.shaper(names))
    spec = FileSink(path, plan.sink.format, tuple(names), ())
    narrow = int_width_check(path, arrow_schema_of(spec, plan.type_info))
    rows = [narrow(check(r)) for r in records]
    return [row_sinks._arrow_array([r[i] for r in rows], t) for i, t in enumerate(types)]


def _batch(cols: list[pa.Array], at: tuple[int, ...]) -> pa.RecordBatch:
    return pa.RecordBatch.from_arrays([cols[i] for i in at],
                                      names=[f"_{k}" for k in range(len(at))])


# -- partition directories ------------------------------------------------------------------

def _partition_texts(arr: pa.Array, default: str) -> pa.Array:
    """Spark's cast to string, the default name for a null or a value of spaces only (its
    ``trim`` removes spaces, not tabs)."""
    text = pc.cast(arr, pa.string())
    blank = pc.fill_null(pc.equal(pc.utf8_trim(text, " "), ""), True)
    return pc.if_else(blank, default, text)


def partition_dirs(cols: list[pa.Array], plan: ColumnarSink, spec: FileSink
                   ) -> tuple[list[str], np.ndarray]:
    """The chunk's partition directories (``k=v/b=true``, escaped) and each row's index into
    them; every distinct value is escaped once."""
    parts: list[Any] = []
    for k, i in enumerate(plan.partition):
        enc = pc.dictionary_encode(_partition_texts(cols[i], spec.default_partition))
        escaped = pa.array([escape_path_name(v) for v in enc.dictionary.to_pylist()],
                           pa.string()).take(enc.indices)
        parts.append(("/" if k else "") + escape_path_name(plan.columns[i][0]) + "=")
        parts.append(escaped)
    enc = pc.dictionary_encode(pc.binary_join_element_wise(*parts, ""))
    return enc.dictionary.to_pylist(), enc.indices.to_numpy(zero_copy_only=False)


# -- writing a task's files -----------------------------------------------------------------

class _File:
    """One part file written chunk by chunk (csv / json appended, parquet kept open)."""

    def __init__(self, path: str, plan: ColumnarSink) -> None:
        self.path = path
        self.plan = plan
        self.parquet: Any = None
        self.started = False

    def write(self, batch: pa.RecordBatch) -> None:
        sink = self.plan.sink
        if sink.format == "parquet":
            import pyarrow.parquet as pq

            if self.parquet is None:
                self.parquet = pq.ParquetWriter(self.path, self.plan.parquet,
                                                compression="snappy")
            self.parquet.write_table(sinks.parquet_table(batch, sink, self.plan.parquet))
            return
        data = sinks._bytes((sinks.csv_text if sink.format == "csv" else sinks.json_text)(
            batch, sink))
        with open(self.path, "ab" if self.started else "wb") as fh:
            if not self.started and sink.format == "csv":
                fh.write(sinks.csv_header(sink))
            fh.write(data)
        self.started = True

    def close(self) -> None:
        if self.parquet is not None:
            self.parquet.close()
            self.parquet = None
        if os.path.exists(self.path):
            sinks._write_crc(self.path)


def _empty_bytes(plan: ColumnarSink) -> bytes:
    if plan.sink.format != "parquet":
        return sinks._empty_bytes(plan.sink)
    import pyarrow.parquet as pq

    out = pa.BufferOutputStream()
    pq.write_table(plan.parquet.empty_table(), out, compression="snappy")
    return out.getvalue().to_pybytes()


def write_task(attempt: str, idx: int, job: str, chunks: Iterator[convert.Chunk],
               plan: ColumnarSink, spec: FileSink) -> list[str]:
    """Write one subtask's chunks into ``attempt``; returns the files written (paths
    relative to it, without the ``.crc`` files)."""
    ext = sinks._EXT[spec.format]
    path = row_sinks.sink_path(spec)
    files: dict[str, _File] = {}
    try:
        for c in chunks:
            if not c.num_rows:
                continue
            cols = _columns(c, plan, path)
            data = _batch(cols, plan.data)
            if not plan.partition:
                name = f"part-{idx:05d}-{job}-c000.{ext}"
                f = files.get(name) or files.setdefault(
                    name, _File(os.path.join(attempt, name), plan))
                f.write(data)
                continue
            dirs, codes = partition_dirs(cols, plan, spec)
            order = np.argsort(codes, kind="stable")  # each partition's rows in arrival order
            bounds = np.searchsorted(codes[order], np.arange(len(dirs) + 1))
            for d, directory in enumerate(dirs):
                rel = f"{directory}/part-{idx:05d}-{job}.c000.{ext}"
                f = files.get(rel)
                if f is None:
                    os.makedirs(os.path.join(attempt, directory), exist_ok=True)
                    f = files[rel] = _File(os.path.join(attempt, rel), plan)
                f.write(data.take(pa.array(order[bounds[d]:bounds[d + 1]])))
    finally:
        for f in files.values():
            f.close()
    if not files and idx == 0 and not plan.partition:
        # Spark's subtask 0 always writes its file (the csv header, the schema)
        name = f"part-00000-{job}-c000.{ext}"
        sinks._write_with_crc(os.path.join(attempt, name), _empty_bytes(plan))
        return [name]
    return sorted(files)


def stage(rdd: Any, slot: int, schema: pa.Schema, spec: FileSink, plan: ColumnarSink,
          final: str, node_id: int) -> str:
    """Write a sink's chunks (``(slot, ipc)`` items of the vertex RDD) into a new temp dir
    beside ``final``; returns the temp dir (committed with the job's other outputs)."""
    from flowc.executor.spark import tasks

    tmp = temp_path(final)
    os.makedirs(tmp)
    job = str(uuid.uuid4())

    def write(idx: int, items: Iterator[Any]) -> Iterator[str]:
        attempt = sinks.task_attempt_dir(tmp, idx)
        try:
            chunks = (convert.from_ipc(x[1], schema) for x in items if x[0] == slot)
            try:
                written = write_task(attempt, idx, job, chunks, plan, spec)
            except FlowcError as e:  # a record the sink cannot write: named as the sink
                raise tasks.task_error(e, "", {}, node_id) from None
            for rel in written:  # whole files only reach the temp dir
                head, name = os.path.split(rel)
                os.makedirs(os.path.join(tmp, head), exist_ok=True)  # other tasks' too
                for n in (name, f".{name}.crc"):
                    os.replace(os.path.join(attempt, head, n), os.path.join(tmp, head, n))
            yield from written
        finally:
            shutil.rmtree(attempt, ignore_errors=True)
    try:
        rdd.mapPartitionsWithIndex(write).collect()
        for name in os.listdir(tmp):  # attempts that failed
            if name.startswith(".attempt-"):
                shutil.rmtree(os.path.join(tmp, name), ignore_errors=True)
        if plan.partition:
            write_success_files(spec, tmp)
        else:
            sinks._write_with_crc(os.path.join(tmp, "_SUCCESS"), b"")
    except BaseException:
        abort(tmp)
        raise
    return tmp
