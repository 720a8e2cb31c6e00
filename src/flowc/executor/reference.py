"""The reference executor: single process, no Spark, unchained.

It runs every StreamNode's subtasks over explicit channels: a producer subtask's output is
routed per edge partitioner into one channel per consumer subtask, and each consumer subtask
merges its channels by the rule in ``runtime.channels``. The subtasks are streamed, not run
one after the other: a scheduler steps them in topological order (a source reads a bounded
batch per step, every other subtask consumes what its channels hold), so memory holds what
is in flight, not an operator's whole output. The merge takes each channel's ``k``-th
element in its ``k``-th row whatever the timing, so results equal a node-at-a-time run.
Obviously correct rather than fast; it is the Spark executor's test oracle. Chaining cannot
change results: a chained edge is FORWARD between equal parallelisms, i.e. exactly one
channel. What a run produces (sinks, dead letters, their commit) is ``reference_outputs.py``,
the micro-batch model ``reference_batches.py``.
"""

from __future__ import annotations

import copy
import dataclasses
import heapq
import time
from collections.abc import Callable
from typing import Any

from flowc.api.functions import Function
from flowc.chaining.job_graph import JobGraph
from flowc.errors import FlowcError
from flowc.executor.failures import wrap
from flowc.executor.reference_batches import (
    MicroBatches,
    ModelSteps,
    check_model,
    idleness_of,
)
from flowc.executor.reference_outputs import Outputs, sink_buffer, subtask_source, write_files
from flowc.executor.reference_stream import BLOCKED, Channel, batch_merge, stream_merge
from flowc.executor.result import JobResult, VertexMetrics
from flowc.executor.routing import BROADCAST, make_selector
from flowc.executor.runtime import LONG_MAX, TaskInfo, Watermark, create_operator, files
from flowc.executor.runtime.channels import WatermarkStatus
from flowc.executor.runtime.clock import FixedClock, using_clock
from flowc.executor.runtime.core import Operator
from flowc.executor.runtime.sources import source_watermarks
from flowc.executor.sinks import check_sink, print_text
from flowc.executor.wiring import Wiring
from flowc.operators import FileSink, FileSource, RowFormatFileSink
from flowc.planner.stream_graph import NodeKind, StreamEdge, StreamGraph, StreamNode
from flowc.transformations import RuntimeExecutionMode

# Source records a source subtask reads per scheduling step.
SOURCE_BATCH = 1024


def topological_order(sg: StreamGraph) -> list[int]:
    """Kahn's algorithm, smallest id first among ready nodes (deterministic)."""
    indeg = {nid: len(sg.inputs(nid)) for nid in sg.nodes}
    ready = [nid for nid, d in indeg.items() if d == 0]
    heapq.heapify(ready)
    order = []
    while ready:
        nid = heapq.heappop(ready)
        order.append(nid)
        for e in sg.outputs(nid):
            indeg[e.target_id] -= 1
            if indeg[e.target_id] == 0:
                heapq.heappush(ready, e.target_id)
    return order


class _Emitter:
    """Routes one operator subtask's outputs into consumer channels."""

    def __init__(self, sg: StreamGraph, node: StreamNode, subtask: int, wiring: Wiring,
                 channels: dict[tuple[int, int, int], Channel]) -> None:
        self.edges: list[tuple[StreamEdge, Callable[[Any], int], list[Channel], range]] = []
        self.subtask, self.wiring = subtask, wiring
        for e in sg.outputs(node.id):
            t = wiring.node(e.target_id)[0]
            chans = [channels.setdefault((id(e), subtask, c), Channel()) for c in range(t)]
            self.edges.append((e, self._selector(e), chans, wiring.consumers_of(e, subtask)))
        self.counts: dict[int, int] = {id(e): 0 for e in sg.outputs(node.id)}

    def _selector(self, e: StreamEdge) -> Callable[[Any], int]:
        t, m = self.wiring.node(e.target_id)
        return make_selector(e.partitioner, producer=self.subtask,
                             targets=self.wiring.consumers_of(e, self.subtask), t=t,
                             max_par=m, seed=e.edge_id)

    def end_batch(self, batch: int) -> None:
        """The micro-batch model: the batch's end to every consumer; round-robin
        partitioners start over, as each micro-batch's new tasks do on Spark."""
        self.edges = [(e, self._selector(e), chans, targets)
                      for e, _, chans, targets in self.edges]
        for _, _, chans, targets in self.edges:
            for t in targets:
                chans[t].end_batch(batch)

    def timers_fired(self, batch: int) -> None:
        """The micro-batch model: the end of the records this subtask's processing-time
        timers emitted at the start of ``batch``."""
        for _, _, chans, targets in self.edges:
            for t in targets:
                chans[t].timers_fired(batch)

    def status(self, idle: bool) -> None:
        """A watermark status (idle / active) to the main output's consumers."""
        for e, _, chans, targets in self.edges:
            if e.output_tag is None:
                for t in targets:
                    chans[t].append((WatermarkStatus, idle))

    def close(self) -> None:
        """The subtask finished: its consumers' channels get nothing more."""
        for _, _, chans, _ in self.edges:
            for ch in chans:
                ch.done = True

    def _route(self, tag: Any, value: Any, ts: Any) -> None:
        for e, sel, chans, targets in self.edges:
            if e.output_tag != tag:
                continue
            self.counts[id(e)] += 1
            c = sel(value)
            if c == BROADCAST:
                for t in targets:
                    chans[t].append((value, ts))
            else:
                chans[c].append((value, ts))

    def out(self, value: Any, ts: Any) -> None:
        self._route(None, value, ts)

    def side(self, tag: Any, value: Any, ts: Any) -> None:
        self._route(tag, value, ts)

    def out_wm(self, wm: int) -> None:
        for _, _, chans, targets in self.edges:
            for t in targets:
                chans[t].append((Watermark, wm))


def run_reference(job_graph: JobGraph, *, job_name: str | None = None,
                  micro_batches: MicroBatches | None = None) -> JobResult:
    """Run a bounded job; with ``micro_batches``, an unbounded one as the streaming executor
    runs it over those micro-batches (``reference_batches``)."""
    from flowc.executor.streaming import refuse_unbounded

    if micro_batches is None:
        refuse_unbounded(job_graph, "reference executor")
    else:
        check_model(job_graph, micro_batches)
    start = time.perf_counter()
    sg = job_graph.stream_graph
    batch = sg.config.mode is RuntimeExecutionMode.BATCH
    result = JobResult(job_name or sg.config.job_name)
    wiring = Wiring(job_graph)
    for n in sg.nodes.values():
        try:
            if isinstance(n.operator, FileSource):
                files.check_spec(n.operator)
            elif isinstance(n.operator, (FileSink, RowFormatFileSink)):
                check_sink(n.operator)
        except FlowcError as e:
            raise type(e)(e.message, n.span) from None
    channels: dict[tuple[int, int, int], Channel] = {}
    node_in: dict[int, int] = {}
    edge_out: dict[int, int] = {}
    outs = Outputs(result)
    chains = _Chains(job_graph, wiring, channels, batch)
    pending = [_Subtask(sg.nodes[nid], subtask, wiring, batch, channels, chains, outs,
                        micro_batches)
               for nid in topological_order(sg) for subtask in range(wiring.node(nid)[0])]
    while pending:  # producers precede consumers: every pass makes progress
        still: list[_Subtask] = []
        for task in pending:
            node = task.node
            try:
                finished = task.step()
            except BaseException as exc:
                chains.close_all()
                if isinstance(exc, FlowcError):
                    raise wrap(chains.failed_node or node, exc, sg) from None
                if isinstance(exc, Exception):
                    raise wrap(chains.failed_node or node, exc, sg) from exc
                raise
            if not finished:
                still.append(task)
                continue
            if task.op is not None:
                result.late_records_dropped += task.op.late_records_dropped
            node_in[node.id] = node_in.get(node.id, 0) + task.n_in
            assert task.emitter is not None
            for k, c in task.emitter.counts.items():
                edge_out[k] = edge_out.get(k, 0) + c
        pending = still
    for key in sorted(outs.collected):
        name, values = outs.collected[key]
        result.collected.setdefault(name, []).extend(values)
    for key in sorted(outs.printed):
        prefix, spec, values = outs.printed[key]
        result.printed.extend(f"{prefix}{print_text(spec, v)}" for v in values)
    write_files(sg, outs)
    for v in job_graph.vertices_sorted():
        chained = {id(e) for e in v.chained_edges}
        out = sum(edge_out.get(id(e), 0) for nid in v.chain for e in sg.outputs(nid)
                  if id(e) not in chained)
        sinks = [nid for nid in v.chain if sg.nodes[nid].kind is NodeKind.SINK]
        written = sum(node_in.get(nid, 0) for nid in sinks) if sinks else None
        result.vertices.append(VertexMetrics(v.name, wiring.vertex(v.id)[0],
                                             node_in.get(v.head, 0), out, written))
    result.wall_time = time.perf_counter() - start
    return result


class _Chains:
    """Flink's OperatorChain lifecycle (flink-semantics §7) for the unchained run: when the
    head of a JobVertex is about to run subtask ``i``, the operators of all the vertex's
    chain members for subtask ``i`` are created and opened tail -> head (``JobVertex.chain``
    is Flink's operator order, head last); after the last member ran, they are closed head
    -> tail. A failed open closes the members opened before it; a failed job closes every
    open chain. Each subtask thus sees the same open/close sequence as the Spark executor's
    fused chain."""

    def __init__(self, job_graph: JobGraph, wiring: Wiring,
                 channels: dict[tuple[int, int, int], Channel], batch: bool) -> None:
        self.jg = job_graph
        self.sg = job_graph.stream_graph
        self.wiring = wiring
        self.channels = channels
        self.batch = batch
        # (vertex id, subtask) -> members' (operator, emitter); opened (node, operator),
        # tail first; members still to run.
        self.members: dict[tuple[str, int], dict[int, tuple[Operator | None, _Emitter]]] = {}
        self.opened: dict[tuple[str, int], list[tuple[int, Operator]]] = {}
        self.left: dict[tuple[str, int], int] = {}
        self.failed_node: StreamNode | None = None

    def member(self, nid: int, subtask: int) -> tuple[Operator | None, _Emitter]:
        v = self.jg.vertex_of_node(nid)
        task = (v.id, subtask)
        if task not in self.members:
            self._open(v.chain, task)
        return self.members[task][nid]

    def _open(self, chain: tuple[int, ...], task: tuple[str, int]) -> None:
        members: dict[int, tuple[Operator | None, _Emitter]] = {}
        opened: list[tuple[int, Operator]] = []
        self.members[task], self.opened[task], self.left[task] = members, opened, len(chain)
        subtask = task[1]
        for nid in chain:  # created and opened tail first
            node = self.sg.nodes[nid]
            p, m = self.wiring.node(nid)
            emitter = _Emitter(self.sg, node, subtask, self.wiring, self.channels)
            spec = source_watermarks(node) if node.kind is NodeKind.SOURCE else (
                node.operator if node.kind is NodeKind.OPERATOR else None)
            op = None
            if spec is not None:
                keys = node.keys if node.kind is NodeKind.OPERATOR else ()
                op = create_operator(_subtask_copy(spec),
                                     TaskInfo(node.name, subtask, p, m, self.batch), keys)
                op.out, op.side, op.out_wm = emitter.out, emitter.side, emitter.out_wm
                self.failed_node = node
                op.open()
                self.failed_node = None
                opened.append((nid, op))
            members[nid] = (op, emitter)

    def ran(self, nid: int, subtask: int) -> None:
        task = (self.jg.vertex_of_node(nid).id, subtask)
        self.left[task] -= 1
        if self.left[task]:
            return
        opened = self.opened[task]
        while opened:  # head -> tail; a failing close leaves the rest to close_all
            cnid, op = opened.pop()
            self.failed_node = self.sg.nodes[cnid]
            op.close()
        self.failed_node = None
        del self.opened[task], self.members[task]

    def close_all(self) -> None:
        """The job failed: close every chain still open (head -> tail), ignoring errors."""
        for opened in self.opened.values():
            while opened:
                try:
                    opened.pop()[1].close()
                except Exception:  # noqa: BLE001, S110 - the job's failure is reported
                    pass
        self.opened.clear()


def _subtask_copy(spec: Any) -> Any:
    """The spec with its own copies of the user's Function objects: Flink deserializes one
    instance per subtask (Spark unpickles one per task), so attributes a function sets in
    ``open`` or while running are never shared between subtasks. A function that cannot be
    copied is shared (the Spark executor could not pickle it either)."""
    copied = None
    for f in dataclasses.fields(spec):
        value = getattr(spec, f.name)
        if isinstance(value, Function):
            try:
                fresh = copy.deepcopy(value)
            except Exception:  # noqa: BLE001 - not copyable: shared, as documented
                continue
            if copied is None:
                copied = copy.copy(spec)
            object.__setattr__(copied, f.name, fresh)
    return spec if copied is None else copied


class _Subtask(ModelSteps):
    """One subtask of one node, run a step at a time (see the module docstring)."""

    def __init__(self, node: StreamNode, subtask: int, wiring: Wiring, batch: bool,
                 channels: dict[tuple[int, int, int], Channel], chains: _Chains,
                 outs: Outputs, micro: MicroBatches | None = None) -> None:
        self.node, self.subtask, self.batch = node, subtask, batch
        self.micro = micro
        self.batch_no = 0  # the micro-batch model's current batch
        self.p = wiring.node(node.id)[0]
        self.chains, self.outs = chains, outs
        self.op: Operator | None = None
        self.emitter: _Emitter | None = None
        self.n_in = 0
        self.source: Any = None
        self.merged: Any = None
        if node.kind is not NodeKind.SOURCE:
            chans: list[Channel] = []
            inputs: list[int] = []
            for e in chains.sg.inputs(node.id):
                for k in wiring.producers_of(e, subtask):
                    chans.append(channels.setdefault((id(e), k, subtask), Channel()))
                    inputs.append(e.type_number or 1)
            timers = None if micro is None or micro.timestamps is None else \
                "head" if chains.jg.vertex_of_node(node.id).head == node.id else "chained"
            self.merged = stream_merge(chans, inputs, batch) if micro is None else \
                batch_merge(chans, inputs, timers)
        self.is_sink = node.kind is NodeKind.SINK
        self.sink: list[Any] | None = None
        # the micro-batch model with timestamps: the batch's processing time, idleness
        self.clock = FixedClock(0)
        self.idleness: Any = None

    def step(self) -> bool:
        """Run until blocked or finished; True when finished (its chain told)."""
        if self.emitter is None:  # the chain is opened when its first member runs
            self.op, self.emitter = self.chains.member(self.node.id, self.subtask)
            if self.is_sink:
                self.sink = sink_buffer(self.node, self.subtask, self.p, self.outs,
                                         self._batch_key())
            self.idleness = idleness_of(self.op, self.micro)
        if self.micro is not None and self.micro.timestamps is not None:
            with using_clock(self.clock):
                done = self._source_batches() if self.node.kind is NodeKind.SOURCE else \
                    self._consume_batches()
        elif self.micro is not None:
            done = self._source_batches() if self.node.kind is NodeKind.SOURCE else \
                self._consume_batches()
        else:
            done = self._source_step() if self.node.kind is NodeKind.SOURCE else \
                self._consume()
        if done:
            self.emitter.close()
            self.chains.ran(self.node.id, self.subtask)
        return done

    def _source_step(self) -> bool:
        op, emitter = self.op, self.emitter
        assert emitter is not None
        if self.source is None:
            self.source = iter(subtask_source(self.node, self.subtask, self.p, self.outs))
        n = 0
        emit = emitter.out if op is None else op.process
        for v in self.source:
            emit(v, None)
            n += 1
            if n == SOURCE_BATCH:
                self.n_in += n
                return False
        self.n_in += n
        # The source's own watermark strategy: the timestamps/watermarks operator's logic
        # between the reader and the outputs (same rule, same end-of-input watermark).
        if op is None:
            if not self.batch:
                emitter.out_wm(LONG_MAX)
            return True
        if not self.batch:
            op.on_watermark(LONG_MAX)
        op.finish()
        return True

    def _batch_key(self) -> tuple[int, ...]:
        """Sink outputs are kept per (micro-batch, node, subtask) in the model: printed
        batch by batch, as the streaming executor prints them."""
        return () if self.micro is None else (self.batch_no,)

    def _consume(self) -> bool:
        op, sink = self.op, self.sink
        n = 0
        try:
            if self.is_sink:
                for item in self.merged:
                    if item is BLOCKED:
                        return False
                    if item[0] != 0:
                        n += 1
                        if sink is not None:  # a discarding sink keeps nothing
                            sink.append(item[1])
                return True
            assert op is not None
            # input 1 / 2 of a two-input operator; a one-input operator has input 1 only
            p1, p2 = (op.process1, op.process2) if op.two_input else (op.process, op.process)
            wm = op.on_watermark
            for item in self.merged:
                if item is BLOCKED:
                    return False
                i, v, ts = item
                if i == 0:
                    wm(ts)
                else:
                    n += 1
                    (p1 if i == 1 else p2)(v, ts)
            op.finish()
            return True
        finally:
            self.n_in += n
