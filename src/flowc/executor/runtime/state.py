"""Keyed state and the runtime context, in PyFlink's shape.

A user function's ``open(runtime_context)`` asks the context for state handles
(``get_state(ValueStateDescriptor(...))``); each handle reads and writes the entry of the
operator's *current key*, which the operator sets before every call into user code, exactly
as Flink's keyed state backend does.

State TTL (``descriptor.enable_time_to_live(StateTtlConfig...)``) follows Flink's heap TTL
state (``TtlStateFactory``, ``AbstractTtlDecorator``): every value - each list element, each
map entry - carries the processing time of its last write (and, with ``OnReadAndWrite``,
read); a value is expired once ``ttl`` milliseconds have passed since, and reading it
removes it (``NeverReturnExpired`` hides it, ``ReturnExpiredIfNotCleanedUp`` returns it that
once). Processing time is the runtime clock (clock.py).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from flowc.errors import ApiError, ExecutionError
from flowc.executor.runtime.ttl import StateTtlConfig, Ttl, TtlValue

_MISSING = object()


@dataclass(frozen=True)
class StateDescriptor:
    name: str

    def enable_time_to_live(self, ttl_config: StateTtlConfig) -> None:
        """PyFlink's ``StateDescriptor.enable_time_to_live``: values of this state expire."""
        if not isinstance(ttl_config, StateTtlConfig):
            from flowc.api.environment import user_call_span

            raise ApiError(f"enable_time_to_live needs a StateTtlConfig, got {ttl_config!r}",
                           user_call_span())
        object.__setattr__(self, "_ttl_config", ttl_config)

    def get_ttl_config(self) -> StateTtlConfig | None:
        return getattr(self, "_ttl_config", None)

    def ttl(self) -> Ttl | None:
        config = self.get_ttl_config()
        return Ttl(config) if config is not None and config.is_enabled() else None


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
    """A state handle: the entries of ``table`` for the backend's current key. Under TTL
    the stored values are ``TtlValue``s; ``_read`` / ``_write`` apply Flink's rules."""

    def __init__(self, backend: KeyedStateBackend, table: dict[Any, Any],
                 ttl: Ttl | None = None) -> None:
        self._backend = backend
        self._table = table
        self._ttl = ttl

    def _key(self) -> Any:
        return self._backend.current_key

    def clear(self) -> None:
        self._table.pop(self._backend.current_key, None)

    def _read(self, container: dict[Any, Any], k: Any) -> Any:
        """The value at ``k`` (``_MISSING`` if none, or expired and hidden): an expired
        value is removed; an unexpired one is refreshed under OnReadAndWrite."""
        cell = container.get(k, _MISSING)
        ttl = self._ttl
        if ttl is None or cell is _MISSING:
            return cell
        now = ttl.now()
        if ttl.expired(cell, now):
            del container[k]
            return cell.value if ttl.return_expired else _MISSING
        if ttl.update_on_read:
            container[k] = TtlValue(cell.value, now)
        return cell.value

    def _peek(self, container: dict[Any, Any], k: Any) -> Any:
        """The value at ``k`` as an update sees it (Flink's TtlReduceFunction /
        TtlAggregateFunction ``getUnexpired``): no refresh, nothing removed."""
        cell = container.get(k, _MISSING)
        ttl = self._ttl
        if ttl is None or cell is _MISSING:
            return cell
        return cell.value if ttl.visible(cell, ttl.now()) else _MISSING

    def _wrap(self, value: Any) -> Any:
        return value if self._ttl is None else TtlValue(value, self._ttl.now())

    def _write(self, container: dict[Any, Any], k: Any, value: Any) -> None:
        container[k] = self._wrap(value)


class ValueState(_State):
    def value(self) -> Any:
        v = self._read(self._table, self._backend.current_key)
        return None if v is _MISSING else v

    def update(self, value: Any) -> None:
        if value is None:
            self.clear()
        else:
            self._write(self._table, self._backend.current_key, value)


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
    """Under TTL every element has its own timestamp (Flink's TtlListState)."""

    def get(self) -> list[Any]:
        k = self._backend.current_key
        stored = self._table.get(k, ())
        ttl = self._ttl
        if ttl is None:
            return list(stored)
        now = ttl.now()
        kept = [c for c in stored if not ttl.expired(c, now)]
        out = [c.value for c in stored if ttl.visible(c, now)]
        if ttl.update_on_read:
            kept = [TtlValue(c.value, now) for c in kept]
        if kept:
            self._table[k] = kept
        else:
            self._table.pop(k, None)
        return out

    def add(self, value: Any) -> None:
        if value is None:
            raise ExecutionError("You cannot add null to a ListState.")
        self._table.setdefault(self._backend.current_key, []).append(self._wrap(value))

    def add_all(self, values: Iterable[Any]) -> None:
        vs = _no_nulls(values)
        if vs:
            self._table.setdefault(self._backend.current_key, []).extend(
                self._wrap(v) for v in vs)

    def update(self, values: Iterable[Any]) -> None:
        vs = _no_nulls(values)
        if vs:
            self._table[self._backend.current_key] = [self._wrap(v) for v in vs]
        else:
            self.clear()

    def __iter__(self) -> Iterator[Any]:
        return iter(self.get())


class MapState(_State):
    """Under TTL every entry has its own timestamp (Flink's TtlMapState)."""

    def _map(self, create: bool = False) -> dict[Any, Any]:
        if create:
            return self._table.setdefault(self._backend.current_key, {})
        return self._table.get(self._backend.current_key, {})

    def _entry(self, key: Any) -> Any:
        m = self._map()
        v = self._read(m, key)
        if not m:
            self._table.pop(self._backend.current_key, None)
        return v

    def get(self, key: Any) -> Any:
        v = self._entry(key)
        return None if v is _MISSING else v

    def put(self, key: Any, value: Any) -> None:
        self._write(self._map(True), key, value)

    def put_all(self, mapping: dict[Any, Any]) -> None:
        m = self._map(True)
        for k, v in mapping.items():
            self._write(m, k, v)

    def remove(self, key: Any) -> None:
        m = self._map()
        m.pop(key, None)
        if not m:
            self.clear()

    def contains(self, key: Any) -> bool:
        return self._entry(key) is not _MISSING

    def items(self) -> list[tuple[Any, Any]]:
        if self._ttl is None:
            return list(self._map().items())
        return [(k, v) for k in list(self._map()) for v in (self._entry(k),)
                if v is not _MISSING]

    def keys(self) -> list[Any]:
        return [k for k, _ in self.items()]

    def values(self) -> list[Any]:
        return [v for _, v in self.items()]

    def is_empty(self) -> bool:
        return not self.items()

    def __iter__(self) -> Iterator[Any]:
        return iter(self.keys())


class ReducingState(_State):
    def __init__(self, backend: KeyedStateBackend, table: dict[Any, Any], fn: Any,
                 ttl: Ttl | None = None) -> None:
        super().__init__(backend, table, ttl)
        self._fn = fn.reduce if hasattr(fn, "reduce") else fn

    def get(self) -> Any:
        v = self._read(self._table, self._backend.current_key)
        return None if v is _MISSING else v

    def add(self, value: Any) -> None:
        if value is None:  # Flink's heap ReducingState: adding null clears the state
            self.clear()
            return
        k = self._backend.current_key
        cur = self._peek(self._table, k)
        self._write(self._table, k, value if cur is _MISSING else self._fn(cur, value))


class AggregatingState(_State):
    """Flink's heap AggregatingState: the table holds the accumulator; ``get`` returns
    ``get_result(accumulator)`` (None when empty); adding None clears it."""

    def __init__(self, backend: KeyedStateBackend, table: dict[Any, Any], fn: Any,
                 ttl: Ttl | None = None) -> None:
        super().__init__(backend, table, ttl)
        self._fn = fn

    def get(self) -> Any:
        acc = self._read(self._table, self._backend.current_key)
        return None if acc is _MISSING else self._fn.get_result(acc)

    def add(self, value: Any) -> None:
        if value is None:
            self.clear()
            return
        k = self._backend.current_key
        acc = self._peek(self._table, k)
        if acc is _MISSING:
            acc = self._fn.create_accumulator()
        self._write(self._table, k, self._fn.add(value, acc))


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
        return ValueState(b, b.table(descriptor), descriptor.ttl())

    def get_list_state(self, descriptor: ListStateDescriptor) -> ListState:
        b = self._need_backend()
        return ListState(b, b.table(descriptor), descriptor.ttl())

    def get_map_state(self, descriptor: MapStateDescriptor) -> MapState:
        b = self._need_backend()
        return MapState(b, b.table(descriptor), descriptor.ttl())

    def get_reducing_state(self, descriptor: ReducingStateDescriptor) -> ReducingState:
        b = self._need_backend()
        return ReducingState(b, b.table(descriptor), descriptor.reduce_function,
                             descriptor.ttl())

    def get_aggregating_state(self, descriptor: AggregatingStateDescriptor) -> AggregatingState:
        b = self._need_backend()
        return AggregatingState(b, b.table(descriptor), descriptor.agg_function,
                                descriptor.ttl())
