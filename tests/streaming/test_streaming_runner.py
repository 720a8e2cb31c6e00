"""The streaming executor in this process: results over many micro-batches equal the
reference executor's STREAMING run when nothing is late, a restart on the same checkpoint
continues the keyed state, print prints per micro-batch, and what it cannot run yet is a
positioned error before Spark starts."""

from __future__ import annotations

import csv
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from flowc.errors import ConfigError, ExecutionError, UnsupportedError
from flowc.executor import run_reference
from flowc.executor.streaming.commit import Checkpoint
from flowc.executor.streaming.runner import StreamStats, parse_trigger, run_streaming
from flowc.parser import compile_file, compile_source

from .harness import Progress, run_feeding

JOB = """set parallelism = 2;
{mode}
source clicks (user_id string, action string, ts timestamp)
  from csv 'in/'{monitor}
  watermark ts - 2s
  dead letter 'bad/'
  with (parallelism = {sp});
let kept = clicks | filter action <> 'flush';
kept
  | key by user_id
  | window tumbling 5s
  | aggregate count(*) as n, max(ts) as last
  | write csv '{out}';
kept | filter action = 'buy' | print 'buys';
kept | blackhole;
"""
SENTINEL = 1_000_000_000_000


def _file(d: Path, k: int) -> None:
    rows = ["user_id,action,ts"]
    for i in range(12):
        ts = k * 3000 + (i * 397) % 2500
        rows.append(f"u{(i * 7 + k) % 4},{['click', 'buy', 'view'][(i + k) % 3]},{ts}")
    if k == 1:
        rows.append("u9,click,not-a-time")  # a bad row: to the dead letters
    tmp = d / f".f{k:03d}.csv"
    tmp.write_text("\n".join(rows) + "\n")
    tmp.rename(d / f"f{k:03d}.csv")


def _sentinel(d: Path, n: int = 1) -> None:
    """``n`` files of one far-future record (one per source subtask: every subtask's
    watermark must pass the last window)."""
    for i in range(n):
        (d / f".zz{i}.csv").write_text(f"user_id,action,ts\nnobody,flush,{SENTINEL}\n")
    for i in range(n):
        (d / f".zz{i}.csv").rename(d / f"zz{i}.csv")


def _rows(d: Path) -> Counter[tuple[str, ...]]:
    out: Counter[tuple[str, ...]] = Counter()
    for f in sorted(d.glob("part-*.csv")):
        with open(f, newline="") as fh:
            r = csv.reader(fh)
            next(r)
            out.update(tuple(row) for row in r)
    return out


def _run(work: Path, ckpt: Path, feed: Callable[[Callable[[int], int]], None]) -> StreamStats:
    """Run the job while ``feed(wait_files)`` lands files (``wait_files(n)`` waits until
    completed micro-batches of this checkpoint have read n files); stop when it returns."""
    jg = compile_file(str(work / "job.flow")).env.get_job_graph()
    return run_feeding(jg, ckpt, lambda progress: feed(progress.files))


def _expected(work: Path, source_parallelism: int = 1) -> tuple[Counter[tuple[str, ...]], Any]:
    (work / "ref.flow").write_text(JOB.format(mode="", monitor="", out="expected/",
                                              sp=source_parallelism))
    result = run_reference(compile_file(str(work / "ref.flow")).env.get_job_graph())
    return _rows(work / "expected"), result


def _setup(tmp_path: Path, source_parallelism: int = 1) -> Path:
    (tmp_path / "in").mkdir()
    (tmp_path / "job.flow").write_text(JOB.format(mode="", monitor=" monitor every 100ms",
                                                  out="out/", sp=source_parallelism))
    return tmp_path


@pytest.mark.spark
def test_many_micro_batches_and_a_restart_equal_the_reference_streaming_run(
        spark: Any, tmp_path: Path) -> None:
    work = _setup(tmp_path)
    ckpt = work / "ck"

    def first(wait: Callable[[int], None]) -> None:
        for k in range(3):
            _file(work / "in", k)
            wait(k + 1)

    s1 = _run(work, ckpt, first)
    assert s1.batches == 3 and s1.rows == 3 * 12  # the bad row is not a record
    after_first = _rows(work / "out")

    def second(wait: Callable[[int], None]) -> None:
        for k in range(3, 6):
            _file(work / "in", k)
            wait(k + 1)
        _sentinel(work / "in")
        wait(7)

    # the snapshots: one entry per operator, under Flink's operator id (as a savepoint)
    import pickle

    jg = compile_file(str(work / "job.flow")).env.get_job_graph()
    last = Checkpoint(str(ckpt)).done_batches()[-1]
    windows = [(v, o) for v in jg.vertices_sorted() for o in v.operators
               if type(jg.stream_graph.nodes[o.node_id].operator).__name__ == "WindowOp"]
    assert len(windows) == 1
    v, window = windows[0]
    for idx in range(2):
        snap = pickle.loads((ckpt / "flowc" / "state" / str(last) /
                             f"{v.id}-{idx}.pkl").read_bytes())
        assert {f"op_{o.id}" for o in v.operators} >= set(snap) - {"channels"}
        assert {"state", "timers", "watermark"} <= set(snap[f"op_{window.id}"])
    s2 = _run(work, ckpt, second)  # the same checkpoint: state and offsets continue
    assert s2.batches == 4 and s2.rows == 3 * 12 + 1  # the first run's files are not reread
    got = _rows(work / "out")
    expected, reference = _expected(work)
    assert got == expected
    assert after_first and after_first != got  # windows fired in both runs
    # print: per micro-batch (subtask, then arrival order within the batch); the reference
    # prints per subtask over its one run: the same lines, and per subtask the same order
    printed = s1.printed + s2.printed
    assert sorted(printed) == sorted(reference.printed) and len(printed) == 6 * 4
    for sub in ("buys:1>", "buys:2>"):
        assert [x for x in printed if x.startswith(sub)] == \
            [x for x in reference.printed if x.startswith(sub)]
    # the bad row went to the dead letters, once
    bad = [line for f in sorted((work / "bad").glob("part-*")) for line in
           f.read_text().splitlines()]
    assert len(bad) == 1 and "not-a-time" in bad[0]


@pytest.mark.spark
def test_files_go_round_robin_over_batches_so_no_source_subtask_stays_behind(
        spark: Any, tmp_path: Path) -> None:
    """Two source subtasks, one file per micro-batch: the job's n-th file goes to subtask
    n % 2, so both subtasks' watermarks advance and windows fire before any end."""
    work = _setup(tmp_path, 2)
    fired_before_end: list[int] = []

    def feed(wait: Callable[[int], None]) -> None:
        for k in range(4):
            _file(work / "in", k)
            wait(k + 1)
        fired_before_end.append(sum(_rows(work / "out").values()))
        _sentinel(work / "in", 2)
        wait(6)

    _run(work, work / "ck", feed)
    assert fired_before_end[0] > 0
    expected, _ = _expected(work, 2)  # the reference reads file k with subtask k % 2 too
    assert _rows(work / "out") == expected


@pytest.mark.spark
def test_a_record_behind_a_batchs_watermark_is_late_unlike_in_one_bounded_run(
        spark: Any, tmp_path: Path) -> None:
    """The documented difference: watermarks become visible per micro-batch. A record that
    arrives after a batch moved the watermark past its window is dropped (and counted);
    the reference executor reads all files in one run, where only the final watermark
    comes, so it counts the record."""
    work = _setup(tmp_path)

    def feed(wait: Callable[[int], None]) -> None:
        for k in range(3):
            _file(work / "in", k)
            wait(k + 1)
        (work / "in" / "late.csv").write_text("user_id,action,ts\nu1,click,100\n")
        wait(4)
        _sentinel(work / "in")
        wait(5)

    stats = _run(work, work / "ck", feed)
    assert stats.late_records_dropped == 1
    got = _rows(work / "out")
    expected, _ = _expected(work)
    diff = {r: n for r, n in (expected - got).items()}
    assert len(diff) == 1 and (got - expected)
    (row,) = diff
    assert row[0] == "u1"  # the late record's window, counted one higher by the reference


def test_unsupported_jobs_fail_before_spark_with_the_operator_named() -> None:
    text = """source a (x int, ts timestamp) from csv 'in/' monitor every 1s;
source b (x int, ts timestamp) from csv 'hdfs://nn/in2/';
a | union b | print;
"""
    jg = compile_source(text, "two.flow").env.get_job_graph()
    with pytest.raises(UnsupportedError, match="the streaming executor cannot run") as info:
        run_streaming(jg)
    assert info.value.span is not None and info.value.span.file == "two.flow"


def test_a_missing_monitored_directory_is_a_user_error(tmp_path: Path) -> None:
    text = f"source a (x int) from csv '{tmp_path}/nope/' monitor every 1s;\na | print;\n"
    jg = compile_source(text, "job.flow").env.get_job_graph()
    with pytest.raises(Exception, match="does not exist"):
        run_streaming(jg)


def test_a_monitored_file_instead_of_a_directory_is_named_as_such(tmp_path: Path) -> None:
    # was "the monitored directory .../a.csv does not exist"
    (tmp_path / "a.csv").write_text("1\n")
    text = f"source a (x int) from csv '{tmp_path}/a.csv' monitor every 1s;\na | print;\n"
    jg = compile_source(text, "job.flow").env.get_job_graph()
    with pytest.raises(ExecutionError, match="a.csv is a file: a monitored source watches a "
                                             "directory for new files") as info:
        run_streaming(jg)
    assert "drop the monitor interval" in (info.value.hint or "")


def test_trigger_durations() -> None:
    assert parse_trigger("1s") == 1000 and parse_trigger("250ms") == 250
    assert parse_trigger("0") == 0
    with pytest.raises(ConfigError, match="--trigger expects a duration"):
        parse_trigger("soon")


def _lines_job(d: Path, build: Callable[[Any], Any]) -> Any:
    from flowc.common import WatermarkStrategy
    from flowc.datastream import Duration, StreamExecutionEnvironment
    from flowc.datastream.connectors.file_system import FileSource, StreamFormat

    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(2)
    source = FileSource.for_record_stream_format(StreamFormat.text_line_format(), str(d)) \
        .monitor_continuously(Duration.of_millis(100)).build()
    build(env.from_source(source, WatermarkStrategy.no_watermarks(), "lines")).print()
    return env.get_job_graph()


def _stream_texts(tmp_path: Path, build: Callable[[Any], Any], texts: list[str]) -> list[str]:
    """Each text as one file, one micro-batch each; the printed records without prefixes."""
    d = tmp_path / "in"
    d.mkdir()
    jg = _lines_job(d, build)

    def feed(progress: Progress) -> None:
        for k, text in enumerate(texts):
            (d / f"f{k}.txt").write_text(text + "\n")
            progress.batch(k)
    stats = run_feeding(jg, tmp_path / "ck", feed)
    assert stats.batches == len(texts)
    return [line.split("> ", 1)[1] for line in stats.printed]


@pytest.mark.spark
def test_keyed_value_state_continues_across_micro_batches(spark: Any, tmp_path: Path) -> None:
    from flowc.datastream import KeyedProcessFunction, RuntimeContext, ValueStateDescriptor

    class Count(KeyedProcessFunction):
        def open(self, ctx: RuntimeContext) -> None:
            self.n = ctx.get_state(ValueStateDescriptor("n"))

        def process_element(self, value: Any, ctx: Any) -> Any:
            n = (self.n.value() or 0) + 1
            self.n.update(n)
            yield f"{value}={n}"

    out = _stream_texts(tmp_path, lambda s: s.flat_map(str.split).key_by(lambda w: w)
                        .process(Count()), ["a b a", "a c", "b"])
    assert sorted(out) == ["a=1", "a=2", "a=3", "b=1", "b=2", "c=1"]


@pytest.mark.spark
def test_a_monitored_text_line_source_from_the_python_api(spark: Any, tmp_path: Path) -> None:
    out = _stream_texts(tmp_path, lambda s: s.flat_map(str.split).map(lambda w: (w, 1))
                        .key_by(lambda t: t[0]).reduce(lambda a, b: (a[0], a[1] + b[1])),
                        ["a b a", "b c"])
    # rolling reduce: a running count per word, its state kept across the two batches
    assert sorted(out) == sorted(["('a', 1)", "('a', 2)", "('b', 1)", "('b', 2)", "('c', 1)"])
