"""json-lines splits read natively into Arrow batches, with exactly the row reader's results.

A split is read in the blocks of whole lines ``csvread.line_blocks`` gives (the split rule
and line ownership of ``runtime.files``), as ``csvsource`` reads csv. pyarrow's json reader
parses a block against the declared types only where its result is known to equal the
row reader's (``files._read_json``; the property test compares them): no carriage return except before a line end, no byte
order mark, no ``\\u`` surrogate escapes, no ``-0``, ``-NaN`` or ``Inf`` (numbers
pyarrow reads otherwise than Python), valid UTF-8, one object per non-blank line, no
row with every declared field null (the row reader rejects an object with none of the
fields; an explicit null is fine there but is left to it too) and each value already of the
declared JSON kind (pyarrow refuses a string for an int, a number for a string, a fraction
for an int, duplicate keys). A timestamp column is taken as integer epoch milliseconds or as
text in ``csvsource``'s vectorised subset of ``files.parse_timestamp``; a DECIMAL column
as integers or doubles (``_decimal``). Schemas with arrays are read by the row reader. Any block outside that shape, and everything after it in the
split, goes through the row reader, so records, bad rows, their line numbers and dead
letters are the row reader's own.
"""

from __future__ import annotations

import io
import itertools
import re
from collections.abc import Iterator
from typing import IO

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.json as pajson

from flowc import decimals
from flowc.executor.arrow import convert, csvsource
from flowc.executor.arrow.convert import Chunk
from flowc.executor.runtime import csvread, files
from flowc.operators import FileSource

JSON_FORMATS = ("json", "jsonl", "json-lines")
_SCALARS = {"string": pa.string(), "int": pa.int64(), "double": pa.float64(),
            "bool": pa.bool_()}
_TS_SHAPE = f"({csvsource._TS})|({csvsource._INT})"
# Number literals pyarrow reads otherwise than Python: the integer -0 (0 to Python, -0.0
# to pyarrow as a double), -NaN and Inf (errors to Python, numbers to pyarrow).
_ODD_NUMBERS = re.compile(rb"-0(?![0-9.eE])|-NaN|Inf(?!inity)")


def read_split(spec: FileSource, split: files.Split, fh: IO[bytes], bad: files.BadRows,
               display: str | None, schema: pa.Schema, rows: int) -> Iterator[Chunk]:
    """The records of one json-lines split as chunks (no timestamps yet)."""
    path = display or split.path
    types = [t for _, t in spec.schema]
    if not types or any(t not in _SCALARS and t != "timestamp" and not _is_decimal(t)
                        for t in types):
        yield from csvsource.row_chunks(files.read_split(spec, split, fh, bad, display),
                                        schema, rows)
        return
    begin = files._aligned(fh, split.start)
    base: list[int] = []

    def first_line() -> int:
        if not base:
            base.append(files._newlines_before(fh, begin) + 1)
        return base[0]

    names = [n for n, _ in spec.schema]
    # Timestamps as numbers first, DECIMALs as integers first; the reading that took the
    # last block is the next block's first try.
    attempts = [(ts, dec) for ts in (pa.int64(), pa.string()) for dec in (pa.int64(),
                                                                           pa.float64())
                if (ts == pa.int64() or "timestamp" in types)
                and (dec == pa.int64() or any(_is_decimal(t) for t in types))]
    blocks = csvread.line_blocks(fh, begin, split.end)
    lines = 0
    for block in blocks:
        batch = None
        if _plain(block):
            for k, (ts_type, dec_type) in enumerate(attempts):
                batch = _fast(block, names, types, ts_type, dec_type, schema)
                if batch is not None:
                    attempts.insert(0, attempts.pop(k))
                    break
        if batch is None:  # the row reader takes this block and the rest of the split
            done = lines
            rest = files._read_text(spec, itertools.chain([block], blocks), False, path,
                                    lambda done=done: first_line() + done, bad)
            yield from csvsource.row_chunks(rest, schema, rows)
            return
        lines += block.count(b"\n") + (not block.endswith(b"\n"))
        if batch.num_rows:
            yield Chunk(batch, pa.nulls(batch.num_rows, convert.TS))


def _plain(block: bytes) -> bool:
    """Bytes whose json parse by pyarrow and by Python's ``json`` module agree."""
    if b"\xef\xbb\xbf" in block or b"\\ud" in block or b"\\uD" in block:
        return False
    if _ODD_NUMBERS.search(block):
        return False
    if b"\r" in block and b"\r" in block.replace(b"\r\n", b""):
        return False
    try:
        block.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def _is_decimal(type_name: str) -> bool:
    return decimals.parse_name(type_name) is not None


# A DECIMAL read from a json number: the row reader takes an integer literal exactly and
# a fraction as the double Python reads, through its shortest text (``decimals._exact``:
# ``repr``), then HALF_UP to the scale, NULL beyond the precision. pyarrow reads integers
# exactly as int64, fractions as the same double; Arrow's text of a double has the same
# shortest digits as ``repr``, so where it is plain (no exponent, no NaN / Infinity) and
# below 2^53 (an integer literal in a block read as doubles keeps its exact value to
# Python) csvsource's exact text-to-DECIMAL conversion gives the row reader's value.
_PLAIN_NUMBER = r"^-?[0-9]+(\.[0-9]+)?$"
_EXACT_DOUBLE = float(1 << 53)


def _decimal(col: pa.Array, type_name: str) -> pa.Array | None:
    if pa.types.is_floating(col.type) and pc.any(pc.greater_equal(
            pc.abs(col), _EXACT_DOUBLE)).as_py():
        return None
    text = pc.cast(col, pa.string())
    if not pc.all(pc.match_substring_regex(text, _PLAIN_NUMBER), min_count=0).as_py():
        return None
    conv = csvsource._decimal_converter(type_name)
    assert conv is not None
    return conv[1](text)


def _fast(block: bytes, names: list[str], types: list[str], ts_type: pa.DataType,
          dec_type: pa.DataType, schema: pa.Schema) -> pa.RecordBatch | None:
    read_types = [ts_type if t == "timestamp" else dec_type if _is_decimal(t) else _SCALARS[t]
                  for t in types]
    want = pa.schema([pa.field(n, t) for n, t in zip(names, read_types)])
    try:
        table = pajson.read_json(
            io.BytesIO(block),
            read_options=pajson.ReadOptions(use_threads=False, block_size=len(block) + 1),
            parse_options=pajson.ParseOptions(explicit_schema=want,
                                              unexpected_field_behavior="ignore",
                                              newlines_in_values=False))
    except (pa.ArrowException, ValueError):
        return None
    # One record per non-blank line: ``{..}{..}`` on one line is one bad row to Python.
    if table.num_rows != sum(1 for line in block.split(b"\n") if line.strip()):
        return None
    cols = [table.column(i).combine_chunks() for i in range(len(names))]
    if cols and table.num_rows:
        some = pc.is_valid(cols[0])
        for c in cols[1:]:
            some = pc.or_(some, pc.is_valid(c))
        if not pc.all(some).as_py():
            return None
    arrays = []
    for col, t, field in zip(cols, types, schema):
        if t == "timestamp" and pa.types.is_string(col.type):
            if not pc.all(pc.match_substring_regex(col, _TS_SHAPE), min_count=0).as_py():
                return None  # null stays null; "" and other shapes are the row reader's
            try:
                col = csvsource._timestamp(col)
            except (pa.ArrowException, ValueError, OverflowError):
                return None
        elif _is_decimal(t):
            try:
                col = _decimal(col, t)
            except (pa.ArrowException, ValueError, OverflowError):
                return None
            if col is None:
                return None
        arrays.append(col.cast(field.type) if col.type != field.type else col)
    return pa.RecordBatch.from_arrays(arrays, schema=schema)
