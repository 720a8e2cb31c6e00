"""The stream classes of the PyFlink-shaped API, under their historical import path.

They live in ``flowc.api.data_stream`` (DataStream, DataStreamSink), ``flowc.api.keyed``
(KeyedStream, WindowedStream) and ``flowc.api.connected`` (ConnectedStreams, interval and
window joins); ``flowc.api.base`` has what they share. Prefer ``flowc.datastream`` in
programs.
"""

from __future__ import annotations

from flowc.api.connected import (
    CoGroupWindowFunction,
    ConnectedStreams,
    IntervalJoin,
    IntervalJoined,
    JoinedStreams,
)
from flowc.api.data_stream import DataStream, DataStreamSink
from flowc.api.keyed import KeyedStream, WindowedStream

__all__ = [
    "CoGroupWindowFunction", "ConnectedStreams", "DataStream", "DataStreamSink",
    "IntervalJoin", "IntervalJoined", "JoinedStreams", "KeyedStream", "WindowedStream",
]
