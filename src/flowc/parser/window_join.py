"""``a | window [inner|left|right|full] join b on a.k = b.k``: Flink's WindowJoin.

Both inputs carry their window as ``window_start`` / ``window_end`` columns (window
aggregates, or rows of a window table function); rows join when key and window are equal.
Per key the rows of each side are kept per window until the watermark passes the window's
end (an event-time timer at ``window_end - 1``), then the window's pairs are emitted, and for
an outer join the rows without a partner, padded with nulls. A row whose window has fired
is dropped (late); a row with a null key joins nothing (SQL: null equals nothing). The
output is the left fields, then the right ones (a name the left has is renamed
``<right>_<name>``, as ``join`` does).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

from flowc.api.functions import KeyedCoProcessFunction
from flowc.errors import FlowTypeError
from flowc.executor.runtime.state import MapStateDescriptor
from flowc.parser import ast as A
from flowc.parser.settings import apply_hints
from flowc.types import TIMESTAMP

if TYPE_CHECKING:
    from flowc.parser.steps import Flow, PipelineBuilder

KINDS = ("inner", "left", "right", "full")


def window_join_step(builder: PipelineBuilder, flow: Flow, step: A.WindowJoinStep) -> Flow:
    from flowc.parser.steps import Flow, identity_names, key_selector

    info = builder.ctx.stream(A.FieldRef(step.other, None, step.other_span))
    right_q = step.alias or step.other
    left_names = flow.names or (identity_names(flow.head, flow.schema) if flow.head else {})
    as_join = cast(A.JoinStep, step)  # _join_sides reads only .other of the step
    left_keys: list[str] = []
    right_keys: list[str] = []
    for jk in step.keys:
        (lk, lshown), (rk, rshown) = builder._join_sides(jk, flow.schema, left_names,
                                                         info.schema, right_q, as_join)
        lt, rt = flow.schema.field(lk), info.schema.field(rk)
        assert lt is not None and rt is not None
        if lt.type != rt.type or lt.type.is_array:
            raise FlowTypeError(f"join keys must have the same type: {lshown} (left) is "
                                f"{lt.type} but {rshown} (right) is {rt.type}", jk.span,
                                hint="convert one side with a 'map' before the join")
        left_keys.append(lk)
        right_keys.append(rk)
    builder.need_event_time(flow, step.span, "a window join")
    for schema, where, span in ((flow.schema, "the left side", step.span),
                                (info.schema, f"'{step.other}'", step.other_span)):
        end = schema.field("window_end")
        if end is None or end.type != TIMESTAMP:
            raise FlowTypeError(f"'window join' joins the rows of windows, but {where} has no "
                                "window_end column", span,
                                hint="join the outputs of two window aggregates")
    if flow.key is not None or info.key is not None:
        raise FlowTypeError("a window join keys both sides by its 'on' fields; remove the "
                            "'key by'", step.span)
    schema, right_names = builder._join_schema(flow.schema, info.schema, right_q, step.span)
    names = dict(left_names)
    names[right_q] = None if right_q in names else right_names
    k1 = key_selector(flow.schema, tuple(left_keys), row=True)
    k2 = key_selector(info.schema, tuple(right_keys), row=True)
    fn = WindowJoin((flow.schema.index_of("window_start"), flow.schema.index_of("window_end")),
                    (info.schema.index_of("window_start"), info.schema.index_of("window_end")),
                    tuple(flow.schema.index_of(k) or 0 for k in left_keys),
                    tuple(info.schema.index_of(k) or 0 for k in right_keys),
                    len(flow.schema.names), len(info.schema.names), step.kind)
    stream = flow.stream.connect(info.stream).key_by(k1, k2).process(fn, output_type=schema)
    stream.name(f"WindowJoin(joinType=[{step.kind.capitalize()}Join], "
                f"where=[{' AND '.join(f'{a} = {b}' for a, b in zip(left_keys, right_keys))}])")
    apply_hints(stream, step.hints)
    return Flow(stream, schema, True, head=flow.head, names=names)


class WindowJoin(KeyedCoProcessFunction):
    """The run-time function of a ``window join`` step (see the module docstring)."""

    def __init__(self, left_window: tuple[int | None, int | None],
                 right_window: tuple[int | None, int | None], left_keys: tuple[int, ...],
                 right_keys: tuple[int, ...], left_width: int, right_width: int,
                 kind: str) -> None:
        # (window_start, window_end) positions of each side; no window_start: ends only
        self.starts = (left_window[0], right_window[0])
        self.ends = (left_window[1] or 0, right_window[1] or 0)
        self.keys = (left_keys, right_keys)
        self.widths = (left_width, right_width)
        self.kind = kind

    def open(self, runtime_context: Any) -> None:
        # window_end -> the window's rows of this key on that side, in arrival order
        self.sides = (runtime_context.get_map_state(MapStateDescriptor("window-join-left")),
                      runtime_context.get_map_state(MapStateDescriptor("window-join-right")))

    def _add(self, side: int, value: Any, ctx: Any) -> None:
        end = value[self.ends[side]]
        if end is None or end - 1 <= ctx.timer_service().current_watermark():
            return  # its window has fired: late
        state = self.sides[side]
        rows = state.get(end)
        if rows is None:
            state.put(end, [value])
        else:  # appended in place: copying would be quadratic in the rows of a window
            rows.append(value)
            state.put(end, rows)  # in case the backend handed out a copy
        ctx.timer_service().register_event_time_timer(end - 1)

    def process_element1(self, value: Any, ctx: Any) -> None:
        self._add(0, value, ctx)

    def process_element2(self, value: Any, ctx: Any) -> None:
        self._add(1, value, ctx)

    def on_timer(self, timestamp: int, ctx: Any) -> list[tuple[Any, ...]]:
        end = timestamp + 1
        lefts = self.sides[0].get(end) or []
        rights = self.sides[1].get(end) or []
        self.sides[0].remove(end)
        self.sides[1].remove(end)
        lk, rk = self.keys
        ls, rs = self.starts
        # a null key equals nothing; the rest share this key and window end, so rows pair
        # when their window starts are equal too
        joinable: dict[Any, list[int]] = {}
        for i, r in enumerate(rights):
            if all(r[p] is not None for p in rk):
                joinable.setdefault(None if rs is None else r[rs], []).append(i)
        out: list[tuple[Any, ...]] = []
        done: set[int] = set()
        for left in lefts:
            partners = joinable.get(None if ls is None else left[ls], []) \
                if all(left[p] is not None for p in lk) else []
            out.extend((*left, *rights[i]) for i in partners)
            done.update(partners)
            if not partners and self.kind in ("left", "full"):
                out.append((*left, *(None,) * self.widths[1]))
        if self.kind in ("right", "full"):
            out.extend((*(None,) * self.widths[0], *r) for i, r in enumerate(rights)
                       if i not in done)
        return out
