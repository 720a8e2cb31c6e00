"""csv splits read natively into Arrow batches, with exactly the row reader's results.

A split is read in the blocks of whole lines ``csvread.line_blocks`` gives (the split rule
and line ownership of ``runtime.files``). A block in the common shape - no quote
character, carriage return or NUL byte, valid UTF-8, every line with the declared number of
fields - is split by pyarrow's csv reader and its fields are converted by vectorised
kernels that accept only a subset of what the row reader's converters accept (plain
integers, plain decimal numbers, ``true``/``false``, ``YYYY-MM-DD[T ]HH:MM:SS[.fff][Z]``
and epoch milliseconds; a DECIMAL(p, s) field's plain digits exactly, rounded HALF_UP to
``s`` and NULL beyond ``p`` digits as the row reader's ``decimals.to_decimal``). Any block outside that shape, and everything after it in the
split, goes through the row reader (``files``), so records, bad rows, their line numbers
and dead letters are the row reader's own.
"""

from __future__ import annotations

import io
import itertools
from collections.abc import Callable, Iterator
from typing import IO, Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv

from flowc import decimals
from flowc.executor.arrow import convert
from flowc.executor.arrow.convert import Chunk
from flowc.executor.runtime import csvread, files
from flowc.operators import FileSource

_INT = r"^[+-]?[0-9]{1,18}$"  # at most 18 digits: always within a long
_DOUBLE = r"^[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?$"
_TS = r"^[0-9]{4}-[0-9]{2}-[0-9]{2}[T ][0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]{1,3})?Z?$"


def read_split(spec: FileSource, split: files.Split, fh: IO[bytes], bad: files.BadRows,
               display: str | None, schema: pa.Schema, rows: int) -> Iterator[Chunk]:
    """The records of one split as chunks (no timestamps yet)."""
    path = display or split.path
    o = files.csv_options(spec.options)
    if spec.format != "csv" or o["escape"] or len(o["delimiter"]) != 1:
        yield from row_chunks(files.read_split(spec, split, fh, bad, display), schema, rows)
        return
    begin = files._aligned(fh, split.start)
    base: list[int] = []

    def first_line() -> int:
        if not base:
            base.append(files._newlines_before(fh, begin) + 1)
        return base[0]

    blocks = csvread.line_blocks(fh, begin, split.end)
    header = split.start == 0 and o["header"]
    lines = 0
    types = [t for _, t in spec.schema]
    for block in blocks:
        batch = _fast(block, header, o, types, schema)
        if batch is None:  # the row reader takes this block and the rest of the split
            done = lines
            rest = files._read_text(spec, itertools.chain([block], blocks), header, path,
                                    lambda done=done: first_line() + done, bad)
            yield from row_chunks(rest, schema, rows)
            return
        header = False
        lines += block.count(b"\n") + (not block.endswith(b"\n"))
        if batch.num_rows:
            yield Chunk(batch, pa.nulls(batch.num_rows, convert.TS))


def _fast(block: bytes, header: bool, o: dict[str, Any], types: list[str],
          schema: pa.Schema) -> pa.RecordBatch | None:
    quote = o["quote"].encode() if o["quote"] else b""
    if (quote and quote in block) or b"\r" in block or b"\x00" in block:
        return None
    if header and (block.startswith(b"\n") or b"\n" not in block):
        return None  # the header must be a real line of this block
    names = [f"_{i}" for i in range(len(types))]
    try:
        table = pacsv.read_csv(
            io.BytesIO(block),
            read_options=pacsv.ReadOptions(column_names=names, skip_rows=1 if header else 0,
                                           use_threads=False, block_size=len(block) + 1),
            parse_options=pacsv.ParseOptions(delimiter=o["delimiter"], quote_char=False,
                                             double_quote=False, escape_char=False,
                                             newlines_in_values=False,
                                             ignore_empty_lines=True),
            convert_options=pacsv.ConvertOptions(
                column_types={n: pa.string() for n in names}, strings_can_be_null=False,
                quoted_strings_can_be_null=False, check_utf8=True))
    except (pa.ArrowException, ValueError):
        return None
    arrays = []
    null_value = o["null_value"]
    for name, t, field in zip(names, types, schema):
        col = table.column(name).combine_chunks() if table.num_rows else pa.array([], pa.string())
        out = _convert(col, t, null_value)
        if out is None:
            return None
        arrays.append(out.cast(field.type) if out.type != field.type else out)
    return pa.RecordBatch.from_arrays(arrays, schema=schema)


def _convert(col: pa.Array, type_name: str, null_value: str) -> pa.Array | None:
    """The declared type's values, or None when a value needs the row reader's converter
    (it may be fine there, or a bad row it words)."""
    if type_name == "string":
        return pc.if_else(pc.equal(col, null_value), pa.scalar(None, pa.string()), col)
    null = pc.or_(pc.equal(col, ""), pc.equal(col, null_value))
    valid = pc.invert(null)
    conv = _CONVERTERS.get(type_name) or _decimal_converter(type_name)
    if conv is None:
        return None
    shape, parse = conv
    if pc.all(pc.or_(null, pc.match_substring_regex(col, shape))).as_py() is False:
        return None
    values = pc.if_else(valid, col, pa.scalar(None, pa.string()))
    try:
        return parse(values)
    except (pa.ArrowException, ValueError, OverflowError):
        return None


def _int(values: pa.Array) -> pa.Array:
    return pc.cast(pc.replace_substring_regex(values, r"^\+", ""), pa.int64())


def _double(values: pa.Array) -> pa.Array:
    return pc.cast(values, pa.float64())


def _bool(values: pa.Array) -> pa.Array:
    return pc.equal(values, "true")


def _timestamp(values: pa.Array) -> pa.Array:
    """ISO text in the common shape (UTC), or epoch milliseconds. pyarrow's strptime rolls
    impossible dates over (2023-02-29 -> 03-01) and takes second 60 and year 0: those raise
    here, so the row reader (which rejects them) takes the block."""
    null = pa.scalar(None, pa.string())
    is_ms = pc.match_substring_regex(values, _INT)
    iso = pc.if_else(is_ms, null, values)
    if pc.any(pc.or_(pc.greater(pc.utf8_slice_codeunits(iso, 17, 19), "59"),
                     pc.less(pc.utf8_slice_codeunits(iso, 0, 4), "0001"))).as_py():
        raise ValueError("a time that does not exist")
    head = pc.replace_substring(pc.utf8_slice_codeunits(iso, 0, 19), " ", "T")
    stamp = pc.strptime(head, format="%Y-%m-%dT%H:%M:%S", unit="ms")
    day = pc.cast(pc.utf8_slice_codeunits(iso, 8, 10), pa.int64())
    if pc.any(pc.not_equal(pc.day(stamp), day)).as_py():
        raise ValueError("a date that does not exist")
    frac = pc.utf8_rpad(pc.utf8_rtrim(pc.utf8_slice_codeunits(iso, 20, 23), characters="Z"),
                        width=3, padding="0")
    ms = pc.add(pc.cast(stamp, pa.int64()), pc.cast(frac, pa.int64()))
    return pc.if_else(is_ms, _int(pc.if_else(is_ms, values, null)), ms)


_DECIMAL = r"^[+-]?[0-9]+(\.[0-9]+)?$"  # plain digits: what Decimal() and Arrow read alike


def _decimal_converter(type_name: str) -> tuple[str, Callable[[pa.Array], pa.Array]] | None:
    """``decimal(p, s)``: the text's exact value (a decimal128 wide enough for every value
    of the block), then the row reader's ``decimals.to_decimal`` - HALF_UP to the scale,
    NULL when it needs more than ``p`` digits - as ``deckernels.rescale``."""
    ps = decimals.parse_name(type_name)
    if ps is None:
        return None

    def parse(values: pa.Array) -> pa.Array:
        from flowc.executor.arrow.deckernels import MAX, rescale

        text = pc.replace_substring_regex(values, r"^\+", "")
        length = pc.utf8_length(text)
        point = pc.find_substring(text, ".")
        whole = pc.if_else(pc.less(point, 0), length, point)
        digits = pc.subtract(whole, pc.cast(pc.starts_with(text, "-"), pa.int32()))
        fraction = pc.if_else(pc.less(point, 0), 0, pc.subtract(pc.subtract(length, point), 1))
        ints = pc.max(digits).as_py() or 1
        scale = pc.max(fraction).as_py() or 0
        if ints + scale > MAX:
            raise ValueError("wider than decimal128")  # the row reader's
        exact = pc.cast(text, pa.decimal128(ints + scale, scale))
        out = rescale(exact, (ints + scale, scale), ps)
        if out is None:
            raise ValueError("wider than decimal128")
        return out
    return _DECIMAL, parse


_CONVERTERS: dict[str, tuple[str, Callable[[pa.Array], pa.Array]]] = {
    "int": (_INT, _int),
    "double": (_DOUBLE, _double),
    "bool": ("^(true|false)$", _bool),
    "timestamp": (f"({_TS})|({_INT})", _timestamp),
}


def row_chunks(records: Iterator[tuple[Any, ...]], schema: pa.Schema,
               rows: int) -> Iterator[Chunk]:
    """Records from the row reader in chunks of ``rows`` (no timestamps yet)."""
    buf: list[Any] = []
    for r in records:
        buf.append(r)
        if len(buf) == rows:
            yield convert.from_rows(buf, [None] * len(buf), schema)
            buf = []
    if buf:
        yield convert.from_rows(buf, [None] * len(buf), schema)


def split_reader(spec: FileSource) -> Callable[..., Iterator[Chunk]]:
    """The native ``read_split`` of the source's format (csv, json lines, parquet)."""
    if spec.format in ("json", "jsonl", "json-lines"):
        from flowc.executor.arrow import jsonsource  # it builds on this module

        return jsonsource.read_split  # type: ignore[no-any-return]
    if spec.format == "parquet":
        from flowc.executor.arrow import parquetsource

        return parquetsource.read_split  # type: ignore[no-any-return]
    return read_split


def local_reader(spec: FileSource, p: int, schema: pa.Schema,
                 rows: int) -> Callable[[int, files.BadRows], Iterator[Chunk]] | None:
    """``read(subtask, bad rows)`` for a source on the local file system (csv here,
    json lines in ``jsonsource``, parquet in ``parquetsource``), or None (a URI: the row executor's Spark listing reads
    it)."""
    import os

    from flowc.errors import ExecutionError

    if files.is_remote(spec.path):
        return None
    splits = files.plan_splits(spec.format, files.list_files(spec.path), p)
    mine = [[files.Split(os.path.abspath(s.path), s.start, s.end) for s in
             files.subtask_splits(splits, i, p)] for i in range(p)]
    shown = {os.path.abspath(s.path): s.path for s in splits}
    read_one = split_reader(spec)

    def read(idx: int, bad: files.BadRows) -> Iterator[Chunk]:
        for s in mine[idx]:
            try:
                fh = open(s.path, "rb")  # noqa: SIM115 - closed by the with below
            except OSError as e:
                raise ExecutionError(f"cannot read {shown[s.path]}: {e.strerror or e}") \
                    from None
            with fh:
                yield from read_one(spec, s, fh, bad, shown[s.path], schema, rows)
    return read
