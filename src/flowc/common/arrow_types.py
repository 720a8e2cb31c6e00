"""PyFlink ``Types`` as Arrow types: the one mapping the file sinks (executor/sinks.py) and
the columnar executor use for a stream with a declared ``TypeInformation``.

    INT -> int32, LONG -> int64, SHORT -> int16, BYTE -> int8, FLOAT -> float32,
    DOUBLE -> float64, STRING / CHAR -> string, BOOLEAN -> bool,
    SQL_TIMESTAMP -> timestamp[ms, UTC] (flowc's timestamps are epoch milliseconds, and a
    naive datetime means UTC), LIST(T) -> list<T>, ROW / ROW_NAMED / TUPLE -> the schema's
    fields (names from ROW_NAMED, else f0, f1, ...; a nested one -> struct).

Other types (SQL_DATE, SQL_TIME, BIG_INT, BIG_DEC, MAP, PICKLED_BYTE_ARRAY) have no column
type in flowc's files: ``arrow_type`` raises ``UnsupportedArrowType`` naming them.
"""

from __future__ import annotations

from typing import Any

from flowc.common.typeinfo import (
    BasicTypeInfo,
    FloatTypeInfo,
    ListTypeInfo,
    RowTypeInfo,
    SqlTimeTypeInfo,
    TupleTypeInfo,
    TypeInformation,
)

_BASIC = {"Integer": "int32", "Long": "int64", "Short": "int16", "Byte": "int8",
          "Double": "float64", "String": "string", "Character": "string", "Boolean": "bool"}


class UnsupportedArrowType(ValueError):
    """A declared type without an Arrow column type in flowc."""


def field_names(type_info: TypeInformation) -> list[str]:
    """The column names of a record type: ROW_NAMED's names, else ``f0``, ``f1``, ...; a
    type that is not a ROW / TUPLE is one column ``f0``."""
    if isinstance(type_info, RowTypeInfo):
        return list(type_info.field_names)
    if isinstance(type_info, TupleTypeInfo):
        return [f"f{i}" for i in range(len(type_info.field_types))]
    return ["f0"]


def field_types(type_info: TypeInformation) -> list[TypeInformation]:
    if isinstance(type_info, (RowTypeInfo, TupleTypeInfo)):
        return list(type_info.field_types)
    return [type_info]


def arrow_type(type_info: TypeInformation) -> Any:
    """The Arrow type of a value of ``type_info`` (see the module docstring)."""
    import pyarrow as pa

    if isinstance(type_info, FloatTypeInfo):
        return pa.float32()
    if isinstance(type_info, BasicTypeInfo) and type_info.name in _BASIC:
        name = _BASIC[type_info.name]
        return pa.bool_() if name == "bool" else getattr(pa, name)()
    if isinstance(type_info, SqlTimeTypeInfo) and type_info.kind == "Timestamp":
        return pa.timestamp("ms", tz="UTC")
    if isinstance(type_info, ListTypeInfo):
        return pa.list_(arrow_type(type_info.element_type))
    if isinstance(type_info, (RowTypeInfo, TupleTypeInfo)):
        return pa.struct(arrow_schema(type_info))
    raise UnsupportedArrowType(f"{type_info!r} has no column type in flowc's files "
                               "(supported: INT, LONG, SHORT, BYTE, FLOAT, DOUBLE, STRING, "
                               "CHAR, BOOLEAN, SQL_TIMESTAMP, LIST, ROW, TUPLE)")


def arrow_schema(type_info: TypeInformation) -> Any:
    """The Arrow schema of a stream of ``type_info`` records (one field for a basic type)."""
    import pyarrow as pa

    return pa.schema([pa.field(n, arrow_type(t))
                      for n, t in zip(field_names(type_info), field_types(type_info))])


__all__ = ["UnsupportedArrowType", "arrow_schema", "arrow_type", "field_names", "field_types"]
