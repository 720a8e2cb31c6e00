"""Build and run the Spark job for a JobGraph.

Subtask i of a vertex is Spark partition i of the vertex's RDD. The vertex RDD holds
``(slot, payload)`` items: for an edge slot the payload is
``(target subtask, (channel id, value, ts))`` and the edge becomes
``partitionBy(consumer parallelism, identity)`` on the precomputed target (no Python
``hash()``); a vertex fed by exactly one pointwise edge of equal parallelism reads its
producer's partitions in place (no shuffle). Sink slots carry the record. RDDs with several
consumers are persisted and unpersisted when the job ends.
"""

from __future__ import annotations

import sys
import time
from typing import Any

from flowc.chaining.job_graph import JobGraph, JobVertex
from flowc.errors import ExecutionError, FlowcError
from flowc.executor.failures import wrap
from flowc.executor.result import JobResult, VertexMetrics
from flowc.executor.runtime import files
from flowc.executor.runtime.core import TaskInfo
from flowc.executor.runtime.factory import create_operator
from flowc.executor.runtime.sources import source_values
from flowc.executor.sinks import (
    Staged,
    check_sink,
    declared_arrow_schema,
    print_prefix,
    print_text,
    sink_path,
    stage_lines,
)
from flowc.executor.spark import io, tasks
from flowc.executor.spark.codegen import Slot, VertexPlan, generate_chain
from flowc.executor.spark.combine import combinable
from flowc.executor.spark.progress import Note, start_progress
from flowc.executor.spark.session import get_spark, spark_running
from flowc.executor.wiring import Wiring
from flowc.operators import CollectSink, FileSink, FileSource, PrintSink, RowFormatFileSink
from flowc.planner.stream_graph import NodeKind
from flowc.transformations import PartitionerKind, RuntimeExecutionMode


def _identity(k: int) -> int:
    return k


def run_on_spark(job_graph: JobGraph, *, master: str | None = None, verbose: bool = False,
                 progress: bool = False, job_name: str | None = None,
                 make_job: Any = None) -> JobResult:
    """Run the job; ``make_job(spark, job_graph, wiring, name)`` builds the job object
    (default: this row executor's; the columnar executor passes its own)."""
    start = time.perf_counter()
    sg = job_graph.stream_graph
    name = job_name or sg.config.job_name
    wiring = Wiring(job_graph)  # validates and resolves parallelism, wires subtasks
    _check_operators(job_graph)
    began = time.perf_counter()
    started = spark_running()
    # (Not with verbose: the JVM's own start-up lines go to the terminal then.)
    note = Note(sys.stderr, f"{name}: starting Spark ...") \
        if progress and not started and not verbose else None
    try:
        spark = get_spark(master, verbose, spark_options(sg.config.options))
    finally:
        if note is not None:
            note.erase()
    startup = 0.0 if started else time.perf_counter() - began
    start += startup  # the job's wall time excludes starting Spark (reported separately)
    job = (make_job or _SparkJob)(spark, job_graph, wiring, name)
    display = start_progress(job.sc, sys.stderr, name, job.source_names()) \
        if progress else None
    if display is not None and display.feed is not None:
        job.report_to = display.feed.address
    try:
        try:
            result = job.run()
        finally:
            if display is not None:
                display.stop()  # erased before any output is printed
        job.stream_prints(result)
    finally:
        job.cleanup()
    result.result.wall_time = time.perf_counter() - start
    result.result.startup_time = startup
    return result.result


def spark_options(options: tuple[tuple[str, str], ...]) -> dict[str, str]:
    """The job's ``spark.*`` options (``set spark.x = ...``, ``--set``, ``--conf``): they
    configure the SparkSession."""
    return {k: v for k, v in options if k.startswith("spark.")}


def _check_operators(job_graph: JobGraph) -> None:
    """Fail before Spark starts for operator kinds the runtime does not execute and for
    file formats, options and field types the readers and writers lack."""
    sg = job_graph.stream_graph
    for n in sg.nodes.values():
        try:
            if n.kind is NodeKind.OPERATOR:
                create_operator(n.operator, TaskInfo(n.name, 0, 1, 128, False), n.keys)
            elif isinstance(n.operator, FileSource):
                files.check_spec(n.operator)
            elif isinstance(n.operator, (FileSink, RowFormatFileSink)):
                check_sink(n.operator)
        except FlowcError as e:
            raise type(e)(e.message, n.span) from None


# Print-sink lines kept in JobResult.printed (all of them are written to stdout / stderr).
PRINTED_KEPT = 10_000
WRITE_BATCH = 4096  # lines per write to stdout


class _Outcome:
    def __init__(self, result: JobResult) -> None:
        self.result = result
        # Print sinks (slot, computed and persisted vertex RDD, parallelism), in sink order:
        # streamed to stdout / stderr once the job succeeded, never collected as a whole.
        self.prints: list[tuple[Slot, Any, int]] = []


class _SparkJob:
    def __init__(self, spark: Any, job_graph: JobGraph, wiring: Wiring, name: str) -> None:
        self.spark = spark
        self.sc = spark.sparkContext
        self.jg = job_graph
        self.sg = job_graph.stream_graph
        self.batch = self.sg.config.mode is RuntimeExecutionMode.BATCH
        self.wiring = wiring
        self.name = name
        self.plans: dict[str, VertexPlan] = {}
        self.rdds: dict[str, Any] = {}
        self.persisted: list[Any] = []
        self.stats = self.sc.accumulator({}, tasks.DictSum())
        # Where source tasks send their row counts (a progress display runs), or None.
        self.report_to: tuple[str, int] | None = None
        self.sources = {v.id: k for k, v in enumerate(job_graph.vertices_sorted())
                        if self.sg.nodes[v.head].kind is NodeKind.SOURCE}

    def source_names(self) -> dict[int, str]:
        """The source vertices by the number their tasks report rows under."""
        return {k: self.sg.nodes[self.jg.vertex(vid).head].name
                for vid, k in self.sources.items()}

    # -- planning ---------------------------------------------------------------

    def _plan(self, v: JobVertex) -> VertexPlan:
        p, m = self.wiring.vertex(v.id)
        plan = VertexPlan(v, p, m, self.batch)
        chained = {id(e) for e in v.chained_edges}
        for nid in reversed(v.chain):
            node = self.sg.nodes[nid]
            if node.kind is NodeKind.SINK:
                slot = Slot(len(plan.slots), nid, sink=node.operator)
                plan.slots.append(slot)
                plan.sink_slots[nid] = slot
            for e in self.sg.outputs(nid):
                if id(e) in chained:
                    continue
                target = self.jg.vertex_of_node(e.target_id)
                tp, tm = self.wiring.vertex(target.id)
                order = list(self.sg.inputs(e.target_id)).index(e)
                slot = Slot(len(plan.slots), nid, edge=e, consumer_parallelism=tp,
                            consumer_max_parallelism=tm, edge_order=order,
                            targets=[list(self.wiring.consumers_of(e, k)) for k in range(p)])
                consumer = self.sg.nodes[e.target_id]
                if (e.partitioner.kind is PartitionerKind.HASH
                        and len(self.sg.inputs(e.target_id)) == 1
                        and combinable(consumer.operator, self.batch)):
                    slot.combine = consumer.operator
                plan.slots.append(slot)
                plan.edge_slot[id(e)] = slot
        return plan

    # -- building RDDs ------------------------------------------------------------

    def run(self) -> _Outcome:
        order = self.jg.vertices_sorted()
        for v in order:
            self.plans[v.id] = self._plan(v)
        # Actions per vertex RDD (consumer vertices, collect/print, file sinks: one write
        # and, without a schema, one inference pass, dead letters); used more than once ->
        # persisted (memory and disk, so an evicted partition is not recomputed, which
        # would run its UDFs and count its records again).
        uses: dict[str, int] = {v.id: 0 for v in order}
        for v in order:
            for e in v.inputs:
                uses[e.source] += 1
            slots = self.plans[v.id].slots
            if any(isinstance(s.sink, CollectSink) for s in slots):
                uses[v.id] += 1
            if any(isinstance(s.sink, PrintSink) for s in slots):
                uses[v.id] += 2  # computed with the job, then streamed from the cache
            for s in slots:
                if isinstance(s.sink, RowFormatFileSink):
                    uses[v.id] += 1
                elif isinstance(s.sink, FileSink):
                    node = self.sg.nodes[s.node]
                    uses[v.id] += 1 + (io.declared_columns(s.sink, node.output_type) is None)
            if self._dead_letter(v) is not None:
                uses[v.id] += 1
            if not v.inputs and not slots:
                uses[v.id] += 1
        from pyspark import StorageLevel

        for v in order:
            rdd = self._vertex_rdd(v)
            if uses[v.id] > 1:
                rdd = rdd.persist(StorageLevel.MEMORY_AND_DISK)
                self.persisted.append(rdd)
            self.rdds[v.id] = rdd
        outcome = _Outcome(JobResult(self.name))
        try:
            self._actions(order, outcome)
        except Exception as e:  # Spark wraps task failures in Py4J / PythonException
            raise self._translate(e) from None
        self._metrics(order, outcome.result)
        return outcome

    def _vertex_rdd(self, v: JobVertex) -> Any:
        plan = self.plans[v.id]
        _, chain = generate_chain(self.sg, plan)
        stats, vid = self.stats, v.id

        def on_end(s: list[int]) -> None:
            stats.add({vid: s})
        report = (self.report_to, self.sources[vid]) \
            if self.report_to is not None and vid in self.sources else None

        def counted(idx: int, items: Any) -> Any:
            return items if report is None else tasks.reporting(items, report[0], report[1],
                                                                idx)

        head = self.sg.nodes[v.head]
        p = plan.parallelism
        if head.kind is NodeKind.SOURCE:
            spec = head.operator
            if isinstance(spec, FileSource):
                try:
                    return self._file_source_rdd(spec, plan, chain, on_end, counted)
                except FlowcError as e:  # listing failed: name the source, as the reference
                    raise wrap(head, e) from None

            def run_source(idx: int, _it: Any) -> Any:
                return chain(idx, counted(idx, source_values(spec, idx, p)),
                             tasks.timed(on_end))
            return self.sc.parallelize(range(p), p).mapPartitionsWithIndex(run_source)
        batch = self.batch
        head_inputs = list(self.sg.inputs(v.head))
        edges = sorted(v.inputs, key=lambda e: head_inputs.index(e.stream_edge))
        sources = []
        for e in edges:
            src_plan = self.plans[e.source]
            slot = src_plan.edge_slot[id(e.stream_edge)].index
            sources.append((self.rdds[e.source], slot, src_plan.parallelism, e))

        # Channel ids each consumer subtask reads, in channel order (computed on the
        # driver from the ExecutionGraph's wiring; tasks only index the list).
        channels: list[tuple[list[int], list[int]]] = []
        for idx in range(p):
            expected, inputs = [], []
            for order, (_, _, _, e) in enumerate(sources):
                for k in self.wiring.producers_of(e.stream_edge, idx):
                    expected.append((order << 16) | k)
                    inputs.append(e.type_number or 1)
            channels.append((expected, inputs))

        def select(slot: int) -> Any:
            return lambda it: (x[1] for x in it if x[0] == slot)

        if (len(sources) == 1 and sources[0][3].partitioner.kind.is_pointwise
                and sources[0][2] == p):
            shuffled = sources[0][0].mapPartitions(select(sources[0][1]),
                                                   preservesPartitioning=True)
        else:
            parts = [rdd.mapPartitions(select(slot)) for rdd, slot, _, _ in sources]
            merged = parts[0] if len(parts) == 1 else self.sc.union(parts)
            shuffled = merged.partitionBy(p, _identity)

        def run_consumer(idx: int, it: Any) -> Any:
            expected, inputs = channels[idx]
            return chain(idx, tasks.merged_input(it, expected, inputs, batch),
                         tasks.timed(on_end))
        return shuffled.mapPartitionsWithIndex(run_consumer)

    def _file_source_rdd(self, spec: FileSource, plan: VertexPlan, chain: Any,
                         on_end: Any, counted: Any) -> Any:
        """Subtask i reads its splits (``runtime.files``: split k to subtask k % p) and
        runs the chain on the records; its rows that do not parse follow the chain's
        output as ``(DEAD, json line)`` items - data, so a retried task cannot duplicate
        them - and are written to this source's dead-letter path."""
        base, read = io.source_input(self.spark, spec, plan.parallelism)
        dead = io.DEAD

        def run(idx: int, it: Any) -> Any:
            bad = files.BadRows(spec)
            yield from chain(idx, counted(idx, read(idx, it, bad)), tasks.timed(on_end))
            for line in bad.lines:
                yield dead, line
        return base.mapPartitionsWithIndex(run)

    # -- actions --------------------------------------------------------------------

    def _actions(self, order: list[JobVertex], outcome: _Outcome) -> None:
        """Run every output; file sinks and dead letters are written to temp dirs and
        renamed into place together once all of them succeeded (a failed job commits
        nothing)."""
        staged = Staged()
        try:
            for v in order:
                self._vertex_actions(v, outcome, staged)
            staged.commit()
        except BaseException:
            staged.abort()
            raise

    def _vertex_actions(self, v: JobVertex, outcome: _Outcome, staged: Staged) -> None:
        plan = self.plans[v.id]
        rdd = self.rdds[v.id]
        sink_slots = [s for s in plan.slots if s.sink is not None]
        shown = [s for s in sink_slots if isinstance(s.sink, CollectSink)]
        prints = [s for s in sink_slots if isinstance(s.sink, PrintSink)]
        if shown:
            wanted = {s.index for s in shown}
            items = rdd.mapPartitionsWithIndex(
                lambda idx, it, w=wanted: ((idx, x[0], x[1]) for x in it if x[0] in w)
            ).collect()
            by_slot: dict[int, list[tuple[int, Any]]] = {s.index: [] for s in shown}
            for idx, slot, value in items:
                by_slot[slot].append((idx, value))
            for s in shown:
                outcome.result.collected.setdefault(s.sink.name, []).extend(
                    v for _, v in by_slot[s.index])
        if prints:
            # Computed (and persisted) now, with the job's other actions and its progress
            # display; the lines are streamed out by stream_prints.
            rdd.foreach(_noop)
            outcome.prints.extend((s, rdd, plan.parallelism) for s in prints)
        for s in sink_slots:
            if isinstance(s.sink, (FileSink, RowFormatFileSink)):
                values = rdd.filter(lambda x, i=s.index: x[0] == i).map(lambda x: x[1])
                staged.add(self._write_sink(s, values), sink_path(s.sink))
        dead = self._stage_dead_letters(v, rdd, staged)
        if not v.produced and not shown and not prints and not any(
                isinstance(s.sink, (FileSink, RowFormatFileSink)) for s in sink_slots) \
                and dead is None:
            rdd.foreach(_noop)

    def _write_sink(self, slot: Slot, values: Any) -> str:
        spec = slot.sink
        node = self.sg.nodes[slot.node]
        try:
            if isinstance(spec, RowFormatFileSink):
                return io.stage_row_sink(spec, node.output_type, values)
            columns = io.sink_columns(spec, node.output_type, values)
            return io.stage_sink(self.spark, spec, node.id, columns, values,
                                 declared_arrow_schema(spec, node.output_type))
        except FlowcError as e:
            raise wrap(node, e) from None
        except Exception as e:
            if tasks.parse_task_error(str(e)) is not None:
                raise  # a task failed: _translate names its operator
            kind = f"{spec.format} sink" if isinstance(spec, FileSink) else "file sink"
            raise ExecutionError(f"writing the {kind} {spec.path} failed: "
                                 f"{io.spark_message(e)}", node.span) from None

    def _stage_dead_letters(self, v: JobVertex, rdd: Any, staged: Staged) -> str | None:
        """A file source's bad rows (``(DEAD, json line)`` items of its vertex RDD) staged
        for its dead-letter path; returns that path (None: the vertex has none)."""
        dead = self._dead_letter(v)
        if dead is not None:
            lines = rdd.filter(lambda x: x[0] == io.DEAD).map(lambda x: x[1]).collect()
            path = files.dead_letter_path(dead)
            try:
                staged.add(stage_lines(path, lines), path)
            except FlowcError as e:  # named as the source, with its line
                raise wrap(self.sg.nodes[v.head], e) from None
        return dead

    def _dead_letter(self, v: JobVertex) -> str | None:
        head = self.sg.nodes[v.head].operator
        return head.dead_letter if isinstance(head, FileSource) else None

    def stream_prints(self, outcome: _Outcome) -> None:
        """Write the print sinks' lines (sink, subtask, arrival order; formatted in the
        workers) to stdout / stderr a partition at a time from the persisted RDDs: the
        driver never holds a whole print result. The first PRINTED_KEPT lines are kept in
        ``JobResult.printed``."""
        kept = outcome.result.printed
        try:
            # Sink-node order, as the reference executor prints (not vertex order).
            for slot, rdd, p in sorted(outcome.prints, key=lambda t: t[0].node):
                spec = slot.sink
                prefixes = [print_prefix(spec, idx, p) for idx in range(p)]
                lines = self._print_lines(rdd, slot, prefixes)
                stream = sys.stderr if spec.stderr else sys.stdout
                batch: list[str] = []
                for line in lines.toLocalIterator():
                    if len(kept) < PRINTED_KEPT:
                        kept.append(line)
                    batch.append(line)
                    if len(batch) >= WRITE_BATCH:
                        stream.write("\n".join(batch) + "\n")
                        batch = []
                if batch:
                    stream.write("\n".join(batch) + "\n")
                stream.flush()
        except FlowcError:
            raise
        except Exception as e:  # a partition evicted and recomputed may fail again
            raise self._translate(e) from None

    def _print_lines(self, rdd: Any, slot: Any, prefixes: list[str]) -> Any:
        """The RDD of a print sink's lines, formatted in the workers."""
        return rdd.mapPartitionsWithIndex(
            lambda idx, it, i=slot.index, pre=prefixes, spec=slot.sink:
            (f"{pre[idx]}{print_text(spec, x[1])}" for x in it if x[0] == i))

    def _metrics(self, order: list[JobVertex], result: JobResult) -> None:
        stats = self.stats.value
        for v in order:
            s = stats.get(v.id, [0, 0, 0, 0, 0.0])
            has_sink = any(slot.sink is not None for slot in self.plans[v.id].slots)
            result.vertices.append(VertexMetrics(v.name, self.plans[v.id].parallelism,
                                                 s[0], s[1], s[3] if has_sink else None,
                                                 seconds=s[4]))
            result.late_records_dropped += s[2]

    def _translate(self, e: Exception) -> FlowcError:
        return io.translate_failure(self.sg, e)

    def cleanup(self) -> None:
        for rdd in self.persisted:
            try:
                rdd.unpersist()
            except Exception:  # noqa: BLE001 - best effort after a failed job
                pass


def _noop(_: Any) -> None:
    pass
