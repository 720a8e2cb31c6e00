"""PyFlink's ``Types`` and ``TypeInformation`` (``pyflink.common.typeinfo``).

A declared type has two effects in flowc (docs/flink-differences.md, "Types"):

* ``convert(value)``: what the record becomes when it crosses into the declared type, as
  PyFlink's coders make it: a ``ROW`` becomes a :class:`~flowc.common.types.Row`, a ``TUPLE``
  a tuple, a ``FLOAT`` is rounded to 32 bits, a ``LIST`` a list.
* ``java_str(value)``: the text Flink's print sink writes for it, which is the Java object's
  ``toString()`` (``(a,1)`` for a Tuple2, ``1.0E7`` for a Double, ``{k=v}`` for a HashMap).
"""

from __future__ import annotations

import datetime as _dt
import struct
from collections.abc import Sequence
from decimal import Decimal
from typing import Any

from flowc.common.types import Row
from flowc.keygroups import long_hash, string_hash


class TypeInformation:
    """A declared record type. Subclasses override ``convert`` / ``java_str``."""

    def convert(self, value: Any) -> Any:
        return value

    def java_str(self, value: Any) -> str:
        return java_str(value)

    def java_string(self, value: Any) -> str:
        """The Java object's ``toString()`` (what ``SimpleStringEncoder`` writes); the same
        as ``java_str`` except for a Row, which PyFlink's print formats in Python."""
        return self.java_str(value)

    @property
    def is_identity(self) -> bool:
        """Whether ``convert`` returns every value unchanged (then nothing is wrapped)."""
        return True

    def java_hash(self, value: Any) -> int:
        """``hashCode()`` of the Java value (for a HashMap's iteration order)."""
        if isinstance(value, str):
            return string_hash(value)
        if isinstance(value, bool):
            return 1231 if value else 1237
        if isinstance(value, int):
            return long_hash(value)
        return hash(value) & 0xFFFFFFFF

    def __eq__(self, other: object) -> bool:
        return type(self) is type(other) and self.__dict__ == other.__dict__

    def __hash__(self) -> int:
        return hash(repr(self))


class BasicTypeInfo(TypeInformation):
    """A Java basic type: ``name`` is PyFlink's (``String``, ``Integer``, ``Long``, ...)."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return self.name

    def java_hash(self, value: Any) -> int:
        if self.name in ("Integer", "Short", "Byte") and isinstance(value, int):
            return _i32(value)
        return super().java_hash(value)


class FloatTypeInfo(BasicTypeInfo):
    """A Java ``float``: values are rounded to 32 bits, printed by ``Float.toString``."""

    def __init__(self) -> None:
        super().__init__("Float")

    def convert(self, value: Any) -> Any:
        return None if value is None else to_float32(value)

    def java_str(self, value: Any) -> str:
        return "null" if value is None else java_float_str(float(value))

    @property
    def is_identity(self) -> bool:
        return False


class SqlTimeTypeInfo(TypeInformation):
    """``java.sql.Date`` / ``Time`` / ``Timestamp``, from Python ``date`` / ``time`` /
    ``datetime`` values."""

    def __init__(self, kind: str) -> None:
        self.kind = kind

    def __repr__(self) -> str:
        return f"SqlTimeTypeInfo({self.kind})"

    def java_str(self, value: Any) -> str:
        if value is None:
            return "null"
        if self.kind == "Timestamp" and isinstance(value, _dt.datetime):
            # java.sql.Timestamp.toString: nanos without trailing zeros, at least one digit.
            frac = f"{value.microsecond:06d}000".rstrip("0") or "0"
            return value.strftime("%Y-%m-%d %H:%M:%S") + "." + frac
        if self.kind == "Date" and isinstance(value, _dt.date):
            return value.strftime("%Y-%m-%d")
        if self.kind == "Time" and isinstance(value, _dt.time):
            return value.strftime("%H:%M:%S")
        return java_str(value)


class PickledBytesTypeInfo(TypeInformation):
    """Any Python object (PyFlink's default): PyFlink prints it with ``str()``."""

    def __repr__(self) -> str:
        return "PickledByteArrayTypeInfo"

    def java_str(self, value: Any) -> str:
        return value if isinstance(value, str) else str(value)


class RowTypeInfo(TypeInformation):
    def __init__(self, field_types: Sequence[TypeInformation],
                 field_names: Sequence[str] | None = None) -> None:
        self.field_types = list(field_types)
        self.field_names = (list(field_names) if field_names is not None
                            else [f"f{i}" for i in range(len(self.field_types))])
        if len(self.field_names) != len(self.field_types):
            raise ValueError("Number of field types and names is different.")
        self.named = field_names is not None

    def get_field_names(self) -> list[str]:
        return list(self.field_names)

    def get_field_types(self) -> list[TypeInformation]:
        return list(self.field_types)

    def get_field_index(self, field_name: str) -> int:
        return self.field_names.index(field_name) if field_name in self.field_names else -1

    def get_arity(self) -> int:
        return len(self.field_types)

    def __repr__(self) -> str:
        inner = ", ".join(f"{n}: {t!r}" for n, t in zip(self.field_names, self.field_types))
        return f"RowTypeInfo({inner})"

    def convert(self, value: Any) -> Any:
        if value is None:
            return None
        kind = value.get_row_kind() if isinstance(value, Row) else None
        values = [t.convert(v) for t, v in zip(self.field_types, value)]
        row = Row(*values)
        # PyFlink's RowCoder names the fields of every row it decodes.
        row.set_field_names(self.field_names)
        if kind is not None:
            row.set_row_kind(kind)
        return row

    @property
    def is_identity(self) -> bool:
        return False

    def java_str(self, value: Any) -> str:
        # PyFlink's print() maps a Row stream to '<kind>[<str(v)>,...]' in Python.
        kind = value.get_row_kind() if isinstance(value, Row) else "+I"
        return "{}[{}]".format(kind, ",".join(str(v) for v in value))

    def java_string(self, value: Any) -> str:
        # org.apache.flink.types.Row.toString: "+I[f0, f1]", fields by their toString.
        if value is None:
            return "null"
        kind = value.get_row_kind() if isinstance(value, Row) else "+I"
        return "{}[{}]".format(kind, ", ".join(t.java_string(v)
                                               for t, v in zip(self.field_types, value)))


class TupleTypeInfo(TypeInformation):
    def __init__(self, field_types: Sequence[TypeInformation]) -> None:
        self.field_types = list(field_types)

    def get_field_types(self) -> list[TypeInformation]:
        return list(self.field_types)

    def __repr__(self) -> str:
        return "TupleTypeInfo({})".format(", ".join(repr(t) for t in self.field_types))

    def convert(self, value: Any) -> Any:
        if value is None:
            return None
        return tuple(t.convert(v) for t, v in zip(self.field_types, value))

    @property
    def is_identity(self) -> bool:
        return False

    def java_str(self, value: Any) -> str:
        # Flink's Tuple.toString: "(f0,f1,...)", fields by their own toString.
        if value is None:
            return "null"
        return "(" + ",".join(t.java_string(v) for t, v in zip(self.field_types, value)) + ")"


class ListTypeInfo(TypeInformation):
    def __init__(self, element_type: TypeInformation) -> None:
        self.element_type = element_type

    def __repr__(self) -> str:
        return f"ListTypeInfo({self.element_type!r})"

    def convert(self, value: Any) -> Any:
        return None if value is None else [self.element_type.convert(v) for v in value]

    @property
    def is_identity(self) -> bool:
        return False

    def java_str(self, value: Any) -> str:
        if value is None:
            return "null"
        return "[" + ", ".join(self.element_type.java_string(v) for v in value) + "]"


class MapTypeInfo(TypeInformation):
    def __init__(self, key_type: TypeInformation, value_type: TypeInformation) -> None:
        self.key_type = key_type
        self.value_type = value_type

    def __repr__(self) -> str:
        return f"MapTypeInfo({self.key_type!r}, {self.value_type!r})"

    def convert(self, value: Any) -> Any:
        if value is None:
            return None
        return {self.key_type.convert(k): self.value_type.convert(v) for k, v in value.items()}

    @property
    def is_identity(self) -> bool:
        return False

    def java_str(self, value: Any) -> str:
        if value is None:
            return "null"
        keys = hash_map_order(list(value), self.key_type.java_hash)
        return "{" + ", ".join(f"{self.key_type.java_string(k)}="
                               f"{self.value_type.java_string(value[k])}" for k in keys) + "}"


class Types:
    """PyFlink's ``Types`` factory."""

    @staticmethod
    def STRING() -> TypeInformation:
        return BasicTypeInfo("String")

    @staticmethod
    def BYTE() -> TypeInformation:
        return BasicTypeInfo("Byte")

    @staticmethod
    def BOOLEAN() -> TypeInformation:
        return BasicTypeInfo("Boolean")

    @staticmethod
    def SHORT() -> TypeInformation:
        return BasicTypeInfo("Short")

    @staticmethod
    def INT() -> TypeInformation:
        return BasicTypeInfo("Integer")

    @staticmethod
    def LONG() -> TypeInformation:
        return BasicTypeInfo("Long")

    @staticmethod
    def FLOAT() -> TypeInformation:
        return FloatTypeInfo()

    @staticmethod
    def DOUBLE() -> TypeInformation:
        return BasicTypeInfo("Double")

    @staticmethod
    def CHAR() -> TypeInformation:
        return BasicTypeInfo("Character")

    @staticmethod
    def BIG_INT() -> TypeInformation:
        return BasicTypeInfo("BigInteger")

    @staticmethod
    def BIG_DEC() -> TypeInformation:
        return BasicTypeInfo("BigDecimal")

    @staticmethod
    def SQL_DATE() -> TypeInformation:
        return SqlTimeTypeInfo("Date")

    @staticmethod
    def SQL_TIME() -> TypeInformation:
        return SqlTimeTypeInfo("Time")

    @staticmethod
    def SQL_TIMESTAMP() -> TypeInformation:
        return SqlTimeTypeInfo("Timestamp")

    @staticmethod
    def PICKLED_BYTE_ARRAY() -> TypeInformation:
        return PickledBytesTypeInfo()

    @staticmethod
    def ROW(field_types: list[TypeInformation]) -> TypeInformation:
        return RowTypeInfo(field_types)

    @staticmethod
    def ROW_NAMED(field_names: list[str], field_types: list[TypeInformation]) -> TypeInformation:
        return RowTypeInfo(field_types, field_names)

    @staticmethod
    def TUPLE(field_types: list[TypeInformation]) -> TypeInformation:
        return TupleTypeInfo(field_types)

    @staticmethod
    def MAP(key_type_info: TypeInformation, value_type_info: TypeInformation) -> TypeInformation:
        return MapTypeInfo(key_type_info, value_type_info)

    @staticmethod
    def LIST(element_type_info: TypeInformation) -> TypeInformation:
        return ListTypeInfo(element_type_info)


# ---------------------------------------------------------------- Java's toString


def _i32(x: int) -> int:
    x &= 0xFFFFFFFF
    return x - (1 << 32) if x >= (1 << 31) else x


def to_float32(value: Any) -> float:
    return float(struct.unpack("<f", struct.pack("<f", float(value)))[0])


def _sci(digits: str, exp: int) -> str:
    """Java's computerized scientific notation: ``d.dddE<exp>`` (at least one fraction digit)."""
    return f"{digits[0]}.{digits[1:] or '0'}E{exp}"


def _java_decimal(text: str) -> str:
    """Format a shortest decimal string of a finite non-zero value as Java's
    ``Double.toString`` / ``Float.toString`` do: plain for 1e-3 <= |v| < 1e7, else
    ``d.dddE<exp>``."""
    sign, digit_tuple, exponent = Decimal(text).normalize().as_tuple()
    digits = "".join(map(str, digit_tuple))
    exp10 = len(digits) - 1 + int(exponent)  # exponent of the leading digit
    prefix = "-" if sign else ""
    if -3 <= exp10 < 7:
        if exp10 >= 0:
            whole = digits[:exp10 + 1].ljust(exp10 + 1, "0")
            frac = digits[exp10 + 1:] or "0"
        else:
            whole, frac = "0", "0" * (-exp10 - 1) + digits
        return f"{prefix}{whole}.{frac}"
    return prefix + _sci(digits, exp10)


def java_double_str(d: float) -> str:
    if d != d:
        return "NaN"
    if d in (float("inf"), float("-inf")):
        return "Infinity" if d > 0 else "-Infinity"
    if d == 0:
        return "-0.0" if str(d).startswith("-") else "0.0"
    return _java_decimal(repr(d))


def java_float_str(f: float) -> str:
    if f != f or f in (float("inf"), float("-inf")) or f == 0:
        return java_double_str(f)
    f32 = to_float32(f)
    for precision in range(1, 10):  # the shortest decimal that reads back as this float
        text = f"{f32:.{precision}g}"
        if to_float32(float(text)) == f32:
            return _java_decimal(text)
    return _java_decimal(repr(f32))


def java_str(value: Any) -> str:
    """The Java ``toString()`` of the Java counterpart of a Python value."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return java_double_str(value)
    if isinstance(value, list):
        return "[" + ", ".join(java_str(v) for v in value) + "]"
    if isinstance(value, tuple):
        return "(" + ",".join(java_str(v) for v in value) + ")"
    return str(value)


def hash_map_order(keys: list[Any], java_hash: Any) -> list[Any]:
    """The iteration order of a ``java.util.HashMap`` made as Flink's MapSerializer makes it
    (``new HashMap<>(size)``, then the entries put in ``keys`` order): by bucket of the final
    table, then insertion order (resizes keep each bucket's relative order)."""
    n = len(keys)
    cap = 1
    while cap < max(n, 1):
        cap <<= 1  # HashMap.tableSizeFor(initialCapacity)
    while n > cap * 0.75:
        cap <<= 1

    def bucket(k: Any) -> int:
        h = java_hash(k) & 0xFFFFFFFF
        return (h ^ (h >> 16)) & (cap - 1)

    return [k for _, _, k in sorted((bucket(k), i, k) for i, k in enumerate(keys))]
