"""Issue 10's design for the clicks job, measured against flowc's streaming executor in one
run: the experiment behind docs/executor.md "Why micro-batches run as RDD stages, not
transformWithState". Nothing here is part of flowc.

- flowc: ``benchmarks/streaming.py``'s flowc runner (examples/clicks.flow's shape on
  ``run_streaming``: Python RDD stages per micro-batch, fused stages, snapshots per subtask);
- tws: the issue's design as one DataFrame query: Spark's csv file stream source over the
  monitored directory -> the chain (``lower(action)``, the filter, the timestamp assigner's
  watermark, Flink's key group -> target subtask of ``key by user_id``) as pyarrow in
  ``mapInArrow`` -> the keyed 5 s tumbling ``count(*)`` in ``transformWithStateInPandas``
  (RocksDB state store) -> ``foreachBatch`` writing one staged-and-renamed csv part per
  micro-batch (as benchmarks/streaming.py's Spark baseline and flowc's sink do).

The watermark is flowc's, in band: every ``mapInArrow`` task appends, after its records, one
watermark row per state group (max timestamp read - 2 s - 1: Flink's bounded
out-of-orderness, the job's one source subtask), so every group runs in every micro-batch
with data; a group drops records whose window ended at or before its previous watermark,
takes the new one (only rising) and fires the windows with end - 1 <= watermark. The window
is an equivalent of flowc's WindowOperator for this job (per (user, window end) counts),
not flowc's runtime operator. Its state - the counts and the watermark, pickled - is one
ValueState per group, read and written once per micro-batch (the issue's "loaded once per
batch per subtask or key group"). ``--groups`` picks the state groups:

- ``subtask``: one group per window subtask (2), its grouping value chosen so that Spark's
  Murmur3 hash puts subtask i on shuffle partition i;
- ``keygroup``: one group per Flink key group (128), each placed on its subtask's partition
  the same way;
- ``naive``: ``groupBy`` on the subtask number itself (wherever Murmur3 puts it).

Measured as benchmarks/streaming.py measures (same generated files, ``phase``/``Run``,
Spark's query listener): sustained events/s, p50 / p90 latency (file landed -> its window's
row committed), windows committed in the micro-batch that read their closing file, CPU
seconds of the process tree; at trigger 0 s and 1 s; and the window rows of both designs are
compared (a mismatch is printed and the exit status is 1). It also prints which shuffle
partition each group ran in and the state round trips to the JVM per group and batch
(``_send_proto_message`` calls: the state server's protocol is one request, one reply).

Needs ``protobuf`` (``pip install protobuf``; not in flowc's requirements).

    python benchmarks/streaming_designs.py [--rows N] [--quick] [--groups subtask,keygroup,naive]
"""

from __future__ import annotations

import argparse
import collections
import os
import pickle
import shutil
import statistics
import sys
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import mmh3
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from flowc.keygroups import (
    default_max_parallelism,
    java_hash_code,
    murmur_hash_array,
)

sys.path.insert(0, str(Path(__file__).resolve().parent))
from siblings import load  # noqa: E402

_bench = load("streaming")  # benchmarks/streaming.py
DELAY = _bench.DELAY
WINDOW = _bench.WINDOW
Batches = _bench.Batches
Run = _bench.Run
Runner = _bench.Runner
_pct = _bench._pct
in_closing_batch = _bench.in_closing_batch
latencies = _bench.latencies
make_files = _bench.make_files
phase = _bench.phase
run_flowc = _bench.run_flowc

P = 2  # the window's parallelism (the job's), = spark.sql.shuffle.partitions
MAX_PAR = default_max_parallelism(P)  # 128: Flink's key groups
ROCKSDB = "org.apache.spark.sql.execution.streaming.state.RocksDBStateStoreProvider"
DIAG = "__diag__"  # the user of a group's diagnostic row (partition, round trips)


# -- placing groups on partitions ------------------------------------------------------------


def spark_partition(value: int, n: int) -> int:
    """The shuffle partition of an int grouping value under Spark's HashPartitioning:
    pmod(Murmur3_x86_32.hashInt(value, seed 42), n)."""
    return mmh3.hash(value.to_bytes(4, "little", signed=True), 42) % n


def placed_values(targets: list[int], n: int) -> list[int]:
    """For each wanted partition, a distinct int grouping value that Spark hashes onto it:
    the only way to choose a DataFrame shuffle's partition is to choose the value hashed."""
    out: list[int] = []
    v = 0
    for t in targets:
        while spark_partition(v, n) != t:
            v += 1
        out.append(v)
        v += 1
    return out


def group_values(groups: str) -> tuple[np.ndarray, bool]:
    """Per key group, its state group's grouping value; and whether groups are subtasks."""
    subtask_of = np.arange(MAX_PAR) * P // MAX_PAR  # Flink's operatorIndexForKeyGroup
    if groups == "naive":
        return subtask_of, True
    if groups == "subtask":
        return np.asarray(placed_values(list(range(P)), P))[subtask_of], True
    return np.asarray(placed_values(subtask_of.tolist(), P)), False


# -- the chain, in mapInArrow ----------------------------------------------------------------

CHAIN_OUT = "g int, user_id string, ts long, wm long"


def make_chain(values: np.ndarray) -> Any:
    all_groups = pa.array(sorted(set(values.tolist())), pa.int32())

    def chain(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        top = None
        for b in batches:
            ts = pc.cast(b.column("ts"), pa.int64())  # timestamp[us] -> micros
            if len(ts):
                m = pc.max(ts).as_py()
                top = m if top is None or (m is not None and m > top) else top
            action = pc.utf8_lower(b.column("action"))
            keep = pc.and_(pc.and_(pc.is_valid(b.column("user_id")),
                                   pc.is_valid(b.column("article_id"))),
                           pc.equal(action, "appclick"))
            keep = pc.fill_null(keep, False)
            users = pc.filter(b.column("user_id"), keep)
            if not len(users):
                continue
            enc = users.dictionary_encode()
            codes = _java_hashes(enc.dictionary)
            kg = murmur_hash_array(codes) % MAX_PAR
            g = values[kg][enc.indices.to_numpy(zero_copy_only=False)]
            yield pa.RecordBatch.from_arrays(
                [pa.array(g, pa.int32()), users, pc.divide(pc.filter(ts, keep), 1000),
                 pa.nulls(len(users), pa.int64())], names=["g", "user_id", "ts", "wm"])
        if top is not None:  # end of the channel's batch: its watermark, to every group
            n = len(all_groups)
            yield pa.RecordBatch.from_arrays(
                [all_groups, pa.nulls(n, pa.string()), pa.nulls(n, pa.int64()),
                 pa.array([top // 1000 - DELAY - 1] * n, pa.int64())],
                names=["g", "user_id", "ts", "wm"])
    return chain


def _java_hashes(values: pa.Array) -> np.ndarray:
    from flowc.executor.arrow.route import java_hashes

    codes = java_hashes(values)
    if codes is None:  # non-ASCII strings: String.hashCode one by one
        codes = np.asarray([java_hash_code(v) for v in values.to_pylist()], np.int64)
    return codes


# -- the keyed window, in transformWithStateInPandas ------------------------------------------

WINDOW_OUT = ("user_id string, window_start long, window_end long, clicks long, "
              "part int, trips long, state_bytes long")


def make_processor() -> Any:
    import pandas as pd
    from pyspark import TaskContext
    from pyspark.sql.streaming import StatefulProcessor

    class Window(StatefulProcessor):
        def init(self, handle: Any) -> None:
            self.state = handle.getValueState("op_window", "blob binary")
            client = handle._statefulProcessorApiClient
            send = client._send_proto_message
            self.trips = 0

            def counted(message: bytes) -> None:
                self.trips += 1
                send(message)
            client._send_proto_message = counted
            self.seen = 0

        def handleInputRows(self, key: Any, rows: Iterator[Any], timerValues: Any
                            ) -> Iterator[Any]:
            saved = self.state.get()  # one round trip: the group's whole state
            wm, counts = pickle.loads(saved[0]) if saved is not None else (-(1 << 63), {})
            frames = list(rows)
            df = pd.concat(frames) if len(frames) > 1 else frames[0]
            marks = df["wm"].dropna()
            data = df[df["wm"].isna()]
            if len(data):
                ts = data["ts"].astype("int64")
                end = ts - ts % WINDOW + WINDOW
                on_time = end - 1 > wm  # Flink: a window is late once wm >= its max ts
                per = pd.DataFrame({"u": data["user_id"][on_time], "e": end[on_time]}) \
                    .value_counts()
                for (u, e), c in per.items():
                    counts[(u, e)] = counts.get((u, e), 0) + int(c)
            if len(marks):
                wm = max(wm, int(marks.max()))
            fired = [(u, e, c) for (u, e), c in counts.items() if e - 1 <= wm]
            for u, e, _ in fired:
                del counts[(u, e)]
            blob = pickle.dumps((wm, counts), protocol=5)
            self.state.update((blob,))
            trips, self.seen = self.trips - self.seen, self.trips
            part = TaskContext.get().partitionId()
            out = pd.DataFrame({"user_id": [u for u, _, _ in fired] + [DIAG],
                                "window_start": [e - WINDOW for _, e, _ in fired] + [key[0]],
                                "window_end": [e for _, e, _ in fired] + [-1],
                                "clicks": [c for _, _, c in fired] + [0],
                                "part": part, "trips": trips, "state_bytes": len(blob)})
            yield out

        def close(self) -> None:
            pass
    return Window()


class Phases:
    """Every micro-batch's ``durationMs`` parts (Spark's progress report: addBatch, the
    offsets and commit logs' writes, ...) and its state operator's commit time, by start
    time: where a micro-batch's wall time goes, per contender."""

    def __init__(self, spark: Any) -> None:
        import datetime as dt

        from pyspark.sql.streaming import StreamingQueryListener

        self.seen: list[tuple[float, dict[str, int]]] = []
        log = self.seen

        class Listener(StreamingQueryListener):
            def onQueryStarted(self, event: Any) -> None:
                pass

            def onQueryProgress(self, event: Any) -> None:
                p = event.progress
                start = dt.datetime.fromisoformat(p.timestamp.replace("Z", "+00:00"))
                parts = dict(p.durationMs)
                for op in p.stateOperators:
                    parts["stateCommit"] = parts.get("stateCommit", 0) + op.commitTimeMs
                log.append((start.timestamp(), parts))

            def onQueryIdle(self, event: Any) -> None:
                pass

            def onQueryTerminated(self, event: Any) -> None:
                pass
        spark.streams.addListener(Listener())

    def medians(self, run: Run, batches: Batches) -> str:
        """The first micro-batch with input (the query's start-up: planning, state store
        and Python workers made) and the median ms of each part over the others."""
        busy = {b[0] for b in batches.between(run.began, run.ended) if b[2] > 0}
        rows = [parts for t, parts in sorted(self.seen) if t in busy]
        if not rows:
            return "no micro-batch reported"
        first, rest = rows[0], rows[1:] or rows[:1]
        keys = sorted({k for r in rest for k in r if k != "triggerExecution"},
                      key=lambda k: -statistics.median(r.get(k, 0) for r in rest))
        parts = ", ".join(f"{k} {statistics.median(r.get(k, 0) for r in rest):.0f}"
                          for k in keys if statistics.median(r.get(k, 0) for r in rest) >= 5)
        return (f"first {first.get('triggerExecution', 0)} ms (planning "
                f"{first.get('queryPlanning', 0)}); the other {len(rows) - 1}: median "
                f"{statistics.median(r.get('triggerExecution', 0) for r in rest):.0f} ms: "
                f"{parts}")


class Diagnostics:
    """Per micro-batch and group: the shuffle partition it ran in, its state round trips
    (counted since the previous group of its task: the framework's per-key calls too) and
    its state's size."""

    def __init__(self) -> None:
        self.placement: dict[int, set[int]] = collections.defaultdict(set)
        self.trips: list[int] = []
        self.bytes: list[int] = []


def run_tws(job_dir: Path, src: Path, out: Path, trigger_ms: int, stop: threading.Event,
            groups: str = "subtask", diag: Diagnostics | None = None) -> None:
    import csv

    from pyspark.sql import types as T  # noqa: N812

    from flowc.executor import get_spark

    spark = get_spark()
    spark.conf.set("spark.sql.streaming.stateStore.providerClass", ROCKSDB)
    values, _ = group_values(groups)
    schema = T.StructType([T.StructField(n, T.StringType()) for n in
                           ("user_id", "article_id", "action")] +
                          [T.StructField("ts", T.TimestampType())])
    df = spark.readStream.schema(schema).option("header", True).csv(str(src))
    keyed = df.mapInArrow(make_chain(values), CHAIN_OUT).groupBy("g")
    windows = keyed.transformWithStateInPandas(make_processor(), WINDOW_OUT, "Append", "None")
    out.mkdir(parents=True, exist_ok=True)

    def write(batch: Any, batch_id: int) -> None:
        rows = batch.collect()
        real = [r for r in rows if r.user_id != DIAG]
        if diag is not None:
            for r in rows:
                if r.user_id == DIAG:
                    diag.placement[r.window_start].add(r.part)
                    diag.trips.append(r.trips)
                    diag.bytes.append(r.state_bytes)
        if not real:
            return
        tmp = out / f".part-{batch_id:08d}.csv"
        with open(tmp, "w", newline="") as fh:
            w = csv.writer(fh)
            w.writerow(["user_id", "window_start", "window_end", "clicks"])
            w.writerows((r.user_id, r.window_start, r.window_end, r.clicks) for r in real)
        os.replace(tmp, out / f"part-{batch_id:08d}.csv")

    writer = windows.writeStream.outputMode("append").foreachBatch(write) \
        .option("checkpointLocation", str(job_dir / "ck"))
    if trigger_ms > 0:
        writer = writer.trigger(processingTime=f"{trigger_ms} milliseconds")
    query = writer.start()
    try:
        while query.isActive and not stop.is_set():
            query.awaitTermination(0.2)
    finally:
        query.stop()
    if query.exception() is not None:
        raise SystemExit(f"benchmark: the transformWithState query failed: "
                         f"{query.exception()}")


# -- the run ---------------------------------------------------------------------------------


def check_placement(spark: Any) -> None:
    """Spark's own hash() agrees with ``spark_partition``: the placed values are right."""
    from pyspark.sql import functions as F  # noqa: N812

    probe = list(range(P)) + placed_values(list(range(P)), P)
    got = spark.range(1).select([F.pmod(F.hash(F.lit(v).cast("int")), F.lit(P)).alias(str(v))
                                 for v in probe]).collect()[0]
    for v in probe:
        assert got[str(v)] == spark_partition(v, P), (v, got[str(v)])
    naive = {i: spark_partition(i, P) for i in range(P)}
    print(f"Murmur3 placement ({P} shuffle partitions): groupBy(subtask) puts subtask -> "
          f"partition {naive}; the values {placed_values(list(range(P)), P)} put subtask i on "
          f"partition i")


def report(name: str, thr: Run, lat: Run, lat_files: list[tuple[Path, int]], rows: int,
           batches: Batches, gap: float) -> float:
    ls = latencies(lat, lat_files)
    seen = batches.between(lat.began, lat.ended)
    busy = sorted(b[1] for b in seen if b[2] > 0)
    hits, n = in_closing_batch(lat, lat_files, seen)
    cpu = "" if thr.cpu is None else f", {thr.cpu:.1f} s CPU"
    p50 = _pct(ls, 50)
    print(f"  {name:<14} throughput {rows / thr.wall:>9,.0f} events/s ({rows:,} events, "
          f"{thr.wall:.2f} s wall{cpu}); latency p50 {p50:.2f} s, p90 {_pct(ls, 90):.2f} s "
          f"({len(ls)} windows, files every {gap:g} s); micro-batch with input: median "
          f"{_pct(busy, 50) if busy else 0:.2f} s; windows committed in the batch that read "
          f"their closing file: {hits}/{n}")
    return p50


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rows", type=int, default=500_000, help="events in the throughput phase")
    ap.add_argument("--files", type=int, default=50, help="files in the throughput phase")
    ap.add_argument("--latency-files", type=int, default=12)
    ap.add_argument("--gap", type=float, default=2.0, help="seconds between latency files")
    ap.add_argument("--triggers", default="0,1000", help="trigger intervals, ms")
    ap.add_argument("--groups", default="subtask",
                    help="transformWithState's state groups: subtask, keygroup, naive")
    ap.add_argument("--quick", action="store_true", help="100k rows, 6 latency files")
    args = ap.parse_args()
    if args.quick:
        args.rows, args.files, args.latency_files, args.gap = 100_000, 20, 6, 1.5
    from flowc.executor import get_spark

    spark = get_spark("local[2]")
    spark.conf.set("spark.sql.shuffle.partitions", str(P))
    spark.sparkContext.setLogLevel("ERROR")
    batches = Batches(spark)
    parts = Phases(spark)
    work = Path(tempfile.mkdtemp(prefix="flowc-designs-bench-"))
    load = os.getloadavg()
    print(f"machine: {os.cpu_count()} cores, load average {load[0]:.2f} {load[1]:.2f} "
          f"{load[2]:.2f} (shared: figures vary with it)")
    check_placement(spark)
    diags: dict[str, Diagnostics] = {}
    contenders: list[tuple[str, Runner]] = [("flowc", run_flowc)]
    for g in args.groups.split(","):
        diags[g] = Diagnostics()

        def tws(job_dir: Path, src: Path, out: Path, t: int, stop: threading.Event,
                g: str = g) -> None:
            run_tws(job_dir, src, out, t, stop, groups=g, diag=diags[g])
        contenders.append((f"tws/{g}", tws))
    mismatch = False
    try:
        for name, runner in contenders:  # warm-up: JVM classes, Python workers, imports
            phase(work, f"warm-{name.replace('/', '-')}", runner, 0,
                  lambda d: make_files(d, 2000, 2, WINDOW), 0.2)
        for g in diags:  # count the measured runs only
            diags[g] = Diagnostics()
        for trigger in [int(x) for x in args.triggers.split(",")]:
            print(f"\ntrigger {trigger / 1000:g} s")
            results: dict[str, tuple[Run, Run, float]] = {}
            for name, runner in contenders:
                tag = name.replace("/", "-")
                thr, _ = phase(work, f"{tag}-thr", runner, trigger,
                               lambda d: make_files(d, args.rows, args.files, 2 * WINDOW),
                               0.02)
                lat, lat_files = phase(work, f"{tag}-lat", runner, trigger,
                                       lambda d: make_files(d, 20_000, args.latency_files,
                                                            WINDOW, seed=11), args.gap)
                p50 = report(name, thr, lat, lat_files, args.rows, batches, args.gap)
                for what, r in (("throughput", thr), ("latency", lat)):
                    print(f"  {'':<14} {what} phase, micro-batches with input: "
                          f"{parts.medians(r, batches)}")
                results[name] = (thr, lat, p50)
            ft, fl, fp = results["flowc"]
            for name, (t, lt, p50) in results.items():
                if name == "flowc":
                    continue
                same = t.output.counts == ft.output.counts and \
                    lt.output.counts == fl.output.counts
                if not same:
                    mismatch = True
                    diff = (set(t.output.counts.items()) ^ set(ft.output.counts.items())) | \
                        (set(lt.output.counts.items()) ^ set(fl.output.counts.items()))
                    print(f"  !!! MISMATCH: {name} and flowc differ in {len(diff)} window "
                          f"counts, e.g. {sorted(diff)[:3]}")
                cpu = f", CPU {t.cpu / ft.cpu:.2f}" if t.cpu and ft.cpu else ""
                print(f"  {name}/flowc: throughput {ft.wall / t.wall:.2f}{cpu}; p50 latency "
                      f"{p50:.2f} s vs {fp:.2f} s" +
                      (f"; {len(t.output.counts):,} + {len(lt.output.counts):,} window "
                       "rows equal flowc's" if same else ""))
        for g, d in diags.items():
            if d.trips:
                print(f"\ntws/{g}: groups -> partitions they ran in: "
                      f"{dict(sorted((k, sorted(v)) for k, v in d.placement.items()))}"
                      if len(d.placement) <= 8 else
                      f"\ntws/{g}: {len(d.placement)} groups, each in one partition: "
                      f"{all(len(v) == 1 for v in d.placement.values())}")
                print(f"  state round trips per group and micro-batch: median "
                      f"{statistics.median(d.trips):g}, max {max(d.trips)} "
                      f"({len(d.trips)} group calls); state per group: median "
                      f"{statistics.median(d.bytes):,.0f} bytes, max {max(d.bytes):,}")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    load = os.getloadavg()
    print(f"\nload average after: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
    if mismatch:
        sys.exit(1)


if __name__ == "__main__":
    main()
