"""parquet splits read natively into Arrow batches, with exactly the row reader's results.

A parquet file is one split (``files.plan_splits``); its batches are read with pyarrow and
each column becomes the declared type by the row reader's own plan (``files._parquet_plan``:
a column whose type cannot hold the declared one fails the job with its message). Where
every column's conversion is exact and total in Arrow - a column used as it is, a timestamp
column cast to epoch milliseconds as the row reader casts it, integers or floats to double
(``float()`` of an int rounds to nearest, as Arrow's cast does), a date or signed integer
as a timestamp, a decimal128 or signed integer column to a DECIMAL (``deckernels.rescale``:
HALF_UP, NULL when too wide, as ``decimals.to_decimal``) - the batches are cast without a Python value. A file needing a conversion
that can reject a value (unsigned 64-bit integers, text timestamps) or arrays is read by
the row reader (``files.read_split``), so its bad rows and dead letters are the row
reader's own.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import IO

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from flowc import decimals
from flowc.errors import ExecutionError
from flowc.executor.arrow import convert, csvsource, deckernels
from flowc.executor.arrow.convert import Chunk
from flowc.executor.runtime import files
from flowc.operators import FileSource

Cast = Callable[[pa.Array], pa.Array]


def read_split(spec: FileSource, split: files.Split, fh: IO[bytes], bad: files.BadRows,
               display: str | None, schema: pa.Schema, rows: int) -> Iterator[Chunk]:
    """The records of one parquet file as chunks (no timestamps yet)."""
    path = display or split.path
    try:
        pf = pq.ParquetFile(fh)
    except (pa.ArrowException, OSError) as e:
        raise ExecutionError(f"cannot read {path} as parquet: {e}") from None
    casts = _casts(spec, pf.schema_arrow, path, schema)
    if casts is None:
        fh.seek(0)
        yield from csvsource.row_chunks(files.read_split(spec, split, fh, bad, display),
                                        schema, rows)
        return
    names = [n for n, _ in spec.schema]
    for batch in pf.iter_batches(columns=names, batch_size=rows):
        if not batch.num_rows:
            continue
        arrays = [cast(batch.column(j)) for j, cast in enumerate(casts)]
        yield Chunk(pa.RecordBatch.from_arrays(arrays, schema=schema),
                    pa.nulls(batch.num_rows, convert.TS))


def _casts(spec: FileSource, file_schema: pa.Schema, path: str,
           schema: pa.Schema) -> list[Cast] | None:
    """One exact Arrow conversion per declared column, or None if some column needs the
    row reader. Raises the row reader's error for a column missing or of the wrong type."""
    out: list[Cast] = []
    for (name, type_name), field in zip(spec.schema, schema):
        idx = file_schema.get_field_index(name)
        if idx < 0:
            raise ExecutionError(f"{path} has no column '{name}' (its columns: "
                                 f"{', '.join(file_schema.names)})")
        arrow_type = file_schema.field(idx).type
        kind, _ = files._parquet_plan(path, name, type_name, arrow_type)
        cast = _cast(kind, type_name, arrow_type, field.type)
        if cast is None:
            return None
        out.append(cast)
    return out


def _cast(kind: str, type_name: str, arrow_type: pa.DataType,
          target: pa.DataType) -> Cast | None:
    t = pa.types
    if kind == "ms":
        return lambda c: pc.cast(pc.cast(c, pa.timestamp("ms", tz="UTC"), safe=False),
                                 pa.int64())
    if type_name in ("string", "int", "bool"):
        if t.is_uint64(arrow_type):
            return None  # values past the long range are the row reader's bad rows
        return lambda c: c if c.type == target else pc.cast(c, target)
    if type_name == "double":
        return lambda c: pc.cast(c, target, safe=False)
    ps = decimals.parse_name(type_name)
    if ps is not None:  # decimals.to_decimal: HALF_UP to the scale, NULL beyond p digits
        if t.is_decimal128(arrow_type):
            src = (arrow_type.precision, arrow_type.scale)
        elif t.is_integer(arrow_type) and not t.is_uint64(arrow_type):
            src = (decimals.BIGINT_PRECISION, 0)
        else:  # doubles (by their shortest text), text, decimal256: the row reader's
            return None
        if deckernels.rescale(pa.nulls(0, pa.decimal128(*src)), src, ps) is None:
            return None
        return lambda c: deckernels.rescale(
            c if t.is_decimal(c.type) else pc.cast(c, pa.int64()), src, ps)
    if type_name == "timestamp":
        if t.is_date(arrow_type):
            return lambda c: pc.cast(pc.cast(c, pa.timestamp("ms")), pa.int64())
        if t.is_integer(arrow_type) and not t.is_uint64(arrow_type):
            return lambda c: pc.cast(c, pa.int64())
    return None
