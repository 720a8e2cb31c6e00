"""The product.md "clicks" job three ways on one SparkSession: flowc (Python API), the same
job hand-written on PySpark RDDs (one mapPartitions + reduceByKey) and as a DataFrame
program. Prints wall times and the ratios flowc/RDD and flowc/DataFrame.

    python benchmarks/executor.py [--rows N] [--parallelism P] [--mode batch|streaming]
"""

from __future__ import annotations

import argparse
import os
import random
import tempfile
import time
from typing import Any

from flowc.datastream import (
    AggregateFunction,
    DiscardingSink,
    ProcessWindowFunction,
    RuntimeExecutionMode,
    StreamExecutionEnvironment,
    TumblingEventTimeWindows,
    WatermarkStrategy,
)
from flowc.executor import get_spark, run_job_graph
from flowc.operators import CodeFn, FileSource

SCHEMA = (("user_id", "string"), ("article_id", "string"), ("action", "string"),
          ("ts", "timestamp"))
BASE = 1_704_067_200_000  # 2024-01-01T00:00:00Z


def generate(path: str, rows: int, seed: int = 7) -> None:
    import datetime as dt

    rnd = random.Random(seed)
    actions = ["AppClick", "appclick", "view", "APPCLICK", "scroll"]
    with open(path, "w") as fh:
        for i in range(rows):
            user = "" if rnd.random() < 0.01 else f"u{rnd.randrange(5000)}"
            ts = BASE + i * 10 + rnd.randrange(-1500, 1500)
            stamp = dt.datetime.fromtimestamp(ts / 1000, dt.timezone.utc)
            fh.write(f"{user},a{rnd.randrange(500)},{rnd.choice(actions)},"
                     f"{stamp.strftime('%Y-%m-%d %H:%M:%S.%f')[:-3]}\n")


class CountAndDistinct(AggregateFunction):
    def create_accumulator(self) -> Any:
        return [0, set()]

    def add(self, value: Any, acc: Any) -> Any:
        acc[0] += 1
        acc[1].add(value[1])
        return acc

    def get_result(self, acc: Any) -> Any:
        return (acc[0], len(acc[1]))

    def merge(self, a: Any, b: Any) -> Any:
        a[0] += b[0]
        a[1] |= b[1]
        return a


class WithKey(ProcessWindowFunction):
    def process(self, key: Any, context: Any, elements: Any) -> Any:
        for clicks, articles in elements:
            yield (key, context.window().start, clicks, articles)


def _lower(r: Any) -> Any:
    return (r[0], r[1], r[2].lower() if r[2] is not None else None, r[3])


def _keep(r: Any) -> bool:
    return r[0] is not None and r[1] is not None and r[2] == "appclick"


def flowc_job(path: str, parallelism: int, batch: bool) -> Any:
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(parallelism)
    if batch:
        env.set_runtime_mode(RuntimeExecutionMode.BATCH)
    strategy = WatermarkStrategy.for_bounded_out_of_orderness(2000) \
        .with_timestamp_assigner(lambda r, _: r[3])
    clicks = env.from_source(FileSource(path, "csv", SCHEMA), None, "clicks")
    (clicks
     .map(CodeFn(_lower, "(r[0], r[1], r[2].lower() if r[2] is not None else None, r[3])",
                 ("r",)))
     .filter(CodeFn(_keep, "r[0] is not None and r[1] is not None and r[2] == 'appclick'",
                    ("r",)))
     .assign_timestamps_and_watermarks(strategy)
     .key_by(lambda r: r[0])
     .window(TumblingEventTimeWindows.of(5000))
     .aggregate(CountAndDistinct(), WithKey())
     .sink_to(DiscardingSink()))
    return env.get_job_graph()


def rdd_job(spark: Any, path: str, parallelism: int) -> int:
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    schema = T.StructType([T.StructField(n, {"string": T.StringType(),
                                             "timestamp": T.TimestampType()}[t])
                           for n, t in SCHEMA])
    df = spark.read.schema(schema).csv(path)
    rows = df.select("user_id", "article_id", "action", F.unix_millis("ts")).rdd

    def per_partition(it: Any) -> Any:
        for user, article, action, ts in it:
            if user is None or article is None or action is None:
                continue
            if action.lower() != "appclick":
                continue
            yield (user, ts - ts % 5000), (1, {article})

    def merge(a: Any, b: Any) -> Any:
        return (a[0] + b[0], a[1] | b[1])

    return rows.mapPartitions(per_partition).reduceByKey(merge, parallelism) \
        .map(lambda kv: (kv[0][0], kv[0][1], kv[1][0], len(kv[1][1]))).count()


def dataframe_job(spark: Any, path: str) -> int:
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    schema = T.StructType([T.StructField(n, {"string": T.StringType(),
                                             "timestamp": T.TimestampType()}[t])
                           for n, t in SCHEMA])
    df = spark.read.schema(schema).csv(path)
    out = (df.select("user_id", "article_id", F.lower("action").alias("action"), "ts")
           .where("user_id is not null and article_id is not null and action = 'appclick'")
           .groupBy("user_id", F.window("ts", "5 seconds"))
           .agg(F.count("*").alias("clicks"),
                F.countDistinct("article_id").alias("articles")))
    return out.count()


def timed(fn: Any) -> tuple[float, Any]:
    t = time.perf_counter()
    r = fn()
    return time.perf_counter() - t, r


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--parallelism", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--mode", choices=["batch", "streaming"], default="batch")
    ap.add_argument("--repeat", type=int, default=1)
    args = ap.parse_args()
    spark = get_spark()
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "clicks.csv")
        generate(path, args.rows)
        jg = flowc_job(path, args.parallelism, args.mode == "batch")
        # Warm up the Python workers and the JVM once (both contenders benefit alike).
        rdd_job(spark, path, args.parallelism)
        for _ in range(args.repeat):
            t_flowc, res = timed(lambda: run_job_graph(jg))
            t_rdd, n_rdd = timed(lambda: rdd_job(spark, path, args.parallelism))
            t_df, n_df = timed(lambda: dataframe_job(spark, path))
            print(f"rows={args.rows} parallelism={args.parallelism} mode={args.mode}")
            print(f"  flowc     {t_flowc:7.2f} s")
            print(f"  rdd       {t_rdd:7.2f} s   (groups: {n_rdd})")
            print(f"  dataframe {t_df:7.2f} s   (groups: {n_df})")
            print(f"  flowc/RDD = {t_flowc / t_rdd:.2f}   flowc/DataFrame = {t_flowc / t_df:.2f}")
            print(res.summary())


if __name__ == "__main__":
    main()
