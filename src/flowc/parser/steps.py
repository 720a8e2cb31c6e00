"""Lowering of pipeline steps (``| map ...``, ``| key by ...``, ...) to DataStream API calls.

Each step makes exactly the API calls a Python user would make for it, inside
``env.at(step span)``. ``key by`` is applied lazily: the step after it decides which call
it becomes (``key_by(...).window(...)``, a rolling aggregate, a join's own keys, or a plain
``key_by`` when anything else follows). Updating steps are ``steps_changelog.py``, sinks
``steps_sinks.py`` (mixins of ``PipelineBuilder``).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from flowc.api.stream import DataStream
from flowc.errors import (
    ApiError,
    FlowcError,
    FlowNameError,
    FlowSyntaxError,
    FlowTypeError,
    MultipleErrors,
    Span,
    did_you_mean,
)
from flowc.operators import CodeFn
from flowc.parser import ast as A
from flowc.parser.aggregates import (
    JoinRows,
    RowAggregate,
    WindowRow,
    check_output_names,
)
from flowc.parser.exprs import ExprCompiler, Qualifiers, Scope, row_columns
from flowc.parser.settings import apply_hints
from flowc.parser.sorting import check_after_sort, sort_step
from flowc.parser.steps_changelog import ChangelogSteps
from flowc.parser.steps_sinks import FILE_FORMATS as FILE_FORMATS  # lower.py's import
from flowc.parser.steps_sinks import SinkSteps
from flowc.rowkind import same_kind
from flowc.transformations import KeySelector, OutputTag
from flowc.types import TIMESTAMP, Field, Schema, Type
from flowc.vector import VCol, VJoinRows
from flowc.windowing import (
    CumulativeEventTimeWindows,
    CumulativeProcessingTimeWindows,
    EventTimeSessionWindows,
    ProcessingTimeSessionWindows,
    SlidingEventTimeWindows,
    SlidingProcessingTimeWindows,
    TumblingEventTimeWindows,
    TumblingProcessingTimeWindows,
    WindowAssigner,
)

if TYPE_CHECKING:
    from flowc.parser.lower import Lowerer


@dataclass
class Flow:
    """The stream flowing through a pipeline, between two steps."""

    stream: DataStream
    schema: Schema
    event_time: bool
    key: tuple[str, ...] | None = None  # a pending `key by`
    row_key: bool = False  # the pending key is a SQL row key (A.KeyByStep.row_key)
    window: A.WindowStep | None = None  # a pending `window`, waiting for `aggregate`
    # The pipeline's head stream: it names the left side of a join's `on`.
    head: str | None = None
    # What `q.x` means here: qualifier -> {field: column of this schema}; None marks a
    # qualifier that names both sides of a join. Only the head (until a step reshapes the
    # stream) and the sides of a join (until the next reshaping step) are qualifiers.
    names: Qualifiers = field(default_factory=dict)
    ordered: bool = False  # after 'order by' / 'limit': only a sink (at parallelism 1) follows
    # An updating stream (Flink's changelogMode [I,UB,UA,D]): records carry their row kind
    # (flowc.rowkind); insert-only streams are plain tuples.
    updating: bool = False


def identity_names(name: str, schema: Schema) -> Qualifiers:
    return {name: {n: n for n in schema.names}}


def key_selector(schema: Schema, names: tuple[str, ...], row: bool = False) -> KeySelector:
    """One field: the value itself; several (or a SQL row key): a tuple (as the docs
    promise). A 1-tuple hashes like its field, so only a null key routes differently."""
    pos = tuple(schema.index_of(n) for n in names)
    if not pos:  # a non-keyed aggregate: every row has the key ()
        source = "()"
    elif len(pos) == 1 and not row:
        source = f"r[{pos[0]}]"
    else:
        source = "(" + ", ".join(f"r[{p}]" for p in pos) + ",)"
    fn = eval(f"lambda r: {source}")  # noqa: S307 - built from field positions only
    vector = tuple(VCol(p, schema.fields[p].type) for p in pos)
    return KeySelector(CodeFn(fn, source, ("r",), {}, vector), names, ", ".join(names))


def check_storable(schema_types: list[tuple[str, Type, Span]]) -> None:
    for name, t, span in schema_types:
        if t.is_null or (t.is_array and t.element is not None and t.element.is_null):
            raise FlowTypeError(f"the type of '{name}' is unknown (it is always null)", span,
                                hint="give it a type with cast(null as int)")
        if not t.storable:
            raise FlowTypeError(f"'{name}' would be a {t}, which a stream cannot hold", span,
                                hint="convert durations with cast(... as int) (milliseconds)")


def assigner_of(spec: A.WindowSpec) -> WindowAssigner:
    for value, what in ((spec.size, "window size"), (spec.slide, "slide")):
        if spec.kind != "session" and (what == "window size" or spec.kind != "tumbling") \
                and value <= 0:
            raise FlowTypeError(f"the {what} must be positive", spec.span)
    if spec.kind == "tumbling":
        if abs(spec.offset) >= spec.size:
            raise FlowTypeError("the window offset must be smaller than the window size",
                                spec.span)
        return (TumblingProcessingTimeWindows if spec.processing
                else TumblingEventTimeWindows).of(spec.size, spec.offset)
    if spec.kind == "sliding":
        if abs(spec.offset) >= spec.slide:
            raise FlowTypeError("the window offset must be smaller than the slide", spec.span)
        return (SlidingProcessingTimeWindows if spec.processing
                else SlidingEventTimeWindows).of(spec.size, spec.slide, spec.offset)
    if spec.kind == "cumulative":
        if spec.size % spec.slide:  # Flink's planner's text (any offset is accepted)
            raise FlowTypeError("CUMULATE table function based aggregate requires maxSize "
                                "must be an integral multiple of step, but got maxSize "
                                f"{spec.size} ms and step {spec.slide} ms.", spec.span)
        return (CumulativeProcessingTimeWindows if spec.processing
                else CumulativeEventTimeWindows).of(spec.size, spec.slide, spec.offset)
    if spec.size <= 0:
        raise FlowTypeError("the session gap must be positive", spec.span)
    return (ProcessingTimeSessionWindows if spec.processing
            else EventTimeSessionWindows).with_gap(spec.size)


class PipelineBuilder(ChangelogSteps, SinkSteps):
    def __init__(self, ctx: Lowerer) -> None:
        self.ctx = ctx

    # ------------------------------------------------------------------ driver

    def run(self, pipeline: A.Pipeline) -> tuple[Flow, A.Step | None]:
        """Lower ``pipeline``; returns the final flow and its sink step (if it ends in one)."""
        flow = self.head(pipeline)
        last = len(pipeline.steps) - 1
        skip = False
        for i, step in enumerate(pipeline.steps):
            if skip:  # the limit of an 'order by ... | limit n' (one SortLimit)
                skip = False
                continue
            check_after_sort(flow, step)
            if isinstance(step, (A.OrderStep, A.LimitStep)):
                after = pipeline.steps[i + 1] if i < last else None
                skip = isinstance(step, A.OrderStep) and isinstance(after, A.LimitStep)
                limit = after if skip else (step if isinstance(step, A.LimitStep) else None)
                order = step if isinstance(step, A.OrderStep) else None
                flow = sort_step(self, flow, order, limit)  # type: ignore[arg-type]
                continue
            if isinstance(step, A.SINK_STEPS) and i != last:
                raise FlowSyntaxError("a sink ends a pipeline; nothing can follow it",
                                      pipeline.steps[i + 1].span)
            if flow.window is not None and not isinstance(step, A.AggregateStep):
                where = flow.window.span.line
                raise FlowSyntaxError("'window' must be followed by '| aggregate ...'",
                                      step.span, notes=[f"the window is at line {where}"]
                                      if where != step.span.line else [])
            try:
                with self.ctx.env.at(step.span):
                    flow = self.step(flow, step)
            except ApiError as e:
                raise FlowTypeError(e.message, e.span or step.span) from None
        if flow.window is not None:
            raise FlowSyntaxError("'window' must be followed by '| aggregate ...'",
                                  flow.window.span)
        sink = pipeline.steps[-1] if pipeline.steps and isinstance(
            pipeline.steps[-1], A.SINK_STEPS) else None
        return flow, sink

    def head(self, pipeline: A.Pipeline) -> Flow:
        infos = [self.ctx.stream(ref) for ref in pipeline.head]
        first = infos[0]
        flow = Flow(first.stream, first.schema, first.event_time, first.key, head=first.name,
                    names=identity_names(first.name, first.schema), updating=first.updating)
        if pipeline.head_is_union:
            with self.ctx.env.at(pipeline.span):
                return self.union(Flow(first.stream, first.schema, first.event_time, first.key,
                                       updating=first.updating),
                                  list(zip(pipeline.head[1:], infos[1:])), pipeline.span)
        return flow

    def step(self, flow: Flow, step: A.Step) -> Flow:
        if step.hints and isinstance(step, (A.KeyByStep, A.WindowStep, A.PartitionStep,
                                            A.UnionStep)):
            what = {A.KeyByStep: "key by", A.WindowStep: "window", A.PartitionStep: "a "
                    "partitioning", A.UnionStep: "union"}[type(step)]
            hint = "put the hints on the 'aggregate' after it" if isinstance(
                step, A.WindowStep) else None
            raise FlowSyntaxError(f"hints are not allowed on {what}: it has no operator of "
                                  "its own", step.hints[0].span, hint=hint)
        handler = getattr(self, "_" + type(step).__name__)
        out: Flow = handler(flow, step)
        return out

    # ------------------------------------------------------------------ helpers

    def materialized(self, flow: Flow) -> DataStream:
        """The stream with a pending ``key by`` applied (a KeyedStream), or as it is."""
        if flow.key is None:
            return flow.stream
        return flow.stream.key_by(key_selector(flow.schema, flow.key, flow.row_key))

    def compiler(self, flow: Flow, where: str) -> ExprCompiler:
        scope = Scope(row_columns(flow.schema.names, flow.schema.types), self.ctx.udfs, where,
                      qualifiers=flow.names, broken_functions=frozenset(self.ctx.broken_udfs))
        return ExprCompiler(scope, self.ctx.env)

    def _next(self, flow: Flow, stream: DataStream, schema: Schema | None = None,
              event_time: bool | None = None) -> Flow:
        """The flow after a step; a step that reshapes the stream (``schema`` given) ends
        what qualifiers mean."""
        return Flow(stream, schema or flow.schema,
                    flow.event_time if event_time is None else event_time, head=flow.head,
                    names=flow.names if schema is None else {}, updating=flow.updating)

    # ------------------------------------------------------------------ one-input steps

    def _MapStep(self, flow: Flow, step: A.MapStep) -> Flow:
        return self.map_step(flow, step)

    def map_step(self, flow: Flow, step: A.MapStep, where: str = "in 'map'") -> Flow:
        """``| map ...``; also a SQL table's computed columns (Lowerer.computed_columns)."""
        c = self.compiler(flow, where)
        codes: list[str] = []
        vecs: list[Any] = []
        out: list[tuple[str, Type, Span]] = []
        # The columns are independent: each bad one is reported, not just the first.
        errors: list[FlowcError] = []
        for item in step.items:
            if item.star:
                for i, f in enumerate(flow.schema.fields):
                    codes.append(f"r[{i}]")
                    vecs.append(VCol(i, f.type))
                    out.append((f.name, f.type, item.span))
                continue
            assert item.expr is not None
            try:
                typed = c.compile(item.expr)
            except FlowcError as e:
                errors.append(e)
                continue
            name = item.alias
            if name is None:
                if not isinstance(item.expr, A.FieldRef):
                    errors.append(FlowSyntaxError("give this computed column a name: add "
                                                  "'as <name>'", item.span))
                    continue
                name = item.expr.name
            codes.append(typed.code)
            vecs.append(typed.vec)
            out.append((name, typed.type, item.span))
        if errors:
            raise errors[0] if len(errors) == 1 else MultipleErrors(errors)
        seen: dict[str, Span] = {}
        for name, _t, span in out:
            if name in seen:
                raise FlowNameError(f"column '{name}' appears twice in the output of 'map'",
                                    span, hint="rename one of them with 'as'")
            seen[name] = span
        check_storable(out)
        schema = Schema(tuple(Field(n, t) for n, t, _ in out))
        vector = None if any(v is None for v in vecs) else tuple(vecs)
        row = "(" + "".join(code + ", " for code in codes) + ")"
        if flow.updating:  # a Calc keeps each record's row kind
            row = f"{c.const(same_kind)}(r, {row})"
            vector = None
        fn = c.code_fn(row, ("r",), step.span, vector)
        stream = self.materialized(flow).map(fn, output_type=schema)
        apply_hints(stream, step.hints)
        return self._next(flow, stream, schema)

    def _FilterStep(self, flow: Flow, step: A.FilterStep) -> Flow:
        c = self.compiler(flow, "in 'filter'")
        typed = c.compile(step.condition)
        if typed.type.kind not in ("bool", "null"):
            raise FlowTypeError(f"the condition of 'filter' must be bool, but this is "
                                f"{typed.type}", step.condition.span,
                                hint="compare it with something, e.g. ... > 0 or ... is not null")
        stream = self.materialized(flow).filter(c.code_fn(typed.code, ("r",), step.span,
                                                          typed.vec))
        apply_hints(stream, step.hints)
        return self._next(flow, stream)

    def _FlatMapStep(self, flow: Flow, step: A.FlatMapStep) -> Flow:
        c = self.compiler(flow, "in 'flat_map'")
        typed = c.compile(step.expr)
        if not typed.type.is_array or typed.type.element is None:
            raise FlowTypeError(f"flat_map needs an array (one output row per element), but "
                                f"this is {typed.type}", step.expr.span,
                                hint="for example: flat_map split(text, ' ') as word")
        element = typed.type.element
        check_storable([(step.alias, element, step.span)])
        pos = flow.schema.index_of(step.alias)
        fields = list(flow.schema.fields)
        cols = [f"r[{i}]" for i in range(len(fields))]
        if pos is None:
            fields.append(Field(step.alias, element))
            cols.append("_e")
        else:  # exploding into an existing name replaces that column in place
            fields[pos] = Field(step.alias, element)
            cols[pos] = "_e"
        schema = Schema(tuple(fields))
        # The array goes into a temporary first: its code may bind walrus temporaries, which
        # Python forbids inside a comprehension's iterable. A null array emits nothing.
        arr = c.temp()
        row = f"({''.join(col + ', ' for col in cols)})"
        if flow.updating:  # each row of the array keeps the input record's kind
            row = f"{c.const(same_kind)}(r, {row})"
        source = f"(({arr} := {typed.code}), [{row} for _e in ({arr} or ())])[1]"
        stream = self.materialized(flow).flat_map(c.code_fn(source, ("r",), step.span),
                                                  output_type=schema)
        apply_hints(stream, step.hints)
        return self._next(flow, stream, schema)

    def _KeyByStep(self, flow: Flow, step: A.KeyByStep) -> Flow:
        if flow.key is not None:
            raise FlowSyntaxError(f"the stream is already keyed by {', '.join(flow.key)}",
                                  step.span, hint="remove one of the 'key by' steps")
        names: list[str] = []
        for ref in step.fields:
            f = flow.schema.field(ref.name)
            if f is None:
                raise FlowNameError(f"unknown field '{ref.name}' in 'key by'", ref.span,
                                    hint=did_you_mean(ref.name, flow.schema.names))
            if f.type.is_array:
                raise FlowTypeError(f"cannot key by '{ref.name}': it is an {f.type}", ref.span)
            if ref.name in names:
                raise FlowSyntaxError(f"'{ref.name}' is listed twice in 'key by'", ref.span)
            names.append(ref.name)
        return replace(flow, key=tuple(names), row_key=step.row_key)

    def _PartitionStep(self, flow: Flow, step: A.PartitionStep) -> Flow:
        stream = self.materialized(flow)
        method = "global_" if step.kind == "global" else step.kind
        return self._next(flow, getattr(stream, method)())

    def _WindowStep(self, flow: Flow, step: A.WindowStep) -> Flow:
        if flow.key is None:  # one group of all rows: parallelism 1 (Flink's windowAll /
            flow = replace(flow, key=(), row_key=True)  # SQL's global window aggregate)
        if flow.updating:
            raise FlowTypeError("a window over an updating stream is not supported: a window "
                                "aggregates insert-only rows", step.span,
                                hint="window the stream before the rolling 'aggregate'")
        if not step.spec.processing:
            self.need_event_time(flow, step.span, "a window")
        elif step.lateness is not None or step.late_into is not None:
            raise FlowTypeError("a window on processing time has no late data: 'allowed "
                                "lateness' and 'late into' apply to event-time windows",
                                step.late_span or step.span)
        assigner_of(step.spec)  # validate now, so the error points at the window
        if step.late_into is not None:
            self.ctx.check_new_name(step.late_into, step.late_span or step.span)
        return replace(flow, window=step)

    def need_event_time(self, flow: Flow, span: Span, what: str) -> None:
        if not flow.event_time:
            raise FlowTypeError(f"{what} needs event time, but this stream has no timestamps",
                                span, hint="declare one on the source: watermark <field> - 2s")

    # ------------------------------------------------------------------ aggregation

    def _OverStep(self, flow: Flow, step: A.OverStep) -> Flow:
        from flowc.parser.over import over_step

        return over_step(self, flow, step)

    def _WindowRankStep(self, flow: Flow, step: A.WindowRankStep) -> Flow:
        from flowc.parser.window_rank import window_rank_step

        return window_rank_step(self, flow, step)

    def _WindowJoinStep(self, flow: Flow, step: A.WindowJoinStep) -> Flow:
        from flowc.parser.window_join import window_join_step

        return window_join_step(self, flow, step)

    def windowed(self, flow: Flow, step: A.AggregateStep, specs: list[Any],
                 agg: RowAggregate, key_fields: list[Field]) -> Flow:
        window = flow.window
        assert window is not None and flow.key is not None
        names = list(flow.key) + ["window_start", "window_end"] + [s.name for s in specs]
        check_output_names(names, step.items, len(flow.key) + 2)
        schema = Schema(tuple(key_fields) + (Field("window_start", TIMESTAMP),
                                             Field("window_end", TIMESTAMP))
                        + tuple(Field(s.name, s.type) for s in specs))
        keyed = flow.stream.key_by(key_selector(flow.schema, flow.key, flow.row_key))
        with self.ctx.env.at(window.span):
            windowed = keyed.window(assigner_of(window.spec))
            if window.lateness is not None:
                windowed = windowed.allowed_lateness(window.lateness)
            tag = None
            if window.late_into is not None:
                tag = OutputTag(window.late_into, flow.schema)
                windowed = windowed.side_output_late_data(tag)
        stream = windowed.aggregate(agg, window_function=WindowRow(len(flow.key)),
                                    output_type=schema)
        apply_hints(stream, step.hints)
        if not flow.key:  # a window without a key: all rows in one group
            stream.set_parallelism(1)
        if tag is not None and window.late_into is not None:
            with self.ctx.env.at(window.late_span or window.span):
                late = stream.get_side_output(tag)
            self.ctx.define(window.late_into, late, flow.schema, window.late_span or window.span,
                            event_time=flow.event_time)
        # Results carry the window's max timestamp; on processing time that is no event
        # time a later window could wait for.
        return self._next(flow, stream, schema,
                          event_time=flow.event_time or not window.spec.processing)

    # ------------------------------------------------------------------ multi-input

    def _UnionStep(self, flow: Flow, step: A.UnionStep) -> Flow:
        others = [(ref, self.ctx.stream(ref)) for ref in step.streams]
        return self.union(flow, others, step.span)

    def union(self, flow: Flow, others: list[tuple[A.FieldRef, Any]], span: Span) -> Flow:
        streams = []
        event_time = flow.event_time
        updating = flow.updating
        for ref, info in others:
            if info.schema != flow.schema:
                raise FlowTypeError(f"cannot union '{ref.name}': its schema {info.schema} "
                                    f"differs from {flow.schema}", ref.span,
                                    hint="make the fields match (same names, types and "
                                         "order) with a 'map' first")
            other = Flow(info.stream, info.schema, info.event_time, info.key)
            streams.append(self.materialized(other))
            event_time = event_time and info.event_time
            updating = updating or info.updating
        stream = self.materialized(flow).union(*streams)
        return Flow(stream, flow.schema, event_time, head=flow.head, updating=updating)

    def _JoinStep(self, flow: Flow, step: A.JoinStep) -> Flow:
        other_ref = A.FieldRef(step.other, None, step.other_span)
        info = self.ctx.stream(other_ref)
        interval = step.lower is not None and step.window is None
        if (flow.updating or info.updating) and (step.kind is None or interval):
            raise FlowTypeError("a window or interval join of an updating stream is not "
                                "supported: these joins take insert-only rows",
                                step.span if flow.updating else step.other_span,
                                hint="join the streams before the rolling 'aggregate', or "
                                     "use a regular join (join ... on ... without a window)")
        right_q = step.alias or step.other
        # The left side is named by what names it now (the head, the sides of an earlier
        # join) or else, as documented, by the pipeline's head stream.
        left_names = flow.names or (identity_names(flow.head, flow.schema) if flow.head
                                    else {})
        left_keys: list[str] = []
        right_keys: list[str] = []
        for jk in step.keys:
            (lk, lshown), (rk, rshown) = self._join_sides(jk, flow.schema, left_names,
                                                          info.schema, right_q, step)
            lt, rt = flow.schema.field(lk), info.schema.field(rk)
            assert lt is not None and rt is not None
            if lt.type != rt.type or lt.type.is_array:
                what = "cannot be an array" if lt.type == rt.type else "must have the same type"
                raise FlowTypeError(f"join keys {what}: {lshown} (left) is {lt.type} but "
                                    f"{rshown} (right) is {rt.type}", jk.span,
                                    hint="convert one side with a 'map' before the join")
            left_keys.append(lk)
            right_keys.append(rk)
        what = "an interval join" if step.window is None else "a window join"
        if step.kind is not None and not interval:
            return self.regular_join(flow, info, step, left_names, right_q,
                                     tuple(left_keys), tuple(right_keys))
        self.need_event_time(flow, step.span, what)
        if not info.event_time:
            raise FlowTypeError(f"{what} needs event time, but '{step.other}' has no "
                                "timestamps", step.other_span,
                                hint="declare one on its source: watermark <field> - 2s")
        for keyed_by, keys, span in ((flow.key, left_keys, step.span),
                                     (info.key, right_keys, step.other_span)):
            if keyed_by is not None and tuple(keyed_by) != tuple(keys):
                raise FlowSyntaxError(f"the stream is keyed by {', '.join(keyed_by)} but the "
                                      f"join is on {', '.join(keys)}", span,
                                      hint="a join keys both sides by its 'on' fields; remove "
                                           "the 'key by'")
        schema, right_names = self._join_schema(flow.schema, info.schema, right_q, step.span)
        names: Qualifiers = dict(left_names)
        names[right_q] = None if right_q in names else right_names
        # an outer interval join keeps the rows of null keys (row keys: they join nothing)
        outer = step.kind in ("left", "right", "full")
        k1 = key_selector(flow.schema, tuple(left_keys), row=outer)
        k2 = key_selector(info.schema, tuple(right_keys), row=outer)
        if step.window is not None:
            fn = CodeFn(_concat, "a + b", ("a", "b"), vector=VJoinRows())
            joined = flow.stream.join(info.stream).where(k1).equal_to(k2).window(
                assigner_of(step.window))
            if step.lateness is not None:
                joined = joined.allowed_lateness(step.lateness)
            stream = joined.apply(fn, output_type=schema)
        else:
            assert step.lower is not None and step.upper is not None
            pad = (len(info.schema) if step.kind in ("left", "full") else None,
                   len(flow.schema) if step.kind in ("right", "full") else None)
            stream = flow.stream.key_by(k1).interval_join(info.stream.key_by(k2)).between(
                step.lower, step.upper)._outer(*pad, table=step.table or outer).process(
                JoinRows(), output_type=schema)
        apply_hints(stream, step.hints)
        return Flow(stream, schema, True, head=flow.head, names=names)

    def _join_sides(self, jk: A.JoinKey, left: Schema, left_names: Qualifiers,
                    right: Schema, right_q: str,
                    step: A.JoinStep) -> tuple[tuple[str, str], tuple[str, str]]:
        """The (column, text as written) of each side of ``a = b``, left first."""
        def side(ref: A.FieldRef) -> tuple[str, str]:
            q = ref.qualifier
            if q is None:
                return "both", ref.name
            if q == right_q and q in left_names or left_names.get(q, {}) is None:
                raise FlowNameError(f"'{q}' names both sides of the join", ref.span,
                                    hint=f"name the right side: join {step.other} as "
                                         f"{step.other}_2 on ...")
            if q == right_q:
                return "right", ref.name
            mapping = left_names.get(q)
            if mapping is None:
                known = [*left_names, right_q]
                raise FlowNameError(f"unknown stream '{q}' in the join condition", ref.span,
                                    hint=did_you_mean(q, known) or "the sides of this join "
                                    f"are {' and '.join(repr(k) for k in known)}")
            column = mapping.get(ref.name)
            if column is None:
                raise FlowNameError(f"unknown field '{ref.name}' on the left side of the join",
                                    ref.span, hint=did_you_mean(ref.name, mapping))
            return "left", column
        refs = [jk.left, jk.right]
        sides = [side(jk.left), side(jk.right)]
        if sides[0][0] == "right" and sides[1][0] != "right":
            refs.reverse()
            sides.reverse()
        elif sides[0][0] == sides[1][0] != "both":
            raise FlowSyntaxError(f"a join condition compares a field of each side, but both "
                                  f"are on the {sides[0][0]} side", jk.span)
        out: list[tuple[str, str]] = []
        for (_, name), ref, schema, where in zip(sides, refs, (left, right), ("left", "right")):
            if schema.field(name) is None:
                raise FlowNameError(f"unknown field '{ref.name}' on the {where} side of the "
                                    "join", ref.span, hint=did_you_mean(ref.name, schema.names))
            out.append((name, f"{ref.qualifier}.{ref.name}" if ref.qualifier else ref.name))
        return out[0], out[1]

    def _join_schema(self, left: Schema, right: Schema, right_q: str,
                     span: Span) -> tuple[Schema, dict[str, str]]:
        """The output schema, and where each right field went (renamed if taken)."""
        fields = list(left.fields)
        taken = set(left.names)
        moved: dict[str, str] = {}
        for f in right.fields:
            name = f.name if f.name not in taken else f"{right_q}_{f.name}"
            if name in taken:
                raise FlowNameError(f"the join output would have two columns named '{name}'",
                                    span, hint="rename fields with a 'map' before the join")
            taken.add(name)
            moved[f.name] = name
            fields.append(Field(name, f.type))
        return Schema(tuple(fields)), moved


def _concat(a: Any, b: Any) -> Any:
    return a + b
