"""The declarative join job of ``benchmarks/executor.py --job join`` three ways.

- flowc: ``benchmarks/jobs/attribution.flow`` (clicks filtered on ``lower(action)``,
  joined with the impressions of the same user and article in 10 s tumbling windows, then
  per user a sliding 30 s window every 10 s: ``count(*)`` and ``avg(position)``), BATCH;
- DataFrame: the same as a PySpark DataFrame program (an equi-join on user, article and
  the 10 s window start; the join window's ``end - 1`` as the pair's time, exploded into
  its three sliding windows, grouped);
- RDD: the same hand-written on RDDs (``join`` then ``reduceByKey``).

Each returns rows ``(user, window start, window end, clicks, avg position)``.
"""

from __future__ import annotations

import datetime as dt
import os
import random
import re
import sys
from pathlib import Path
from typing import Any

from flowc.operators import CollectSink
from flowc.parser import compile_source

JOB = Path(__file__).resolve().parent / "jobs" / "attribution.flow"
BASE = 1_704_067_200_000  # 2024-01-01T00:00:00Z
JOIN = 10_000  # the join's tumbling window
SIZE, SLIDE = 30_000, 10_000  # the sliding window


def generate(directory: str, rows: int, seed: int = 11) -> tuple[str, str]:
    """``rows`` impressions (5000 users, 200 articles, positions 1-10, 10 ms apart, up to
    1.5 s out of order) and about 0.4 clicks per impression: 30% of the impressions are
    clicked 0-4 s later (half of them ``AppClick`` in some case, half ``view``), plus
    unrelated clicks. ISO timestamps, no nulls (a null join key fails a flowc job)."""
    rnd = random.Random(seed)
    # not clicks-<rows>.csv: benchmarks/executor.py generates the clicks job's input under
    # that name in the same directory, and its STREAMING runs came after this overwrote it
    clicks = os.path.join(directory, f"join-clicks-{rows}.csv")
    impressions = os.path.join(directory, f"join-impressions-{rows}.csv")

    def stamp(ms: int) -> str:
        t = dt.datetime.fromtimestamp(ms / 1000, dt.timezone.utc)
        return t.strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"
    actions = ["AppClick", "appclick", "APPCLICK", "view"]
    with open(impressions, "w") as imp, open(clicks, "w") as clk:
        imp.write("user_id,article_id,position,ts\n")
        clk.write("user_id,article_id,action,ts\n")
        for i in range(rows):
            user, article = f"u{rnd.randrange(5000)}", f"a{rnd.randrange(200)}"
            ts = BASE + i * 10 + rnd.randrange(-1500, 1500)
            imp.write(f"{user},{article},{rnd.randrange(1, 11)},{stamp(ts)}\n")
            if rnd.random() < 0.3:
                clk.write(f"{user},{article},{rnd.choice(actions)},"
                          f"{stamp(ts + rnd.randrange(0, 4000))}\n")
            if rnd.random() < 0.1:
                clk.write(f"u{rnd.randrange(5000)},a{rnd.randrange(200)},"
                          f"{rnd.choice(actions)},{stamp(ts)}\n")
    return clicks, impressions


def flowc_job(clicks: str, impressions: str, parallelism: int) -> Any:
    """The job file with its data paths pointed at the inputs and its print sink replaced
    by a collect sink, BATCH."""
    text = JOB.read_text()
    text, n_clicks = re.subn(r"'data/clicks\.csv'", repr(clicks), text)
    text, n_imps = re.subn(r"'data/impressions\.csv'", repr(impressions), text)
    text, n_let = re.subn(r"^clicks\n", "let result = clicks\n", text, flags=re.M)
    text, n_sink = re.subn(r"\n\s*\|\s*print;\s*$", ";\n", text)
    if (n_clicks, n_imps, n_let, n_sink) != (1, 1, 1, 1):
        sys.exit(f"benchmark: {JOB} no longer has the expected shape")
    script = compile_source(text, str(JOB),
                            options={"parallelism": str(parallelism), "mode": "batch"})
    script.streams["result"].stream.sink_to(CollectSink("result"))
    return script.env.get_job_graph()


def _read(spark: Any, path: str, third: str, third_type: Any) -> Any:
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    schema = T.StructType([T.StructField("user_id", T.StringType()),
                           T.StructField("article_id", T.StringType()),
                           T.StructField(third, third_type),
                           T.StructField("ts", T.TimestampType())])
    df = spark.read.schema(schema).option("header", True).csv(path)
    return df.select("user_id", "article_id", third, F.unix_millis("ts").alias("t"))


def _inputs(spark: Any, clicks: str, impressions: str) -> tuple[Any, Any]:
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    c = _read(spark, clicks, "action", T.StringType())
    c = c.where(F.lower("action") == "appclick")
    i = _read(spark, impressions, "position", T.LongType())
    return c, i


def dataframe_job(spark: Any, clicks: str, impressions: str) -> list[tuple[Any, ...]]:
    from pyspark.sql import functions as F

    c, i = _inputs(spark, clicks, impressions)
    c = c.select("user_id", "article_id", (F.col("t") - F.pmod("t", JOIN)).alias("jw"))
    i = i.select("user_id", "article_id", "position",
                 (F.col("t") - F.pmod("t", JOIN)).alias("jw"))
    t = F.col("jw") + (JOIN - 1)  # the join result's time: its window's end - 1
    last = t - F.pmod(t, SLIDE)
    pairs = c.join(i, ["user_id", "article_id", "jw"]).select(
        "user_id", "position",
        F.explode(F.array(*[last - k * SLIDE for k in range(SIZE // SLIDE)])).alias("ws"))
    out = pairs.groupBy("user_id", "ws").agg(
        F.count("*").alias("clicks"), F.avg("position").alias("avg_position")).select(
        "user_id", "ws", (F.col("ws") + SIZE).alias("we"), "clicks", "avg_position")
    return [tuple(r) for r in out.collect()]


def rdd_job(spark: Any, clicks: str, impressions: str,
            parallelism: int) -> list[tuple[Any, ...]]:
    c, i = _inputs(spark, clicks, impressions)

    def click_keys(it: Any) -> Any:
        for user, article, _, t in it:
            yield (user, article, t - t % JOIN), None

    def impression_keys(it: Any) -> Any:
        for user, article, position, t in it:
            yield (user, article, t - t % JOIN), position

    def windows(kv: Any) -> Any:
        (user, _, jw), (_, position) = kv
        t = jw + JOIN - 1
        last = t - t % SLIDE
        for k in range(SIZE // SLIDE):
            yield (user, last - k * SLIDE), (1, position)

    pairs = c.rdd.mapPartitions(click_keys).join(
        i.rdd.mapPartitions(impression_keys), parallelism)
    return pairs.flatMap(windows).reduceByKey(
        lambda a, b: (a[0] + b[0], a[1] + b[1]), parallelism).map(
        lambda kv: (kv[0][0], kv[0][1], kv[0][1] + SIZE, kv[1][0], kv[1][1] / kv[1][0])
    ).collect()
