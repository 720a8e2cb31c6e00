"""The reference executor's micro-batch model: an unbounded job run as the streaming
executor runs it on Structured Streaming, over given micro-batch boundaries, without Spark.

``run_reference(job_graph, micro_batches=MicroBatches({source node: [files of batch 0,
files of batch 1, ...]}))`` reads each monitored source's files batch by batch, exactly as
the streaming executor does (docs/executor.md, "Streaming"):

- a batch's files, sorted, go to the source's subtasks round robin over the job (the
  job's n-th file to subtask n % p: ``streaming.sources.file_shares``); a bounded source is
  read whole in batch 0, then sends Long.MAX_VALUE;
- at the end of its share of every batch a source's own watermark generator emits its
  watermark if it rose (``emit_periodic``: watermarks move per micro-batch);
- each channel carries a batch-end marker after the batch's elements; a consumer merges
  one batch of all its channels at a time (``reference_stream.batch_merge``: the round
  robin restarts with each batch, the channels' watermarks carry over) and round-robin
  partitioners (REBALANCE, RESCALE, SHUFFLE) restart with each batch;
- the job is stopped after its last batch, not drained: no end-of-input watermark from an
  unbounded source and no ``finish``, so windows not yet due stay unfired, as in a run
  stopped with Ctrl-C.

Print lines come batch by batch (then sink, subtask, arrival order), as the streaming
executor prints them.

With the batches' timestamps (``MicroBatches.timestamps``: Spark's ``batchTimestampMs`` of
each batch, which the streaming executor reads from the offsets log) the model also has
the streaming executor's processing time and idleness:

- every subtask runs batch *b* at processing time ``timestamps[b]`` (a fixed clock:
  processing-time windows and timers, ``PROCTIME()``, state TTL);
- at the start of every batch each operator fires its processing-time timers due by then,
  before the batch's input: a vertex head first, a chained member after the records its
  predecessor's timers produced (``reference_stream.TIMERS`` marks their end in the
  channel), as ``SubtaskRun.fire_processing_timers`` fires them head to tail; the member
  is at the batch's time from the batch's start (``reference_stream.BATCH_START``), so it
  takes those records - firing its due timers before each, registering new ones - at the
  batch's processing time, as the chain does on the streaming paths;
- a watermark generator with an idleness timeout counts its records; at the end of a batch
  in which it got none, if more than the timeout passed since the last batch that had one
  (or since its first batch), it marks its output IDLE, and its next record makes it
  ACTIVE again first (``SubtaskRun.end_batch``); the statuses travel the channels and the
  consumers merge them with Flink's ``StatusWatermarkValve`` rules (``merge_with_valve``).

Without timestamps processing time is the wall clock and no channel goes idle.
``tests/streaming/test_streaming_late_records.py`` checks the streaming executor against
the model, late records included; ``tests/streaming/test_model_processing_time.py`` with
processing-time windows and idleness.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from flowc.chaining.job_graph import JobGraph
from flowc.errors import UnsupportedError
from flowc.executor.reference_stream import BATCH_END, BATCH_START, BLOCKED, TIMERS
from flowc.executor.runtime import files
from flowc.executor.runtime.channels import WatermarkStatus
from flowc.executor.runtime.core import LONG_MAX
from flowc.executor.runtime.operators import TimestampsAndWatermarksOperator
from flowc.operators import FileSource, TextLineFileSource
from flowc.planner.stream_graph import NodeKind, StreamNode


@dataclass(frozen=True)
class MicroBatches:
    """Per monitored source (its StreamNode id): the files that landed in each micro-batch,
    batch 0 first (an empty list: the source had no new file in that batch)."""

    files: Mapping[int, Sequence[Sequence[str]]]
    # each batch's timestamp (epoch ms, as Spark's offsets log holds it); None: not modelled
    timestamps: Sequence[int] | None = None

    @property
    def count(self) -> int:
        return max((len(b) for b in self.files.values()), default=0)

    def time_of(self, batch: int) -> int:
        """Batch ``batch``'s processing time (the last batch's after the last)."""
        assert self.timestamps is not None
        return self.timestamps[min(batch, len(self.timestamps) - 1)]


def check_model(job_graph: JobGraph, micro: MicroBatches) -> None:
    """Every unbounded source is a monitored file source with its batches given, and only
    those; a Kafka sink is refused as by the bounded run."""
    from flowc.executor.streaming import unbounded_sources
    from flowc.operators import KafkaSink

    sg = job_graph.stream_graph
    if micro.timestamps is not None and (
            len(micro.timestamps) != micro.count or
            any(b < a for a, b in zip(micro.timestamps, micro.timestamps[1:]))):
        raise UnsupportedError(f"{len(micro.timestamps)} micro-batch timestamps given for "
                               f"{micro.count} micro-batches; one a batch, not decreasing")
    unbounded = {n.id for n in unbounded_sources(job_graph)}
    if not unbounded:
        raise UnsupportedError("the micro-batch model runs jobs with a monitored source; "
                               "this job's sources are all bounded")
    for nid in micro.files:
        if nid not in unbounded:
            raise UnsupportedError(f"micro-batches given for node {nid}, which is not an "
                                   "unbounded source of the job")
    for nid in sorted(unbounded):
        node = sg.nodes[nid]
        if not isinstance(node.operator, (FileSource, TextLineFileSource)):
            raise UnsupportedError(f"the micro-batch model reads monitored files only, not "
                                   f"'{node.name}'", node.span)
        if nid not in micro.files:
            raise UnsupportedError(f"no micro-batches given for '{node.name}'", node.span)
    for _, n in sorted(sg.nodes.items()):
        if n.kind is NodeKind.SINK and isinstance(n.operator, KafkaSink):
            raise UnsupportedError(f"'{n.name}' writes to Kafka; the micro-batch model "
                                   "does not", n.span)


def source_batches(node: StreamNode, subtask: int, p: int, micro: MicroBatches,
                   whole: Iterator[Any], bad: files.BadRows | None
                   ) -> Iterator[tuple[int, Any]]:
    """What source subtask ``subtask`` does, batch by batch: ``(3, batch)`` at the start
    of each batch, ``(0, record)`` for its records, ``(1, batch)`` at the end of each
    batch (the generator's periodic emission, then the batch-end markers), ``(2,
    LONG_MAX)`` after a bounded source's input. ``whole``: a bounded source's whole split
    (read in batch 0)."""
    from flowc.executor.streaming.sources import file_shares, source_records

    spec = node.operator
    batches = micro.files.get(node.id)
    before = 0
    for b in range(micro.count):
        yield 3, b
        if batches is None:  # bounded: all of it in the first batch, then finished
            if b == 0:
                for v in whole:
                    yield 0, v
                yield 2, LONG_MAX
        elif b < len(batches):
            paths = sorted(files.local_path(f) or f for f in batches[b])
            share = file_shares(paths, before, p)[subtask]
            before += len(paths)
            for rec, _ in source_records(spec, share, bad):
                yield 0, rec
        yield 1, b


class Idleness:
    """A watermark generator's idleness in the model (``SubtaskRun._counted`` /
    ``end_batch``'s rule): records since the last batch end, the timestamp of the last
    batch that had one (or of the first batch), idle or not."""

    def __init__(self, timeout: int) -> None:
        self.timeout = timeout
        self.count = 0
        self.last: int | None = None
        self.idle = False

    def record(self) -> bool:
        """A record arrived: True when the output turns ACTIVE again (before it)."""
        self.count += 1
        if self.idle:
            self.idle = False
            return True
        return False

    def end_batch(self, now: int, finished: bool) -> bool:
        """The batch ended at processing time ``now``: True when the output turns IDLE.
        ``finished``: the generator's input ended (a bounded source): never idle."""
        count, self.count = self.count, 0
        if finished:
            return False
        if count or self.last is None:
            self.last = now
        elif not self.idle and now - self.last > self.timeout:
            self.idle = True
            return True
        return False


def idleness_of(op: Any, micro: MicroBatches | None) -> Idleness | None:
    """The model's idleness of a watermark generator operator (None: none modelled)."""
    if micro is None or micro.timestamps is None or \
            not isinstance(op, TimestampsAndWatermarksOperator):
        return None
    timeout = op.spec.strategy.idleness
    return None if timeout is None else Idleness(int(timeout))


class ModelSteps:
    """The micro-batch model's steps of the reference executor's ``_Subtask`` (its
    attributes: node, subtask, p, op, emitter, outs, micro, source, merged, sink, is_sink,
    n_in, batch_no, clock, idleness)."""

    node: Any
    subtask: int
    p: int
    op: Any
    emitter: Any
    outs: Any
    micro: MicroBatches | None
    source: Any
    merged: Any
    sink: Any
    is_sink: bool
    n_in: int
    batch_no: int
    clock: Any
    idleness: Idleness | None

    def _batch_key(self) -> tuple[int, ...]:
        raise NotImplementedError

    def _source_batches(self) -> bool:
        """The micro-batch model's source subtask (``source_batches``)."""
        from flowc.executor import reference as ref

        op, emitter = self.op, self.emitter
        assert emitter is not None and self.micro is not None
        if self.source is None:
            bounded = getattr(self.node.operator, "bounded", True)
            whole = iter(ref.subtask_source(self.node, self.subtask, self.p, self.outs)) \
                if bounded else iter(())
            bad = None
            if not bounded and isinstance(self.node.operator, FileSource):
                bad = self.outs.dead.setdefault(self.node.id, files.BadRows(self.node.operator))
            self.source = source_batches(self.node, self.subtask, self.p, self.micro, whole,
                                         bad)
        n = 0
        emit = emitter.out if op is None else op.process
        idle = self.idleness
        for kind, x in self.source:
            if kind == 0:
                if idle is not None and idle.record():
                    emitter.status(False)
                emit(x, None)
                n += 1
                if n == ref.SOURCE_BATCH:
                    break
            elif kind == 2:  # a bounded source's end of input
                emitter.out_wm(LONG_MAX) if op is None else op.on_watermark(LONG_MAX)
            elif kind == 3:  # a batch starts (a source holds no processing-time timers)
                self._clock_starts(x)
                self._batch_starts(x)
            else:
                if op is not None and not getattr(self.node.operator, "bounded", True):
                    op.emit_periodic()  # type: ignore[attr-defined]
                self._batch_ends(x)
        else:
            self.n_in += n
            return True  # stopped after the last batch: no end of input, no finish
        self.n_in += n
        return False

    def _clock_starts(self, batch: int) -> None:
        """The micro-batch model with timestamps: batch ``batch``'s processing time, from
        before anything of the batch (a chained member's predecessor's timer records)."""
        if self.micro is not None and self.micro.timestamps is not None:
            self.clock.now = self.micro.time_of(batch)

    def _batch_starts(self, batch: int) -> None:
        """The micro-batch model with timestamps: the timers due at batch ``batch``'s
        time fire before its input (then the mark for chained consumers)."""
        if self.micro is None or self.micro.timestamps is None:
            return
        if self.op is not None and not self.is_sink:
            self.op.poll_processing_time()
        assert self.emitter is not None
        self.emitter.timers_fired(batch)

    def _batch_ends(self, batch: int) -> None:
        """A generator's idleness check at the end of the batch, then the batch-end
        markers."""
        assert self.emitter is not None and self.micro is not None
        if self.idleness is not None and self.idleness.end_batch(
                self.micro.time_of(batch), self.op is not None and self.op.watermark == LONG_MAX):
            self.emitter.status(True)
        self.emitter.end_batch(batch)
        self.batch_no = batch + 1

    def _consume_batches(self) -> bool:
        """The micro-batch model's consumer: a batch-end goes on to the outputs; after the
        last batch the job is stopped, not finished (no ``finish``)."""
        from flowc.executor import reference as ref

        op, emitter = self.op, self.emitter
        assert emitter is not None
        n = 0
        try:
            for item in self.merged:
                if item is BLOCKED:
                    return False
                i, v, ts = item
                if v is BATCH_END:
                    self.batch_no = ts + 1
                    if self.is_sink:
                        self.sink = ref.sink_buffer(self.node, self.subtask, self.p, self.outs,
                                                 self._batch_key())
                    else:
                        self._batch_ends(ts)
                elif v is BATCH_START:
                    self._clock_starts(ts)
                elif v is TIMERS:
                    self._batch_starts(ts)
                elif v is WatermarkStatus:  # generators and sinks keep their own status
                    if not self.is_sink and not isinstance(op, TimestampsAndWatermarksOperator):
                        emitter.status(ts)
                elif i == 0:
                    if op is not None:
                        op.on_watermark(ts)
                else:
                    n += 1
                    if self.is_sink:
                        if self.sink is not None:
                            self.sink.append(v)
                    else:
                        assert op is not None
                        if self.idleness is not None and self.idleness.record():
                            emitter.status(False)
                        (op.process2 if i == 2 and op.two_input else
                         op.process1 if op.two_input else op.process)(v, ts)
            return True
        finally:
            self.n_in += n

