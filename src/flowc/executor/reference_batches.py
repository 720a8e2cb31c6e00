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
executor prints them. Not modelled: processing time (the streaming executor's batch
timestamps) and idleness, which are measured on Spark's offsets log; the model runs on the
wall clock and never marks a channel idle. ``tests/streaming/test_streaming_late_records.py``
checks the streaming executor against the model, late records included.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from flowc.chaining.job_graph import JobGraph
from flowc.errors import UnsupportedError
from flowc.executor.runtime import files
from flowc.executor.runtime.core import LONG_MAX
from flowc.operators import FileSource, TextLineFileSource
from flowc.planner.stream_graph import NodeKind, StreamNode


@dataclass(frozen=True)
class MicroBatches:
    """Per monitored source (its StreamNode id): the files that landed in each micro-batch,
    batch 0 first (an empty list: the source had no new file in that batch)."""

    files: Mapping[int, Sequence[Sequence[str]]]

    @property
    def count(self) -> int:
        return max((len(b) for b in self.files.values()), default=0)


def check_model(job_graph: JobGraph, micro: MicroBatches) -> None:
    """Every unbounded source is a monitored file source with its batches given, and only
    those; a Kafka sink is refused as by the bounded run."""
    from flowc.executor.streaming import unbounded_sources
    from flowc.operators import KafkaSink

    sg = job_graph.stream_graph
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
    """What source subtask ``subtask`` does, batch by batch: ``(0, record)`` for its
    records, ``(1, batch)`` at the end of each batch (the generator's periodic emission,
    then the batch-end markers), ``(2, LONG_MAX)`` after a bounded source's input.
    ``whole``: a bounded source's whole split (read in batch 0)."""
    from flowc.executor.streaming.sources import file_shares, source_records

    spec = node.operator
    batches = micro.files.get(node.id)
    before = 0
    for b in range(micro.count):
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
