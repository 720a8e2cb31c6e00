"""Broadcast state (PyFlink's ``broadcast(descriptor)`` / ``connect(broadcast_stream)``).

``stream.broadcast(MapStateDescriptor(...))`` is a BROADCAST partitioning of ``stream`` that
carries the broadcast states' descriptors; ``main.connect(it).process(f)`` is a two-input
operator, ``Co-Process-Broadcast`` (a BroadcastProcessFunction) or, when ``main`` is keyed,
``Co-Process-Broadcast-Keyed`` (a KeyedBroadcastProcessFunction), as Flink names them."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from flowc.api.functions import BroadcastProcessFunction, KeyedBroadcastProcessFunction
from flowc.api.typed import typed
from flowc.errors import ApiError
from flowc.operators import BroadcastProcessOp, KeyedBroadcastProcessOp
from flowc.transformations import TwoInputTransformation

if TYPE_CHECKING:
    from flowc.api.data_stream import DataStream


class BroadcastStream:
    def __init__(self, stream: DataStream, descriptors: tuple[Any, ...]) -> None:
        self.stream = stream  # the BROADCAST-partitioned stream
        self.descriptors = descriptors


class BroadcastConnectedStream:
    def __init__(self, first: DataStream, second: BroadcastStream) -> None:
        self.first = first
        self.second = second

    def process(self, func: Any, output_type: Any = None) -> DataStream:
        from flowc.api.data_stream import DataStream

        keyed = self.first._key() is not None
        if keyed and not isinstance(func, KeyedBroadcastProcessFunction):
            raise ApiError("a keyed stream connected with a broadcast stream needs a "
                           "KeyedBroadcastProcessFunction")
        if not keyed and (not isinstance(func, BroadcastProcessFunction)
                          or isinstance(func, KeyedBroadcastProcessFunction)):
            raise ApiError("a non-keyed stream connected with a broadcast stream needs a "
                           "BroadcastProcessFunction")
        fn = typed(func, output_type, _typed_wrapper(keyed))
        op: Any = (KeyedBroadcastProcessOp(fn, self.second.descriptors) if keyed
                   else BroadcastProcessOp(fn, self.second.descriptors))
        env = self.first._env
        t = TwoInputTransformation(
            id=env._draw_id(), name=op.default_name, input1=self.first._id,
            input2=self.second.stream._id, operator=op, key1=self.first._key(), key2=None,
            parallelism=env.config.parallelism, span=env._caller_span(),
            output_type=output_type)
        env._add(t, register=True)
        return DataStream(env, t.id)


def _typed_wrapper(keyed: bool) -> Any:
    from flowc.api.typed import TypedBroadcastProcess, TypedKeyedBroadcastProcess

    return TypedKeyedBroadcastProcess if keyed else TypedBroadcastProcess
