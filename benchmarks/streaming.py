"""The clicks job over files landing in a monitored directory, two ways in one run:

- flowc: examples/clicks.flow's shape (csv source with ``monitor every``, ``lower(action)``,
  filter, key by user, 5 s tumbling window, ``count(*)``, a csv file sink) on flowc's
  streaming executor (``flowc.executor.streaming.runner.run_streaming``);
- Spark: the same job hand-written on Structured Streaming (``readStream.csv`` over the
  directory, ``withWatermark`` + ``groupBy(window)``, append mode, ``foreachBatch`` writing
  one csv part file per micro-batch, staged and renamed, as flowc's sink does).

Both on one SparkSession (local[2], ``spark.sql.shuffle.partitions`` = the job's
parallelism), each warmed up once, at trigger 0 s and 1 s, in two phases:

- *throughput*: ``--rows`` events in ``--files`` files land back to back (one every 20 ms);
  sustained events/s = events / (first file landed -> the last window's row committed);
  wall and CPU seconds of the whole process tree (benchmarks/executor.py's Sampler);
- *latency*: ``--latency-files`` files of 5 s of event time each land one per
  ``--gap`` seconds; for every window, latency = its row committed (the part file's
  modification time) - the landing of the file that closes it (the first file whose
  largest timestamp reaches window end + the 2 s watermark delay: both engines' rule);
  p50 / p90; and whether each window was committed by the end of the micro-batch that
  read its closing file (micro-batches from Spark's StreamingQueryListener, both being
  Spark queries).

The window counts of both are compared (a mismatch is printed loudly and the exit status
is 1). Targets (issue 10): flowc's throughput >= Spark's; flowc's p50 latency within one
micro-batch of the file that closes the window.

    python benchmarks/streaming.py [--rows N] [--quick] [--triggers 0,1000]
"""

from __future__ import annotations

import argparse
import csv
import datetime as dt
import os
import random
import shutil
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from siblings import load  # noqa: E402

Sampler = load("executor").Sampler

BASE = 1_704_067_200_000  # 2024-01-01T00:00:00Z
WINDOW = 5000
DELAY = 2000  # the watermark delay, both engines
SENTINEL_USER = "nobody"
JOB = """set parallelism = {p};
source clicks (user_id string, article_id string, action string, ts timestamp)
  from csv '{src}' monitor every 100ms
  watermark ts - 2s
  with (parallelism = {sp});
clicks
  | map user_id, article_id, lower(action) as action, ts
  | filter user_id is not null and article_id is not null and action = 'appclick'
  | key by user_id
  | window tumbling 5s
  | aggregate count(*) as clicks
  | write csv '{out}';
"""
Window = tuple[str, int]  # (user, window end ms)


# -- data -----------------------------------------------------------------------------


def make_files(directory: Path, rows: int, files: int, span_ms: int, seed: int = 7
               ) -> list[tuple[Path, int]]:
    """``files`` csv files (written to ``directory``, not yet landed) of ``rows`` events in
    all, file k covering event time [k * span_ms, (k + 1) * span_ms) with at most 1.8 s of
    disorder inside the file (never behind the previous file's watermark), 1% without a
    user; returns (path, largest timestamp) per file."""
    rnd = random.Random(seed)
    actions = ["AppClick", "appclick", "view", "APPCLICK", "scroll"]
    per = rows // files
    out = []
    for k in range(files):
        lo = BASE + k * span_ms
        path = directory / f"clicks-{k:05d}.csv"
        top = 0
        with open(path, "w") as fh:
            fh.write("user_id,article_id,action,ts\n")
            for i in range(per):
                ts = lo + i * span_ms // per
                ts = max(lo, min(lo + span_ms - 1, ts + rnd.randrange(-900, 900)))
                top = max(top, ts)
                user = "" if rnd.random() < 0.01 else f"u{rnd.randrange(5000)}"
                fh.write(f"{user},a{rnd.randrange(500)},{rnd.choice(actions)},{_iso(ts)}\n")
        out.append((path, top))
    return out


def _iso(ms: int) -> str:
    stamp = dt.datetime.fromtimestamp(ms / 1000, dt.UTC)
    return stamp.strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


def sentinel(directory: Path, k: int, ts: int) -> Path:
    """A file of one far-future click: it moves the watermark past every real window."""
    path = directory / f"zz-{k}.csv"
    path.write_text(f"user_id,article_id,action,ts\n{SENTINEL_USER},a0,appclick,{_iso(ts)}\n")
    return path


def land(path: Path, directory: Path) -> float:
    """Rename ``path`` into the monitored directory (files appear whole); the time."""
    target = directory / path.name
    os.replace(path, target)
    return time.time()


# -- the sinks' output ---------------------------------------------------------------------


def _millis(text: str) -> int:
    """Epoch milliseconds of a csv timestamp cell (digits, or ISO 8601, UTC if naive)."""
    if text.isdigit():
        return int(text)
    t = dt.datetime.fromisoformat(text.replace("Z", "+00:00"))
    return int((t if t.tzinfo else t.replace(tzinfo=dt.UTC)).timestamp() * 1000)


class Output:
    """A sink directory read incrementally: (user, window end) -> count, and per window end
    the time its last row was committed (the modification time of its part file)."""

    def __init__(self, out: Path) -> None:
        self.out = out
        self.seen: set[str] = set()
        self.counts: dict[Window, int] = {}
        self.committed: dict[int, float] = {}

    def read(self) -> Output:
        for f in sorted(self.out.glob("part-*.csv")):
            if f.name in self.seen:
                continue
            self.seen.add(f.name)
            mtime = f.stat().st_mtime
            with open(f, newline="") as fh:
                for row in csv.DictReader(fh):
                    if row["user_id"] == SENTINEL_USER:
                        continue
                    key = (row["user_id"], _millis(row["window_end"]))
                    if key in self.counts:
                        raise SystemExit(f"benchmark: window {key} written twice in "
                                         f"{self.out}")
                    self.counts[key] = int(row["clicks"])
                    self.committed[key[1]] = max(mtime, self.committed.get(key[1], 0.0))
        return self


# -- the contenders ------------------------------------------------------------------------

Runner = Callable[[Path, Path, Path, int, threading.Event], None]


def run_flowc(job_dir: Path, src: Path, out: Path, trigger_ms: int,
              stop: threading.Event, p: int = 2, sp: int = 1, executor: str = "auto") -> None:
    from flowc.executor.streaming.runner import run_streaming
    from flowc.parser import compile_source

    text = JOB.format(p=p, sp=sp, src=src, out=out)
    if executor != "auto":  # columnar or row micro-batches (docs/executor.md, Streaming)
        text = f"set flowc.executor = {executor};\n" + text
    jg = compile_source(text, str(job_dir / "clicks.flow")).env.get_job_graph()
    # the per-batch log line goes to stderr; keep the benchmark's output readable
    devnull = open(os.devnull, "w")  # noqa: SIM115
    old, sys.stderr = sys.stderr, devnull
    try:
        run_streaming(jg, checkpoint=str(job_dir / "ck"), trigger_ms=trigger_ms, stop=stop)
    finally:
        sys.stderr = old
        devnull.close()


def run_spark(job_dir: Path, src: Path, out: Path, trigger_ms: int,
              stop: threading.Event) -> None:
    from pyspark.sql import functions as F  # noqa: N812
    from pyspark.sql import types as T  # noqa: N812

    from flowc.executor import get_spark

    spark = get_spark()
    schema = T.StructType([T.StructField(n, T.StringType()) for n in
                           ("user_id", "article_id", "action")] +
                          [T.StructField("ts", T.TimestampType())])
    df = spark.readStream.schema(schema).option("header", True).csv(str(src))
    counts = (df.select("user_id", "article_id", F.lower("action").alias("action"), "ts")
              .where("user_id is not null and article_id is not null and action = 'appclick'")
              .withWatermark("ts", "2 seconds")
              .groupBy("user_id", F.window("ts", "5 seconds"))
              .agg(F.count("*").alias("clicks"))
              .select("user_id", F.unix_millis("window.start").alias("window_start"),
                      F.unix_millis("window.end").alias("window_end"), "clicks"))
    out.mkdir(parents=True, exist_ok=True)

    def write(batch: Any, batch_id: int) -> None:
        rows = batch.collect()
        if not rows:
            return
        tmp = out / f".part-{batch_id:08d}.csv"
        with open(tmp, "w", newline="") as fh:
            w = csv.writer(fh)
            w.writerow(["user_id", "window_start", "window_end", "clicks"])
            w.writerows(tuple(r) for r in rows)
        os.replace(tmp, out / f"part-{batch_id:08d}.csv")

    writer = counts.writeStream.outputMode("append").foreachBatch(write) \
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
        raise SystemExit(f"benchmark: the Spark query failed: {query.exception()}")


# -- micro-batches, from Spark's query listener (both contenders are Spark queries) --------


class Batches:
    """Every micro-batch of every query: (start, seconds, input rows), wall-clock epoch
    seconds (StreamingQueryProgress.timestamp is the trigger's start). flowc's query never
    reads its batch's DataFrame (its files come from the query's logs), so Spark counts no
    input rows for it; but it only runs a batch when files landed (no stateful Spark
    operator: no batch without data): its batches count as one row each."""

    def __init__(self, spark: Any) -> None:
        from pyspark.sql.streaming import StreamingQueryListener

        self.seen: list[tuple[float, float, int]] = []
        log = self.seen

        class Listener(StreamingQueryListener):
            def onQueryStarted(self, event: Any) -> None:
                pass

            def onQueryProgress(self, event: Any) -> None:
                p = event.progress
                start = dt.datetime.fromisoformat(p.timestamp.replace("Z", "+00:00"))
                rows = p.numInputRows or int(str(p.name).startswith("flowc-"))
                log.append((start.timestamp(), p.batchDuration / 1000, rows))

            def onQueryIdle(self, event: Any) -> None:
                pass

            def onQueryTerminated(self, event: Any) -> None:
                pass
        spark.streams.addListener(Listener())

    def between(self, lo: float, hi: float) -> list[tuple[float, float, int]]:
        return sorted(b for b in self.seen if lo <= b[0] <= hi)


def in_closing_batch(run: Run, files: list[tuple[Path, int]],
                     batches: list[tuple[float, float, int]]) -> tuple[int, int]:
    """(windows committed by the end of the micro-batch that read their closing file, all
    windows): that batch is the first with input to start after the file landed."""
    hits = 0
    done = run.output.committed
    for end, committed in done.items():
        landed = run.landed[closing_file(files, end)]
        first = next((b for b in batches if b[2] > 0 and b[0] >= landed), None)
        if first is not None and committed <= first[0] + first[1] + 0.05:
            hits += 1
    return hits, len(done)


# -- one measured run ----------------------------------------------------------------------


class Run:
    """One contender over one phase: lands the files (after ``delay`` seconds), waits until
    every window closed by them is committed, stops the query."""

    def __init__(self, name: str, runner: Runner, work: Path, trigger_ms: int) -> None:
        self.name = name
        self.runner = runner
        self.trigger_ms = trigger_ms
        self.dir = Path(tempfile.mkdtemp(prefix=f"{name}-", dir=work))
        self.src = self.dir / "in"
        self.out = self.dir / "out"
        self.src.mkdir()
        self.landed: list[float] = []
        self.wall = 0.0
        self.cpu: float | None = None
        self.output = Output(self.out)
        self.began = self.ended = 0.0

    def go(self, files: list[tuple[Path, int]], gap: float, expected: set[Window],
           timeout: float = 600.0) -> None:
        stop = threading.Event()
        errors: list[BaseException] = []

        def feed() -> None:
            try:
                time.sleep(3.0)  # the query is up and listing the directory
                first = time.perf_counter()
                for k, (path, _) in enumerate(files):
                    self.landed.append(land(path, self.src))
                    if k + 1 < len(files):
                        time.sleep(gap)
                deadline = time.monotonic() + timeout
                while time.monotonic() < deadline:
                    if expected <= self.output.read().counts.keys():
                        break
                    time.sleep(0.05)
                else:
                    errors.append(SystemExit(f"benchmark: {self.name} did not commit every "
                                             f"window within {timeout:.0f} s"))
                self.wall = time.perf_counter() - first
            except BaseException as e:  # noqa: BLE001
                errors.append(e)
            finally:
                stop.set()

        t = threading.Thread(target=feed)
        self.began = time.time()
        with Sampler() as s:
            t.start()
            self.runner(self.dir, self.src, self.out, self.trigger_ms, stop)
            t.join()
        time.sleep(0.5)  # the listener's last events arrive asynchronously
        self.ended = time.time()
        if errors:
            raise errors[0]
        self.cpu = s.cpu
        self.output.read()


def closing_file(files: list[tuple[Path, int]], end: int) -> int:
    """The first file whose largest timestamp moves the watermark to the window's end."""
    for k, (_, top) in enumerate(files):
        if top - DELAY >= end:
            return k
    raise AssertionError("no file closes the window")


def latencies(run: Run, files: list[tuple[Path, int]]) -> list[float]:
    """Per window end: its rows committed - the closing file landed."""
    done = run.output.committed
    return [done[end] - run.landed[closing_file(files, end)] for end in done]


def _pct(xs: list[float], q: float) -> float:
    return statistics.quantiles(xs, n=100, method="inclusive")[q - 1] if len(xs) > 1 \
        else xs[0]


def expected_windows(files: list[tuple[Path, int]], closing_top: int) -> set[Window]:
    """The windows a run must commit: all those ending before the real files' last
    timestamp minus the delay (read from the files themselves, before they land)."""
    out: set[Window] = set()
    for path, _ in files:
        with open(path, newline="") as fh:
            for row in csv.DictReader(fh):
                if not row["user_id"] or row["user_id"] == SENTINEL_USER or \
                        row["action"].lower() != "appclick":
                    continue
                ts = _millis(row["ts"])
                end = ts - ts % WINDOW + WINDOW
                if end + DELAY <= closing_top:
                    out.add((row["user_id"], end))
    return out


def phase(work: Path, name: str, runner: Runner, trigger_ms: int, make: Callable[[Path],
          list[tuple[Path, int]]], gap: float) -> tuple[Run, list[tuple[Path, int]]]:
    staging = Path(tempfile.mkdtemp(prefix="staging-", dir=work))
    files = make(staging)
    top = files[-1][1]
    # two sentinels: one per source subtask when the source runs with parallelism 2
    files = files + [(sentinel(staging, k, top + 60_000), top + 60_000) for k in range(2)]
    expected = expected_windows(files[:-2], top + 60_000)
    run = Run(name, runner, work, trigger_ms)
    run.go(files, gap, expected)
    shutil.rmtree(staging, ignore_errors=True)
    return run, files


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rows", type=int, default=500_000, help="events in the throughput phase")
    ap.add_argument("--files", type=int, default=50, help="files in the throughput phase")
    ap.add_argument("--latency-files", type=int, default=12)
    ap.add_argument("--gap", type=float, default=2.0, help="seconds between latency files")
    ap.add_argument("--triggers", default="0,1000", help="trigger intervals, ms")
    ap.add_argument("--source-parallelism", type=int, default=1)
    ap.add_argument("--quick", action="store_true", help="100k rows, 6 latency files")
    ap.add_argument("--only", choices=("flowc", "spark"), help="one contender (profiling)")
    ap.add_argument("--executor", choices=("auto", "columnar", "row"), default="auto",
                    help="flowc's micro-batches: columnar (auto, for this job) or row by row")
    args = ap.parse_args()
    if args.quick:
        args.rows, args.files, args.latency_files, args.gap = 100_000, 20, 6, 1.5
    from flowc.executor import get_spark

    spark = get_spark("local[2]")
    spark.conf.set("spark.sql.shuffle.partitions", "2")
    spark.sparkContext.setLogLevel("ERROR")
    batches = Batches(spark)
    work = Path(tempfile.mkdtemp(prefix="flowc-streaming-bench-"))
    load = os.getloadavg()
    print(f"machine: {os.cpu_count()} cores, load average {load[0]:.2f} {load[1]:.2f} "
          f"{load[2]:.2f} (shared: figures vary with it)")
    sp = args.source_parallelism

    def flowc(job_dir: Path, src: Path, out: Path, t: int, stop: threading.Event) -> None:
        run_flowc(job_dir, src, out, t, stop, sp=sp, executor=args.executor)
    contenders: list[tuple[str, Runner]] = [(n, r) for n, r in (("flowc", flowc),
                                                                 ("spark", run_spark))
                                            if args.only in (None, n)]
    mismatch = False
    try:
        # warm-up: a small run of each (JVM classes, Python workers, imports)
        for name, runner in contenders:
            phase(work, f"warm-{name}", runner, 0,
                  lambda d: make_files(d, 2000, 2, WINDOW), 0.2)
        for trigger in [int(x) for x in args.triggers.split(",")]:
            print(f"\ntrigger {trigger / 1000:g} s")
            results: dict[str, tuple[Run, Run, list[tuple[Path, int]]]] = {}
            for name, runner in contenders:
                thr, _ = phase(work, f"{name}-thr", runner, trigger,
                               lambda d: make_files(d, args.rows, args.files, 2 * WINDOW),
                               0.02)
                lat, lat_files = phase(work, f"{name}-lat", runner, trigger,
                                       lambda d: make_files(d, 20_000, args.latency_files,
                                                            WINDOW, seed=11), args.gap)
                results[name] = (thr, lat, lat_files)
                ls = latencies(lat, lat_files)
                cpu = "" if thr.cpu is None else f", {thr.cpu:.1f} s CPU"
                seen = batches.between(lat.began, lat.ended)
                busy = sorted(b[1] for b in seen if b[2] > 0)
                hits, n = in_closing_batch(lat, lat_files, seen)
                print(f"  {name:<6} throughput {args.rows / thr.wall:>9,.0f} events/s "
                      f"({args.rows:,} events, {thr.wall:.2f} s wall{cpu}); latency p50 "
                      f"{_pct(ls, 50):.2f} s, p90 {_pct(ls, 90):.2f} s "
                      f"({len(ls)} windows, files every {args.gap:g} s); micro-batch with "
                      f"input: median {_pct(busy, 50) if busy else 0:.2f} s; windows "
                      f"committed in the batch that read their closing file: {hits}/{n}")
            if len(results) < 2:
                continue
            (ft, fl, _), (st, sl, _) = results["flowc"], results["spark"]
            for what, a, b in (("throughput", ft, st), ("latency", fl, sl)):
                if a.output.counts != b.output.counts:
                    mismatch = True
                    diff = set(a.output.counts.items()) ^ set(b.output.counts.items())
                    print(f"  !!! MISMATCH ({what}): flowc and Spark differ in {len(diff)} "
                          f"window counts, e.g. {sorted(diff)[:3]}")
            cpu = f", CPU {ft.cpu / st.cpu:.2f}" if ft.cpu and st.cpu else ""
            p50 = (_pct(latencies(fl, results["flowc"][2]), 50),
                   _pct(latencies(sl, results["spark"][2]), 50))
            print(f"  flowc/spark: throughput {st.wall / ft.wall:.2f} (wall "
                  f"{ft.wall / st.wall:.2f}{cpu}); p50 latency {p50[0]:.2f} s vs "
                  f"{p50[1]:.2f} s" + ("" if mismatch else
                                       f"; {len(ft.output.counts):,} + "
                                       f"{len(fl.output.counts):,} window counts agree"))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    load = os.getloadavg()
    print(f"\nload average after: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
    if mismatch:
        sys.exit(1)


if __name__ == "__main__":
    main()
