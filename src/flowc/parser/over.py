"""``| key by k | over rows 2 preceding aggregate sum(x) as s`` (SQL's OVER aggregates).

Each input row comes out once, with the aggregates of its frame appended. As Flink's
RowTime{Rows,Range}{Bounded,Unbounded}PrecedingFunction (a KeyedProcessFunction, here too):
a row waits in keyed state for the watermark to pass its rowtime (an event-time timer at
it), then rows are processed in rowtime order; rows with one rowtime in arrival order.
``rows n``: the current row and the n rows before it. ``range d``: every row whose rowtime
is at least the current one minus d, including all rows with the current rowtime (peers),
which therefore get the same results. A late row is dropped: for a bounded frame one at or
before the last rowtime processed for its key (Flink's lastTriggeringTs, which starts at 0),
for an unbounded frame one at or before the current watermark.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from flowc.api.functions import KeyedProcessFunction
from flowc.errors import FlowSyntaxError, FlowTypeError
from flowc.executor.runtime.state import MapStateDescriptor, ValueStateDescriptor
from flowc.parser import ast as A
from flowc.parser.aggregates import RowAggregate, check_output_names, compile_aggregates
from flowc.parser.settings import apply_hints
from flowc.types import TIMESTAMP, Field, Schema

if TYPE_CHECKING:
    from flowc.parser.steps import Flow, PipelineBuilder


def frame_text(rows: bool, preceding: int | None) -> str:
    """The frame as Flink's plan prints it (``ROWS BETWEEN 2 PRECEDING AND CURRENT ROW``)."""
    start = "UNBOUNDED" if preceding is None else str(preceding)
    return f"{'ROWS' if rows else 'RANGE'} BETWEEN {start} PRECEDING AND CURRENT ROW"


def over_step(builder: PipelineBuilder, flow: Flow, step: A.OverStep) -> Flow:
    from flowc.parser.steps import key_selector

    if flow.key is None:
        raise FlowSyntaxError("'over' needs 'key by' before it (the rows of each key are "
                              "aggregated on their own)", step.span,
                              hint="for example: | key by user | over rows 2 preceding "
                                   "aggregate sum(amount) as s")
    builder.need_event_time(flow, step.span, "an over aggregate")
    time_pos = None
    if step.order is not None:
        time_pos = flow.schema.index_of(step.order.name)
        if time_pos is None or flow.schema.fields[time_pos].type != TIMESTAMP:
            raise FlowTypeError(f"the rows of an over aggregate are ordered by a time "
                                f"attribute, but '{step.order.name}' is not a timestamp",
                                step.order.span)
    c = builder.compiler(flow, "in 'over'")
    specs = compile_aggregates(step.items, c, ())
    names = list(flow.schema.names) + [s.name for s in specs]
    check_output_names(names, step.items, len(flow.schema.names))
    schema = Schema(tuple(flow.schema.fields) + tuple(Field(s.name, s.type) for s in specs))
    keyed = flow.stream.key_by(key_selector(flow.schema, flow.key, flow.row_key))
    fn = OverAggregate(RowAggregate(specs), step.rows, step.preceding, time_pos)
    stream = keyed.process(fn, output_type=schema)
    stream.name(f"OverAggregate(partitionBy=[{', '.join(flow.key)}], "
                f"window=[{frame_text(step.rows, step.preceding)}])")
    apply_hints(stream, step.hints)
    return builder._next(flow, stream, schema)


class OverAggregate(KeyedProcessFunction):
    """The run-time function of an ``over`` step (see the module docstring)."""

    def __init__(self, agg: RowAggregate, rows: bool, preceding: int | None,
                 time_pos: int | None = None) -> None:
        self.agg = agg
        self.rows = rows
        self.preceding = preceding
        self.time_pos = time_pos  # the rowtime column; None: the record's timestamp

    def open(self, runtime_context: Any) -> None:
        # rowtime -> rows waiting for the watermark, in arrival order
        self.pending = runtime_context.get_map_state(MapStateDescriptor("over-pending"))
        # unbounded: the accumulator; bounded: the processed rows a later frame may need
        # ((rowtime, row) pairs, oldest first)
        self.acc = runtime_context.get_state(ValueStateDescriptor("over-acc"))
        self.history = runtime_context.get_state(ValueStateDescriptor("over-history"))
        self.last = runtime_context.get_state(ValueStateDescriptor("over-last"))

    def process_element(self, value: Any, ctx: Any) -> None:
        ts = ctx.timestamp() if self.time_pos is None else value[self.time_pos]
        if ts is None:
            return  # no rowtime: Flink's rowtime columns are never null
        if self.preceding is None:
            late = ts <= ctx.timer_service().current_watermark()
        else:
            last = self.last.value()
            late = ts <= (0 if last is None else last)
        if late:
            return  # Flink drops it (numLateRecordsDropped)
        waiting = self.pending.get(ts)
        if waiting is None:
            self.pending.put(ts, [value])
        else:  # appended in place: copying would be quadratic in the rows of one rowtime
            waiting.append(value)
            self.pending.put(ts, waiting)  # in case the backend handed out a copy
        ctx.timer_service().register_event_time_timer(ts)

    def on_timer(self, timestamp: int, ctx: Any) -> list[tuple[Any, ...]]:
        rows = self.pending.get(timestamp)
        if rows is None:
            return []
        self.pending.remove(timestamp)
        self.last.update(timestamp)
        if self.preceding is None:
            return self._unbounded(rows)
        if self.rows:
            return self._rows(rows, self.preceding)
        return self._range(timestamp, rows, self.preceding)

    def _fold(self, rows: list[Any]) -> tuple[Any, ...]:
        agg = self.agg
        acc = agg.create_accumulator()
        for r in rows:
            acc = agg.add(r, acc)
        return agg.get_result(acc)

    def _unbounded(self, rows: list[Any]) -> list[tuple[Any, ...]]:
        agg = self.agg
        acc = self.acc.value()
        if acc is None:
            acc = agg.create_accumulator()
        out: list[tuple[Any, ...]] = []
        if self.rows:
            for r in rows:
                acc = agg.add(r, acc)
                out.append(tuple(r) + agg.get_result(acc))
        else:  # RANGE: the peers are in each other's frame
            for r in rows:
                acc = agg.add(r, acc)
            result = agg.get_result(acc)
            out = [tuple(r) + result for r in rows]
        self.acc.update(acc)
        return out

    def _rows(self, rows: list[Any], n: int) -> list[tuple[Any, ...]]:
        before = list(self.history.value() or ())
        out: list[tuple[Any, ...]] = []
        for r in rows:
            frame = before[max(0, len(before) - n):]
            out.append(tuple(r) + self._fold([*frame, r]))
            before.append(r)
        self.history.update(tuple(before[max(0, len(before) - n):]))
        return out

    def _range(self, ts: int, rows: list[Any], d: int) -> list[tuple[Any, ...]]:
        # later rowtimes are larger, so what falls out of this frame is never needed again
        kept = [(t, r) for t, r in (self.history.value() or ()) if t >= ts - d]
        kept.extend((ts, r) for r in rows)
        self.history.update(tuple(kept))
        result = self._fold([r for _, r in kept])
        return [tuple(r) + result for r in rows]
