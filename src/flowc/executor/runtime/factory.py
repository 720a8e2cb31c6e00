"""Operator spec -> runtime operator, dispatching on the spec type (``visit_<Kind>``)."""

from __future__ import annotations

from typing import Any

from flowc.errors import UnsupportedError
from flowc.executor.runtime import joins, time_interval_join, windows
from flowc.executor.runtime import operators as ops
from flowc.executor.runtime.core import Operator, TaskInfo

# Operator kinds flowc recognises but does not execute (explicit, by class name).
UNSUPPORTED_KINDS: frozenset[str] = frozenset()


class _Factory:
    def __init__(self, info: TaskInfo, keys: tuple[Any, ...]) -> None:
        self.info = info
        self.keys = keys

    def create(self, spec: Any) -> Operator:
        kind = type(spec).__name__
        visit = getattr(self, f"visit_{kind}", None)
        if kind in UNSUPPORTED_KINDS or visit is None:
            raise UnsupportedError(f"operator kind '{kind}' is not supported by the executor")
        return visit(spec)  # type: ignore[no-any-return]

    def _make(self, cls: type[Operator], spec: Any) -> Operator:
        return cls(spec, self.info, self.keys)

    def visit_MapOp(self, spec: Any) -> Operator:
        return self._make(ops.MapOperator, spec)

    def visit_FilterOp(self, spec: Any) -> Operator:
        return self._make(ops.FilterOperator, spec)

    def visit_FlatMapOp(self, spec: Any) -> Operator:
        return self._make(ops.FlatMapOperator, spec)

    def visit_ProcessOp(self, spec: Any) -> Operator:
        return self._make(ops.ProcessOperator, spec)

    def visit_KeyedProcessOp(self, spec: Any) -> Operator:
        return self._make(ops.KeyedProcessOperator, spec)

    def visit_ReduceOp(self, spec: Any) -> Operator:
        return self._make(ops.ReduceOperator, spec)

    def visit_AggregationOp(self, spec: Any) -> Operator:
        return self._make(ops.AggregationOperator, spec)

    def visit_SortOp(self, spec: Any) -> Operator:
        return self._make(ops.SortOperator, spec)

    def visit_TimestampsAndWatermarksOp(self, spec: Any) -> Operator:
        return self._make(ops.TimestampsAndWatermarksOperator, spec)

    def visit_WindowOp(self, spec: Any) -> Operator:
        return self._make(windows.WindowOperator, spec)

    def visit_CountWindowOp(self, spec: Any) -> Operator:
        return self._make(windows.CountWindowOperator, spec)

    def visit_BroadcastProcessOp(self, spec: Any) -> Operator:
        from flowc.executor.runtime.broadcast import BroadcastProcessOperator

        return self._make(BroadcastProcessOperator, spec)

    def visit_KeyedBroadcastProcessOp(self, spec: Any) -> Operator:
        from flowc.executor.runtime.broadcast import KeyedBroadcastProcessOperator

        return self._make(KeyedBroadcastProcessOperator, spec)

    def visit_TriggerWindowOp(self, spec: Any) -> Operator:
        from flowc.executor.runtime.trigger_windows import TriggerWindowOperator

        return self._make(TriggerWindowOperator, spec)

    def visit_CoMapOp(self, spec: Any) -> Operator:
        return self._make(ops.CoMapOperator, spec)

    def visit_CoFlatMapOp(self, spec: Any) -> Operator:
        return self._make(ops.CoFlatMapOperator, spec)

    def visit_CoProcessOp(self, spec: Any) -> Operator:
        return self._make(ops.CoProcessOperator, spec)

    def visit_KeyedCoProcessOp(self, spec: Any) -> Operator:
        return self._make(ops.KeyedCoProcessOperator, spec)

    def visit_IntervalJoinOp(self, spec: Any) -> Operator:
        # SQL's interval joins run Flink's table operator; a BATCH inner one sees no
        # watermark, so no late row: the DataStream operator's pairs are the same (all)
        if spec.pad != (None, None) or (spec.table and not self.info.batch):
            return self._make(time_interval_join.TimeIntervalJoinOperator, spec)
        return self._make(joins.IntervalJoinOperator, spec)


def create_operator(spec: Any, info: TaskInfo, keys: tuple[Any, ...] = ()) -> Operator:
    return _Factory(info, keys).create(spec)
