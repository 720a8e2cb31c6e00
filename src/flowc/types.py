"""Static types of the .flow language: scalar types, arrays, and stream schemas.

Values at run time: ``string`` -> str, ``int`` -> Python int (64-bit semantics are the
user's promise; Python ints do not overflow), ``double`` -> float, ``bool`` -> bool,
``timestamp`` -> int milliseconds since the epoch (UTC), ``decimal(p, s)`` -> decimal.Decimal
with exponent -s (exact, see flowc.decimals), ``array<T>`` -> list, and ``None`` is SQL's null
for every type. A record is a tuple in schema field order.

``NULL`` (the type of the literal ``null``) and ``DURATION`` (the type of ``5s``) exist only
inside expressions: neither can be the type of a stream field.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

from flowc import decimals


@dataclass(frozen=True)
class Type:
    """A type; ``element`` is set only for arrays and maps (their values), ``key`` only for
    maps, ``precision`` / ``scale`` only for decimals."""

    kind: str
    element: Type | None = None
    precision: int = 0
    scale: int = 0
    key: Type | None = None  # a map's key type (``element`` is its value type)
    # A timestamp's SQL flavour: "" TIMESTAMP(3), "ltz" TIMESTAMP_LTZ(3) (flowc's session
    # time zone is UTC), "date" DATE (its day's midnight). They share the runtime value
    # (UTC epoch ms) and every operation and differ only in how values print, cast to
    # strings and are written; so the flavour is not compared (it never makes types
    # incompatible) and an expression keeps its operands' flavour where Flink's type does.
    flavor: str = field(default="", compare=False)

    def __str__(self) -> str:
        if self.kind == "array":
            return f"array<{self.element}>"
        if self.kind == "decimal":
            return decimals.type_name(self.precision, self.scale)
        if self.kind == "map":
            return f"map<{self.key}, {self.element}>"
        return self.kind

    @property
    def text_kind(self) -> str:
        """The kind a printed or written value follows: ``timestamp_ltz`` and ``date`` for
        those flavours of timestamp, else ``kind``."""
        if self.kind == "timestamp" and self.flavor:
            return "timestamp_ltz" if self.flavor == "ltz" else "date"
        return self.kind

    @property
    def sql_name(self) -> str:
        """Flink's name of the type (error texts)."""
        if self.kind == "timestamp":
            return {"ltz": "TIMESTAMP_LTZ(3)", "date": "DATE"}.get(self.flavor, "TIMESTAMP(3)")
        if self.kind == "decimal":
            return f"DECIMAL({self.precision}, {self.scale})"
        if self.kind == "array":
            return f"ARRAY<{self.element.sql_name if self.element else '?'}>"
        if self.kind == "map":
            return (f"MAP<{self.key.sql_name if self.key else '?'}, "
                    f"{self.element.sql_name if self.element else '?'}>")
        return {"string": "STRING", "int": "BIGINT", "double": "DOUBLE",
                "bool": "BOOLEAN"}.get(self.kind, self.kind.upper())

    @property
    def is_numeric(self) -> bool:
        return self.kind in ("int", "double", "decimal")

    @property
    def is_decimal(self) -> bool:
        return self.kind == "decimal"

    @property
    def ps(self) -> tuple[int, int]:
        """(precision, scale) of a decimal; an int counts as DECIMAL(19, 0), Flink's BIGINT."""
        if self.kind == "int":
            return decimals.BIGINT_PRECISION, 0
        return self.precision, self.scale

    @property
    def is_array(self) -> bool:
        return self.kind == "array"

    @property
    def is_null(self) -> bool:
        return self.kind == "null"

    @property
    def storable(self) -> bool:
        """Whether a stream field may have this type."""
        if self.kind == "array":
            return self.element is not None and self.element.storable
        if self.kind == "map":
            return (self.key is not None and self.key.storable and self.element is not None
                    and self.element.storable)
        return self.kind in SCALAR_NAMES or self.kind == "decimal"


STRING = Type("string")
INT = Type("int")
DOUBLE = Type("double")
BOOL = Type("bool")
TIMESTAMP = Type("timestamp")
TIMESTAMP_LTZ = Type("timestamp", flavor="ltz")
DATE = Type("timestamp", flavor="date")
NULL = Type("null")
DURATION = Type("duration")

SCALARS: dict[str, Type] = {t.kind: t for t in (STRING, INT, DOUBLE, BOOL, TIMESTAMP)}
SCALAR_NAMES = frozenset(SCALARS)
# Names a user may write for a type, including array (which takes one parameter).
TYPE_NAMES = tuple(sorted(SCALARS)) + ("array",)
# Names people bring from SQL or other languages, mapped to flowc's type names.
TYPE_ALIASES = {"integer": "int", "long": "int", "bigint": "int", "smallint": "int",
                "tinyint": "int", "int32": "int", "int64": "int", "float": "double",
                "real": "double", "float64": "double", "numeric": "decimal(10, 2)",
                "dec": "decimal(10, 2)", "number": "decimal(10, 2)",
                "money": "decimal(10, 2)", "boolean": "bool", "varchar": "string",
                "char": "string", "text": "string", "str": "string", "list": "array",
                "datetime": "timestamp", "date": "timestamp"}


def type_meant(word: str) -> str | None:
    """The .flow type a word names, itself or as another language spells it (``bigint``,
    ``long``: int), or None."""
    w = word.lower()
    return w if w in TYPE_NAMES and w != "array" else TYPE_ALIASES.get(w)


def array_of(element: Type) -> Type:
    return Type("array", element)


def map_of(key: Type, value: Type) -> Type:
    return Type("map", value, key=key)


def decimal_of(precision: int, scale: int) -> Type:
    return Type("decimal", precision=precision, scale=scale)


def type_from_name(name: str, element: Type | None = None) -> Type | None:
    """The type a user wrote (``int``, ``array<string>``, ``decimal(10, 2)``), or None when it
    does not exist."""
    ps = decimals.parse_name(name)
    if ps is not None and element is None:
        return decimal_of(*ps) if decimals.check(*ps) is None else None
    if name == "array":
        return array_of(element) if element is not None else None
    if element is not None:
        return None
    return SCALARS.get(name)


def assignable(source: Type, target: Type) -> bool:
    """Whether a value of ``source`` may be stored where ``target`` is expected: the same
    type, ``null`` anywhere, or the one implicit widening, int -> double (also inside arrays)."""
    if source == target or source.is_null:
        return True
    if source == INT and target == DOUBLE:
        return True
    if source.is_decimal and target.is_decimal:
        # DECIMAL(p, s) into a wider DECIMAL: every value fits, exactly
        return (source.scale <= target.scale
                and source.precision - source.scale <= target.precision - target.scale)
    if source.is_array and target.is_array:
        assert source.element is not None and target.element is not None
        return assignable(source.element, target.element)
    return False


def common_type(a: Type, b: Type) -> Type | None:
    """The type both ``a`` and ``b`` widen to (for ``case``, ``coalesce``, comparisons, ``in``),
    or None when they are incompatible."""
    if assignable(a, b):
        return b
    if assignable(b, a):
        return a
    if a.is_decimal or b.is_decimal:
        # DECIMAL with DOUBLE is DOUBLE; with BIGINT or another DECIMAL a DECIMAL wide enough
        if DOUBLE in (a, b):
            return DOUBLE if {a.kind, b.kind} <= {"double", "decimal"} else None
        if {a.kind, b.kind} <= {"int", "decimal"}:
            return decimal_of(*decimals.common(a.ps, b.ps))
    return None


@dataclass(frozen=True)
class Field:
    name: str
    type: Type

    def __str__(self) -> str:
        return f"{self.name} {self.type}"


@dataclass(frozen=True)
class Schema:
    """The ordered, named, typed fields of a stream's records (tuples in this order)."""

    fields: tuple[Field, ...]

    @staticmethod
    def of(*pairs: tuple[str, Type]) -> Schema:
        return Schema(tuple(Field(n, t) for n, t in pairs))

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(f.name for f in self.fields)

    @property
    def types(self) -> tuple[Type, ...]:
        return tuple(f.type for f in self.fields)

    def index_of(self, name: str) -> int | None:
        for i, f in enumerate(self.fields):
            if f.name == name:
                return i
        return None

    def field(self, name: str) -> Field | None:
        i = self.index_of(name)
        return None if i is None else self.fields[i]

    def __iter__(self) -> Iterator[Field]:
        return iter(self.fields)

    def __len__(self) -> int:
        return len(self.fields)

    def __str__(self) -> str:
        return "(" + ", ".join(str(f) for f in self.fields) + ")"

    def as_pairs(self) -> tuple[tuple[str, str], ...]:
        """``(name, type name)`` pairs, the shape FileSource/FileSink specs carry."""
        return tuple((f.name, str(f.type)) for f in self.fields)


def schema_from(names: Sequence[str], types: Sequence[Type]) -> Schema:
    return Schema(tuple(Field(n, t) for n, t in zip(names, types)))
