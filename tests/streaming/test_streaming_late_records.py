"""Late records on the streaming executor, made exact: watermarks move per micro-batch (a
source's generator also emits at the end of every batch), so a record behind a batch's
watermark is late even where one bounded run over the same files would not see it late.

The reference executor's micro-batch model (``executor.reference_batches``) runs a job
over given micro-batch boundaries as the streaming executor does. Streamed in many
micro-batches (one file per source and batch), a job prints exactly what the model prints
for the same boundaries - late records, allowed lateness and late side outputs included -
and, when no record is late, what the plain STREAMING reference run prints."""

from __future__ import annotations

import shutil
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, example, given, settings
from hypothesis import strategies as st

from flowc.executor import run_reference
from flowc.executor.reference_batches import MicroBatches
from flowc.executor.streaming.commit import Checkpoint
from flowc.planner.stream_graph import NodeKind

from .multi_harness import SENTINEL, land, stream

DELAY = 1000  # the sources' bounded out-of-orderness
SPAN = 4000  # event time per batch in the ordered data


def _job(dirs: list[Path], monitored: bool, case: dict[str, Any]) -> Any:
    """Text-line sources (``key,timestamp`` lines) -> a keyed event-time window (with
    allowed lateness and a late side output) reducing (key, max ts, count); both printed."""
    from flowc.common import WatermarkStrategy
    from flowc.datastream import (
        Duration,
        EventTimeSessionWindows,
        OutputTag,
        RuntimeExecutionMode,
        SlidingEventTimeWindows,
        StreamExecutionEnvironment,
        TumblingEventTimeWindows,
    )
    from flowc.datastream.connectors.file_system import FileSource, StreamFormat

    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(case["p"])
    env.set_runtime_mode(RuntimeExecutionMode.STREAMING)
    if case["per_record"]:
        env.set_option("flowc.watermarks", "per-record")
    strategy = WatermarkStrategy.for_bounded_out_of_orderness(Duration.of_millis(DELAY)) \
        .with_timestamp_assigner(lambda line, _: int(line.split(",")[1]))
    streams = []
    for i, d in enumerate(dirs):
        b = FileSource.for_record_stream_format(StreamFormat.text_line_format(), str(d))
        if monitored:
            b = b.monitor_continuously(Duration.of_millis(100))
        s = env.from_source(b.build(), strategy, f"in{i}") \
            .filter(lambda line: not line.startswith("zz")) \
            .map(lambda line: (line.split(",")[0], int(line.split(",")[1]), 1))
        streams.append(s)
    s = streams[0] if len(streams) == 1 else streams[0].union(*streams[1:])
    if case["rebalance"]:  # a round-robin partitioner: it restarts with every batch
        s = s.rebalance().map(lambda r: r)
    assigner = {"tumbling": TumblingEventTimeWindows.of(3000),
                "sliding": SlidingEventTimeWindows.of(3000, 1000),
                "session": EventTimeSessionWindows.with_gap(800)}[case["window"]]
    late = OutputTag("late")
    w = s.key_by(lambda r: r[0]).window(assigner).allowed_lateness(case["lateness"])
    if case["side_output"]:
        w = w.side_output_late_data(late)
    out = w.reduce(lambda a, b: (a[0], max(a[1], b[1]), a[2] + b[2]))
    out.print()
    if case["side_output"]:
        out.get_side_output(late).map(lambda r: ("late",) + r).print()
    return env.get_job_graph()


def _sources(jg: Any) -> list[int]:
    return sorted(n.id for n in jg.stream_graph.nodes.values() if n.kind is NodeKind.SOURCE)


def _write(dirs: list[Path], batches: list[list[list[tuple[str, int]]]], p: int
           ) -> list[list[list[str]]]:
    """Per source and batch its file (none when empty), plus a last batch of sentinel files
    (one per source subtask: a watermark far ahead, filtered out after the generator) that
    fires every window; returns the files per source and batch."""
    out: list[list[list[str]]] = [[] for _ in dirs]
    for b, per_source in enumerate(batches):
        for i, rows in enumerate(per_source):
            names = []
            if rows:
                land(dirs[i], f"f{b:03d}.txt", [f"{k},{ts}" for k, ts in rows])
                names.append(str(dirs[i] / f"f{b:03d}.txt"))
            out[i].append(names)
    for i, d in enumerate(dirs):
        names = []
        for j in range(p):
            land(d, f"zz{j}.txt", [f"zz,{SENTINEL}"])
            names.append(str(d / f"zz{j}.txt"))
        out[i].append(names)
    return out


def _model(dirs: list[Path], case: dict[str, Any], files: list[list[list[str]]]) -> Any:
    jg = _job(dirs, True, case)
    return run_reference(jg, micro_batches=MicroBatches(dict(zip(_sources(jg), files))))


# -- data --------------------------------------------------------------------------------

keys = st.sampled_from(["a", "b", "c"])


def _batches(n_sources: int, ordered: bool) -> Any:
    """Per batch, per source, the file's (key, ts) rows. Ordered: batch b's timestamps lie
    in [b * SPAN, b * SPAN + SPAN - DELAY), beyond every watermark of the batches before,
    so no record is ever behind a watermark."""
    def batch(b: int) -> Any:
        lo, hi = (b * SPAN, b * SPAN + SPAN - DELAY - 1) if ordered else (0, 6 * SPAN)
        rows = st.lists(st.tuples(keys, st.integers(lo, hi)), max_size=5)
        return st.lists(rows, min_size=n_sources, max_size=n_sources) \
            .filter(lambda per: any(per))  # a batch runs only when some file landed
    return st.integers(2, 4).flatmap(lambda k: st.tuples(*(batch(b) for b in range(k)))) \
        .map(list)


def cases(ordered: bool) -> Any:
    return st.integers(1, 2).flatmap(lambda n: st.fixed_dictionaries({
        "sources": st.just(n),
        "batches": _batches(n, ordered),
        "p": st.integers(1, 2),
        "window": st.sampled_from(["tumbling", "sliding", "session"]),
        "lateness": st.sampled_from([0, 0, 2000]),
        "side_output": st.booleans(),
        "rebalance": st.booleans(),
        "per_record": st.just(False) if ordered else st.booleans(),
    }))


def _dirs(root: Path, n: int) -> list[Path]:
    out = []
    for i in range(n):
        (root / f"in{i}").mkdir()
        out.append(root / f"in{i}")
    return out


# -- the model against the plain reference (no Spark) ---------------------------------------

@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(cases(ordered=True))
def test_with_no_late_record_the_model_prints_what_the_plain_reference_prints(
        case: dict[str, Any]) -> None:
    root = Path(tempfile.mkdtemp(prefix="flowc-late-"))
    try:
        dirs = _dirs(root, case["sources"])
        files = _write(dirs, case["batches"], case["p"])
        model = _model(dirs, case, files)
        plain = run_reference(_job(dirs, False, case))
    finally:
        shutil.rmtree(root, ignore_errors=True)
    assert model.late_records_dropped == plain.late_records_dropped == 0
    assert not any("'late'" in line for line in model.printed)
    assert sorted(model.printed) == sorted(plain.printed)


def test_a_record_behind_a_batchs_watermark_is_late_in_the_model_only(tmp_path: Path) -> None:
    """Batch 0 takes the watermark to 5000 - 1001; batch 1's record at 2500 is behind it:
    its window [0, 3 s) fired in batch 0. One bounded run of both files sees no watermark
    before the end, so nothing is late there."""
    case = {"sources": 1, "p": 1, "window": "tumbling", "lateness": 0, "side_output": True,
            "rebalance": False, "per_record": False}
    dirs = _dirs(tmp_path, 1)
    files = _write(dirs, [[[("a", 1000), ("a", 5000)]], [[("a", 2500)]]], 1)
    model = _model(dirs, case, files)
    plain = run_reference(_job(dirs, False, case))
    assert model.printed == ["('a', 1000, 1)", "('late', 'a', 2500, 1)", "('a', 5000, 1)"]
    assert sorted(plain.printed) == ["('a', 2500, 2)", "('a', 5000, 1)"]
    # with allowed lateness the window fires again with the record
    model = _model(dirs, {**case, "lateness": 2000}, files)
    assert model.printed == ["('a', 1000, 1)", "('a', 2500, 2)", "('a', 5000, 1)"]


def test_micro_batches_must_name_the_monitored_sources(tmp_path: Path) -> None:
    from flowc.errors import UnsupportedError

    case = {"sources": 1, "p": 1, "window": "tumbling", "lateness": 0, "side_output": False,
            "rebalance": False, "per_record": False}
    dirs = _dirs(tmp_path, 1)
    jg = _job(dirs, True, case)
    with pytest.raises(UnsupportedError, match="no micro-batches given for 'Source: in0'"):
        run_reference(jg, micro_batches=MicroBatches({}))
    with pytest.raises(UnsupportedError, match="micro-batch model runs jobs with a monitored"):
        run_reference(_job(dirs, False, case), micro_batches=MicroBatches({}))
    with pytest.raises(UnsupportedError, match="is unbounded"):
        run_reference(jg)


# -- the streaming executor against the model (Spark) ----------------------------------------

def _streamed(root: Path, case: dict[str, Any]) -> tuple[Any, list[list[list[str]]]]:
    """Stream the case's files one batch at a time; returns the run's stats and the files
    each micro-batch really held per source, from the checkpoint's counts of files read
    (a batch that took one source's file before another's landed moves the boundary, not
    the result). The checkpoint keeps the last two batches' counts: polled after every
    move until the batch that read all of them is done."""
    dirs = _dirs(root, case["sources"])
    landed: list[list[str]] = [[] for _ in dirs]
    staging = root / "staging"
    staging.mkdir()
    planned = _write(_dirs(staging, case["sources"]), case["batches"], case["p"])
    ck = Checkpoint(str(root / "ck"))
    counts: dict[int, list[int]] = {}  # batch -> files read per source up to it

    def seen(n: int) -> None:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            for b in ck.done_batches():
                counts.setdefault(b, ck.units_read(b))
            if counts and sum(counts[max(counts)]) >= n:
                return
            time.sleep(0.02)
        raise AssertionError(f"the job did not read {n} files in time")

    def feed(_wait: Callable[[int], None]) -> None:
        n = 0
        for b in range(len(planned[0])):
            for i, d in enumerate(dirs):
                for f in planned[i][b]:
                    Path(f).rename(d / Path(f).name)
                    landed[i].append(str(d / Path(f).name))
                    n += 1
            seen(n)

    stats = stream(root, _job(dirs, True, case), feed)
    assert sorted(counts) == list(range(len(counts))), counts  # no batch missed
    files: list[list[list[str]]] = [[] for _ in dirs]
    before = [0] * len(dirs)
    for b in sorted(counts):
        for i in range(len(dirs)):
            files[i].append(landed[i][before[i]:counts[b][i]])
        before = counts[b]
    return stats, files


@pytest.mark.spark
@pytest.mark.slow
@settings(max_examples=3, deadline=None, suppress_health_check=list(HealthCheck),
          phases=[Phase.explicit, Phase.generate])  # a shrink would run Spark queries for minutes
@example({"sources": 1, "batches": [[[("a", 4000)]], [[("a", 0)]]], "p": 1,
          "window": "tumbling", "lateness": 0, "side_output": False, "rebalance": False,
          "per_record": False})  # a record late only by the first batch's watermark
@given(cases(ordered=False))
def test_streamed_micro_batches_print_what_the_model_prints(spark: Any,
                                                            case: dict[str, Any]) -> None:
    root = Path(tempfile.mkdtemp(prefix="flowc-late-"))
    try:
        stats, files = _streamed(root, case)
        dirs = [root / f"in{i}" for i in range(case["sources"])]
        model = _model(dirs, case, files)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    assert stats.printed == model.printed  # the same lines in the same order
    assert stats.late_records_dropped == model.late_records_dropped


@pytest.mark.spark
@pytest.mark.slow
def test_streamed_in_order_batches_print_what_the_plain_reference_prints(
        spark: Any, tmp_path: Path) -> None:
    case = {"sources": 2, "p": 2, "window": "sliding", "lateness": 0, "side_output": True,
            "rebalance": True, "per_record": False,
            "batches": [[[("a", 100), ("b", 2900)], [("c", 1500)]],
                        [[("a", 4100), ("a", 6000)], []],
                        [[("b", 8000)], [("c", 9000), ("a", 10500)]]]}
    stats, files = _streamed(tmp_path, case)
    dirs = [tmp_path / f"in{i}" for i in range(2)]
    plain = run_reference(_job(dirs, False, case))  # every file, read once
    assert stats.late_records_dropped == plain.late_records_dropped == 0
    assert sorted(stats.printed) == sorted(plain.printed)
    assert stats.printed == _model(dirs, case, files).printed
