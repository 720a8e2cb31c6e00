"""Keyed state and the runtime context, in PyFlink's shape.

A user function's ``open(runtime_context)`` asks the context for state handles
(``get_state(ValueStateDescriptor(...))``); each handle reads and writes the entry of the
operator's *current key*, which the operator sets before every call into user code, exactly
as Flink's keyed state backend does.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from flowc.errors import ExecutionError

_MISSING = object()


@dataclass(frozen=True)
class StateDescriptor:
    name: str


@dataclass(frozen=True, init=False)
class ValueStateDescriptor(StateDescriptor):
    type_info: Any

    def __init__(self, name: str, value_type_info: Any = None) -> None:
        object.__setattr__(self, "name", name)
        object.__setattr__(self, "type_info", value_type_info)


@dataclass(frozen=True, init=False)
class ListStateDescriptor(StateDescriptor):
    type_info: Any

    def __init__(self, name: str, elem_type_info: Any = None) -> None:
        object.__setattr__(self, "name", name)
        object.__setattr__(self, "type_info", elem_type_info)


@dataclass(frozen=True, init=False)
class MapStateDescriptor(StateDescriptor):
    key_type_info: Any
    value_type_info: Any

    def __init__(self, name: str, key_type_info: Any = None, value_type_info: Any = None) -> None:
        object.__setattr__(self, "name", name)
        object.__setattr__(self, "key_type_info", key_type_info)
        object.__setattr__(self, "value_type_info", value_type_info)


@dataclass(frozen=True, init=False)
class ReducingStateDescriptor(StateDescriptor):
    reduce_function: Any
    type_info: Any

    def __init__(self, name: str, reduce_function: Any, type_info: Any = None) -> None:
        object.__setattr__(self, "name", name)
        object.__setattr__(self, "reduce_function", reduce_function)
        object.__setattr__(self, "type_info", type_info)


@dataclass(frozen=True, init=False)
class AggregatingStateDescriptor(StateDescriptor):
    agg_function: Any
    type_info: Any

    def __init__(self, name: str, agg_function: Any, state_type_info: Any = None) -> None:
        object.__setattr__(self, "name", name)
        object.__setattr__(self, "agg_function", agg_function)
        object.__setattr__(self, "type_info", state_type_info)


class KeyedStateBackend:
    """All keyed state of one operator subtask: ``tables[state name][key] -> value``."""

    def __init__(self) -> None:
        self.current_key: Any = None
        self.tables: dict[str, dict[Any, Any]] = {}
        self.kinds: dict[str, type] = {}

    def table(self, desc: StateDescriptor) -> dict[Any, Any]:
        kind = self.kinds.setdefault(desc.name, type(desc))
        if kind is not type(desc):
            raise ExecutionError(f"state '{desc.name}' was registered as {kind.__name__} and "
                                 f"is now requested as {type(desc).__name__}")
        return self.tables.setdefault(desc.name, {})


class _State:
    def __init__(self, backend: KeyedStateBackend, table: dict[Any, Any]) -> None:
        self._backend = backend
        self._table = table

    def _key(self) -> Any:
        return self._backend.current_key

    def clear(self) -> None:
        self._table.pop(self._backend.current_key, None)


class ValueState(_State):
    def value(self) -> Any:
        return self._table.get(self._backend.current_key)

    def update(self, value: Any) -> None:
        if value is None:
            self.clear()
        else:
            self._table[self._backend.current_key] = value


def _no_nulls(values: Iterable[Any] | None) -> list[Any]:
    """Flink's heap ListState rejects a null list and null elements (before changing
    anything)."""
    if values is None:
        raise ExecutionError("List of values to add cannot be null.")
    vs = list(values)
    if any(v is None for v in vs):
        raise ExecutionError("You cannot add null to a ListState.")
    return vs


class ListState(_State):
    def get(self) -> list[Any]:
        return list(self._table.get(self._backend.current_key, ()))

    def add(self, value: Any) -> None:
        if value is None:
            raise ExecutionError("You cannot add null to a ListState.")
        self._table.setdefault(self._backend.current_key, []).append(value)

    def add_all(self, values: Iterable[Any]) -> None:
        vs = _no_nulls(values)
        if vs:
            self._table.setdefault(self._backend.current_key, []).extend(vs)

    def update(self, values: Iterable[Any]) -> None:
        vs = _no_nulls(values)
        if vs:
            self._table[self._backend.current_key] = vs
        else:
            self.clear()

    def __iter__(self) -> Iterator[Any]:
        return iter(self.get())


class MapState(_State):
    def _map(self, create: bool = False) -> dict[Any, Any]:
        if create:
            return self._table.setdefault(self._backend.current_key, {})
        return self._table.get(self._backend.current_key, {})

    def get(self, key: Any) -> Any:
        return self._map().get(key)

    def put(self, key: Any, value: Any) -> None:
        self._map(True)[key] = value

    def put_all(self, mapping: dict[Any, Any]) -> None:
        self._map(True).update(mapping)

    def remove(self, key: Any) -> None:
        m = self._map()
        m.pop(key, None)
        if not m:
            self.clear()

    def contains(self, key: Any) -> bool:
        return key in self._map()

    def keys(self) -> list[Any]:
        return list(self._map().keys())

    def values(self) -> list[Any]:
        return list(self._map().values())

    def items(self) -> list[tuple[Any, Any]]:
        return list(self._map().items())

    def is_empty(self) -> bool:
        return not self._map()

    def __iter__(self) -> Iterator[Any]:
        return iter(self.keys())


class ReducingState(_State):
    def __init__(self, backend: KeyedStateBackend, table: dict[Any, Any], fn: Any) -> None:
        super().__init__(backend, table)
        self._fn = fn.reduce if hasattr(fn, "reduce") else fn

    def get(self) -> Any:
        return self._table.get(self._backend.current_key)

    def add(self, value: Any) -> None:
        if value is None:  # Flink's heap ReducingState: adding null clears the state
            self.clear()
            return
        k = self._backend.current_key
        cur = self._table.get(k, _MISSING)
        self._table[k] = value if cur is _MISSING else self._fn(cur, value)


class AggregatingState(_State):
    """Flink's heap AggregatingState: the table holds the accumulator; ``get`` returns
    ``get_result(accumulator)`` (None when empty); adding None clears it."""

    def __init__(self, backend: KeyedStateBackend, table: dict[Any, Any], fn: Any) -> None:
        super().__init__(backend, table)
        self._fn = fn

    def get(self) -> Any:
        acc = self._table.get(self._backend.current_key, _MISSING)
        return None if acc is _MISSING else self._fn.get_result(acc)

    def add(self, value: Any) -> None:
        if value is None:
            self.clear()
            return
        k = self._backend.current_key
        acc = self._table.get(k, _MISSING)
        if acc is _MISSING:
            acc = self._fn.create_accumulator()
        self._table[k] = self._fn.add(value, acc)


class ReadOnlyBroadcastState:
    """Broadcast (operator) state as the non-broadcast side sees it: a map it may read.
    Every subtask keeps its own copy, which the broadcast elements update alike."""

    def __init__(self, entries: dict[Any, Any]) -> None:
        self._entries = entries

    def get(self, key: Any) -> Any:
        return self._entries.get(key)

    def contains(self, key: Any) -> bool:
        return key in self._entries

    def items(self) -> Iterable[tuple[Any, Any]]:
        return list(self._entries.items())

    def keys(self) -> Iterable[Any]:
        return list(self._entries)

    def values(self) -> Iterable[Any]:
        return list(self._entries.values())

    def is_empty(self) -> bool:
        return not self._entries

    def __iter__(self) -> Iterator[Any]:
        return iter(list(self._entries))


class BroadcastState(ReadOnlyBroadcastState):
    """Broadcast state as ``process_broadcast_element`` sees it: it may change it."""

    def put(self, key: Any, value: Any) -> None:
        self._entries[key] = value

    def put_all(self, entries: dict[Any, Any]) -> None:
        self._entries.update(entries)

    def remove(self, key: Any) -> None:
        self._entries.pop(key, None)

    def clear(self) -> None:
        self._entries.clear()


class RuntimeContext:
    """PyFlink's RuntimeContext: task info plus keyed state (keyed operators only)."""

    def __init__(self, task_name: str, subtask: int, parallelism: int, max_parallelism: int,
                 backend: KeyedStateBackend | None) -> None:
        self._task_name = task_name
        self._subtask = subtask
        self._parallelism = parallelism
        self._max_parallelism = max_parallelism
        self._backend = backend

    def get_task_name(self) -> str:
        return self._task_name

    def get_index_of_this_subtask(self) -> int:
        return self._subtask

    def get_number_of_parallel_subtasks(self) -> int:
        return self._parallelism

    def get_max_number_of_parallel_subtasks(self) -> int:
        return self._max_parallelism

    def get_attempt_number(self) -> int:
        return 0

    def _need_backend(self) -> KeyedStateBackend:
        if self._backend is None:
            raise ExecutionError("Keyed state can only be used on a 'keyed stream', "
                                 "i.e., after a 'key_by()' operation.")
        return self._backend

    def get_state(self, descriptor: ValueStateDescriptor) -> ValueState:
        b = self._need_backend()
        return ValueState(b, b.table(descriptor))

    def get_list_state(self, descriptor: ListStateDescriptor) -> ListState:
        b = self._need_backend()
        return ListState(b, b.table(descriptor))

    def get_map_state(self, descriptor: MapStateDescriptor) -> MapState:
        b = self._need_backend()
        return MapState(b, b.table(descriptor))

    def get_reducing_state(self, descriptor: ReducingStateDescriptor) -> ReducingState:
        b = self._need_backend()
        return ReducingState(b, b.table(descriptor), descriptor.reduce_function)

    def get_aggregating_state(self, descriptor: AggregatingStateDescriptor) -> AggregatingState:
        b = self._need_backend()
        return AggregatingState(b, b.table(descriptor), descriptor.agg_function)
