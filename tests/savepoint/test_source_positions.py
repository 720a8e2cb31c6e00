"""Where a restored job's unbounded sources start: a Kafka source at the offsets the
savepoint recorded (Spark's offsets log of the savepoint's checkpoint, per topic and
partition, become the new query's ``startingOffsets``; no broker here: the mapping is
tested), datagen at the row after the savepoint's last (a Spark run against an
uninterrupted one), a socket nowhere (it has no position: the restore says so)."""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

import pytest

from flowc.errors import ConfigError
from flowc.executor.streaming.commit import Checkpoint
from flowc.executor.streaming.sources import kafka_options, kafka_resume
from flowc.operators import KafkaSource, RateDatagenSource
from flowc.parser import compile_file, compile_source
from flowc.savepoint.metadata import METADATA_FILE, metadata_from_plan
from flowc.savepoint.restore import restore_savepoint
from flowc.savepoint.take import kafka_offsets, take_savepoint
from flowc.sql import compile_sql
from streaming.harness import DATAGEN_TRIGGER_MS, run_feeding

KAFKA = """CREATE TABLE clicks (user_id STRING, n INT) WITH (
  'connector' = 'kafka', 'properties.bootstrap.servers' = 'b1:9092',
  'topic' = 'orders', 'format' = 'csv', 'scan.startup.mode' = 'latest-offset');
CREATE TABLE out (user_id STRING, n INT) WITH ('connector' = 'print');
INSERT INTO out SELECT user_id, n FROM clicks WHERE n > 1;
"""
OFFSETS_LOG = ["v1", '{"batchWatermarkMs":0,"batchTimestampMs":1700000000000,"conf":{}}',
               '{"logOffset":3}', '{"orders":{"1":17,"0":42}}']


def _offsets_log(root: Path, batch: int, lines: list[str]) -> Checkpoint:
    ckpt = Checkpoint(str(root))
    (root / "spark" / "offsets").mkdir(parents=True)
    (root / "spark" / "offsets" / str(batch)).write_text("\n".join(lines) + "\n")
    return ckpt


def test_the_savepoint_takes_kafka_offsets_from_sparks_offsets_log(tmp_path: Path) -> None:
    ckpt = _offsets_log(tmp_path, 5, OFFSETS_LOG)
    # the query's second source (after a monitored directory's log offset) is the Kafka one
    assert kafka_offsets(ckpt, 5, 1) == {"orders": {"0": 42, "1": 17}}
    with pytest.raises(ConfigError, match="not Kafka offsets"):
        kafka_offsets(ckpt, 5, 0)
    with pytest.raises(ConfigError, match="has no offsets of source 2"):
        kafka_offsets(ckpt, 5, 2)


def test_saved_offsets_become_sparks_starting_offsets() -> None:
    graph = compile_sql(KAFKA, "job.sql").env.get_stream_graph()
    spec = graph.nodes[graph.source_ids[0]].operator
    assert isinstance(spec, KafkaSource)
    assert kafka_options(spec)["startingOffsets"] == "latest"
    resumed = kafka_resume(spec, {"orders": {"1": 17, "0": 42, "10": 5}})
    options = kafka_options(resumed)
    # Spark's JSON: topic -> partition -> the next offset to read (what the log holds)
    assert json.loads(options["startingOffsets"]) == {"orders": {"0": 42, "1": 17, "10": 5}}
    assert options["subscribe"] == "orders" and "startingTimestamp" not in options


def _savepoint(tmp_path: Path, graph: Any, origin: str, source_doc: dict[str, Any]) -> Path:
    """A savepoint of ``graph`` by hand: its metadata and its one source's position."""
    sp = tmp_path / "sp"
    (sp / "sources").mkdir(parents=True)
    meta = metadata_from_plan(graph, origin)
    source_ids = [o.id for ev in graph.vertices for o in ev.job_vertex.operators
                  if o.node_id in graph.job_graph.stream_graph.source_ids]
    assert len(source_ids) == 1 and source_ids[0] in {o.id for o in meta.operators}
    (sp / "sources" / f"{source_ids[0]}.json").write_text(json.dumps(source_doc))
    (sp / METADATA_FILE).write_text(meta.to_json())
    return sp


def test_a_restore_hands_the_savepoints_kafka_offsets_to_the_new_query(tmp_path: Path) -> None:
    graph = compile_sql(KAFKA, "job.sql").env.get_execution_graph()
    offsets = {"orders": {"0": 42, "1": 17}}
    sp = _savepoint(tmp_path, graph, "job.sql", {"units_read": 59, "kind": "KafkaSource",
                                                  "done": [], "offsets": offsets})
    restored = restore_savepoint(str(sp), graph, "job.sql", str(tmp_path / "ck"), False)
    assert restored is not None and restored.files_read == 59
    ckpt = Checkpoint(str(tmp_path / "ck"))
    assert ckpt.kafka_offsets() == [offsets]  # what run_streaming passes to kafka_resume
    # a savepoint of the restored checkpoint before its first batch keeps them
    assert kafka_offsets(ckpt, -1, 0) == offsets


def test_a_restored_socket_source_says_it_has_no_position(tmp_path: Path) -> None:
    text = "source lines (line string) from socket 'localhost:9999';\nlines | print;\n"
    graph = compile_source(text, "job.flow").env.get_execution_graph()
    sp = _savepoint(tmp_path, graph, "job.flow", {"units_read": 3, "kind": "SocketSource",
                                                   "done": []})
    restored = restore_savepoint(str(sp), graph, "job.flow", str(tmp_path / "ck"), False)
    assert restored is not None
    assert "the socket source localhost:9999 has no position to restore" in \
        restored.summary(str(sp))


DATAGEN = """set parallelism = 2;
source gen (n int, v int) from datagen rows 40 every 1s (n = index, v = index * 7)
  with (uid = 'gen');
gen
  | map n, v, n % 5 as k
  | write csv '{out}' with (uid = 'out');
"""


def _rows(d: Path) -> list[tuple[int, int, int]]:
    out = []
    for f in sorted(d.glob("part-*.csv")):
        with open(f, newline="") as fh:
            r = csv.reader(fh)
            next(r)
            out.extend((int(a), int(b), int(c)) for a, b, c in r)
    return out


def _run_batches(job_file: str, ckpt: Path, n: int) -> None:
    """Run until ``n`` micro-batches completed on ``ckpt``."""
    graph = compile_file(job_file).env.get_job_graph()
    run_feeding(graph, ckpt, lambda progress: progress.batch(n - 1),
                trigger_ms=DATAGEN_TRIGGER_MS)


@pytest.mark.spark
def test_datagen_resumes_after_the_savepoints_last_row(tmp_path: Path) -> None:
    old = tmp_path / "old.flow"
    old.write_text(DATAGEN.format(out=tmp_path / "out1"))
    _run_batches(str(old), tmp_path / "ck1", 3)
    taken = take_savepoint(str(tmp_path / "ck1"), compile_file(str(old)).env
                           .get_execution_graph(), str(old), str(tmp_path / "sp"))
    first = _rows(tmp_path / "out1")
    assert taken.files_read == len(first) >= 3 * 4
    new = tmp_path / "new.flow"
    new.write_text(DATAGEN.format(out=tmp_path / "out2"))
    restored = restore_savepoint(str(tmp_path / "sp"), compile_file(str(new)).env
                                 .get_execution_graph(), str(new), str(tmp_path / "ck2"),
                                 False)
    assert restored is not None and restored.files_read == len(first)
    _run_batches(str(new), tmp_path / "ck2", 2)
    second = _rows(tmp_path / "out2")
    assert second and min(r[0] for r in second) == len(first)  # the row after the last
    # both runs together: an uninterrupted run's rows, each once
    graph = compile_file(str(new)).env.get_stream_graph()
    spec = graph.nodes[graph.source_ids[0]].operator
    assert isinstance(spec, RateDatagenSource)
    total = len(first) + len(second)
    assert sorted(first + second) == [(*spec.generator(i), i % 5) for i in range(total)]
