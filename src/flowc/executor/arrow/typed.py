"""Python API streams (PyFlink ``Types``) as Arrow batches, exactly.

A stream whose declared type is a basic type (INT, LONG, SHORT, BYTE, FLOAT, DOUBLE,
STRING, CHAR, BOOLEAN), a LIST of one, or a ROW / ROW_NAMED / TUPLE of those has one column
per field
(``flowc.common.arrow_types``), and a ROW stream a column ``_kind`` with each Row's kind.
Decoding gives back the objects the row executor passes on: a ``Row`` with the declared
field names and its kind, a tuple, an int / float / str / bool; a FLOAT column holds the
32-bit values ``flowc.api.typed`` rounded to.

The row executors pass on whatever a function returned, declared or not (a reduce on a ROW
stream returning a tuple, an int where DOUBLE is declared): a record that a column would
change (``_fits`` says which fit) travels pickled in the column ``_obj`` instead (its
typed columns null), so decoding always returns the same object. A stream without a
declared type (PyFlink's pickled records), or with a type not listed above, is all
``_obj``: its records are carried, and processed row by row, unchanged.

The codec is found from the Arrow schema's metadata (``flowc.type``: the pickled
TypeInformation), so the schema travels with the batches through IPC shuffles.
"""

from __future__ import annotations

import functools
import pickle
from collections.abc import Callable
from typing import Any

import pyarrow as pa

from flowc.common.arrow_types import arrow_type, field_names, field_types
from flowc.common.typeinfo import (
    BasicTypeInfo,
    FloatTypeInfo,
    ListTypeInfo,
    RowTypeInfo,
    TupleTypeInfo,
    TypeInformation,
    to_float32,
)
from flowc.common.types import Row, RowKind

KEY = b"flowc.type"
_RANGES = {"Integer": 32, "Long": 64, "Short": 16, "Byte": 8}
_KINDS = tuple(RowKind)  # by value


def exact(type_info: Any) -> bool:
    """Whether ``type_info``'s records have columns here (else: all pickled)."""
    if isinstance(type_info, (RowTypeInfo, TupleTypeInfo)):
        return all(_basic(t) for t in type_info.field_types)
    return _basic(type_info)


def _basic(t: Any) -> bool:
    if isinstance(t, ListTypeInfo):  # a list of basic values is a list column
        return _scalar(t.element_type)
    return _scalar(t)


def _scalar(t: Any) -> bool:
    return isinstance(t, FloatTypeInfo) or isinstance(t, BasicTypeInfo) and t.name in (
        *_RANGES, "Double", "String", "Character", "Boolean")


def _fits(t: TypeInformation) -> Callable[[Any], bool]:
    """Whether a field value comes back from its column unchanged (None is null)."""
    if isinstance(t, ListTypeInfo):
        element = _fits(t.element_type)
        return lambda v: v is None or type(v) is list and all(map(element, v))
    if isinstance(t, FloatTypeInfo):
        return lambda v: v is None or type(v) is float and (v != v or to_float32(v) == v)
    name = t.name  # type: ignore[attr-defined]
    if name in _RANGES:
        lo, hi = -(1 << (_RANGES[name] - 1)), (1 << (_RANGES[name] - 1)) - 1
        return lambda v: v is None or type(v) is int and lo <= v <= hi
    py = {"Double": float, "String": str, "Character": str, "Boolean": bool}[name]
    return lambda v: v is None or type(v) is py


def schema_of(type_info: Any) -> pa.Schema:
    """The Arrow schema of a stream of ``type_info`` (None: undeclared)."""
    fields = []
    if exact(type_info):
        fields = [pa.field(f"_{i}", arrow_type(t))
                  for i, t in enumerate(field_types(type_info))]
        if isinstance(type_info, RowTypeInfo):
            fields.append(pa.field("_kind", pa.int8()))
    fields.append(pa.field("_obj", pa.binary()))
    return pa.schema(fields, metadata={KEY: pickle.dumps(type_info)})


def codec_of(schema: pa.Schema) -> Codec | None:
    meta = schema.metadata
    if not meta or KEY not in meta:
        return None
    return _codec(meta[KEY])


@functools.lru_cache(maxsize=64)
def _codec(key: bytes) -> Codec:
    return Codec(pickle.loads(key))


class Codec:
    """Records of one declared type <-> record batches (see the module docstring)."""

    def __init__(self, type_info: Any) -> None:
        self.schema = schema_of(type_info)
        self.columns = exact(type_info)
        self.row = isinstance(type_info, RowTypeInfo)
        self.composite = isinstance(type_info, (RowTypeInfo, TupleTypeInfo))
        self.width = len(field_types(type_info)) if self.columns else 0
        self.names = field_names(type_info) if self.row else None
        self.fits = [_fits(t) for t in field_types(type_info)] if self.columns else []

    def _fit(self, v: Any) -> bool:
        if not self.composite:
            return self.fits[0](v)
        if self.row:
            if type(v) is not Row or v.__dict__.get("_fields") != self.names:
                return False
            values = v.__dict__["_values"]
        elif type(v) is tuple:
            values = v
        else:
            return False
        return len(values) == self.width and all(f(x) for f, x in zip(self.fits, values))

    def encode(self, values: list[Any]) -> pa.RecordBatch:
        n = len(values)
        if self.columns:
            fit = [self._fit(v) for v in values]
            try:
                return self._columns(values, fit)
            except (pa.ArrowException, UnicodeError):  # e.g. a str with lone surrogates
                pass
        arrays = [pa.nulls(n, f.type) for f in self.schema][:-1]
        arrays.append(pa.array([pickle.dumps(v, 5) for v in values], pa.binary()))
        return pa.RecordBatch.from_arrays(arrays, schema=self.schema)

    def _columns(self, values: list[Any], fit: list[bool]) -> pa.RecordBatch:
        n = len(values)
        every = all(fit)
        if not self.composite:
            rows = [(v,) if ok else (None,) for v, ok in zip(values, fit)]
        elif self.row:
            rows = [v.__dict__["_values"] if ok else (None,) * self.width
                    for v, ok in zip(values, fit)]
        else:
            rows = [v if ok else (None,) * self.width for v, ok in zip(values, fit)]
        cols = list(zip(*rows)) if n else [()] * self.width
        arrays = [pa.array(cols[i], f.type) for i, f in enumerate(self.schema)
                  if i < self.width]
        if self.row:
            arrays.append(pa.array([v.__dict__["_row_kind"].value if ok else 0
                                    for v, ok in zip(values, fit)], pa.int8()))
        arrays.append(pa.nulls(n, pa.binary()) if every else pa.array(
            [None if ok else pickle.dumps(v, 5) for v, ok in zip(values, fit)], pa.binary()))
        return pa.RecordBatch.from_arrays(arrays, schema=self.schema)

    def decode(self, batch: pa.RecordBatch) -> list[Any]:
        n = batch.num_rows
        obj = batch.column(batch.num_columns - 1)
        pickled = obj.to_pylist() if obj.null_count < n else None
        if not self.columns:
            return [pickle.loads(b) for b in pickled or ()]
        cols = [batch.column(i).to_pylist() for i in range(self.width)]
        if not self.composite:
            out = cols[0]
        elif self.row:
            names = self.names
            kinds = batch.column(self.width).to_pylist()
            out = []
            for values, k in zip(zip(*cols), kinds):
                r = Row.__new__(Row)
                r.__dict__.update(_fields=list(names),  # type: ignore[arg-type]
                                  _values=list(values), _row_kind=_KINDS[k or 0])
                out.append(r)
        else:
            out = list(zip(*cols)) if self.width else [()] * n
        if pickled is not None:
            out = [v if b is None else pickle.loads(b) for v, b in zip(out, pickled)]
        return out
