"""PyFlink's ``Row`` and ``RowKind`` (``pyflink.common.types``), with the same semantics:
positional or named fields, a row kind (``+I`` by default), ``Row("a", "b")("x", 1)`` to build
named rows, equality by kind and values (named rows compare by field name)."""

from __future__ import annotations

from collections.abc import Iterator
from enum import Enum
from typing import Any


class RowKind(Enum):
    INSERT = 0
    UPDATE_BEFORE = 1
    UPDATE_AFTER = 2
    DELETE = 3

    def __str__(self) -> str:
        return _SHORT[self]


_SHORT = {RowKind.INSERT: "+I", RowKind.UPDATE_BEFORE: "-U", RowKind.UPDATE_AFTER: "+U",
          RowKind.DELETE: "-D"}


def _create_row(fields: list[str] | None, values: Any, row_kind: RowKind | None = None) -> Row:
    row = Row(*values)
    if fields is not None:
        row.set_field_names(list(fields))
    if row_kind is not None:
        row.set_row_kind(row_kind)
    return row


class Row:
    """A record of positional (``Row(1, 'a')``) or named (``Row(name='a', n=1)``) fields."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        if args and kwargs:
            raise ValueError("Can not use both args and kwargs to create Row")
        d = self.__dict__
        if kwargs:
            d["_fields"] = list(kwargs)
            d["_values"] = list(kwargs.values())
        else:
            d["_values"] = list(args)
        d["_row_kind"] = RowKind.INSERT

    @staticmethod
    def of_kind(row_kind: RowKind, *args: Any, **kwargs: Any) -> Row:
        row = Row(*args, **kwargs)
        row.set_row_kind(row_kind)
        return row

    def as_dict(self, recursive: bool = False) -> dict[str, Any]:
        if "_fields" not in self.__dict__:
            raise TypeError("Cannot convert a Row class into dict")

        def conv(obj: Any) -> Any:
            if isinstance(obj, Row):
                return obj.as_dict(True)
            if isinstance(obj, list):
                return [conv(o) for o in obj]
            if isinstance(obj, dict):
                return {k: conv(v) for k, v in obj.items()}
            return obj

        return dict(zip(self._fields, (conv(v) if recursive else v for v in self._values)))

    def get_row_kind(self) -> RowKind:
        return self._row_kind  # type: ignore[no-any-return]

    def set_row_kind(self, row_kind: RowKind) -> None:
        self.__dict__["_row_kind"] = row_kind

    def set_field_names(self, field_names: list[str]) -> None:
        self.__dict__["_fields"] = list(field_names)

    def get_field_names(self) -> list[str] | None:
        return self.__dict__.get("_fields")

    def get_fields_by_names(self, names: list[str]) -> list[Any]:
        fields = self.__dict__.get("_fields")
        if fields is None or not set(names) <= set(fields):
            missing = set(names) - set(fields or ())
            raise Exception(f"Field names {missing} not exist in {fields}.")
        return [self._values[fields.index(n)] for n in names]

    def __call__(self, *args: Any) -> Row:
        # Row("name", "age") is a row "class": calling it makes a named row.
        if len(args) > len(self._values):
            raise ValueError(f"Can not create Row with fields {self._values}, expected "
                             f"{len(self._values)} values but got {args}")
        return _create_row(list(self._values), args, self._row_kind)

    def __contains__(self, item: Any) -> bool:
        fields = self.__dict__.get("_fields")
        return item in fields if fields is not None else item in self._values

    def __getitem__(self, item: Any) -> Any:
        if isinstance(item, (int, slice)):
            return self._values[item]
        fields = self.__dict__.get("_fields")
        if fields is None or item not in fields:
            raise KeyError(item)
        return self._values[fields.index(item)]

    def __setitem__(self, key: Any, value: Any) -> None:
        if isinstance(key, int):
            self._values[key] = value
            return
        fields = self.__dict__.get("_fields")
        if fields is None or key not in fields:
            raise KeyError(key)
        self._values[fields.index(key)] = value

    def __getattr__(self, item: str) -> Any:
        if item.startswith("__"):
            raise AttributeError(item)
        fields = self.__dict__.get("_fields")
        if fields is None or item not in fields:
            raise AttributeError(item)
        return self._values[fields.index(item)]

    def __setattr__(self, key: str, value: Any) -> None:
        if key not in ("_fields", "_values", "_row_kind"):
            raise AttributeError(key)
        self.__dict__[key] = value

    def __reduce__(self) -> Any:
        return _create_row, (self.__dict__.get("_fields"), tuple(self._values), self._row_kind)

    def __repr__(self) -> str:
        fields = self.__dict__.get("_fields")
        if fields is not None:
            return "Row({})".format(", ".join(f"{k}={v!r}" for k, v in zip(fields, self._values)))
        return "<Row({})>".format(", ".join(repr(v) for v in self._values))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Row):
            return False
        mine, theirs = self.__dict__.get("_fields"), other.__dict__.get("_fields")
        if (mine is None) != (theirs is None) or self._row_kind != other._row_kind:
            return False
        if mine is None:
            return self._values == other._values  # type: ignore[no-any-return]
        if sorted(mine) != sorted(theirs or ()):
            return False
        return all(self[n] == other[n] for n in mine)

    def __hash__(self) -> int:
        return hash(tuple(self._values))

    def __iter__(self) -> Iterator[Any]:
        return iter(self._values)

    def __len__(self) -> int:
        return len(self._values)
