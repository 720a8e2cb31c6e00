"""What every stream class of the API shares: argument checks, key selectors and the
per-operator settings (name, uid, parallelism, slot sharing, chaining) that DataStream and
DataStreamSink both offer, as Flink's SingleOutputStreamOperator and DataStreamSink do."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from flowc.api.functions import key_selector_fn
from flowc.errors import ApiError
from flowc.transformations import (
    ChainingStrategy,
    KeySelector,
    OneInputTransformation,
    SinkTransformation,
    SourceTransformation,
    Transformation,
    TwoInputTransformation,
)

if TYPE_CHECKING:
    from flowc.api.environment import StreamExecutionEnvironment

_HEX32 = re.compile(r"^[0-9a-fA-F]{32}$")


def check_fn(func: Any, cls: type, method: str, what: str) -> Any:
    if isinstance(func, cls) or callable(func):
        return func
    raise ApiError(f"{what} needs a callable or a {cls.__name__} (with {method}()), got {func!r}")


def as_key_selector(selector: Any) -> KeySelector:
    if isinstance(selector, KeySelector):
        return selector
    if isinstance(selector, str):
        # A field name: the key is that attribute/item of the record.
        name = selector
        return KeySelector(lambda v, n=name: v[n] if isinstance(v, dict) else getattr(v, n),
                           (name,), name)
    if isinstance(selector, int) and not isinstance(selector, bool):
        pos = selector
        return KeySelector(lambda v, p=pos: v[p], (), f"[{pos}]")
    try:
        fn = key_selector_fn(selector)
    except TypeError as e:
        raise ApiError(str(e)) from None
    return KeySelector(fn, (), getattr(selector, "__name__", type(selector).__name__))


_UNHASHABLE = (list, dict, set, frozenset, bytearray, bytes)


def is_keyable(key_type: Any) -> bool:
    """Whether records of ``key_type`` (a flowc type, or a Python class) may be keys."""
    from flowc.types import Type

    if isinstance(key_type, Type):
        return not key_type.is_array
    if isinstance(key_type, type):
        return not issubclass(key_type, _UNHASHABLE)
    return True


def type_name(key_type: Any) -> str:
    return key_type.__name__ if isinstance(key_type, type) else str(key_type)


class OperatorSettings:
    """Per-operator settings shared by DataStream (operators) and DataStreamSink."""

    def __init__(self, env: StreamExecutionEnvironment, tid: int) -> None:
        self._env = env
        self._id = tid

    @property
    def transformation_id(self) -> int:
        return self._id

    def _require_operator(self, what: str) -> Transformation:
        t = self._env._get(self._id)
        if not isinstance(t, (OneInputTransformation, TwoInputTransformation,
                              SourceTransformation, SinkTransformation)):
            kind = type(t).__name__.replace("Transformation", "").lower() or "stream"
            raise ApiError(f"{what}() can only be called on an operator (a source, map, filter, "
                           f"..., or sink), not on a {kind} stream", t.span)
        return t

    def name(self, name: str) -> Any:
        self._require_operator("name")
        if not isinstance(name, str):
            raise ApiError(f"name must be a string, got {name!r}")
        self._env._update(self._id, name=name)
        return self

    def get_name(self) -> str:
        return self._env._get(self._id).name

    def uid(self, uid: str) -> Any:
        self._require_operator("uid")
        if not isinstance(uid, str):
            raise ApiError(f"uid must be a string, got {uid!r}")
        if uid == "":
            raise ApiError("Empty string operator uid is not allowed")
        self._env._update(self._id, uid=uid)
        return self

    def set_uid_hash(self, uid_hash: str) -> Any:
        t = self._require_operator("set_uid_hash")
        if isinstance(t, SinkTransformation) and not t.legacy:
            # Flink's DataStreamSink.setUidHash: a v2 sink expands into several operators.
            raise ApiError("Cannot set a custom UID hash on a non-legacy sink", t.span)
        if not isinstance(uid_hash, str) or not _HEX32.match(uid_hash):
            raise ApiError("Node hash must be a 32 character String that describes a hex code. "
                           f"Found: {uid_hash}")
        self._env._update(self._id, uid_hash=uid_hash.lower())
        return self

    def set_description(self, description: str) -> Any:
        self._require_operator("set_description")
        self._env._update(self._id, description=description)
        return self

    def set_parallelism(self, parallelism: int) -> Any:
        from flowc.api.environment import validate_parallelism

        self._require_operator("set_parallelism")
        self._env._update(self._id, parallelism=validate_parallelism(parallelism))
        return self

    def get_parallelism(self) -> int:
        return self._env._get(self._id).parallelism

    def set_max_parallelism(self, max_parallelism: int) -> Any:
        from flowc.api.environment import validate_max_parallelism

        self._require_operator("set_max_parallelism")
        self._env._update(self._id, max_parallelism=validate_max_parallelism(max_parallelism))
        return self

    def slot_sharing_group(self, slot_sharing_group: str) -> Any:
        self._require_operator("slot_sharing_group")
        name = getattr(slot_sharing_group, "name", slot_sharing_group)
        if not isinstance(name, str) or not name:
            raise ApiError(f"slot sharing group must be a non-empty string, got {name!r}")
        self._env._update(self._id, slot_sharing_group=name)
        return self

    def disable_chaining(self) -> Any:
        self._require_operator("disable_chaining")
        self._env._update(self._id, chaining=ChainingStrategy.NEVER)
        return self
