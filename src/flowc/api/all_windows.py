"""``DataStream.window_all``: Flink's AllWindowedStream, a window over the whole stream.

Flink builds it as ``input.keyBy(new NullByteKeySelector())`` (every record has the key
``(byte) 0``: a HASH edge) followed by the window operator made non-parallel
(``forceNonParallel()``: parallelism 1, max parallelism 1). The functions are the all-window
ones: ``ProcessAllWindowFunction.process(context, elements)`` and
``AllWindowFunction.apply(window, inputs)``, without a key."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from flowc.api.functions import AllWindowFunction, ProcessAllWindowFunction
from flowc.errors import ApiError
from flowc.windowing import CountWindowAssigner, Duration, WindowAssigner

if TYPE_CHECKING:
    from flowc.api.keyed import WindowedStream
    from flowc.api.stream import DataStream


def null_byte_key(value: Any) -> int:
    """Flink's NullByteKeySelector: the key ``(byte) 0`` for every record."""
    return 0


class AllWindowedStream:
    def __init__(self, stream: DataStream, assigner: WindowAssigner) -> None:
        if not isinstance(assigner, WindowAssigner) or isinstance(assigner, CountWindowAssigner):
            raise ApiError(f"window_all needs a time window assigner, got {assigner!r}")
        self._windowed: WindowedStream = stream.key_by(null_byte_key).window(assigner)

    def allowed_lateness(self, time: Duration | int) -> AllWindowedStream:
        self._windowed.allowed_lateness(time)
        return self

    def trigger(self, trigger: Any) -> AllWindowedStream:
        self._windowed.trigger(trigger)
        return self

    def side_output_late_data(self, output_tag: Any) -> AllWindowedStream:
        self._windowed.side_output_late_data(output_tag)
        return self

    @staticmethod
    def _non_parallel(result: DataStream) -> DataStream:
        # Flink's forceNonParallel().
        return result.set_parallelism(1).set_max_parallelism(1)

    @staticmethod
    def _all_fn(fn: Any) -> Any:
        if fn is None or isinstance(fn, (AllWindowFunction, ProcessAllWindowFunction)):
            return fn
        raise ApiError("window_all takes a ProcessAllWindowFunction or an AllWindowFunction, "
                       f"got {fn!r}")

    def reduce(self, reduce_function: Any, window_function: Any = None,
               output_type: Any = None) -> DataStream:
        return self._non_parallel(self._windowed.reduce(
            reduce_function, self._all_fn(window_function), output_type))

    def aggregate(self, aggregate_function: Any, window_function: Any = None,
                  accumulator_type: Any = None, output_type: Any = None) -> DataStream:
        return self._non_parallel(self._windowed.aggregate(
            aggregate_function, self._all_fn(window_function), accumulator_type, output_type))

    def process(self, process_all_window_function: Any, output_type: Any = None) -> DataStream:
        fn = self._all_fn(process_all_window_function)
        return self._non_parallel(self._windowed.process(fn, output_type))

    def apply(self, all_window_function: Any, output_type: Any = None) -> DataStream:
        fn = self._all_fn(all_window_function)
        return self._non_parallel(self._windowed.apply(fn, output_type))
