"""Run an unbounded job as one Spark Structured Streaming query.

The query is the union of the job's unbounded sources as Spark streaming sources (for a
monitored directory Spark's file stream source; the offsets log keeps, per source, what
makes up each micro-batch, replayed identically after a crash) and one ``foreachBatch``;
bounded sources are read by their subtasks in the first micro-batch. For each micro-batch
the driver runs the job's vertices as Spark stages, exactly as the batch executor routes
them (subtask *i* = partition *i*, or all of a vertex's subtasks in the one task of a fused
stage: ``stages.py``; non-chained edges carry the target subtask computed in the producer,
``partitionBy`` on it), every subtask continuing from its snapshot of the previous batch
(``task.py``); a monitored directory's files of the batch come from the query's logs
(``filelog.py``). Then every sink and
dead-letter output commits the batch once (``commit.py``), the batch's snapshots are
marked done, and Spark commits its offsets. A kill at any point replays the batch: same
files, same snapshots, same outputs, sinks that committed it skip it.
"""

from __future__ import annotations

import os
import shutil
import signal
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from typing import Any

from flowc.chaining.job_graph import JobGraph
from flowc.errors import ConfigError, ExecutionError, UnsupportedError
from flowc.executor.runtime import files
from flowc.executor.sinks import (
    abort,
    print_prefix,
    print_text,
    sink_path,
    stage_lines,
    stage_python,
)
from flowc.executor.streaming.commit import (
    SINK_CHUNK,
    Checkpoint,
    chunk_records,
    stage_arrow_part,
)
from flowc.executor.streaming.control import (  # noqa: F401 - parse_trigger: the CLI's
    hold_for_test,
    install_stop_signals,
    parse_trigger,
    stop_between_batches,
)
from flowc.executor.streaming.filelog import logged_shares
from flowc.executor.streaming.identity import check_job
from flowc.executor.streaming.plan import SourcePlan, StreamingPlan, plan_streaming
from flowc.executor.streaming.report import BatchReporter, StreamStats
from flowc.executor.streaming.sources import (
    BatchShares,
    batch_shares,
    bounded_shares,
    check_source,
    default_interval,
    kafka_resume,
    query_dataframe,
    source_failure,
    source_of,
)
from flowc.executor.streaming.stages import (
    Stage,
    consume,
    fuse_option,
    outgoing,
    plan_stages,
    run_fused,
    subtask_runner,
)
from flowc.executor.streaming.task import DEAD, SINK, BatchContext
from flowc.operators import CollectSink, FileSink, KafkaSink, KafkaSource, PrintSink, SocketSource


def run_streaming(job_graph: JobGraph, *, checkpoint: str | None = None,
                  trigger_ms: int | None = None, master: str | None = None,
                  verbose: bool = False, progress: bool = False, job_name: str | None = None,
                  stop: threading.Event | None = None,
                  collect: Callable[[int, dict[str, list[Any]]], None] | None = None
                  ) -> StreamStats:
    """Run until ``stop`` is set (the CLI sets it on SIGINT / SIGTERM), then end after the
    running micro-batch. Without ``checkpoint`` a temporary one is used and removed.
    ``collect(batch, {name: records})`` receives each micro-batch's records of the job's
    collect sinks (the REPL's continuous queries); without it a collect sink is refused."""
    from flowc.executor.spark.runner import spark_options
    from flowc.executor.spark.session import get_spark

    sg = job_graph.stream_graph
    name = job_name or sg.config.job_name
    plan = plan_streaming(job_graph)  # unsupported jobs fail before Spark starts
    unbounded = [s for s in plan.sources if not s.bounded]
    for s in unbounded:
        check_source(s.spec, sg.nodes[s.node].span)
    collects = [n for n, spec in plan.sinks.items() if isinstance(spec, CollectSink)]
    if collects and collect is None:
        raise UnsupportedError(f"the streaming executor cannot run '{sg.nodes[collects[0]].name}'"
                               " yet: an unbounded job's collect sink has no reader (the "
                               "REPL's continuous queries read theirs)",
                               sg.nodes[collects[0]].span)
    temporary = checkpoint is None
    root = tempfile.mkdtemp(prefix="flowc-checkpoint-") if temporary else checkpoint
    assert root is not None
    ckpt = Checkpoint(root)
    adopted = ckpt.adopted_max_parallelism()
    if adopted:  # restored from a savepoint whose max parallelism the job adopted
        plan = plan_streaming(job_graph, adopted)
    if not temporary:  # another job's checkpoint fails here, not deep inside Spark
        check_job(ckpt.root, plan, lambda: str(checkpoint))
    columnar = _columnar_plan(job_graph, plan, verbose)
    stages = plan_stages(plan, fuse_option(dict(sg.config.options)))  # before Spark starts
    stop = stop or threading.Event()
    ours = signal.getsignal(signal.SIGINT) \
        if threading.current_thread() is threading.main_thread() else None
    spark = get_spark(master, verbose, spark_options(sg.config.options))
    if getattr(ours, "flowc_stop", False) and signal.getsignal(signal.SIGINT) is not ours:
        # a SparkContext starting in the main thread installs PySpark's SIGINT handler
        # (cancel every job, raise KeyboardInterrupt): Ctrl-C must stop between batches
        signal.signal(signal.SIGINT, ours)
    for nid, spec in plan.sinks.items():
        if isinstance(spec, KafkaSink):  # before any batch, not at the first write
            from flowc.executor.streaming.kafka_sink import check_connector

            check_connector(spark, sg.nodes[nid].span)
    job = _StreamJob(spark, job_graph, plan, ckpt, name, progress)
    job.collect = collect
    job.columnar = columnar
    job.stages = stages
    interval = min(default_interval(s.spec) for s in unbounded) \
        if trigger_ms is None else trigger_ms
    try:
        job.run(interval, stop)
    finally:
        if temporary:
            shutil.rmtree(root, ignore_errors=True)
    return job.stats


class _StreamJob:
    def __init__(self, spark: Any, job_graph: JobGraph, plan: StreamingPlan, ckpt: Checkpoint,
                 name: str, progress: bool) -> None:
        self.spark = spark
        self.sc = spark.sparkContext
        self.sg = job_graph.stream_graph
        self.plan = plan
        self.ckpt = ckpt
        self.name = name
        self.reporter = BatchReporter(plan, lambda n: self.sg.nodes[n].name, name, progress)
        self.failure: BaseException | None = None
        self.stopping = False
        self.batch_ended = threading.Event()  # set as each micro-batch returns to Spark
        self.collect: Callable[[int, dict[str, list[Any]]], None] | None = None
        self.columnar: dict[str, Any] | None = None  # per vertex (``columnar.py``), or row
        self.stages: list[Stage] = plan_stages(plan)  # the batch's Spark stages

    @property
    def stats(self) -> StreamStats:
        return self.reporter.stats

    @property
    def unbounded(self) -> list[SourcePlan]:
        return [s for s in self.plan.sources if not s.bounded]

    def run(self, interval_ms: int, stop: threading.Event) -> None:
        # after a restore a Kafka source starts at the savepoint's offsets (Spark reads
        # startingOffsets only when its own offsets log is empty: on a query's first start)
        offsets = self.ckpt.kafka_offsets()
        specs = [kafka_resume(s.spec, offsets[k]) if k < len(offsets) and offsets[k]
                 and isinstance(s.spec, KafkaSource) else s.spec
                 for k, s in enumerate(self.unbounded)]
        df = query_dataframe(self.spark, [(s.index, spec, self.sg.nodes[s.node].span)
                                          for s, spec in zip(self.unbounded, specs)],
                             interval_ms)
        writer = df.writeStream.foreachBatch(self._batch) \
            .option("checkpointLocation", self.ckpt.spark) \
            .queryName(f"flowc-{os.getpid()}")
        if interval_ms > 0:
            writer = writer.trigger(processingTime=f"{interval_ms} milliseconds")
        query = writer.start()
        self.reporter.start()
        try:
            while query.isActive and not stop.is_set():
                query.awaitTermination(0.2)
            if query.isActive:
                self.stopping = True
                stop_between_batches(query, self.batch_ended)
        except Exception as e:  # noqa: BLE001
            if self.failure is None and not self.sc._jsc.sc().isStopped():
                # a source failed (a socket refused, a broker unreachable, ...)
                src = next((s for s in self.unbounded if isinstance(
                    s.spec, (SocketSource, KafkaSource))), self.unbounded[0])
                raise source_failure(src.spec, e, self.sg.nodes[src.node].span) from None
            # The JVM was stopped under us (it got the signal too): the checkpoint is
            # consistent anyway - an unfinished batch is replayed on restart.
            if self.failure is None:
                print(f"flowc: Spark stopped: {type(e).__name__}", file=sys.stderr)
                return
        finally:
            self.reporter.stop()
        if self.failure is not None:
            raise self.failure
        exc = query.exception()
        if exc is not None:
            raise ExecutionError(f"the streaming query failed: {exc}")

    # -- one micro-batch -----------------------------------------------------------

    def _batch(self, df: Any, batch_id: int) -> None:
        try:
            self._run_batch(df, batch_id)
            self.batch_ended.set()
        except BaseException as e:
            # A source with data in every trigger (datagen) may start a batch between the
            # stop's check and query.stop(): that batch is interrupted and, never committed,
            # replayed on restart - a stop, not a failure.
            if not (self.stopping and "InterruptedException" in str(e)):
                self.failure = self._translate(e)
            raise

    def _run_batch(self, df: Any, batch_id: int) -> None:
        began = time.perf_counter()
        prev = self.ckpt.previous(batch_id)
        taken = self._shares(df, batch_id, prev)
        ctx = BatchContext(batch_id, prev, self.ckpt.state,
                           self.ckpt.batch_timestamp_ms(batch_id))
        rdds: dict[int, Any] = {}
        outputs = []
        from pyspark import StorageLevel

        for stage in self.stages:
            rdd = self._stage_rdd(stage, ctx, taken, rdds)
            readers = sum(1 for other in self.stages
                          if any(k == stage.index for k, _ in other.inputs))
            if readers > 1 or readers and stage.carrier is None:
                # read by its consumers and by the collect below: computed once
                rdd = rdd.persist(StorageLevel.MEMORY_AND_DISK)
            rdds[stage.index] = rdd
            if stage.carrier is None:
                outputs.append(rdd)
        try:
            # one Spark job for the whole batch (a job per vertex cost ~0.1 s each)
            collected = self.sc.union([rdd.filter(lambda x: x[0] < 0)
                                       for rdd in outputs]).collect()
        finally:
            for rdd in outputs:
                rdd.unpersist()
        self._commit(batch_id, collected)
        hold_for_test("after-sinks", batch_id)
        before = self.ckpt.units_read(prev) or [0] * len(self.unbounded)
        read = [n + taken[s.index].units for n, s in zip(before, self.unbounded)]
        self.ckpt.finish_batch(batch_id, read)
        self.reporter.units_read = read
        hold_for_test("after-state", batch_id)
        label = ", ".join(taken[s.index].label for s in self.unbounded)
        self.reporter.report(batch_id, collected, label, began, time.perf_counter())

    def _shares(self, df: Any, batch: int, prev: int | None
                ) -> dict[int, BatchShares | None]:
        """Per source: what each of its subtasks reads in this batch (None: a bounded
        source read in an earlier batch)."""
        before = self.ckpt.units_read(prev) or [0] * len(self.unbounded)
        p = {v.source: v.parallelism for v in self.plan.vertices if v.source is not None}
        several = len(self.unbounded) > 1
        skip = self.ckpt.restored_files(prev)
        if len(self.plan.sources) == 1:  # a monitored directory: the files from the logs
            one = self.plan.sources[0]
            logged = logged_shares(one.spec, self.ckpt.spark, batch, before[0], p[one.index],
                                   skip)
            if logged is not None:
                return {one.index: logged}
        if skip:  # restored from a savepoint: the files its job read are not read again
            from pyspark.sql import functions as F  # noqa: N812

            if "path" in df.columns:
                df = df.filter(F.col("path").isNull() | ~F.regexp_replace(
                    "path", "^file:(//)?", "").isin(skip))
        if several:
            df = df.persist()  # split by source below: read the batch once
        try:
            out: dict[int, BatchShares | None] = {
                s.index: batch_shares(s.spec, source_of(df, s.index, several), n, p[s.index])
                for n, s in zip(before, self.unbounded)}
        finally:
            if several:
                df.unpersist()
        for s in self.plan.sources:
            if s.bounded:
                out[s.index] = bounded_shares(s.spec, p[s.index]) if prev is None else None
        return out

    def _stage_rdd(self, stage: Stage, ctx: BatchContext,
                   taken: dict[int, BatchShares | None], rdds: dict[int, Any]) -> Any:
        """The stage's RDD of items (``stages.py``): a vertex's subtask per partition, or a
        fused stage's one task running its vertices' subtasks in turn."""
        run = subtask_runner(self.plan, self.columnar, ctx, {
            v.source: [None] * v.parallelism if (got := taken[v.source]) is None
            else got.shares for v in self.plan.vertices if v.source is not None})
        if stage.fused:
            def run_stage(_idx: int, _it: Any) -> Any:
                return run_fused(stage, run)
            return self.sc.parallelize(range(1), 1).mapPartitionsWithIndex(run_stage)
        v = stage.vertices[0]
        if not stage.inputs:  # a source vertex: subtask i reads its share (sources.py)
            def run_source(idx: int, _it: Any) -> Any:
                return run(v, idx, None)
            return self.sc.parallelize(range(v.parallelism), v.parallelism) \
                .mapPartitionsWithIndex(run_source)
        producers = dict.fromkeys(k for k, _ in stage.inputs)
        parts = [rdds[k].mapPartitions(outgoing(
            frozenset(s for j, s in stage.inputs if j == k),
            self.stages[k].carrier == stage.index)) for k in producers]
        merged = parts[0] if len(parts) == 1 else self.sc.union(parts)
        # Every subtask runs every batch (its snapshot moves on, its timers see watermarks),
        # also when no record reaches it.
        shuffled = merged.partitionBy(v.parallelism, _identity)

        def run_consumer(idx: int, it: Any) -> Any:
            return consume(lambda payloads: run(v, idx, payloads), it)
        return shuffled.mapPartitionsWithIndex(run_consumer)

    # -- sinks ---------------------------------------------------------------------

    def _commit(self, batch: int, collected: list[tuple[int, Any]]) -> None:
        records: dict[int, list[tuple[int, Any]]] = {n: [] for n in self.plan.sinks}
        arrow: dict[int, list[tuple[int, bytes]]] = {}  # columnar: (subtask, chunk IPC)
        dead: dict[int, list[str]] = {}
        for kind, payload in collected:
            if kind == SINK:
                nid, idx, value = payload
                records[nid].append((idx, value))
            elif kind == SINK_CHUNK:
                arrow.setdefault(payload[0], []).append(payload[1:])
            elif kind == DEAD:
                dead.setdefault(payload[0], []).append(payload[1])
        for nid, parts in arrow.items():  # file sinks write the chunks, the others get records
            if not isinstance(self.plan.sinks[nid], FileSink):
                records[nid].extend(chunk_records(parts, self.sg.nodes[nid].output_type))
        for nid in sorted(self.plan.sinks):
            spec = self.plan.sinks[nid]
            rows = sorted(records[nid], key=lambda t: t[0])  # subtask, then arrival order
            if isinstance(spec, PrintSink):
                self.ckpt.commit_once(nid, batch, lambda s=spec, r=rows, n=nid:
                                      self._print(s, r, n))
            elif isinstance(spec, FileSink) and nid in arrow:  # written from Arrow
                self.ckpt.commit_once(nid, batch, lambda s=spec, n=nid: _place_part(
                    stage_arrow_part(s, self.plan.sink_columns[n], arrow[n],
                                     self.sg.nodes[n].output_type), s, batch))
            elif isinstance(spec, FileSink):
                self.ckpt.commit_once(nid, batch, lambda s=spec, r=rows, n=nid:
                                      self._write_part(s, n, batch, [x for _, x in r]))
            elif isinstance(spec, KafkaSink):  # at least once: Spark's writer is
                from flowc.executor.streaming.kafka_sink import write_kafka

                self.ckpt.commit_once(nid, batch, lambda s=spec, r=rows, n=nid:
                                      write_kafka(self.spark, s, [x for _, x in r],
                                                  self.sg.nodes[n].span))
        # every batch, also without rows: the reader sees the batch end
        collected = {self.plan.sinks[n].name: [x for _, x in sorted(records[n],
                                                                   key=lambda t: t[0])]
                     for n in sorted(self.plan.sinks)
                     if isinstance(self.plan.sinks[n], CollectSink)}
        if self.collect is not None:
            self.collect(batch, collected)
        for s in self.plan.sources:
            lines = dead.get(s.node)
            if getattr(s.spec, "dead_letter", None) is not None and lines:
                target = files.dead_letter_path(s.spec.dead_letter)
                self.ckpt.commit_once(s.node, batch, lambda t=target, x=lines:
                                      _place(stage_lines(t, x), t, batch))

    def _print(self, spec: PrintSink, rows: list[tuple[int, Any]], nid: int) -> None:
        p = self._parallelism(nid)
        lines = [f"{print_prefix(spec, idx, p)}{print_text(spec, v)}" for idx, v in rows]
        if lines:
            stream = sys.stderr if spec.stderr else sys.stdout
            stream.write("\n".join(lines) + "\n")
            stream.flush()
            kept = self.stats.printed
            kept.extend(lines[:max(0, 10_000 - len(kept))])

    def _parallelism(self, nid: int) -> int:
        return next(v.parallelism for v in self.plan.vertices
                    if any(m.nid == nid for m in v.members))

    def _write_part(self, spec: FileSink, nid: int, batch: int, rows: list[Any]) -> None:
        if not rows:
            return
        columns = self.plan.sink_columns[nid]
        from flowc.executor.sinks import row_checker, shaper

        check = row_checker(spec.path, columns, shaper([c for c, _ in columns]))
        _place(stage_python(spec, columns, [check(r) for r in rows]), sink_path(spec), batch)

    def _translate(self, e: BaseException) -> BaseException:
        from flowc.executor.spark import io

        return io.translate_failure(self.sg, e)


def _columnar_plan(job_graph: JobGraph, plan: StreamingPlan, verbose: bool
                   ) -> dict[str, Any] | None:
    """The job's columnar chains (``columnar.py``), or None: its micro-batches run row by
    row (``-v`` says why; ``flowc.executor = columnar`` on such a job is a user error)."""
    from flowc.executor.arrow.plan import CHOICES, OPTION, executor_choice
    from flowc.executor.streaming.columnar import plan_columnar

    choice = executor_choice(job_graph)
    if choice not in CHOICES:
        raise ConfigError(f"unknown value '{choice}' for {OPTION} (use auto, columnar or row)")
    chains = plan_columnar(job_graph, plan)
    if isinstance(chains, dict):
        return chains
    if choice == "columnar":
        raise ConfigError(f"{OPTION} = columnar, but this job's micro-batches cannot run "
                          f"columnar: {chains}")
    if verbose:
        print(f"flowc: streaming micro-batches run row by row: {chains}", file=sys.stderr)
    return None


def run_until_stopped(job_graph: JobGraph, **options: Any) -> StreamStats:
    """``run_streaming`` with SIGINT / SIGTERM stopping it after the running micro-batch
    (signals are only caught in the main thread; elsewhere it runs until the process
    ends)."""
    stop = threading.Event()
    restore = install_stop_signals(stop) \
        if threading.current_thread() is threading.main_thread() else None
    try:
        return run_streaming(job_graph, stop=stop, **options)
    finally:
        if restore is not None:
            restore()


def _identity(k: int) -> int:
    return k


def _place(tmp: str, final: str, batch: int) -> None:
    """Move the part file of a staged temp dir to ``<final>/part-<batch>.<ext>`` - a
    partitioned sink's part of each partition to ``<final>/k=v/.../part-<batch>.<ext>``,
    its success file (Flink's 'success-file' policy, committed with the batch) beside it -
    (a rename: the part appears whole; a replay renames the same content over it)."""
    try:
        for at, _, names in os.walk(tmp):
            rel = os.path.relpath(at, tmp)
            dest = final if rel == "." else os.path.join(final, rel)
            os.makedirs(dest, exist_ok=True)
            for name in names:
                ext = os.path.splitext(name)[1]
                kept = not name.startswith("part-")  # a success file keeps its name
                os.replace(os.path.join(at, name),
                           os.path.join(dest, name if kept else f"part-{batch:08d}{ext}"))
    finally:
        abort(tmp)


def _place_part(tmp: str | None, spec: FileSink, batch: int) -> None:
    if tmp is not None:  # None: no record this batch, no part file (as ``_write_part``)
        _place(tmp, sink_path(spec), batch)


