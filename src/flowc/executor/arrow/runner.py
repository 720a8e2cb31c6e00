"""Run a JobGraph on Spark with Arrow batches between operators.

Subtask i of a vertex is Spark partition i, one task runs the vertex's whole chain
(``chain.ChainProgram``). A vertex RDD holds ``(slot, payload)`` items as the row executor's
does, but a payload carries an Arrow IPC batch instead of one pickled record: for an edge
``(target subtask, (channel id, sequence, ipc))`` - the shuffle is ``partitionBy`` on the
target, and the consumer orders what it received by (channel, sequence), which is the
BATCH channel rule (channels concatenated in channel order) -; for a sink the IPC batch.
"""

from __future__ import annotations

import sys
import time
from typing import Any

from flowc.chaining.job_graph import JobGraph, JobVertex
from flowc.errors import ExecutionError, FlowcError
from flowc.executor.arrow import convert, csvsource
from flowc.executor.arrow.chain import ChainProgram, Member, TaskFailure
from flowc.executor.arrow.route import Router
from flowc.executor.failures import operator_error, wrap
from flowc.executor.result import JobResult, VertexMetrics
from flowc.executor.runtime import files
from flowc.executor.sinks import Staged, print_prefix, sink_path, stage_lines
from flowc.executor.spark import io, tasks
from flowc.executor.spark.progress import Note, start_progress
from flowc.executor.spark.session import get_spark, spark_running
from flowc.executor.wiring import Wiring
from flowc.operators import CollectSink, DiscardingSink, FileSink, FileSource, PrintSink

ROWS = 65536  # records per chunk read from a source


def _identity(k: int) -> int:
    return k


class _Slot:
    def __init__(self, index: int, node: int, edge: Any = None, sink: Any = None) -> None:
        self.index = index
        self.node = node
        self.edge = edge
        self.sink = sink
        self.routers: list[dict[str, Any]] = []  # per producer subtask: Router arguments
        self.edge_order = 0


def run_columnar(job_graph: JobGraph, members: dict[str, list[Member]], *,
                 master: str | None = None, verbose: bool = False, progress: bool = False,
                 job_name: str | None = None) -> JobResult:
    from flowc.executor.spark.runner import _check_operators

    start = time.perf_counter()
    sg = job_graph.stream_graph
    name = job_name or sg.config.job_name
    wiring = Wiring(job_graph)
    _check_operators(job_graph)
    began = time.perf_counter()
    started = spark_running()
    note = Note(sys.stderr, f"{name}: starting Spark ...") \
        if progress and not started and not verbose else None
    try:
        spark = get_spark(master, verbose)
    finally:
        if note is not None:
            note.erase()
    startup = 0.0 if started else time.perf_counter() - began
    start += startup
    job = _ColumnarJob(spark, job_graph, wiring, members, name)
    display = start_progress(job.sc, sys.stderr, name) if progress else None
    try:
        result, out, err = job.run()
    finally:
        if display is not None:
            display.stop()
        job.cleanup()
    result.wall_time = time.perf_counter() - start
    result.startup_time = startup
    for line in out:
        print(line)
    for line in err:
        print(line, file=sys.stderr)
    return result


class _ColumnarJob:
    def __init__(self, spark: Any, jg: JobGraph, wiring: Wiring,
                 members: dict[str, list[Member]], name: str) -> None:
        self.spark = spark
        self.sc = spark.sparkContext
        self.jg = jg
        self.sg = jg.stream_graph
        self.wiring = wiring
        self.members = members
        self.name = name
        self.slots: dict[str, list[_Slot]] = {}
        self.edge_slot: dict[int, tuple[str, int]] = {}  # id(edge) -> (vertex, slot)
        self.rdds: dict[str, Any] = {}
        self.persisted: list[Any] = []
        self.stats = self.sc.accumulator({}, tasks.DictSum())

    def _plan_slots(self, v: JobVertex) -> list[Member]:
        p, _ = self.wiring.vertex(v.id)
        slots: list[_Slot] = []
        resolved: list[Member] = []
        for m in self.members[v.id]:
            outputs: list[tuple[str, int]] = []
            for kind, ref in m.outputs:
                if kind != "edge":
                    outputs.append((kind, ref))
                    continue
                e = next(e for e in self.sg.outputs(m.nid) if id(e) == ref)
                target = self.jg.vertex_of_node(e.target_id)
                tp, tm = self.wiring.vertex(target.id)
                slot = _Slot(len(slots), m.nid, edge=e)
                slot.edge_order = list(self.sg.inputs(e.target_id)).index(e)
                slot.routers = [dict(producer=k, targets=list(self.wiring.consumers_of(e, k)),
                                     t=tp, max_par=tm, seed=e.edge_id) for k in range(p)]
                slots.append(slot)
                self.edge_slot[id(e)] = (v.id, slot.index)
                outputs.append(("slot", slot.index))
            if m.kind == "sink":
                slot = _Slot(len(slots), m.nid, sink=m.spec)
                slots.append(slot)
                outputs.append(("slot", slot.index))
            resolved.append(Member(m.nid, m.kind, m.spec, m.in_schema, m.out_schema, outputs,
                                   m.key))
        self.slots[v.id] = slots
        return resolved

    def run(self) -> tuple[JobResult, list[str], list[str]]:
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
            rdd = self._vertex_rdd(v, programs[v.id])
            if uses[v.id] > 1:
                rdd = rdd.persist(StorageLevel.MEMORY_AND_DISK)
                self.persisted.append(rdd)
            self.rdds[v.id] = rdd
        result = JobResult(self.name)
        out: list[str] = []
        err: list[str] = []
        staged = Staged()
        try:
            for v in order:
                self._actions(v, result, out, err, staged)
            staged.commit()
        except BaseException as e:
            staged.abort()
            if isinstance(e, Exception):
                raise self._translate(e) from None
            raise
        stats = self.stats.value
        for v in order:
            s = stats.get(v.id, [0, 0, 0, 0])
            has_sink = any(slot.sink is not None for slot in self.slots[v.id])
            result.vertices.append(VertexMetrics(v.name, self.wiring.vertex(v.id)[0], s[0],
                                                 s[1], s[3] if has_sink else None))
        return result, out, err

    # -- the vertex RDD ---------------------------------------------------------------

    def _vertex_rdd(self, v: JobVertex, members: list[Member]) -> Any:
        p, maxp = self.wiring.vertex(v.id)
        slots = self.slots[v.id]
        stats, vid, name = self.stats, v.id, v.name
        head = members[0]
        head_node = self.sg.nodes[v.head]

        def run_chain(idx: int, chunks: Any) -> Any:
            buf: list[Any] = []
            counts = [0, 0, 0, 0]
            routers = {s.index: Router(s.edge.partitioner, **s.routers[idx]) for s in slots
                       if s.edge is not None}
            cids = {s.index: (s.edge_order << 16) | idx for s in slots if s.edge is not None}
            seq = [0]

            def emit(slot: int, chunk: convert.Chunk) -> None:
                s = slots[slot]
                if s.edge is not None:
                    counts[1] += chunk.num_rows
                    for target, part in routers[slot].split(chunk):
                        buf.append((slot, (target, (cids[slot], seq[0], convert.to_ipc(part)))))
                        seq[0] += 1
                    return
                counts[3] += chunk.num_rows
                if chunk.num_rows and not isinstance(s.sink, DiscardingSink):
                    buf.append((slot, convert.to_ipc(chunk)))
            try:
                program = ChainProgram(members, idx, p, maxp, name, emit)
                try:
                    for chunk in _guarded(chunks, head.nid):
                        counts[0] += chunk.num_rows
                        program.push(head.nid, chunk)
                        yield from buf
                        del buf[:]
                    program.finish()
                finally:
                    program.close()
            except TaskFailure as f:
                raise tasks.task_error(f.error, "", {}, f.nid) from None
            yield from buf
            stats.add({vid: counts})

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
                    _chunks(read(idx, it, bad), schema)
                yield from run_chain(idx, chunks)
                for line in bad.lines:
                    yield dead, line
            return base.mapPartitionsWithIndex(run_source)
        head_inputs = list(self.sg.inputs(v.head))
        edges = sorted(v.inputs, key=lambda e: head_inputs.index(e.stream_edge))
        parts = []
        for e in edges:
            src, slot = self.edge_slot[id(e.stream_edge)]
            parts.append(self.rdds[src].filter(lambda x, s=slot: x[0] == s).map(lambda x: x[1]))
        merged = parts[0] if len(parts) == 1 else self.sc.union(parts)
        shuffled = merged.partitionBy(p, _identity)
        in_schema = convert.arrow_schema(head.in_schema)

        def run_consumer(idx: int, it: Any) -> Any:
            received = sorted((item for _, item in it), key=lambda x: (x[0], x[1]))
            chunks = (convert.from_ipc(data, in_schema) for _, _, data in received)
            return run_chain(idx, chunks)
        return shuffled.mapPartitionsWithIndex(run_consumer)

    # -- actions ------------------------------------------------------------------------

    def _actions(self, v: JobVertex, result: JobResult, out: list[str], err: list[str],
                 staged: Staged) -> None:
        rdd = self.rdds[v.id]
        slots = self.slots[v.id]
        p = self.wiring.vertex(v.id)[0]
        shown = [s for s in slots if isinstance(s.sink, (CollectSink, PrintSink))]
        if shown:
            wanted = {s.index for s in shown}
            items = rdd.mapPartitionsWithIndex(
                lambda idx, it, w=wanted: ((idx, x[0], x[1]) for x in it if x[0] in w)
            ).collect()
            for s in shown:
                schema = convert.arrow_schema(self.sg.nodes[s.node].output_type)
                rows = [(idx, r) for idx, slot, data in items if slot == s.index
                        for r in convert.from_ipc(data, schema).rows()]
                if isinstance(s.sink, CollectSink):
                    result.collected.setdefault(s.sink.name, []).extend(r for _, r in rows)
                else:
                    lines = [f"{print_prefix(s.sink, idx, p)}{r}" for idx, r in rows]
                    result.printed.extend(lines)
                    (err if s.sink.stderr else out).extend(lines)
        for s in slots:
            if isinstance(s.sink, FileSink):
                node = self.sg.nodes[s.node]
                schema = convert.arrow_schema(node.output_type)
                values = rdd.filter(lambda x, i=s.index: x[0] == i).flatMap(
                    lambda x, sc=schema: convert.from_ipc(x[1], sc).rows())
                staged.add(self._write_sink(s, values), sink_path(s.sink))
        dead = self._dead_letter(v)
        if dead is not None:
            lines = rdd.filter(lambda x: x[0] == io.DEAD).map(lambda x: x[1]).collect()
            path = files.dead_letter_path(dead)
            staged.add(stage_lines(path, lines), path)
        if not v.produced and not shown and dead is None and not any(
                isinstance(s.sink, FileSink) for s in slots):
            rdd.foreach(_noop)

    def _write_sink(self, slot: _Slot, values: Any) -> str:
        spec = slot.sink
        node = self.sg.nodes[slot.node]
        try:
            columns = io.sink_columns(spec, node.output_type, values)
            return io.stage_sink(self.spark, spec, node.id, columns, values)
        except FlowcError as e:
            raise wrap(node, e) from None
        except Exception as e:
            if tasks.parse_task_error(str(e)) is not None:
                raise
            raise ExecutionError(f"writing the {spec.format} sink {spec.path} failed: "
                                 f"{io.spark_message(e)}", node.span) from None

    def _dead_letter(self, v: JobVertex) -> str | None:
        head = self.sg.nodes[v.head].operator
        return head.dead_letter if isinstance(head, FileSource) else None

    def _translate(self, e: Exception) -> FlowcError:
        if isinstance(e, FlowcError):
            return e
        info = tasks.parse_task_error(str(e))
        if info is None:
            return ExecutionError(f"the Spark job failed: {io.spark_message(e)}")
        node = self.sg.nodes.get(info["node"])
        if node is None:
            return ExecutionError(f"{info['type']}: {info['message']}")
        return operator_error(node.name, node.span, info["type"], info["message"],
                              is_flowc=info["flowc"])

    def cleanup(self) -> None:
        for rdd in self.persisted:
            try:
                rdd.unpersist()
            except Exception:  # noqa: BLE001 - best effort after a failed job
                pass


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


def _chunks(rows: Any, schema: Any) -> Any:
    """Source records in chunks of ``ROWS`` (no timestamps yet)."""
    buf: list[Any] = []
    for r in rows:
        buf.append(r)
        if len(buf) == ROWS:
            yield convert.from_rows(buf, [None] * len(buf), schema)
            buf = []
    if buf:
        yield convert.from_rows(buf, [None] * len(buf), schema)


def _noop(_: Any) -> None:
    pass
