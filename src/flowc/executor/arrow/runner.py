"""Run a JobGraph on Spark with Arrow batches between operators.

Subtask i of a vertex is Spark partition i, one task runs the vertex's whole chain
(``chain.ChainProgram``). A vertex RDD holds ``(slot, payload)`` items as the row executor's
does, but a payload carries an Arrow IPC batch instead of one pickled record: for an edge
``(target subtask, (channel id, sequence, ipc))`` - the shuffle is ``partitionBy`` on the
target, and the consumer orders what it received by (channel, sequence), which is the
BATCH channel rule (channels concatenated in channel order) -; for a sink the IPC batch.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from flowc.chaining.job_graph import JobGraph, JobVertex
from flowc.errors import ExecutionError, FlowcError
from flowc.executor.arrow import (
    convert,
    csvsource,
    joinspill,
    merge,
    partitioned_sinks,
    sinks,
    spill,
)
from flowc.executor.arrow.chain import ChainProgram, Member, TaskFailure
from flowc.executor.arrow.route import Router
from flowc.executor.failures import wrap
from flowc.executor.result import JobResult, VertexMetrics
from flowc.executor.runtime import files
from flowc.executor.runtime.clock import processing_clock, using_clock
from flowc.executor.runtime.sources import source_values
from flowc.executor.sinks import Staged, print_text, sink_path
from flowc.executor.spark import io, tasks
from flowc.executor.spark.runner import _Outcome, _SparkJob, run_on_spark
from flowc.executor.wiring import Wiring
from flowc.operators import (
    CollectSink,
    DiscardingSink,
    FileSink,
    FileSource,
    PrintSink,
    RowFormatFileSink,
)
from flowc.planner.stream_graph import NodeKind

ROWS = 65536  # records per chunk read from a source
LONG_MAX = (1 << 63) - 1


def _identity(k: int) -> int:
    return k


class _Slot:
    def __init__(self, index: int, node: int, edge: Any = None, sink: Any = None) -> None:
        self.index = index
        self.node = node
        self.edge = edge
        self.sink = sink
        self.partitioner = None if edge is None else edge.partitioner
        self.routers: list[dict[str, Any]] = []  # per producer subtask: Router arguments
        self.edge_order = 0
        self.schema: Any = None  # a side output's type (else the node's output type)


def run_columnar(job_graph: JobGraph, members: dict[str, list[Member]], *,
                 master: str | None = None, verbose: bool = False, progress: bool = False,
                 job_name: str | None = None) -> JobResult:
    """``run_on_spark``'s job life cycle (Spark start, progress, printing, clean-up) with
    the columnar job in place of the row one."""
    state_memory = spill.state_memory(dict(job_graph.stream_graph.config.options))

    def make_job(spark: Any, jg: JobGraph, wiring: Wiring, name: str) -> _ColumnarJob:
        return _ColumnarJob(spark, jg, wiring, members, name, state_memory)
    return run_on_spark(job_graph, master=master, verbose=verbose, progress=progress,
                        job_name=job_name, make_job=make_job)


class _ColumnarJob(_SparkJob):
    """The row job's life cycle, actions and error translation; its own chains and RDDs."""

    def __init__(self, spark: Any, jg: JobGraph, wiring: Wiring,
                 members: dict[str, list[Member]], name: str, state_memory: int) -> None:
        super().__init__(spark, jg, wiring, name)
        self.members = members
        self.slots: dict[str, list[_Slot]] = {}
        self.edge_slot: dict[int, tuple[str, int]] = {}  # id(edge) -> (vertex, slot)
        self.state_memory = state_memory

    def _plan_slots(self, v: JobVertex) -> list[Member]:
        p, _ = self.wiring.vertex(v.id)
        slots: list[_Slot] = []
        resolved: list[Member] = []
        def resolve(m: Member, refs: list[tuple[str, int]],
                    schema: Any = None) -> list[tuple[str, int]]:
            outputs: list[tuple[str, int]] = []
            for kind, ref in refs:
                if kind != "edge":
                    outputs.append((kind, ref))
                    continue
                e = next(e for e in self.sg.outputs(m.nid) if id(e) == ref)
                target = self.jg.vertex_of_node(e.target_id)
                tp, tm = self.wiring.vertex(target.id)
                slot = _Slot(len(slots), m.nid, edge=e)
                slot.schema = schema
                if m.kind == "tag":  # routed by the side's own key, as the union key does
                    slot.partitioner = dataclasses.replace(e.partitioner, key=m.key)
                slot.edge_order = list(self.sg.inputs(e.target_id)).index(e)
                slot.routers = [dict(producer=k, targets=list(self.wiring.consumers_of(e, k)),
                                     t=tp, max_par=tm, seed=e.edge_id) for k in range(p)]
                slots.append(slot)
                self.edge_slot[id(e)] = (v.id, slot.index)
                outputs.append(("slot", slot.index))
            return outputs

        for m in self.members[v.id]:
            outputs = resolve(m, m.outputs)
            if m.kind == "sink":
                slot = _Slot(len(slots), m.nid, sink=m.spec)
                slots.append(slot)
                outputs.append(("slot", slot.index))
            resolved.append(dataclasses.replace(
                m, outputs=outputs, side=resolve(m, m.side),
                tagged=[(tag, t, resolve(m, refs, t)) for tag, t, refs in m.tagged]))
        self.slots[v.id] = slots
        return resolved

    def run(self) -> _Outcome:
        from pyspark import StorageLevel

        order = self.jg.vertices_sorted()
        programs = {v.id: self._plan_slots(v) for v in order}
        uses: dict[str, int] = {v.id: 0 for v in order}
        for v in order:
            for e in v.inputs:
                uses[e.source] += 1
            uses[v.id] += sum(1 for s in self.slots[v.id] if s.sink is not None
                              and not isinstance(s.sink, DiscardingSink))
            uses[v.id] += self._dead_letter(v) is not None
        for v in order:
            rdd = self._columnar_rdd(v, programs[v.id])
            if uses[v.id] > 1:
                rdd = rdd.persist(StorageLevel.MEMORY_AND_DISK)
                self.persisted.append(rdd)
            self.rdds[v.id] = rdd
        outcome = _Outcome(JobResult(self.name))
        staged = Staged()
        try:
            try:
                for v in order:
                    self._columnar_actions(v, outcome, staged)
                staged.commit()
            except BaseException:
                staged.abort()
                raise
        except Exception as e:  # Spark wraps task failures in Py4J / PythonException
            raise self._translate(e) from None
        stats = self.stats.value
        for v in order:
            s = stats.get(v.id, [0, 0, 0, 0, 0.0])
            has_sink = any(slot.sink is not None for slot in self.slots[v.id])
            outcome.result.vertices.append(VertexMetrics(
                v.name, self.wiring.vertex(v.id)[0], s[0], s[1], s[3] if has_sink else None,
                seconds=s[4]))
            outcome.result.late_records_dropped += s[2]
        return outcome

    # -- the vertex RDD ---------------------------------------------------------------

    def _columnar_rdd(self, v: JobVertex, members: list[Member]) -> Any:
        p, maxp = self.wiring.vertex(v.id)
        slots = self.slots[v.id]
        stats, vid, name = self.stats, v.id, v.name
        state_memory = self.state_memory
        streaming = not self.batch
        is_source = self.sg.nodes[v.head].kind is NodeKind.SOURCE
        head = members[0]
        head_node = self.sg.nodes[v.head]

        report = (self.report_to, self.sources[vid]) \
            if self.report_to is not None and vid in self.sources else None
        out_schemas = {m.nid: m.out_schema for m in members}  # a tag member's is its input's
        slot_schemas = {s.index: convert.arrow_schema(
            out_schemas[s.node] if s.schema is None else s.schema)
            for s in slots if s.edge is not None}

        clock = processing_clock()  # the driver's (an injected one in tests) reaches the tasks

        def run_chain(idx: int, chunks: Any) -> Any:
            with using_clock(clock):
                yield from chain_task(idx, chunks)

        def chain_task(idx: int, chunks: Any) -> Any:
            on_end = tasks.timed(lambda counts: stats.add({vid: counts}))
            if report is not None:
                chunks = tasks.reporting(chunks, report[0], report[1], idx,
                                         rows=lambda c: c.num_rows)
            buf: list[Any] = []
            counts = [0, 0, 0, 0]
            routers = {s.index: Router(s.partitioner, **s.routers[idx]) for s in slots
                       if s.edge is not None}
            cids = {s.index: (s.edge_order << 16) | idx for s in slots if s.edge is not None}
            seq = [0]

            def emit(slot: int, chunk: convert.Chunk) -> None:
                s = slots[slot]
                if s.edge is not None:
                    counts[1] += chunk.num_rows
                    parts = routers[slot].split(chunk)
                    if streaming:  # watermarks go to every connected consumer
                        got = dict(parts)
                        parts = [(t, got.get(t) or only_marks(chunk))
                                 for t in s.routers[idx]["targets"]]
                    for target, part in parts:
                        if streaming and not part.num_rows and not len(part.marks[0]):
                            continue
                        marks = merge.marks_of(part) if streaming else ([], [])
                        buf.append((slot, (target, (cids[slot], seq[0], convert.to_ipc(part),
                                                    *marks))))
                        seq[0] += 1
                    return
                counts[3] += chunk.num_rows
                if chunk.num_rows and not isinstance(s.sink, DiscardingSink):
                    buf.append((slot, convert.to_ipc(chunk)))
            try:
                program = ChainProgram(members, idx, p, maxp, name, emit, streaming,
                                       state_memory)
                try:
                    for chunk in _guarded(chunks, head.nid):
                        counts[0] += chunk.num_rows
                        program.push(head.nid, chunk)
                        yield from buf
                        del buf[:]
                    program.finish()
                    counts[2] += program.late_dropped
                    if streaming and is_source:  # end of input: Long.MAX_VALUE everywhere
                        for s in slots:
                            if s.edge is not None:
                                end = convert.to_ipc(convert.empty(slot_schemas[s.index]))
                                for t in s.routers[idx]["targets"]:
                                    buf.append((s.index, (t, (cids[s.index], seq[0], end,
                                                              [0], [LONG_MAX]))))
                                    seq[0] += 1
                finally:
                    program.close()
            except TaskFailure as f:
                raise tasks.task_error(f.error, "", {}, f.nid) from None
            yield from buf
            on_end(counts)

        if head_node.operator is not None and isinstance(head_node.operator, FileSource):
            spec = head_node.operator
            schema = convert.arrow_schema(head.out_schema)
            try:
                native = csvsource.local_reader(spec, p, schema, ROWS)
                if native is None:
                    base, read = io.source_input(self.spark, spec, p)
                else:
                    base = self.sc.parallelize(range(p), p)
            except FlowcError as e:
                raise wrap(head_node, e) from None
            dead = io.DEAD

            def run_source(idx: int, it: Any) -> Any:
                bad = files.BadRows(spec)
                chunks = native(idx, bad) if native is not None else \
                    csvsource.row_chunks(read(idx, it, bad), schema, ROWS)
                yield from run_chain(idx, chunks)
                for line in bad.lines:
                    yield dead, line
            return base.mapPartitionsWithIndex(run_source)
        if is_source:  # an in-memory source (``plan.IN_MEMORY``): its values in chunks
            spec = head_node.operator
            schema = convert.arrow_schema(head.out_schema)

            def run_values(idx: int, _it: Any) -> Any:
                return run_chain(idx, csvsource.row_chunks(source_values(spec, idx, p),
                                                           schema, ROWS))
            return self.sc.parallelize(range(p), p).mapPartitionsWithIndex(run_values)
        head_inputs = list(self.sg.inputs(v.head))
        edges = sorted(v.inputs, key=lambda e: head_inputs.index(e.stream_edge))
        parts = []
        for e in edges:
            src, slot = self.edge_slot[id(e.stream_edge)]
            parts.append(self.rdds[src].filter(lambda x, s=slot: x[0] == s).map(lambda x: x[1]))
        merged = parts[0] if len(parts) == 1 else self.sc.union(parts)
        shuffled = merged.partitionBy(p, _identity)
        in_schema = convert.arrow_schema(head.in_schema)

        channel_ids = [[(order << 16) | k for order, e in enumerate(edges)
                        for k in self.wiring.producers_of(e.stream_edge, idx)]
                       for idx in range(p)]

        join = head.spec if head.kind in ("window_join", "interval_join", "regular_join") \
            else None
        side_schemas = None if join is None else [convert.arrow_schema(s)
                                                  for s in join.schemas]

        def run_consumer(idx: int, it: Any) -> Any:
            # The partition is read back in channel order, spilled past the state memory.
            inbox = spill.Received(state_memory)
            for _, item in it:
                inbox.add(item)
            if streaming and join is None:  # channels interleaved, a range at a time
                return run_chain(idx, _merged(inbox, channel_ids[idx], in_schema))
            if join is not None and streaming:  # its channels merged a range at a time,
                # each part's records with their merged places and watermarks
                sides = [join.sides[c >> 16] for c in channel_ids[idx]]
                return run_chain(idx, _join_parts(inbox, channel_ids[idx], sides,
                                                  side_schemas))
            received: Any = inbox.ordered()
            if join is not None:
                # BATCH window / interval / regular joins part by part (``joinspill.py``)
                return run_chain(idx, (joinspill.JoinPart(
                    join.sides[x[0] >> 16],
                    convert.from_ipc(x[2], side_schemas[join.sides[x[0] >> 16]]))
                    for x in received))
            chunks: Any = (convert.from_ipc(x[2], in_schema) for x in received)
            return run_chain(idx, chunks)
        return shuffled.mapPartitionsWithIndex(run_consumer)

    # -- actions ------------------------------------------------------------------------

    def _columnar_actions(self, v: JobVertex, outcome: _Outcome, staged: Staged) -> None:
        rdd = self.rdds[v.id]
        slots = self.slots[v.id]
        p = self.wiring.vertex(v.id)[0]
        shown = [s for s in slots if isinstance(s.sink, CollectSink)]
        prints = [s for s in slots if isinstance(s.sink, PrintSink)]
        if shown:
            wanted = {s.index for s in shown}
            items = rdd.mapPartitionsWithIndex(
                lambda idx, it, w=wanted: ((idx, x[0], x[1]) for x in it if x[0] in w)
            ).collect()
            for s in shown:
                schema = convert.arrow_schema(self.sg.nodes[s.node].output_type)
                outcome.result.collected.setdefault(s.sink.name, []).extend(
                    r for _, slot, data in items if slot == s.index
                    for r in convert.from_ipc(data, schema).rows())
        if prints:  # computed now, streamed out by stream_prints after the job
            rdd.foreach(_noop)
            outcome.prints.extend((s, rdd, p) for s in prints)  # type: ignore[misc]
        for s in slots:
            if isinstance(s.sink, (FileSink, RowFormatFileSink)):
                node = self.sg.nodes[s.node]
                schema = convert.arrow_schema(node.output_type)
                if isinstance(s.sink, FileSink) and self._arrow_sink(s, rdd, schema, staged):
                    continue
                values = rdd.filter(lambda x, i=s.index: x[0] == i).flatMap(
                    lambda x, sc=schema: convert.from_ipc(x[1], sc).rows())
                staged.add(self._write_sink(s, values), sink_path(s.sink))  # type: ignore[arg-type]
        dead = self._stage_dead_letters(v, rdd, staged)
        if not v.produced and not shown and not prints and dead is None and not any(
                isinstance(s.sink, (FileSink, RowFormatFileSink)) for s in slots):
            rdd.foreach(_noop)

    def _arrow_sink(self, s: _Slot, rdd: Any, schema: Any, staged: Staged) -> bool:
        """Write a csv / json / parquet sink from the chunks in its tasks (``sinks.py``);
        False: it takes the row route (records to Spark's writers)."""
        spec, node = s.sink, self.sg.nodes[s.node]
        try:
            plan = sinks.plan(spec, node.output_type)
            path = sink_path(spec)
            if plan is not None:
                staged.add(sinks.stage(rdd, s.index, schema, spec, plan, path), path)
                return True
            other = partitioned_sinks.plan(spec, node.output_type)  # partitioned, typed
            if other is None:
                return False
            staged.add(partitioned_sinks.stage(rdd, s.index, schema, spec, other, path,
                                               node.id), path)
            return True
        except FlowcError as e:
            raise wrap(node, e) from None
        except Exception as e:
            if tasks.parse_task_error(str(e)) is not None:
                raise  # a task failed: _translate names its operator
            raise ExecutionError(f"writing the {spec.format} sink {spec.path} failed: "
                                 f"{io.spark_message(e)}", node.span) from None

    def _print_lines(self, rdd: Any, slot: Any, prefixes: list[str]) -> Any:
        schema = convert.arrow_schema(self.sg.nodes[slot.node].output_type)
        return rdd.mapPartitionsWithIndex(
            lambda idx, it, i=slot.index, pre=prefixes, sc=schema, spec=slot.sink:
            (f"{pre[idx]}{print_text(spec, r)}" for x in it if x[0] == i
             for r in convert.from_ipc(x[1], sc).rows()))


def _merged(inbox: spill.Received, cids: list[int], schema: Any) -> Any:
    """A STREAMING consumer's input: its channels merged (``merge.merge_chunks``) as the
    inbox reads them back; the inbox's spill file goes at the end."""
    try:
        yield from merge.merge_chunks(inbox.channels(cids), schema)
    finally:
        inbox.close()


def _join_parts(inbox: spill.Received, cids: list[int], sides: list[int],
                schemas: list[Any]) -> Any:
    """A STREAMING join consumer's input (``joinspill.streaming_parts``) as the inbox
    reads it back; the inbox's spill file goes at the end."""
    try:
        yield from joinspill.streaming_parts(
            [(s, schemas[s], it) for s, it in zip(sides, inbox.channels(cids))])
    finally:
        inbox.close()


def only_marks(c: convert.Chunk) -> convert.Chunk:
    """No records, the chunk's watermarks (all before any record of this target)."""
    import numpy as np

    marks = c.marks if c.marks is not None else (np.zeros(0, np.int64), np.zeros(0, np.int64))
    e = c.take(np.zeros(0, np.int64))
    return convert.Chunk(e.batch, e.ts, (np.zeros(len(marks[0]), np.int64), marks[1]))


def _guarded(chunks: Any, nid: int) -> Any:
    """The input chunks; a failure to read them (a bad row, an unreadable file) is the
    head's, as the reference executor reports it."""
    it = iter(chunks)
    while True:
        try:
            chunk = next(it)
        except StopIteration:
            return
        except Exception as e:
            raise TaskFailure(nid, e) from None
        yield chunk


def _noop(_: Any) -> None:
    pass
