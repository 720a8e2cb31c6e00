"""Records <-> Arrow batches, and Arrow IPC for shuffles.

A stream with a declared schema (``flowc.types.Schema``) is a record batch whose column *i*
is field *i* (named ``_i``: field names need not be unique), plus the records' timestamps
as a separate int64 array (null = no timestamp), exactly the ``(value, ts)`` pairs of the
row executors. An updating stream's batches (``Changelog`` schemas) carry each record's
row kind (``flowc.rowkind``) as one more int8 column ``_kind`` with Flink's RowKind byte
values (+I 0, -U 1, +U 2, -D 3); ``rows`` gives those records as the row executors have
them (``-U`` an ``UpdateBefore``, ...).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pyarrow as pa

from flowc import rowkind
from flowc.executor.arrow import typed
from flowc.executor.arrow.kernels import arrow_type
from flowc.types import Schema

TS = pa.int64()
KIND = "_kind"
# RowKind byte values (Flink's RowKind.toByteValue) <-> flowc.rowkind classes.
_KIND_CLASSES = (None, rowkind.UpdateBefore, rowkind.UpdateAfter, rowkind.Delete)
_KIND_BYTES = {rowkind.Insert: 0, rowkind.UpdateBefore: 1, rowkind.UpdateAfter: 2,
               rowkind.Delete: 3}


@dataclass(frozen=True)
class Changelog(Schema):
    """The schema of an updating stream: its batches carry the row kind (``_kind``)."""


def _kinded(schema: pa.Schema) -> bool:
    return len(schema) > 0 and schema.names[-1] == KIND and typed.codec_of(schema) is None


def arrow_schema(schema: Any) -> pa.Schema:
    """A .flow / SQL ``Schema``'s columns; otherwise a Python API stream's declared type
    (a TypeInformation, or None for pickled records: ``typed.py``)."""
    if not isinstance(schema, Schema):
        return typed.schema_of(schema)
    fields = [pa.field(f"_{i}", arrow_type(f.type)) for i, f in enumerate(schema)]
    if isinstance(schema, Changelog):
        fields.append(pa.field(KIND, pa.int8()))
    return pa.schema(fields)


@dataclass(frozen=True)
class Chunk:
    """Records as columns: ``batch`` (the values) and ``ts`` (their timestamps).

    STREAMING only: ``marks`` are the watermarks among these records, as (positions,
    values): watermark *j* comes after the first ``positions[j]`` records; ``wm_at`` is the
    input watermark in force when each record reaches the consumer's head (computed by
    the channel merge)."""

    batch: pa.RecordBatch
    ts: pa.Array
    marks: tuple[Any, Any] | None = None
    wm_at: Any = None

    @property
    def num_rows(self) -> int:
        return self.batch.num_rows

    def take(self, indices: Any) -> Chunk:
        """The records at ``indices`` (ascending); watermarks keep their places."""
        import numpy as np

        marks = None
        if self.marks is not None:
            idx = np.asarray(indices)
            marks = (np.searchsorted(idx, self.marks[0], side="left"), self.marks[1])
        wm_at = None if self.wm_at is None else self.wm_at.take(indices)
        return Chunk(self.batch.take(indices), self.ts.take(indices), marks, wm_at)

    def filter(self, mask: Any) -> Chunk:
        import numpy as np

        if self.marks is None and self.wm_at is None:
            return Chunk(self.batch.filter(mask), self.ts.filter(mask))
        keep = np.flatnonzero(np.asarray(mask.to_numpy(zero_copy_only=False), dtype=bool))
        return self.take(keep)

    def with_batch(self, batch: pa.RecordBatch, ts: pa.Array | None = None) -> Chunk:
        """Other values for the same records (a map): watermarks stay."""
        return Chunk(batch, self.ts if ts is None else ts, self.marks, self.wm_at)

    def rows(self) -> list[Any]:
        codec = typed.codec_of(self.batch.schema)
        if codec is not None:  # a Python API stream: its records as the row executor has them
            return codec.decode(self.batch)
        cols = [values(c) for c in self.batch.columns]
        if _kinded(self.batch.schema):
            kinds = cols.pop()
            return [r if k == 0 else _KIND_CLASSES[k](r)
                    for r, k in zip(zip(*cols) if cols else [()] * len(kinds), kinds)]
        if not cols:
            return [()] * self.batch.num_rows
        return list(zip(*cols))

    def timestamps(self) -> list[int | None]:
        return self.ts.to_pylist()


def values(col: pa.Array) -> list[Any]:
    """A column's values as the row executors have them: a MAP as a dict in the column's
    entry order (Java's HashMap order, ``flowc.maps``), a DECIMAL as a Decimal with the
    column's scale."""
    out = col.to_pylist()
    decode = _decoder(col.type)
    return out if decode is None else [None if v is None else decode(v) for v in out]


def _decoder(t: pa.DataType) -> Any:
    """None for a type whose ``to_pylist`` values are the row values already."""
    if pa.types.is_map(t):
        key, item = _decoder(t.key_type), _decoder(t.item_type)
        if key is None and item is None:
            return dict
        return lambda v: {k if key is None or k is None else key(k):
                          x if item is None or x is None else item(x) for k, x in v}
    if pa.types.is_list(t):
        element = _decoder(t.value_type)
        if element is not None:
            return lambda v: [None if x is None else element(x) for x in v]
    return None


def from_rows(rows: list[Any], ts: list[Any], schema: pa.Schema) -> Chunk:
    """Records (tuples in schema order) as a chunk; a value that does not fit its declared
    type raises a TypeError naming the field."""
    codec = typed.codec_of(schema)
    if codec is not None:
        return Chunk(codec.encode(rows), pa.array(ts, TS))
    n = len(rows)
    arrays = []
    kinded = _kinded(schema)
    fields = list(schema)[:-1] if kinded else list(schema)
    columns = list(zip(*rows)) if rows else [()] * len(fields)
    for i, field in enumerate(fields):
        try:
            arrays.append(pa.array(columns[i] if n else [], field.type))
        except (pa.ArrowException, TypeError, ValueError, OverflowError) as e:
            raise TypeError(f"field {i + 1} of a record does not fit its declared type "
                            f"{field.type}: {e}") from None
    if kinded:
        arrays.append(pa.array([_KIND_BYTES.get(type(r), 0) for r in rows], pa.int8()))
    return Chunk(pa.RecordBatch.from_arrays(arrays, schema=schema), pa.array(ts, TS))


def concat(chunks: list[Chunk], schema: pa.Schema) -> Chunk:
    if not chunks:
        return empty(schema)
    if len(chunks) == 1:
        return chunks[0]
    table = pa.Table.from_batches([c.batch for c in chunks], schema=schema).combine_chunks()
    batches = table.to_batches()
    batch = batches[0] if batches else pa.RecordBatch.from_pylist([], schema=schema)
    return Chunk(batch, pa.concat_arrays([c.ts for c in chunks]))


def empty(schema: pa.Schema) -> Chunk:
    return Chunk(pa.RecordBatch.from_pylist([], schema=schema), pa.array([], TS))


def to_ipc(chunk: Chunk) -> bytes:
    """One chunk as Arrow IPC stream bytes (timestamps as the last column)."""
    batch = chunk.batch.append_column("_ts", chunk.ts) if chunk.batch.num_columns else \
        pa.RecordBatch.from_arrays([chunk.ts], names=["_ts"])
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, batch.schema) as writer:
        writer.write_batch(batch)
    return sink.getvalue().to_pybytes()


def from_ipc(data: bytes, schema: pa.Schema) -> Chunk:
    reader = pa.ipc.open_stream(data)
    batch = reader.read_next_batch()
    ts = batch.column(batch.num_columns - 1)
    if batch.num_columns == len(schema) + 2 and batch.schema.names[-2] == KIND:
        schema = schema.append(pa.field(KIND, pa.int8()))  # an updating stream's kinds
    values = pa.RecordBatch.from_arrays(batch.columns[:-1], schema=schema)
    return Chunk(values, ts)
