"""KeyedStream (rolling reduce, aggregations, keyed process) and WindowedStream."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from flowc.api.base import check_fn
from flowc.api.data_stream import DataStream
from flowc.api.functions import (
    AggregateFunction,
    AllWindowFunction,
    KeyedProcessFunction,
    ProcessAllWindowFunction,
    ProcessWindowFunction,
    ReduceFunction,
    WindowFunction,
    as_process_window_function,
)
from flowc.api.typed import TypedKeyedProcess, typed
from flowc.errors import ApiError
from flowc.operators import (
    AggregationOp,
    CountWindowOp,
    KeyedProcessOp,
    ReduceOp,
    TriggerWindowOp,
    WindowOp,
)
from flowc.transformations import KeySelector, OutputTag
from flowc.windowing import (
    CountSlidingWindowAssigner,
    CountTumblingWindowAssigner,
    CountWindowAssigner,
    Duration,
    GlobalWindows,
    WindowAssigner,
    to_millis,
)

if TYPE_CHECKING:
    from flowc.api.connected import IntervalJoin
    from flowc.api.environment import StreamExecutionEnvironment


class KeyedStream(DataStream):
    def __init__(self, env: StreamExecutionEnvironment, tid: int, key: KeySelector) -> None:
        super().__init__(env, tid)
        self._key_selector = key

    def _key(self) -> KeySelector | None:
        return self._key_selector

    def get_key_selector(self) -> KeySelector:
        return self._key_selector

    def reduce(self, func: Any) -> DataStream:
        fn = check_fn(func, ReduceFunction, "reduce", "reduce")
        return self._transform(ReduceOp(fn), self.get_type())

    def process(self, func: Any, output_type: Any = None) -> DataStream:
        fn = check_fn(func, KeyedProcessFunction, "process_element", "process")
        return self._transform(KeyedProcessOp(typed(fn, output_type, TypedKeyedProcess)),
                               output_type)

    def _aggregate(self, kind: str, position: int | str) -> DataStream:
        return self._transform(AggregationOp(kind, position), self.get_type())

    def sum(self, position_to_sum: int | str = 0) -> DataStream:
        return self._aggregate("sum", position_to_sum)

    def min(self, position_to_min: int | str = 0) -> DataStream:
        return self._aggregate("min", position_to_min)

    def max(self, position_to_max: int | str = 0) -> DataStream:
        return self._aggregate("max", position_to_max)

    def min_by(self, position_to_min_by: int | str = 0) -> DataStream:
        return self._aggregate("min_by", position_to_min_by)

    def max_by(self, position_to_max_by: int | str = 0) -> DataStream:
        return self._aggregate("max_by", position_to_max_by)

    def count_window(self, size: int, slide: int = 0) -> WindowedStream:
        """PyFlink's tumbling (``slide`` 0) or sliding count windows."""
        try:
            assigner: WindowAssigner = (CountTumblingWindowAssigner.of(size) if slide == 0
                                        else CountSlidingWindowAssigner.of(size, slide))
        except ValueError as e:
            raise ApiError(str(e)) from None
        return WindowedStream(self, assigner)

    def window(self, window_assigner: WindowAssigner) -> WindowedStream:
        if not isinstance(window_assigner, WindowAssigner):
            raise ApiError(f"window needs a window assigner, got {window_assigner!r}")
        return WindowedStream(self, window_assigner)

    def interval_join(self, other: KeyedStream) -> IntervalJoin:
        if not isinstance(other, KeyedStream):
            raise ApiError("interval_join needs a KeyedStream (call key_by first)")
        from flowc.api.connected import IntervalJoin

        return IntervalJoin(self, other)


class WindowedStream:
    def __init__(self, keyed: KeyedStream, assigner: WindowAssigner) -> None:
        self._keyed = keyed
        self._assigner = assigner
        self._lateness = 0
        self._late_tag: OutputTag | None = None
        self._trigger: Any = None

    def allowed_lateness(self, time: Duration | int) -> WindowedStream:
        ms = to_millis(time)
        if ms < 0:
            raise ApiError("The allowed lateness cannot be negative.")
        self._lateness = ms
        return self

    def trigger(self, trigger: Any) -> WindowedStream:
        """The window's trigger (flowc.triggers: PyFlink's built-in ones or a ``Trigger``
        subclass), replacing the assigner's default."""
        from flowc.triggers import Trigger

        if not isinstance(trigger, Trigger):
            raise ApiError(f"trigger needs a Trigger, got {trigger!r}")
        if isinstance(self._assigner, CountWindowAssigner) or self._assigner.is_merging:
            raise ApiError("flowc supports trigger() on tumbling, sliding and global windows, "
                           f"not on {type(self._assigner).__name__}")
        self._trigger = trigger
        return self

    def side_output_late_data(self, output_tag: OutputTag) -> WindowedStream:
        if not isinstance(output_tag, OutputTag):
            raise ApiError(f"side_output_late_data needs an OutputTag, got {output_tag!r}")
        self._late_tag = output_tag
        return self

    def _window(self, output_type: Any, **fns: Any) -> DataStream:
        op: WindowOp | CountWindowOp | TriggerWindowOp
        named: WindowOp | CountWindowOp | TriggerWindowOp  # with the user's own functions, for the description
        wf = fns.get("window_fn")
        run = dict(fns, window_fn=as_process_window_function(wf) if wf is not None else None)
        if isinstance(self._assigner, CountWindowAssigner):
            if self._late_tag is not None or self._lateness:
                raise ApiError("count windows have no event time: allowed_lateness and "
                               "side_output_late_data apply to time windows only")
            op, named = CountWindowOp(self._assigner, **run), CountWindowOp(self._assigner, **fns)
        elif self._trigger is not None or isinstance(self._assigner, GlobalWindows):
            from flowc.triggers import NeverTrigger

            trigger = self._trigger if self._trigger is not None else NeverTrigger()
            args = (self._assigner, trigger, self._lateness, self._late_tag)
            op, named = TriggerWindowOp(*args, **run), TriggerWindowOp(*args, **fns)
        else:
            op = WindowOp(self._assigner, self._lateness, self._late_tag, **run)
            named = WindowOp(self._assigner, self._lateness, self._late_tag, **fns)
        return self._keyed._transform(op, output_type, None, named.default_description)

    def apply(self, window_function: Any, output_type: Any = None) -> DataStream:
        """A WindowFunction (``apply(key, window, inputs)``) over each window's elements."""
        if not isinstance(window_function, (WindowFunction, AllWindowFunction)):
            raise ApiError(f"apply needs a WindowFunction, got {window_function!r}")
        return self._window(output_type, window_fn=window_function)

    def reduce(self, reduce_function: Any, window_function: Any = None,
               output_type: Any = None) -> DataStream:
        fn = check_fn(reduce_function, ReduceFunction, "reduce", "reduce")
        wf = None if window_function is None else _window_fn(window_function)
        out = output_type if wf is not None else (output_type or self._keyed.get_type())
        return self._window(out, reduce_fn=fn, window_fn=wf)

    def aggregate(self, aggregate_function: AggregateFunction, window_function: Any = None,
                  accumulator_type: Any = None, output_type: Any = None) -> DataStream:
        if not isinstance(aggregate_function, AggregateFunction):
            raise ApiError("aggregate needs an AggregateFunction "
                           "(create_accumulator, add, get_result, merge)")
        wf = None if window_function is None else _window_fn(window_function)
        return self._window(output_type, aggregate_fn=aggregate_function, window_fn=wf)

    def process(self, process_window_function: Any, output_type: Any = None) -> DataStream:
        return self._window(output_type, window_fn=_window_fn(process_window_function))


def _window_fn(fn: Any) -> Any:
    if isinstance(fn, (WindowFunction, AllWindowFunction, ProcessAllWindowFunction)):
        return fn
    return check_fn(fn, ProcessWindowFunction, "process", "window function")
