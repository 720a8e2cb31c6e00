"""BATCH-mode map-side combining for keyed windows (Spark's reduceByKey trick).

When a HASH edge feeds a non-merging event-time window with a reduce function or an
AggregateFunction that implements ``merge``, the producer pre-aggregates its records per
(key, window) and ships one partial per group; the window operator merges partials
(``WindowOperator.process_partial``). BATCH has no late data and fires every window once at
the end, so results equal per-record processing (up to the order of windows that end at
the same timestamp, which Flink leaves unspecified too).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from flowc.api.functions import AggregateFunction, ReduceFunction
from flowc.executor.routing import cached_key_router
from flowc.executor.runtime.core import Partial, method_of, unwrap
from flowc.operators import WindowOp
from flowc.windowing import TumblingEventTimeWindows


def combinable(spec: Any, batch: bool) -> bool:
    if not batch or not isinstance(spec, WindowOp) or spec.assigner.is_merging:
        return False
    if not spec.assigner.is_event_time:
        return False  # windows by the operator's clock, not by the records' timestamps
    if spec.reduce_fn is not None:
        return True
    agg = spec.aggregate_fn
    return agg is not None and type(agg).merge is not AggregateFunction.merge


class Combiner:
    def __init__(self, spec: WindowOp, key: Callable[[Any], Any], max_par: int,
                 parallelism: int) -> None:
        # A KeySelector's / CodeFn's __call__ only forwards: keep the function itself (hot
        # path: one Python call per record instead of three).
        self.key = unwrap(key)
        self.assign = spec.assigner.assign_windows
        a = spec.assigner
        # Tumbling fast path: Python's floor modulo gives Flink's window start directly.
        self.tumbling = (a.size, a.offset) if isinstance(a, TumblingEventTimeWindows) else None
        self.max_par = max_par
        self.parallelism = parallelism
        self.groups: dict[tuple[Any, int, int], list[Any]] = {}
        if spec.reduce_fn is not None:
            self.reduce: Callable[[Any, Any], Any] | None = method_of(
                spec.reduce_fn, ReduceFunction, "reduce")
            self.agg = None
        else:
            self.reduce = None
            self.agg = spec.aggregate_fn

    def add(self, value: Any, ts: int | None) -> None:
        if ts is None:
            from flowc.executor.runtime.core import require_timestamp

            require_timestamp(ts, "an event-time window")
        key = self.key(value)
        groups = self.groups
        if self.tumbling is not None:
            size, off = self.tumbling
            start = ts - (ts - off) % size
            spans: Any = ((start, start + size),)
        else:
            spans = [(w.start, w.end) for w in self.assign(ts)]
        # ``n`` (records folded into a partial) feeds the records-in metric only: a record
        # in several (sliding) windows counts once, in its first window's partial.
        n = 1
        for start, end in spans:
            g = (key, start, end)
            cur = groups.get(g)
            if cur is None:
                if self.reduce is not None:
                    groups[g] = [value, n]
                else:
                    agg = self.agg
                    groups[g] = [agg.add(value, agg.create_accumulator()), n]  # type: ignore[union-attr]
            else:
                cur[0] = (self.reduce(cur[0], value) if self.reduce is not None
                          else self.agg.add(value, cur[0]))  # type: ignore[union-attr]
                cur[1] += n
            n = 0

    def drain(self, append: Callable[[Any], None], slot: int, cid: int) -> None:
        route = cached_key_router(None, self.max_par, self.parallelism)
        for g, (acc, n) in self.groups.items():
            append((slot, (route(g[0]), (cid, (*g, acc, n), Partial))))
        self.groups = {}
