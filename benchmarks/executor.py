"""The product.md "clicks" job three ways on one SparkSession, all in one run:

- flowc: ``examples/clicks.flow`` itself (csv source, ``lower(action)``, filter, key by user,
  5 s tumbling window, ``count(*)`` + ``count(distinct article_id)``), compiled by flowc and
  run by ``run_job_graph`` (the columnar executor where the job allows it, see
  docs/executor.md), its result collected to the driver; job ``clicks-udf`` computes
  ``lower(action)`` with a Python UDF instead (one row-wise member in the chain);
- RDD: the same job hand-written on PySpark RDDs (one mapPartitions + reduceByKey);
- DataFrame: the same job as a PySpark DataFrame program;
- job ``join`` (BATCH): ``benchmarks/jobs/attribution.flow``, a window join of clicks and
  impressions then a sliding window, against its DataFrame and RDD forms
  (``benchmarks/join_job.py``).

Each result is collected to the driver and, in BATCH mode (no late data), the three are
checked to be the same multiset of (user, window start, window end, clicks, articles) rows.
Prints each wall time, the CPU seconds of the whole process tree (this driver, Spark's JVM,
its Python workers, sampled from /proc every 50 ms so that workers exiting mid-run are
counted; Linux only), the peak resident memory of the driver, the JVM and every Python
worker, largest first (their high-water marks: a reused worker's includes earlier runs),
the ratios flowc/RDD and flowc/DataFrame, and how the wall time grows with the rows.

    python benchmarks/executor.py [--rows 1000000,5000000] [--parallelism P]
        [--mode batch,streaming] [--job clicks,clicks-udf,join] [--repeat N]
        [--format csv|json|parquet]   (the clicks jobs' input; join reads csv)
"""

from __future__ import annotations

import argparse
import collections
import datetime as dt
import os
import random
import re
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from flowc.executor import get_spark, run_job_graph
from flowc.operators import CollectSink
from flowc.parser import compile_source

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "clicks.flow"
BASE = 1_704_067_200_000  # 2024-01-01T00:00:00Z
WINDOW = 5000


def generate(path: str, rows: int, seed: int = 7) -> None:
    """Rows in the example's csv layout (header, ISO timestamps), 1% without a user, at
    most 1.5 s out of order."""
    rnd = random.Random(seed)
    actions = ["AppClick", "appclick", "view", "APPCLICK", "scroll"]
    with open(path, "w") as fh:
        fh.write("user_id,article_id,action,ts\n")
        for i in range(rows):
            user = "" if rnd.random() < 0.01 else f"u{rnd.randrange(5000)}"
            ts = BASE + i * 10 + rnd.randrange(-1500, 1500)
            stamp = dt.datetime.fromtimestamp(ts / 1000, dt.timezone.utc)
            fh.write(f"{user},a{rnd.randrange(500)},{rnd.choice(actions)},"
                     f"{stamp.strftime('%Y-%m-%dT%H:%M:%S.%f')[:-3]}Z\n")


def convert_input(csv_path: str, fmt: str) -> str:
    """The generated csv as json lines (ISO timestamps as text) or parquet (timestamps as
    TIMESTAMP(MILLIS, UTC)), written with pyarrow; returns its path."""
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.csv as pacsv
    import pyarrow.parquet as pq

    if fmt == "csv":
        return csv_path
    strings = {n: pa.string() for n in ("user_id", "article_id", "action", "ts")}
    table = pacsv.read_csv(csv_path, convert_options=pacsv.ConvertOptions(
        column_types=strings, strings_can_be_null=True, null_values=[""]))
    out = csv_path[:-len(".csv")] + (".json" if fmt == "json" else ".parquet")
    if fmt == "parquet":
        table = table.set_column(3, "ts", pc.cast(table["ts"], pa.timestamp("ms", tz="UTC")))
        pq.write_table(table, out)
        return out
    import json

    with open(out, "w") as fh:
        for row in table.to_pylist():
            fh.write(json.dumps(row, separators=(",", ":")) + "\n")
    return out


def flowc_job(path: str, parallelism: int, mode: str, udf: bool = False,
              fmt: str = "csv") -> Any:
    """examples/clicks.flow with its data path pointed at ``path`` and its print sink
    replaced by a collect sink (so every contender brings its result to the driver);
    ``udf``: ``lower(action)`` is a Python UDF (bench_udfs.lower_action) instead."""
    text = EXAMPLE.read_text()
    if udf:
        text, n_udf = re.subn(r"lower\(action\)", "lower_action(action)", text)
        text = "import udf bench_udfs.lower_action(string) -> string;\n" + text
        if n_udf != 1:
            sys.exit(f"benchmark: {EXAMPLE} no longer has the expected shape")
    text, n_path = re.subn(r"from csv 'data/clicks\.csv'", f"from {fmt} {path!r}", text)
    text, n_let = re.subn(r"^clicks\n", "let result = clicks\n", text, flags=re.M)
    text, n_sink = re.subn(r"\n\s*\|\s*print;\s*$", ";\n", text)
    if (n_path, n_let, n_sink) != (1, 1, 1):
        sys.exit(f"benchmark: {EXAMPLE} no longer has the expected shape")
    script = compile_source(text, str(EXAMPLE),
                            options={"parallelism": str(parallelism), "mode": mode})
    script.streams["result"].stream.sink_to(CollectSink("result"))
    return script.env.get_job_graph()


def rdd_job(spark: Any, path: str, parallelism: int) -> list[tuple[Any, ...]]:
    from pyspark.sql import functions as F

    df = _read(spark, path)
    rows = df.select("user_id", "article_id", "action", F.unix_millis("ts")).rdd

    def per_partition(it: Any) -> Any:
        for user, article, action, ts in it:
            if user is None or article is None or action is None or ts is None:
                continue
            if action.lower() != "appclick":
                continue
            yield (user, ts - ts % WINDOW), (1, {article})

    def merge(a: Any, b: Any) -> Any:
        return (a[0] + b[0], a[1] | b[1])

    return rows.mapPartitions(per_partition).reduceByKey(merge, parallelism) \
        .map(lambda kv: (kv[0][0], kv[0][1], kv[0][1] + WINDOW, kv[1][0], len(kv[1][1]))) \
        .collect()


def dataframe_job(spark: Any, path: str) -> list[tuple[Any, ...]]:
    from pyspark.sql import functions as F

    df = _read(spark, path)
    out = (df.select("user_id", "article_id", F.lower("action").alias("action"), "ts")
           .where("user_id is not null and article_id is not null and action = 'appclick'")
           .groupBy("user_id", F.window("ts", "5 seconds"))
           .agg(F.count("*").alias("clicks"),
                F.countDistinct("article_id").alias("articles"))
           .select("user_id", F.unix_millis("window.start"), F.unix_millis("window.end"),
                   "clicks", "articles"))
    return [tuple(r) for r in out.collect()]


def _read(spark: Any, path: str) -> Any:
    """The input in the format its name says, with the job's schema."""
    reader = spark.read.schema(_schema())
    if path.endswith(".json"):
        return reader.json(path)
    if path.endswith(".parquet"):
        return reader.parquet(path)
    return reader.option("header", True).csv(path)


def _schema() -> Any:
    from pyspark.sql import types as T

    return T.StructType([T.StructField(n, T.StringType()) for n in
                         ("user_id", "article_id", "action")] +
                        [T.StructField("ts", T.TimestampType())])


class Sampler:
    """CPU seconds and peak memory of this process and all its descendants, by polling
    ``/proc`` every 50 ms in a thread: a Python worker that exits during the run keeps its
    last sample (PySpark's daemon ignores SIGCHLD, so an exited worker's CPU never reaches
    any parent's ``cutime``: reading the tree's totals at the end misses it and can even go
    negative). Linux only; elsewhere ``cpu`` and ``peaks`` are None."""

    def __init__(self) -> None:
        import threading

        self.ok = os.path.isdir("/proc/self/task")
        self.tick = os.sysconf("SC_CLK_TCK") if self.ok else 1
        self.base: dict[int, int] = {}
        self.last: dict[int, int] = {}
        self.peak: dict[int, tuple[str, int]] = {}
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _tree(self) -> dict[int, tuple[int, str]]:
        children: dict[int, list[int]] = collections.defaultdict(list)
        info: dict[int, tuple[int, str]] = {}
        for name in os.listdir("/proc"):
            if not name.isdigit():
                continue
            try:
                with open(f"/proc/{name}/stat") as fh:
                    stat = fh.read()
            except OSError:
                continue
            comm = stat[stat.index("(") + 1:stat.rindex(")")]
            fields = stat[stat.rindex(")") + 2:].split()
            pid = int(name)
            children[int(fields[1])].append(pid)
            info[pid] = (int(fields[11]) + int(fields[12]), comm)  # utime + stime
        out, todo = {}, [os.getpid()]
        while todo:
            pid = todo.pop()
            if pid in info:
                out[pid] = info[pid]
            todo.extend(children.get(pid, ()))
        return out

    def _sample(self) -> None:
        for pid, (t, comm) in self._tree().items():
            self.last[pid] = t
            try:
                with open(f"/proc/{pid}/status") as fh:
                    hwm = next((int(line.split()[1]) for line in fh
                                if line.startswith("VmHWM:")), 0)
            except OSError:
                continue
            if hwm > self.peak.get(pid, ("", 0))[1]:
                self.peak[pid] = (comm, hwm)

    def _run(self) -> None:
        while not self.stop.wait(0.05):
            self._sample()

    def __enter__(self) -> Sampler:
        if self.ok:
            self.base = {pid: t for pid, (t, _) in self._tree().items()}
            self.last = dict(self.base)
            self.thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        if self.ok:
            self.stop.set()
            self.thread.join()
            self._sample()

    @property
    def cpu(self) -> float | None:
        if not self.ok:
            return None
        return sum(t - self.base.get(pid, 0) for pid, t in self.last.items()) / self.tick

    @property
    def peaks(self) -> str:
        """Peak resident memory: the driver, the JVM, the largest Python worker."""
        if not self.ok:
            return ""
        me = os.getpid()
        driver = self.peak.get(me, ("", 0))[1]
        jvm = max((kb for pid, (comm, kb) in self.peak.items() if comm == "java"), default=0)
        workers = sorted((kb // 1024 for pid, (comm, kb) in self.peak.items()
                          if pid != me and comm.startswith("python")), reverse=True)
        return (f"peak MB: driver {driver // 1024}, JVM {jvm // 1024}, "
                f"Python workers {', '.join(map(str, workers)) or '-'}")


def timed(fn: Any) -> tuple[float, Sampler, Any]:
    """(wall seconds, the CPU/memory sampler, result)."""
    with Sampler() as s:
        t = time.perf_counter()
        r = fn()
        wall = time.perf_counter() - t
    return wall, s, r


def _same(a: list[Any], b: list[Any]) -> bool:
    return collections.Counter(map(tuple, a)) == collections.Counter(map(tuple, b))


def _line(name: str, wall: float, s: Sampler, rows: int) -> str:
    cpu = "" if s.cpu is None else f"   cpu {s.cpu:7.2f} s"
    return f"  {name:<10}{wall:7.2f} s{cpu}   ({rows} windows)   {s.peaks}"


def _ratios(what: str, a: tuple[float, Sampler], b: tuple[float, Sampler]) -> str:
    cpu = ""
    if a[1].cpu and b[1].cpu:
        cpu = f", CPU {a[1].cpu / b[1].cpu:.2f}"
    return f"{what} = {a[0] / b[0]:.2f} (wall{cpu})"


def run_one(spark: Any, path: str, rows: int, parallelism: int, mode: str, job: str,
            repeat: int, fmt: str = "csv") -> None:
    jg = flowc_job(path, parallelism, mode, udf=job == "clicks-udf", fmt=fmt)
    # Warm up once, every contender (Python workers and their imports, the JVM's JIT,
    # the DataFrame's generated code): the runs below measure steady state alike.
    run_job_graph(jg)
    rdd_job(spark, path, parallelism)
    dataframe_job(spark, path)
    print(f"job={job} rows={rows} parallelism={parallelism} mode={mode} input={fmt}")
    for _ in range(repeat):
        t_flowc, s_flowc, res = timed(lambda: run_job_graph(jg))
        t_rdd, s_rdd, rdd_rows = timed(lambda: rdd_job(spark, path, parallelism))
        t_df, s_df, df_rows = timed(lambda: dataframe_job(spark, path))
        flowc_rows = res["result"]
        print(_line("flowc", t_flowc, s_flowc, len(flowc_rows)))
        print(_line("rdd", t_rdd, s_rdd, len(rdd_rows)))
        print(_line("dataframe", t_df, s_df, len(df_rows)))
        print("  " + _ratios("flowc/RDD", (t_flowc, s_flowc), (t_rdd, s_rdd)) + "   "
              + _ratios("flowc/DataFrame", (t_flowc, s_flowc), (t_df, s_df)))
        if mode == "batch":
            ok = _same(flowc_rows, rdd_rows) and _same(flowc_rows, df_rows)
            print(f"  results identical: {'yes' if ok else 'NO'}")
            if not ok:
                sys.exit("benchmark: the three results differ")
        else:
            print(f"  late records dropped by flowc: {res.late_records_dropped}")
        print("  " + res.summary().replace("\n", "\n  "))
        read = res.vertices[0].records_in
        if read != rows:  # the figures above would be of another input
            sys.exit(f"benchmark: the source read {read} rows of {path}, not {rows}")


def run_join(spark: Any, directory: str, rows: int, parallelism: int, repeat: int) -> None:
    """The join job (BATCH) against its DataFrame and RDD forms; the results must agree."""
    import join_job

    clicks, impressions = join_job.generate(directory, rows)
    jg = join_job.flowc_job(clicks, impressions, parallelism)
    run_job_graph(jg)  # warm-up, every contender
    join_job.rdd_job(spark, clicks, impressions, parallelism)
    join_job.dataframe_job(spark, clicks, impressions)
    print(f"job=join rows={rows} parallelism={parallelism} mode=batch")
    for _ in range(repeat):
        t_flowc, s_flowc, res = timed(lambda: run_job_graph(jg))
        t_rdd, s_rdd, rdd_rows = timed(
            lambda: join_job.rdd_job(spark, clicks, impressions, parallelism))
        t_df, s_df, df_rows = timed(lambda: join_job.dataframe_job(spark, clicks, impressions))
        flowc_rows = res["result"]
        print(_line("flowc", t_flowc, s_flowc, len(flowc_rows)))
        print(_line("rdd", t_rdd, s_rdd, len(rdd_rows)))
        print(_line("dataframe", t_df, s_df, len(df_rows)))
        print("  " + _ratios("flowc/RDD", (t_flowc, s_flowc), (t_rdd, s_rdd)) + "   "
              + _ratios("flowc/DataFrame", (t_flowc, s_flowc), (t_df, s_df)))
        ok = _same(flowc_rows, rdd_rows) and _same(flowc_rows, df_rows)
        print(f"  results identical: {'yes' if ok else 'NO'}")
        if not ok:
            sys.exit("benchmark: the three results differ")
        print("  " + res.summary().replace("\n", "\n  "))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rows", default="1000000",
                    help="comma-separated row counts, e.g. 1000000,5000000")
    ap.add_argument("--parallelism", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--mode", default="batch,streaming",
                    help="batch, streaming or both (comma-separated)")
    ap.add_argument("--job", default="clicks,clicks-udf,join",
                    help="clicks (declarative), clicks-udf (a Python UDF in the chain), "
                         "join (a window join and a sliding window, BATCH only)")
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--format", default="csv", choices=("csv", "json", "parquet"),
                    help="the clicks input: csv (as generated), json lines or parquet "
                         "(converted from it with pyarrow)")
    args = ap.parse_args()
    spark = get_spark()
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    walls: dict[tuple[str, str], list[tuple[int, float]]] = collections.defaultdict(list)
    with tempfile.TemporaryDirectory() as d:
        for rows in (int(r) for r in args.rows.split(",")):
            path = os.path.join(d, f"clicks-{rows}.csv")
            if set(args.job.split(",")) - {"join"}:
                generate(path, rows)
                path = convert_input(path, args.format)
            for mode in args.mode.split(","):
                for job in args.job.split(","):
                    t = time.perf_counter()
                    if job != "join":
                        run_one(spark, path, rows, args.parallelism, mode, job, args.repeat,
                                args.format)
                    elif mode == "batch":
                        run_join(spark, d, rows, args.parallelism, args.repeat)
                    else:
                        continue
                    walls[(mode, job)].append((rows, time.perf_counter() - t))
    for (mode, job), points in walls.items():
        if len(points) > 1:
            (r0, w0), (r1, w1) = points[0], points[-1]
            print(f"growth {job} {mode}: {r1 / r0:.0f}x rows -> {w1 / w0:.1f}x wall "
                  "(whole section incl. baselines and warm-up)")


if __name__ == "__main__":
    main()
