"""A streaming micro-batch's part file written from Arrow chunks, byte for byte the file
``sinks.stage_python`` writes from records (Python's csv module, ``json.dumps``, pyarrow's
parquet writer), so a columnar micro-batch commits exactly the row path's part file.

- csv (``csv.writer``, minimal quoting, lineterminator ``\\n``): a field is quoted, its
  quote chars doubled, when it holds a character Python's writer quotes for (found by
  asking it: the delimiter, the quote char, a line break); null is the ``null_value``;
  booleans ``true`` / ``false``; doubles as Python's ``repr`` (``1e+20``), ``NaN`` /
  ``Infinity`` / ``-Infinity``; a one-column row of null is the null value alone, of
  ``''`` is ``""``; timestamps as epoch milliseconds.
- json (``json.dumps(..., separators=(",", ":"), ensure_ascii=False)``): Python's
  escapes (short forms, other controls ``\\u00xx`` lower case), doubles as ``repr``,
  ``NaN`` / ``Infinity`` bare, arrays element by element through ``json.dumps``.
- parquet: the same Arrow table (the columns' flowc types, timestamps as
  ``TIMESTAMP(MILLIS, UTC)``) written by ``pq.write_table`` with its defaults.

Doubles are formatted once per distinct value of a chunk. ``writable`` says which sinks
take this route; the others (csv with array columns, columns of other types, repeated
column names) keep the records.
"""

from __future__ import annotations

import csv
import functools
import io
import json
import math
import os
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from flowc.executor.arrow import sinks
from flowc.executor.sinks import (
    Columns,
    abort,
    arrow_type,
    csv_writer_options,
    sink_path,
    temp_path,
    to_arrow,
)
from flowc.operators import FileSink

_EXT = {"csv": "csv", "json": "json", "jsonl": "json", "json-lines": "json",
        "parquet": "parquet"}


def writable(spec: FileSink, columns: Columns) -> bool:
    """Whether ``write_part`` writes this sink's part files (else the records do)."""
    names = [c for c, _ in columns]
    if spec.partition_by or spec.format not in _EXT or not names \
            or len(set(names)) != len(names):
        return False
    types = [t for _, t in columns]
    if any(not sinks._writable(t) for t in types):
        return False
    return spec.format != "csv" or not any(t.startswith("array<") for t in types)


def chunk_columns(batch: pa.RecordBatch, columns: Columns) -> list[pa.Array]:
    """A chunk's sink columns as the records' Python values are typed: ints as int64
    (a typed stream's int32 too), floats as double, timestamps as epoch milliseconds."""
    return [sinks._flat(batch.column(i)).cast(arrow_type(
        "int" if t == "date" else t.replace("timestamp", "int")))
            for i, (_, t) in enumerate(columns)]


# -- values as Python formats them ---------------------------------------------------------------

def _py_double(v: float) -> str:
    if math.isnan(v):
        return "NaN"
    if math.isinf(v):
        return "Infinity" if v > 0 else "-Infinity"
    return repr(v)


def _doubles(arr: pa.Array) -> pa.Array:
    """Python's text of each double (``repr``; NaN / Infinity as ``_csv_text`` and
    ``json.dumps`` spell them), once per distinct value; nulls stay null."""
    enc = pc.dictionary_encode(arr)
    texts = [_py_double(v) for v in enc.dictionary.to_pylist()]
    return pa.array(texts, pa.string()).take(enc.indices)


def _texts(arr: pa.Array, type_name: str) -> pa.Array:
    """Non-null values as text (ints, epoch milliseconds, ``true`` / ``false``, strings)."""
    if type_name == "double":
        return _doubles(arr)
    return pc.cast(arr, pa.string())


@functools.lru_cache(maxsize=32)
def _csv_specials(delimiter: str, quote: str) -> str:
    """The characters for which Python's csv writer quotes a field (asked of it: which
    line breaks it quotes for differs between Python versions)."""
    out = ""
    for c in dict.fromkeys(delimiter + quote + "\r\n"):
        buf = io.StringIO()
        csv.writer(buf, delimiter=delimiter, quotechar=quote,
                   lineterminator="\n").writerow([f"a{c}b", "x"])
        if buf.getvalue().startswith(quote):
            out += c
    return out


def _csv_fields(texts: pa.Array, delimiter: str, quote: str) -> pa.Array:
    specials = _csv_specials(delimiter, quote)
    if not specials:
        return texts
    pattern = "[" + "".join("\\" + c if not c.isalnum() else c for c in specials) + "]"
    needs = pc.fill_null(pc.match_substring_regex(texts, pattern), False)
    quoted = pc.binary_join_element_wise(quote, pc.replace_substring(texts, quote, quote * 2),
                                         quote, "")
    return pc.if_else(needs, quoted, texts)


def csv_lines(cols: list[pa.Array], spec: FileSink, columns: Columns) -> pa.Array:
    """The records' csv lines, each with its line break, as ``stage_python`` writes them."""
    o = csv_writer_options(spec)
    d, q, nv = o["delimiter"], o["quote"], o["null_value"]
    fields = []
    for arr, (_, t) in zip(cols, columns):
        fields.append(_csv_fields(pc.fill_null(_texts(arr, t), nv), d, q))
    if len(fields) == 1:
        # csv quotes a lone empty field; a null row is written as the null value alone
        only = pc.if_else(pc.equal(fields[0], ""), q + q, fields[0])
        lines = pc.if_else(cols[0].is_null(), nv, only)
    else:
        lines = pc.binary_join_element_wise(*fields, d)
    return pc.binary_join_element_wise(lines, "\n", "")


def csv_header(spec: FileSink, columns: Columns) -> str:
    o = csv_writer_options(spec)
    if not o["header"]:
        return ""
    buf = io.StringIO()
    csv.writer(buf, delimiter=o["delimiter"], quotechar=o["quote"],
               lineterminator="\n").writerow([c for c, _ in columns])
    return buf.getvalue()


def _json_strings(arr: pa.Array) -> pa.Array:
    plain = pc.invert(pc.match_substring_regex(arr, r'[\x00-\x1f\\"]'))
    if pc.all(pc.fill_null(plain, True)).as_py():
        return pc.binary_join_element_wise('"', arr, '"', "")
    return pa.array([None if v is None else json.dumps(v, ensure_ascii=False)
                     for v in arr.to_pylist()], pa.string())


def _json_values(arr: pa.Array, type_name: str) -> pa.Array:
    if type_name.startswith("array<"):  # element by element, as json.dumps writes lists
        return pa.array([None if v is None else json.dumps(
            v, separators=(",", ":"), ensure_ascii=False) for v in arr.to_pylist()],
            pa.string())
    if type_name == "string":
        return _json_strings(arr)
    return _texts(arr, type_name)


def json_lines(cols: list[pa.Array], columns: Columns) -> pa.Array:
    parts: list[Any] = []
    for i, (arr, (name, t)) in enumerate(zip(cols, columns)):
        parts.append(("{" if i == 0 else ",") + json.dumps(name, ensure_ascii=False) + ":")
        parts.append(pc.fill_null(_json_values(arr, t), "null"))
    parts.append("}\n")
    return pc.binary_join_element_wise(*parts, "")


# -- the part file ------------------------------------------------------------------------------

def stage_part(spec: FileSink, columns: Columns, chunks: list[list[pa.Array]]) -> str:
    """A temp dir holding ``part-00000.<ext>`` of the chunks' records (each chunk its sink
    columns, ``chunk_columns``), as ``stage_python`` stages it; not yet placed."""
    tmp = temp_path(sink_path(spec))
    os.makedirs(tmp)
    ext = _EXT[spec.format]
    path = os.path.join(tmp, f"part-00000.{ext}")
    try:
        if ext == "parquet":
            import pyarrow.parquet as pq

            schema = pa.schema([pa.field(c, arrow_type(t)) for c, t in columns])
            arrays = [to_arrow(pa.concat_arrays([c[i] for c in chunks]), f.type)
                      for i, f in enumerate(schema)]
            pq.write_table(pa.table(arrays, schema=schema), path)
            return tmp
        with open(path, "wb") as fh:
            if ext == "csv":
                fh.write(csv_header(spec, columns).encode("utf-8"))
            for cols in chunks:
                text = csv_lines(cols, spec, columns) if ext == "csv" \
                    else json_lines(cols, columns)
                fh.write(sinks._bytes(text))
        return tmp
    except BaseException:
        abort(tmp)
        raise
