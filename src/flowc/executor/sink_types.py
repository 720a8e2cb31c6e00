"""File sinks of streams with declared PyFlink ``Types``: their columns (names from
ROW_NAMED, else ``f0``, ``f1``, ...; flowc's column types for the row checks), the exact
Arrow schema a parquet file gets (``flowc.common.arrow_types``) and the width checks of
narrow ints. Used by both executors through executor/sinks.py."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from flowc.errors import ExecutionError, UnsupportedError
from flowc.operators import FileSink

Columns = list[tuple[str, str]]


def writes_declared(declared: Any) -> bool:
    """Whether a sink writes the declared type's columns: not for pickled records, and not
    for a LIST or MAP record, whose elements / keys are the row's fields as without a type
    (the types are inferred)."""
    from flowc.common.typeinfo import ListTypeInfo, MapTypeInfo, PickledBytesTypeInfo

    return not isinstance(declared, (PickledBytesTypeInfo, ListTypeInfo, MapTypeInfo))


def typed_columns(spec: FileSink, declared: Any) -> Columns:
    from flowc.common.arrow_types import field_names, field_types

    names = list(spec.columns) or field_names(declared)
    types = field_types(declared)
    if len(names) != len(types):
        raise ExecutionError(f"sink {spec.path}: {len(names)} columns declared but the stream "
                             f"has {len(types)} fields {declared!r}")
    return [(n, _column_type(spec, n, t)) for n, t in zip(names, types)]


def _column_type(spec: FileSink, name: str, type_info: Any) -> str:
    """flowc's column type name of a declared PyFlink type (what the row checks use)."""
    from flowc.common.arrow_types import UnsupportedArrowType, arrow_type

    try:
        t = arrow_type(type_info)
    except UnsupportedArrowType as e:
        raise UnsupportedError(f"sink {spec.path}: column '{name}': {e}") from None
    depth = 0
    while hasattr(t, "value_type"):  # list<...>
        depth, t = depth + 1, t.value_type
    import pyarrow as pa

    if pa.types.is_struct(t):
        raise UnsupportedError(f"sink {spec.path}: column '{name}' is a nested row "
                               f"{type_info!r}, which csv / json / parquet sinks do not write")
    scalar = ("int" if pa.types.is_integer(t) else "double" if pa.types.is_floating(t)
              else "bool" if pa.types.is_boolean(t) else "timestamp"
              if pa.types.is_timestamp(t) else "string")
    return "array<" * depth + scalar + ">" * depth


def arrow_schema_of(spec: FileSink, declared: Any) -> Any:
    """The exact Arrow schema a parquet sink writes for a stream with declared PyFlink
    Types (names as ``declared_columns``), or None."""
    from flowc.common.typeinfo import TypeInformation

    if not isinstance(declared, TypeInformation) or not writes_declared(declared):
        return None
    import pyarrow as pa

    from flowc.common.arrow_types import arrow_type, field_types

    columns = typed_columns(spec, declared)
    return pa.schema([pa.field(c, arrow_type(t))
                      for (c, _), t in zip(columns, field_types(declared))])


def int_width_check(path: str, schema: Any) -> Callable[[tuple[Any, ...]], tuple[Any, ...]]:
    """A checked row -> itself, or an ExecutionError for an int outside its declared width
    (INT is 32-bit, SHORT 16, BYTE 8), as PyFlink's serializer would fail."""
    import pyarrow as pa

    bounds = [(i, f.name, f.type.bit_width) for i, f in enumerate(schema or ())
              if pa.types.is_integer(f.type) and f.type.bit_width < 64]

    def check(row: tuple[Any, ...]) -> tuple[Any, ...]:
        for i, name, bits in bounds:
            v = row[i]
            if v is not None and not -(1 << (bits - 1)) <= v < (1 << (bits - 1)):
                raise ExecutionError(f"sink {path}: column '{name}': {v} is out of range "
                                     f"for int{bits}")
        return row
    return check
