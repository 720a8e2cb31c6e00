"""``order by ...`` and ``limit n [offset m]`` (SQL's ORDER BY / LIMIT / OFFSET).

Both lower to one sort operator (``DataStream.sort``: Flink's Sort, SortLimit or Limit) at
parallelism 1 behind a GLOBAL edge; an ``order by`` directly followed by ``limit`` is one
SortLimit, as Flink plans it. Only a sink (or a ``limit``) may follow, and the sink runs at
parallelism 1 so the order reaches it. BATCH only: an unbounded stream never ends.
Nulls sort as in Flink: first when ascending, last when descending, unless the item says.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from flowc.errors import FlowNameError, FlowSyntaxError, FlowTypeError, did_you_mean
from flowc.parser import ast as A
from flowc.parser.settings import apply_hints
from flowc.transformations import RuntimeExecutionMode
from flowc.types import Schema

if TYPE_CHECKING:
    from flowc.parser.steps import Flow, PipelineBuilder


def sort_step(builder: PipelineBuilder, flow: Flow, order: A.OrderStep | None,
              limit: A.LimitStep | None) -> Flow:
    from flowc.parser.steps import Flow

    step = order or limit
    assert step is not None
    if builder.ctx.env.config.mode is RuntimeExecutionMode.STREAMING and order is not None:
        raise FlowTypeError("'order by' needs BATCH mode: an unbounded stream never ends, so "
                            "it could never sort it", step.span,
                            hint="set mode = batch; (file sources are bounded; 'limit' "
                                 "alone works in STREAMING)")
    if flow.key is not None:
        raise FlowSyntaxError("'key by' must be followed by a keyed step, not a sort",
                              step.span, hint="remove the 'key by'")
    columns = order_columns(flow.schema, order.items if order is not None else (),
                            "order by")
    with builder.ctx.env.at(step.span):
        stream = flow.stream.sort(columns, None if limit is None else limit.count,
                                  0 if limit is None else limit.offset)
    for s in (order, limit):
        if s is not None:
            apply_hints(stream, s.hints)
    return Flow(stream, flow.schema, flow.event_time, head=flow.head, ordered=True)


def order_columns(schema: Schema, items: tuple[A.OrderItem, ...],
                  what: str) -> list[tuple[int, bool, bool]]:
    """(position, descending, nulls first) of each item, as the sort functions take them."""
    columns = []
    for item in items:
        pos = schema.index_of(item.field.name)
        if pos is None:
            raise FlowNameError(f"unknown field '{item.field.name}' in '{what}'",
                                item.field.span,
                                hint=did_you_mean(item.field.name, schema.names))
        if schema.fields[pos].type.is_array:
            raise FlowTypeError(f"cannot order by '{item.field.name}': it is an "
                                f"{schema.fields[pos].type}", item.field.span)
        nulls_first = (not item.descending) if item.nulls_first is None else item.nulls_first
        columns.append((pos, item.descending, nulls_first))
    return columns


def check_after_sort(flow: Flow, step: A.Step) -> None:
    if flow.ordered and not isinstance(step, (A.LimitStep, *A.SINK_STEPS)):
        raise FlowSyntaxError("only 'limit' or a sink may follow 'order by' / 'limit'",
                              step.span, hint="sort last: put the other steps before it")
