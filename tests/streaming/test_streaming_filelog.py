"""A micro-batch's files read from the query's checkpoint (``streaming/filelog.py``)
instead of a Spark job: the same files a collect of the batch gives, on a real query with
empty files and a compaction of the source's log; None where the logs do not say."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

import pytest

from flowc.executor.streaming.filelog import batch_files


def _offsets(spark_dir: Path, batch: int, *offsets: Any) -> None:
    d = spark_dir / "offsets"
    d.mkdir(parents=True, exist_ok=True)
    lines = ["v1", json.dumps({"batchWatermarkMs": 0, "batchTimestampMs": 1})]
    lines += [o if isinstance(o, str) else json.dumps({"logOffset": o}) for o in offsets]
    (d / str(batch)).write_text("\n".join(lines))


def _log(spark_dir: Path, name: str, entries: list[tuple[str, int]], version: str = "v1",
         source: int = 0) -> None:
    d = spark_dir / "sources" / str(source)
    d.mkdir(parents=True, exist_ok=True)
    (d / name).write_text("\n".join([version] + [json.dumps(
        {"path": p, "timestamp": 1, "batchId": b}) for p, b in entries]))


def test_the_batch_files_between_two_log_offsets(tmp_path: Path) -> None:
    spark = tmp_path / "spark"
    data = tmp_path / "in"
    data.mkdir()
    for name in ("a", "b", "c", "d", "e"):
        (data / name).write_text("x\n")
    (data / "empty").write_text("")
    uri = {n: f"file://{data / n}" for n in ("a", "b", "c", "d", "e", "empty")}
    _log(spark, "0", [(uri["a"], 0)])
    _log(spark, "1.compact", [(uri["a"], 0), (uri["b"], 1), (uri["empty"], 1)])
    _log(spark, "2", [(uri["c"], 2), (uri["d"], 2)])
    _log(spark, "3", [(uri["e"], 3)])
    _offsets(spark, 0, 0)
    _offsets(spark, 1, 2)  # the query's batch 1 read the source's batches 1 and 2
    _offsets(spark, 2, 3)
    assert batch_files(str(spark), 0) == [uri["a"]]
    assert batch_files(str(spark), 1) == [uri["b"], uri["c"], uri["d"]]  # not the empty one
    assert batch_files(str(spark), 2) == [uri["e"]]
    os.remove(spark / "sources" / "0" / "0")  # compacted and cleaned up: in 1.compact
    assert batch_files(str(spark), 0) == [uri["a"]]


def test_none_where_the_logs_do_not_say(tmp_path: Path) -> None:
    spark = tmp_path / "spark"
    assert batch_files(str(spark), 0) is None  # no offsets log
    _offsets(spark, 0, "-")
    assert batch_files(str(spark), 0) is None  # the source has no offset
    _offsets(spark, 0, 0)
    assert batch_files(str(spark), 0) is None  # no source log
    _log(spark, "0", [("file:///x", 0)], version="v2")
    assert batch_files(str(spark), 0) is None  # another log version
    _log(spark, "0", [("file:///nowhere/x", 0)])
    assert batch_files(str(spark), 0) == ["file:///nowhere/x"]  # the task will say
    assert batch_files(str(spark), 1) is None  # no such batch
    assert batch_files(str(spark), 0, source=1) is None


@pytest.mark.spark
def test_a_real_query_s_batches_have_the_files_a_collect_gives(tmp_path: Path,
                                                               spark: Any) -> None:
    from pyspark.sql import functions as F  # noqa: N812

    from flowc.executor.runtime import files

    src = tmp_path / "in"
    src.mkdir()
    ck = tmp_path / "ck"
    seen: list[tuple[list[str], list[str] | None]] = []
    errors: list[BaseException] = []

    def each(df: Any, batch: int) -> None:
        try:
            collected = sorted(files.local_path(r.path) or r.path for r in df.collect())
            logged = batch_files(str(ck), batch)
            seen.append((collected, None if logged is None else
                         sorted(files.local_path(x) or x for x in logged)))
        except BaseException as e:  # noqa: BLE001
            errors.append(e)

    # a log compaction every 3 of the source's batches
    spark.conf.set("spark.sql.streaming.fileSource.log.compactInterval", "3")
    try:
        df = spark.readStream.format("text").option("wholetext", "true") \
            .option("maxFileAge", "36500d").load(str(src)) \
            .select(F.col("_metadata.file_path").alias("path"))
        query = df.writeStream.foreachBatch(each).option("checkpointLocation", str(ck)) \
            .trigger(processingTime="100 milliseconds").start()
        try:
            for k in range(8):
                for j in range(1 + k % 3):
                    tmp = tmp_path / f".f{k}-{j}.csv"
                    tmp.write_text("" if (k + j) % 4 == 3 else f"x\n{k}\n")
                    os.replace(tmp, src / f"f{k}-{j}.csv")
                deadline = time.monotonic() + 120
                while sum(len(c) for c, _ in seen) < sum(
                        1 for f in src.iterdir() if f.stat().st_size) and \
                        time.monotonic() < deadline:
                    time.sleep(0.05)
        finally:
            query.stop()
    finally:
        spark.conf.unset("spark.sql.streaming.fileSource.log.compactInterval")
    if errors:
        raise errors[0]
    assert len(seen) >= 4
    for collected, logged in seen:
        assert logged == collected
    assert any(f.name.endswith(".compact") for f in (ck / "sources" / "0").iterdir())
