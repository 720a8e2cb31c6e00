"""``| key by k | window top 3 by x desc as rn`` (window Top-N) and ``| key by k | window
last by ts`` (window deduplication): Flink's WindowRank / WindowDeduplicate.

The rows carry their window (a window aggregate's or a window table function's
``window_end`` column); per key and window the rows are kept until the watermark passes the
window's end (an event-time timer at ``window_end - 1``), then sorted and the ranks
``offset + 1`` .. ``offset + count`` emitted in rank order, each with its row number if the
step names one. Rows whose window has already fired (late) are dropped, as Flink's window
operators do. Ties keep arrival order; ``last`` (keep the last row by a time column) gives
a tie to the later row, as Flink's WindowDeduplicate does (``rowtime >= previous``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from flowc.api.functions import KeyedProcessFunction
from flowc.errors import FlowSyntaxError, FlowTypeError
from flowc.executor.runtime.ordering import sort_rows
from flowc.executor.runtime.state import MapStateDescriptor
from flowc.parser import ast as A
from flowc.parser.settings import apply_hints
from flowc.parser.sorting import order_columns
from flowc.types import INT, TIMESTAMP, Field, Schema

if TYPE_CHECKING:
    from flowc.parser.steps import Flow, PipelineBuilder


def window_rank_step(builder: PipelineBuilder, flow: Flow, step: A.WindowRankStep) -> Flow:
    from flowc.parser.steps import key_selector

    what = "window top" if step.keep is None else f"window {step.keep}"
    if flow.key is None:
        raise FlowSyntaxError(f"'{what}' needs 'key by' before it (the rows of each key and "
                              "window are ranked on their own)", step.span,
                              hint="key by window_end to rank all rows of a window")
    end = flow.schema.field("window_end")
    if end is None or end.type != TIMESTAMP:
        raise FlowTypeError(f"'{what}' ranks the rows of each window, but this stream has no "
                            "window_end column", step.span,
                            hint="rank the output of a window aggregate")
    builder.need_event_time(flow, step.span, f"'{what}'")
    if step.count < 1:
        raise FlowSyntaxError("'window top' needs a positive row count", step.span)
    columns = order_columns(flow.schema, step.items, what)
    if step.keep is not None:
        item = step.items[0]
        if flow.schema.fields[columns[0][0]].type != TIMESTAMP:
            raise FlowTypeError(f"'{what}' keeps a row by a time column, but "
                                f"'{item.field.name}' is not a timestamp", item.field.span)
    fields = tuple(flow.schema.fields)
    if step.alias is not None:
        if flow.schema.field(step.alias) is not None:
            raise FlowSyntaxError(f"column '{step.alias}' is already in the stream", step.span,
                                  hint="name the row number otherwise")
        fields += (Field(step.alias, INT),)
    schema = Schema(fields)
    keyed = flow.stream.key_by(key_selector(flow.schema, flow.key, flow.row_key))
    fn = WindowRank(flow.schema.index_of("window_end") or 0, tuple(columns), step.offset,
                    step.count, step.alias is not None, step.keep == "last")
    stream = keyed.process(fn, output_type=schema)
    order = ", ".join(f"{i.field.name} {'DESC' if i.descending else 'ASC'}" for i in step.items)
    if step.keep is not None:
        stream.name(f"WindowDeduplicate(keep=[{step.keep.capitalize()}Row], "
                    f"partitionKeys=[{', '.join(flow.key)}], orderKey=[{order}])")
    else:
        stream.name(f"WindowRank(rankType=[ROW_NUMBER], rankRange=[rankStart={step.offset + 1}, "
                    f"rankEnd={step.offset + step.count}], partitionBy=[{', '.join(flow.key)}], "
                    f"orderBy=[{order}])")
    apply_hints(stream, step.hints)
    return builder._next(flow, stream, schema)


class WindowRank(KeyedProcessFunction):
    """The run-time function of a ``window top`` / ``window first|last`` step."""

    def __init__(self, end_pos: int, columns: tuple[tuple[int, bool, bool], ...], offset: int,
                 count: int, numbered: bool, ties_to_last: bool) -> None:
        self.end_pos = end_pos
        self.columns = columns
        self.offset = offset
        self.count = count
        self.numbered = numbered
        self.ties_to_last = ties_to_last

    def open(self, runtime_context: Any) -> None:
        # window_end -> the window's rows of this key, in arrival order
        self.pending = runtime_context.get_map_state(MapStateDescriptor("window-rank"))

    def process_element(self, value: Any, ctx: Any) -> None:
        end = value[self.end_pos]
        if end is None or end - 1 <= ctx.timer_service().current_watermark():
            return  # its window has fired: late
        rows = self.pending.get(end)
        if rows is None:
            self.pending.put(end, [value])
        else:  # appended in place: copying would be quadratic in the rows of a window
            rows.append(value)
            self.pending.put(end, rows)  # in case the backend handed out a copy
        ctx.timer_service().register_event_time_timer(end - 1)

    def on_timer(self, timestamp: int, ctx: Any) -> list[tuple[Any, ...]]:
        rows = self.pending.get(timestamp + 1)
        if rows is None:
            return []
        self.pending.remove(timestamp + 1)
        if self.ties_to_last:
            rows = rows[::-1]  # the sort is stable: the later of equal rows comes first
        ranked = sort_rows(rows, self.columns)[self.offset:self.offset + self.count]
        if not self.numbered:
            return [tuple(r) for r in ranked]
        return [(*r, self.offset + i + 1) for i, r in enumerate(ranked)]
