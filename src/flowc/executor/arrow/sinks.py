"""csv / json / parquet file sinks written from Arrow chunks inside the sink's tasks.

On the row executor a file sink's records become a DataFrame and Spark's writers write
them; here each sink subtask (Spark partition *i*) formats its chunks itself, so the
records never become Python objects. The files are the row executor's:

- the same directory: ``part-<i:05d>-<uuid>-c000.<ext>`` per non-empty subtask (one uuid
  per sink and job, as Spark's write job) and always one of subtask 0 (Spark's
  FileFormatWriter: with only the csv header, an empty json file, a parquet file without
  rows when it had no record), ``_SUCCESS``,
  and Hadoop's ``.<name>.crc`` checksum files beside each (CRC32 per 512 bytes);
- csv and json byte for byte (``csv_text`` / ``json_text``: univocity's quoting and Jackson's
  escaping as Spark configures them, doubles by ``javadouble``: JDK 17's Double.toString);
- parquet with the same Arrow schema (names, types, nullability, ``TIMESTAMP(MILLIS, UTC)``)
  and values, written by pyarrow: its file metadata (``created_by``, encodings, row groups,
  Spark's schema key) differ.

Each task attempt writes into a hidden dir of its own and moves its files into the sink's
temp dir only after writing all of them, so a failed attempt leaves no part file; the temp
dir is committed with the job's other outputs (``sinks.Staged``).

``plan`` says which sinks take this path; partitioned sinks and Python API streams'
sinks take ``partitioned_sinks.py``'s, the others (csv with array columns, options
outside univocity's plain rules, streams without columns) keep the row conversion and
Spark's writers.
"""

from __future__ import annotations

import os
import shutil
import struct
import uuid
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from flowc import decimals
from flowc.executor.arrow import convert
from flowc.executor.arrow.javadouble import java17_double_strs
from flowc.executor.sinks import abort, csv_writer_options, declared_columns, temp_path
from flowc.operators import FileSink
from flowc.types import Schema

_EXT = {"csv": "csv", "json": "json", "jsonl": "json", "json-lines": "json",
        "parquet": "snappy.parquet"}
_CSV_SPECIAL = "#\r\n"  # univocity's comment char and line breaks


@dataclass(frozen=True)
class ArrowSink:
    """How one file sink is written from chunks: its format, columns and csv options."""

    format: str  # csv, json or parquet
    names: tuple[str, ...]
    types: tuple[str, ...]  # flowc type names (``int``, ``array<double>``, ...)
    header: bool = True
    delimiter: str = ","
    quote: str = '"'
    null_value: str = ""


def plan(spec: FileSink, declared: Any) -> ArrowSink | None:
    """The Arrow writer of a .flow / SQL stream's file sink, or None (the row route)."""
    if not isinstance(declared, Schema) or spec.partition_by or spec.format not in _EXT:
        return None
    columns = declared_columns(spec, declared)
    if not columns:
        return None
    names = tuple(c for c, _ in columns)
    types = tuple(t for _, t in columns)
    if any(not _writable(t) for t in types):
        return None
    fmt = "json" if _EXT[spec.format] == "json" else spec.format
    if fmt != "csv":
        return ArrowSink(fmt, names, types)
    o = csv_writer_options(spec)
    d, q, nv = o["delimiter"], o["quote"], o["null_value"]
    if any(t.startswith("array<") for t in types) or len(d) != 1 or len(q) != 1 or d == q \
            or d in _CSV_SPECIAL or q in _CSV_SPECIAL or d.isspace() and d != "\t" \
            or any(c in nv for c in d + q + "\r\n") or nv.startswith("#"):
        return None  # Spark fails or quotes otherwise: its writer decides
    return ArrowSink(fmt, names, types, o["header"], d, q, nv)


def _writable(type_name: str) -> bool:
    if decimals.parse_name(type_name) is not None:
        return True  # a DECIMAL column (in an array: the row route)
    inner = type_name
    while inner.startswith("array<"):
        inner = inner[len("array<"):-1]
    return inner in ("string", "int", "double", "bool", "timestamp", "date")


# -- formatting ------------------------------------------------------------------------------

def _doubles(arr: pa.Array) -> pa.Array:
    """Java 17's Double.toString of each value (nulls stay null), computed once per
    distinct value (``java17_double_strs``: the common digit loop vectorised)."""
    enc = pc.dictionary_encode(arr).combine_chunks() if isinstance(arr, pa.ChunkedArray) \
        else pc.dictionary_encode(arr)
    texts = pa.array(java17_double_strs(enc.dictionary.to_numpy(zero_copy_only=False)),
                     pa.string())
    return texts.take(enc.indices)


_JSON_ESCAPES = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\f": "\\f", "\n": "\\n",
                 "\r": "\\r", "\t": "\\t"}


def _json_string(s: str) -> str:
    """Jackson's escaping of a string: short escapes, other controls as ``\\u00XX``."""
    out = []
    for ch in s:
        e = _JSON_ESCAPES.get(ch)
        out.append(e if e is not None else f"\\u{ord(ch):04X}" if ch < " " else ch)
    return '"' + "".join(out) + '"'


def _json_strings(arr: pa.Array) -> pa.Array:
    plain = pc.invert(pc.match_substring_regex(arr, r'[\x00-\x1f"\\]'))
    if pc.all(pc.fill_null(plain, True)).as_py():  # nothing to escape: just the quotes
        return pc.binary_join_element_wise('"', arr, '"', "")
    return pa.array([None if v is None else _json_string(v) for v in arr.to_pylist()],
                    pa.string())


def _json_values(arr: pa.Array, type_name: str) -> pa.Array:
    """A column's JSON texts, ``null`` for nulls."""
    if type_name.startswith("array<"):
        inner = type_name[len("array<"):-1]
        values = _json_values(arr.values, inner)  # arr: a ListArray without offset slack
        texts = values.to_pylist()
        offsets = arr.offsets.to_pylist()
        valid = arr.is_valid().to_pylist()
        return pa.array(["[" + ",".join(texts[offsets[i]:offsets[i + 1]]) + "]"
                         if valid[i] else "null" for i in range(len(arr))], pa.string())
    if type_name == "string":
        out = _json_strings(arr)
    elif type_name == "double":
        out = _doubles(arr)
        finite = pc.is_finite(arr)
        out = pc.if_else(pc.fill_null(finite, True), out,
                         pc.binary_join_element_wise('"', out, '"', ""))
    else:  # int, timestamp (epoch ms), bool: Arrow's casts spell them as Jackson does;
        # a DECIMAL as Spark writes it, Java's BigDecimal.toString (``1E-7``, ``0E-7``),
        # which is Arrow's text of a decimal128 (checked on random values in the tests)
        out = pc.cast(arr, pa.string())
    return pc.fill_null(out, "null")


def json_text(batch: pa.RecordBatch, sink: ArrowSink) -> pa.Array:
    """One JSON object per record, as Spark's json writer writes it (nulls written)."""
    parts: list[Any] = []
    for i, (name, t) in enumerate(zip(sink.names, sink.types)):
        parts.append(("{" if i == 0 else ",") + _json_string(name) + ":")
        parts.append(_json_values(_flat(batch.column(i)), t))
    parts.append("}\n")
    return pc.binary_join_element_wise(*parts, "")


def _csv_quoted(arr: pa.Array, sink: ArrowSink, first: bool) -> pa.Array:
    """univocity as Spark's writer sets it up: a value with the delimiter, the quote or a
    line break is quoted with its quotes doubled, the empty string is ``""`` (whatever
    the quote char), and in the
    first column a value starting with ``#`` (the comment char) is quoted."""
    q = sink.quote
    special = "[" + "".join("\\" + c for c in sink.delimiter + q) + "\r\n]"
    needs = pc.match_substring_regex(arr, special)
    if first:
        needs = pc.or_(needs, pc.starts_with(arr, "#"))
    quoted = pc.binary_join_element_wise(q, pc.replace_substring(arr, q, q + q), q, "")
    # Spark's emptyValue for writing is the literal "" whatever the quote char is
    return pc.if_else(pc.equal(arr, ""), '""', pc.if_else(needs, quoted, arr))


def csv_text(batch: pa.RecordBatch, sink: ArrowSink) -> pa.Array:
    """The records' csv lines (with their line breaks) as Spark's csv writer writes them;
    a line that would be empty (one column, null, empty null value) is skipped, as
    univocity skips empty lines."""
    cols = []
    for i, t in enumerate(sink.types):
        arr = _flat(batch.column(i))
        if t == "string":
            text = _csv_quoted(arr, sink, i == 0)
        elif t == "double":
            text = _doubles(arr)
        else:
            text = pc.cast(arr, pa.string())
        cols.append(pc.fill_null(text, sink.null_value))
    lines = pc.binary_join_element_wise(*cols, sink.delimiter) if len(cols) > 1 else cols[0]
    if len(cols) == 1 and not sink.null_value:
        lines = lines.filter(pc.not_equal(lines, ""))
    return pc.binary_join_element_wise(lines, "\n", "")


def csv_header(sink: ArrowSink) -> bytes:
    if not sink.header:
        return b""
    names = pa.RecordBatch.from_arrays([pa.array([n], pa.string()) for n in sink.names],
                                       names=[f"_{i}" for i in range(len(sink.names))])
    header = ArrowSink("csv", sink.names, ("string",) * len(sink.names), True,
                       sink.delimiter, sink.quote, sink.null_value)
    return _bytes(csv_text(names, header))


def _flat(col: Any) -> pa.Array:
    return col.combine_chunks() if isinstance(col, pa.ChunkedArray) else col


def _bytes(text: pa.Array) -> bytes:
    """A string array's values concatenated (its data buffer between the first and last
    offsets: no copy per value)."""
    if not len(text):
        return b""
    text = text.cast(pa.string())
    if text.null_count:
        text = text.drop_null()
    offsets = text.buffers()[1]
    first, last = struct.unpack_from("<i", offsets, text.offset * 4)[0], \
        struct.unpack_from("<i", offsets, (text.offset + len(text)) * 4)[0]
    return text.buffers()[2].to_pybytes()[first:last]


def parquet_schema(sink: ArrowSink) -> pa.Schema:
    from flowc.executor.sinks import arrow_type

    return pa.schema([pa.field(n, arrow_type(t)) for n, t in zip(sink.names, sink.types)])


def parquet_table(batch: pa.RecordBatch, sink: ArrowSink, schema: pa.Schema) -> pa.Table:
    """The chunk's columns with the sink's names and the row executor's parquet types
    (epoch milliseconds as ``TIMESTAMP(MILLIS, UTC)``, also inside lists)."""
    from flowc.executor.sinks import to_arrow

    cols = [to_arrow(_flat(batch.column(i)), f.type) for i, f in enumerate(schema)]
    return pa.Table.from_arrays(cols, schema=schema)


# -- writing ------------------------------------------------------------------------------------

def _crc_bytes(data: bytes) -> bytes:
    """Hadoop's ChecksumFileSystem ``.crc`` file: ``crc\\0``, 512 bytes per checksum, then
    the CRC32 of every 512-byte chunk (big-endian)."""
    sums = b"".join(struct.pack(">I", zlib.crc32(data[i:i + 512]))
                    for i in range(0, len(data), 512))
    return b"crc\0" + struct.pack(">i", 512) + sums


def _write_crc(path: str) -> None:
    """The ``.crc`` file beside a written file (read back in blocks of whole chunks)."""
    head, name = os.path.split(path)
    with open(path, "rb") as src, open(os.path.join(head, f".{name}.crc"), "wb") as fh:
        fh.write(b"crc\0" + struct.pack(">i", 512))
        while block := src.read(512 * 2048):
            fh.write(_crc_bytes(block)[8:])


def _write_with_crc(path: str, data: bytes) -> None:
    with open(path, "wb") as fh:
        fh.write(data)
    _write_crc(path)


def _write_part(path: str, chunks: Iterator[convert.Chunk], sink: ArrowSink) -> bool:
    """Write one subtask's records to ``path`` chunk by chunk; False (and no file) when it
    had none."""
    fh: Any = None
    try:
        for c in chunks:
            if not c.num_rows:
                continue
            if sink.format == "parquet":
                import pyarrow.parquet as pq

                schema = parquet_schema(sink)
                if fh is None:
                    fh = pq.ParquetWriter(path, schema, compression="snappy")
                fh.write_table(parquet_table(c.batch, sink, schema))
                continue
            if fh is None:
                fh = open(path, "wb")  # noqa: SIM115 - closed below, also on failure
                if sink.format == "csv":
                    fh.write(csv_header(sink))
            fh.write(_bytes((csv_text if sink.format == "csv" else json_text)(c.batch, sink)))
    finally:
        if fh is not None:
            fh.close()
    if fh is None:
        return False
    _write_crc(path)
    return True


def _empty_bytes(sink: ArrowSink) -> bytes:
    if sink.format == "csv":
        return csv_header(sink)
    if sink.format == "json":
        return b""
    import pyarrow.parquet as pq

    out = pa.BufferOutputStream()
    pq.write_table(parquet_schema(sink).empty_table(), out, compression="snappy")
    return out.getvalue().to_pybytes()


def task_attempt_dir(tmp: str, idx: int) -> str:
    """Subtask ``idx``'s staging directory of this task attempt inside ``tmp`` (a retried
    attempt writes apart from a failed one's files)."""
    from pyspark import TaskContext

    ctx = TaskContext.get()
    attempt = os.path.join(tmp, f".attempt-{idx}-{ctx.attemptNumber() if ctx else 0}")
    os.makedirs(attempt, exist_ok=True)
    return attempt


def stage(rdd: Any, slot: int, schema: pa.Schema, spec: FileSink, sink: ArrowSink,
          final: str) -> str:
    """Write a sink's chunks (``(slot, ipc)`` items of the vertex RDD) into a new temp
    dir beside ``final``, one part file per non-empty subtask; returns the temp dir."""
    tmp = temp_path(final)
    os.makedirs(tmp)
    job = str(uuid.uuid4())
    ext = _EXT[spec.format]

    def write(idx: int, items: Iterator[Any]) -> Iterator[str]:
        attempt = task_attempt_dir(tmp, idx)
        try:
            chunks = (convert.from_ipc(x[1], schema) for x in items if x[0] == slot)
            name = f"part-{idx:05d}-{job}-c000.{ext}"
            if not _write_part(os.path.join(attempt, name), chunks, sink):
                if idx:
                    return
                # Spark's subtask 0 always writes its file (the csv header, the schema)
                _write_with_crc(os.path.join(attempt, name), _empty_bytes(sink))
            for n in (name, f".{name}.crc"):  # whole files only reach the temp dir
                os.replace(os.path.join(attempt, n), os.path.join(tmp, n))
            yield name
        finally:
            shutil.rmtree(attempt, ignore_errors=True)
    try:
        rdd.mapPartitionsWithIndex(write).collect()
        for name in os.listdir(tmp):  # attempts that failed
            if name.startswith(".attempt-"):
                shutil.rmtree(os.path.join(tmp, name), ignore_errors=True)
        _write_with_crc(os.path.join(tmp, "_SUCCESS"), b"")
    except BaseException:
        abort(tmp)
        raise
    return tmp
