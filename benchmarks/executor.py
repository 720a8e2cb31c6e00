"""The product.md "clicks" job three ways on one SparkSession, all in one run:

- flowc: ``examples/clicks.flow`` itself (csv source, ``lower(action)``, filter, key by user,
  5 s tumbling window, ``count(*)`` + ``count(distinct article_id)``), compiled by flowc and
  run on the Spark executor, its result collected to the driver;
- RDD: the same job hand-written on PySpark RDDs (one mapPartitions + reduceByKey);
- DataFrame: the same job as a PySpark DataFrame program.

Each result is collected to the driver and, in BATCH mode (no late data), the three are
checked to be the same multiset of (user, window start, window end, clicks, articles) rows.
Prints each wall time and the ratios flowc/RDD and flowc/DataFrame, and beside them the CPU
seconds each contender used in the whole process tree (this driver, Spark's JVM, its Python
workers; Linux only): on a machine shared with other work, wall times swing from run to
run while CPU seconds stay put.

    python benchmarks/executor.py [--rows N] [--parallelism P] [--mode batch|streaming]
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


def flowc_job(path: str, parallelism: int, mode: str) -> Any:
    """examples/clicks.flow with its data path pointed at ``path`` and its print sink
    replaced by a collect sink (so every contender brings its result to the driver)."""
    text = EXAMPLE.read_text()
    text, n_path = re.subn(r"'data/clicks\.csv'", repr(path), text)
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

    df = spark.read.schema(_schema()).option("header", True).csv(path)
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

    df = spark.read.schema(_schema()).option("header", True).csv(path)
    out = (df.select("user_id", "article_id", F.lower("action").alias("action"), "ts")
           .where("user_id is not null and article_id is not null and action = 'appclick'")
           .groupBy("user_id", F.window("ts", "5 seconds"))
           .agg(F.count("*").alias("clicks"),
                F.countDistinct("article_id").alias("articles"))
           .select("user_id", F.unix_millis("window.start"), F.unix_millis("window.end"),
                   "clicks", "articles"))
    return [tuple(r) for r in out.collect()]


def _schema() -> Any:
    from pyspark.sql import types as T

    return T.StructType([T.StructField(n, T.StringType()) for n in
                         ("user_id", "article_id", "action")] +
                        [T.StructField("ts", T.TimestampType())])


def _tree_cpu() -> float | None:
    """CPU seconds (user + system) of this process and all its descendants, the exited ones
    included (their time is in their parents' ``cutime``/``cstime``); None off Linux."""
    if not os.path.isdir("/proc/self/task"):
        return None
    tick = os.sysconf("SC_CLK_TCK")
    children: dict[int, list[int]] = collections.defaultdict(list)
    times: dict[int, int] = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat") as fh:
                stat = fh.read()
        except OSError:  # exited meanwhile
            continue
        fields = stat[stat.rindex(")") + 2:].split()
        pid = int(name)
        children[int(fields[1])].append(pid)  # ppid
        times[pid] = sum(int(x) for x in fields[11:15])  # utime stime cutime cstime
    total, todo = 0, [os.getpid()]
    while todo:
        pid = todo.pop()
        total += times.get(pid, 0)
        todo.extend(children.get(pid, ()))
    return total / tick


def timed(fn: Any) -> tuple[float, float | None, Any]:
    """(wall seconds, CPU seconds of the process tree or None, result)."""
    c = _tree_cpu()
    t = time.perf_counter()
    r = fn()
    wall = time.perf_counter() - t
    c2 = _tree_cpu()
    return wall, None if c is None or c2 is None else c2 - c, r


def _cpu(c: float | None) -> str:
    return "" if c is None else f"   cpu {c:7.2f} s"


def _same(a: list[Any], b: list[Any]) -> bool:
    return collections.Counter(map(tuple, a)) == collections.Counter(map(tuple, b))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--parallelism", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--mode", choices=["batch", "streaming"], default="batch")
    ap.add_argument("--repeat", type=int, default=1)
    args = ap.parse_args()
    spark = get_spark()
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "clicks.csv")
        generate(path, args.rows)
        jg = flowc_job(path, args.parallelism, args.mode)
        # Warm up once, every contender (Python workers and their imports, the JVM's JIT,
        # the DataFrame's generated code): the runs below measure steady state alike.
        run_job_graph(jg)
        rdd_job(spark, path, args.parallelism)
        dataframe_job(spark, path)
        print(f"rows={args.rows} parallelism={args.parallelism} mode={args.mode}")
        for _ in range(args.repeat):
            t_flowc, c_flowc, res = timed(lambda: run_job_graph(jg))
            t_rdd, c_rdd, rdd_rows = timed(lambda: rdd_job(spark, path, args.parallelism))
            t_df, c_df, df_rows = timed(lambda: dataframe_job(spark, path))
            flowc_rows = res["result"]
            print(f"  flowc     {t_flowc:7.2f} s{_cpu(c_flowc)}   ({len(flowc_rows)} windows)")
            print(f"  rdd       {t_rdd:7.2f} s{_cpu(c_rdd)}   ({len(rdd_rows)} windows)")
            print(f"  dataframe {t_df:7.2f} s{_cpu(c_df)}   ({len(df_rows)} windows)")
            print(f"  flowc/RDD = {t_flowc / t_rdd:.2f}   "
                  f"flowc/DataFrame = {t_flowc / t_df:.2f}   (wall time)")
            if c_flowc and c_rdd and c_df:
                print(f"  flowc/RDD = {c_flowc / c_rdd:.2f}   "
                      f"flowc/DataFrame = {c_flowc / c_df:.2f}   (CPU seconds)")
            if args.mode == "batch":
                ok = _same(flowc_rows, rdd_rows) and _same(flowc_rows, df_rows)
                print(f"  results identical: {'yes' if ok else 'NO'}")
                if not ok:
                    sys.exit("benchmark: the three results differ")
            else:
                print(f"  late records dropped by flowc: {res.late_records_dropped}")
            print(res.summary())


if __name__ == "__main__":
    main()
