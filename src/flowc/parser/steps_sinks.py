"""Lowering of the sink steps (``| print``, ``| write csv ...``, ``| blackhole``, ``| write
kafka ...``; a mixin of ``steps.PipelineBuilder``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from flowc.errors import FlowNameError, FlowTypeError, did_you_mean
from flowc.operators import FileSink
from flowc.parser import ast as A
from flowc.parser.partitions import sink_partitions
from flowc.parser.settings import apply_hints

if TYPE_CHECKING:
    from flowc.api.stream import DataStream
    from flowc.parser.steps import Flow

FILE_FORMATS = ("csv", "json", "parquet")


class SinkSteps:
    ctx: Any  # the Lowerer (PipelineBuilder's)

    def materialized(self, flow: Flow) -> DataStream:  # provided by PipelineBuilder
        raise NotImplementedError

    def _PrintSink(self, flow: Flow, step: A.PrintSink) -> Flow:
        sink = self.materialized(flow).print(step.identifier)
        apply_hints(sink, step.hints, sink=True)
        self.ctx.add_sink("print", sink, flow.schema, step.span, None)
        return flow

    def _FileSinkStep(self, flow: Flow, step: A.FileSinkStep) -> Flow:
        fmt = step.format
        if fmt not in FILE_FORMATS:
            raise FlowNameError(f"unknown file format '{fmt}'", step.format_span,
                                hint=did_you_mean(fmt, FILE_FORMATS) or "use csv, json or parquet")
        if fmt == "csv":
            for f in flow.schema.fields:
                if f.type.is_array:
                    raise FlowTypeError(f"csv cannot hold the array field '{f.name}'", step.span,
                                        hint="write json or parquet, or drop it with 'map'")
        if flow.updating:  # Flink's file sinks are insert-only too
            raise FlowTypeError(f"a {fmt} file sink takes an insert-only stream, but this "
                                "stream is updating (a rolling 'aggregate' emits -U/+U "
                                "changes)", step.span,
                                hint="write a windowed aggregate (it emits final rows), or "
                                     "print the changelog")
        partition_by, success, default, fmt_options = sink_partitions(flow.schema, step)
        options = self.ctx.file_options(fmt, fmt_options, sink=True)
        path = self.ctx.resolve_path(step.path)
        sink = self.materialized(flow).sink_to(FileSink(
            path, fmt, flow.schema.names, options, partition_by=partition_by,
            success_file=success, default_partition=default))
        apply_hints(sink, step.hints, sink=True)
        self.ctx.add_sink(fmt, sink, flow.schema, step.span, path)
        return flow

    def _BlackholeSink(self, flow: Flow, step: A.BlackholeSink) -> Flow:
        sink = self.materialized(flow).add_discarding_sink()
        apply_hints(sink, step.hints, sink=True)
        self.ctx.add_sink("blackhole", sink, flow.schema, step.span, None)
        return flow

    def _KafkaSinkStep(self, flow: Flow, step: A.KafkaSinkStep) -> Flow:
        from flowc.operators import KafkaSink

        if flow.updating:  # Flink's Kafka sink is insert-only (upsert-kafka is another one)
            raise FlowTypeError("a Kafka sink takes an insert-only stream, but this stream "
                                "is updating (a rolling 'aggregate' emits -U/+U changes)",
                                step.span, hint="write a windowed aggregate (it emits final "
                                                "rows), or print the changelog")
        names = tuple(flow.schema.names)
        spec = KafkaSink(step.bootstrap_servers, step.topic, step.format, names,
                         tuple(str(t) for t in flow.schema.types), step.key_fields,
                         step.key_format, names if step.value_includes_key else tuple(
                             n for n in names if n not in step.key_fields),
                         step.delivery_guarantee, step.properties)
        sink = self.materialized(flow).sink_to(spec).name(f"kafka {step.topic}")
        apply_hints(sink, step.hints, sink=True)
        self.ctx.add_sink("kafka", sink, flow.schema, step.span, None)
        return flow
