"""Lowering of the steps that make updating streams: the rolling ``aggregate`` (Flink SQL's
GroupAggregate; windowed ones go to ``PipelineBuilder.windowed``), regular joins (``join R
on ...`` without a window, ``left`` / ``right`` / ``full join``) and ``top`` (a mixin of
``steps.PipelineBuilder``)."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any

from flowc.errors import FlowNameError, FlowSyntaxError, FlowTypeError, did_you_mean
from flowc.parser import ast as A
from flowc.parser.aggregates import RowAggregate, check_output_names, compile_aggregates
from flowc.parser.changes import (
    RETRACTABLE,
    RetractAggregate,
    RollingChanges,
    RollingMerge,
    RollingStart,
)
from flowc.parser.regular_join import RegularJoin
from flowc.parser.settings import STATE_TTL, TTL_HINTS, apply_hints, ttl_hint
from flowc.parser.topn import BatchTopN, TopN
from flowc.parser.topn_retract import RetractTopN
from flowc.parser.topn_update import UpdateTopN
from flowc.transformations import RuntimeExecutionMode
from flowc.types import INT, NULL, Field, Schema

if TYPE_CHECKING:
    from flowc.api.stream import DataStream
    from flowc.parser.exprs import Qualifiers
    from flowc.parser.steps import Flow


class ChangelogSteps:
    ctx: Any  # the Lowerer (PipelineBuilder's)

    def compiler(self, flow: Flow, where: str) -> Any:  # provided by PipelineBuilder
        raise NotImplementedError

    def windowed(self, flow: Flow, step: A.AggregateStep, specs: list[Any],
                 agg: RowAggregate, key_fields: list[Field]) -> Flow:  # PipelineBuilder's
        raise NotImplementedError

    def materialized(self, flow: Flow) -> DataStream:  # provided by PipelineBuilder
        raise NotImplementedError

    def _next(self, flow: Flow, stream: DataStream, schema: Schema | None = None,
              event_time: bool | None = None) -> Flow:  # provided by PipelineBuilder
        raise NotImplementedError

    def _join_schema(self, left: Schema, right: Schema, right_q: str,
                     span: Any) -> tuple[Schema, dict[str, str]]:  # provided by PipelineBuilder
        raise NotImplementedError

    def state_ttl(self) -> int | None:
        """``table.exec.state.ttl`` in ms (parser.settings), None when unset or 0."""
        ttl = dict(self.ctx.env.config.options).get(STATE_TTL)
        return int(ttl) or None if ttl is not None else None

    def _TopStep(self, flow: Flow, step: A.TopStep) -> Flow:
        keyless = flow.key is None
        if keyless:  # one group of all rows: parallelism 1, as Flink's global Top-N
            flow = replace(flow, key=(), row_key=True)
        if step.count < 1:
            raise FlowSyntaxError("'top' needs a count of at least 1", step.span)
        order: list[tuple[int, bool, bool]] = []
        for item in step.items:
            pos = flow.schema.index_of(item.field.name)
            if pos is None:
                raise FlowNameError(f"unknown field '{item.field.name}' in 'top'",
                                    item.field.span,
                                    hint=did_you_mean(item.field.name, flow.schema.names))
            nulls = (not item.descending) if item.nulls_first is None else item.nulls_first
            order.append((pos, item.descending, nulls))
        fields = flow.schema.fields
        if step.rank is not None:
            if step.rank in flow.schema.names:
                raise FlowNameError(f"column '{step.rank}' is already in the stream", step.span,
                                    hint="name the rank column differently: top ... as <name>")
            fields = fields + (Field(step.rank, INT),)
        schema = Schema(fields)
        ttl = self.state_ttl()
        fn: Any
        if flow.updating and step.unique is not None:  # Flink's UpdateFastStrategy
            unique = tuple(flow.schema.index_of(c) or 0 for c in step.unique)
            fn = UpdateTopN(step.count, tuple(order), step.rank is not None, unique, ttl)
        elif not flow.updating and self.ctx.env.config.mode is RuntimeExecutionMode.BATCH:
            fn = BatchTopN(step.count, tuple(order), step.rank is not None)  # final rows
        else:  # over an updating stream: Flink's retracting Rank (parser.topn_retract)
            ranker = RetractTopN if flow.updating else TopN
            fn = ranker(step.count, tuple(order), step.rank is not None, ttl)
        stream = self.materialized(flow).process(fn, output_type=schema)
        apply_hints(stream, step.hints)
        if keyless:
            stream.set_parallelism(1)
        out = self._next(flow, stream, schema)
        out.updating = bool(getattr(fn, "emits_updates", True))
        return out

    def regular_join(self, flow: Flow, info: Any, step: A.JoinStep, left_names: Qualifiers,
                     right_q: str, left_keys: tuple[str, ...],
                     right_keys: tuple[str, ...]) -> Flow:
        """Flink's regular join: both sides keyed by the join keys (a row key: a null key
        routes like any other and joins nothing), one two-input keyed process."""
        assert step.kind is not None
        for keyed_by, span in ((flow.key, step.span), (info.key, step.other_span)):
            if keyed_by is not None:
                raise FlowSyntaxError("a join keys both sides by its 'on' fields; remove the "
                                      "'key by'", span)
        schema, right_names = self._join_schema(flow.schema, info.schema, right_q, step.span)
        names: Qualifiers = dict(left_names)
        names[right_q] = None if right_q in names else right_names
        from flowc.parser.steps import Flow, key_selector

        k1 = key_selector(flow.schema, left_keys, row=True)
        k2 = key_selector(info.schema, right_keys, row=True)
        positions = (tuple(flow.schema.index_of(k) or 0 for k in left_keys),
                     tuple(info.schema.index_of(k) or 0 for k in right_keys))
        ttl = ttl_hint(step.hints, "state_ttl", self.state_ttl())
        ttls = (ttl_hint(step.hints, "left_state_ttl", ttl),
                ttl_hint(step.hints, "right_state_ttl", ttl))
        fn = RegularJoin(step.kind, (len(flow.schema), len(info.schema)), positions, ttl,
                         ttls)
        stream = flow.stream.connect(info.stream).key_by(k1, k2).process(
            fn, output_type=schema)
        apply_hints(stream, tuple(h for h in step.hints if h.key not in TTL_HINTS))
        out = Flow(stream, schema, False, head=flow.head, names=names)
        out.updating = flow.updating or info.updating or fn.emits_updates
        return out

    def _AggregateStep(self, flow: Flow, step: A.AggregateStep) -> Flow:
        keyless = flow.key is None
        if keyless:  # one group of all rows (Flink: a non-keyed GroupAggregate, parallelism 1)
            flow = replace(flow, key=(), row_key=True)
        assert flow.key is not None
        from flowc.parser.steps import key_selector

        c = self.compiler(flow, "in 'aggregate'")
        specs = compile_aggregates(step.items, c, flow.key)
        key_fields = [flow.schema.field(k) for k in flow.key]
        assert all(f is not None for f in key_fields)
        agg = RowAggregate(specs)
        if flow.window is not None:
            return self.windowed(flow, step, specs, agg, [f for f in key_fields if f])
        names = list(flow.key) + [s.name for s in specs]
        check_output_names(names, step.items, len(flow.key))
        schema = Schema(tuple(f for f in key_fields if f) +
                        tuple(Field(s.name, s.type) for s in specs))
        # Rolling (Flink SQL's GroupAggregate): map to (key..., state), keyed reduce, flat
        # map to the changelog (flowc.parser.changes).
        positions = tuple(flow.schema.index_of(k) or 0 for k in flow.key)
        n = len(flow.key)
        acc_schema = Schema(tuple(f for f in key_fields if f) + (Field("_acc", NULL),))
        shared = tuple(h for h in step.hints if h.key in (
            "parallelism", "max_parallelism", "slot_group", "slot_sharing_group"))
        rolling: Any = agg
        if flow.updating:
            for spec, item in zip(specs, step.items):
                if spec.kind not in RETRACTABLE:
                    raise FlowTypeError(f"{spec.kind}() over an updating stream is not "
                                        "supported: it cannot take back a retracted row",
                                        item.span, hint="aggregates over an updating stream: "
                                        "count, sum, avg, min, max, count(distinct)")
            rolling = RetractAggregate(agg.kinds, agg.args, tuple(s.monotone for s in specs))
        batch = self.ctx.env.config.mode is RuntimeExecutionMode.BATCH
        # Hints are applied as each operator is made, as a Python user would (the key_by
        # partition inherits the parallelism of the map before it).
        for h in step.hints:
            if h.key in TTL_HINTS[1:]:
                raise FlowTypeError(f"'{h.key}' is a join's hint: an aggregate takes "
                                    "state_ttl", h.key_span)
        ttl = None if batch else ttl_hint(step.hints, "state_ttl", self.state_ttl())
        start = flow.stream.map(RollingStart(positions, rolling, flow.updating, ttl))
        apply_hints(start, shared + tuple(h for h in step.hints if h.key == "chain"))
        reduced = start.key_by(key_selector(acc_schema, flow.key, flow.row_key)).reduce(
            RollingMerge(n, rolling, ttl))
        apply_hints(reduced, shared + tuple(h for h in step.hints if h.key in (
            "name", "uid", "uid_hash", "description")))
        if keyless:
            reduced.set_parallelism(1)
        # Named "Map" as the DataStream program this plan matches (one output per input
        # there; here 0-2 changelog rows)
        stream = reduced.flat_map(RollingChanges(n, rolling, batch), output_type=schema)
        stream.name("Map")
        apply_hints(stream, shared)
        if keyless:
            stream.set_parallelism(1)
        out = self._next(flow, stream, schema)
        out.updating = not batch
        return out
