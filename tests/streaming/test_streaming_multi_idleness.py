"""Idleness (``WatermarkStrategy.with_idleness``) on the streaming executor, measured on
the micro-batches' timestamps from Spark's offsets log: a source subtask without records
for longer than the timeout marks its channels IDLE and stops holding the min watermark
back (Flink's WatermarkStatus and StatusWatermarkValve); a record makes it ACTIVE again."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from flowc.executor.runtime.channels import WatermarkStatus, WatermarkValve, merge_with_valve
from flowc.executor.runtime.core import LONG_MAX, LONG_MIN, Watermark
from flowc.executor.streaming.plan import plan_streaming
from flowc.executor.streaming.task import SubtaskRun

from .multi_harness import dirs, graph, land, lines, stream


def _windows(a: Any, b: Any) -> Any:
    from flowc.datastream import Time, TumblingEventTimeWindows

    return a.union(b).key_by(lambda r: r[0]) \
        .window(TumblingEventTimeWindows.of(Time.milliseconds(3000))) \
        .reduce(lambda x, y: (x[0], max(x[1], y[1]), x[2] + y[2]))


def _quiet_source_run(tmp: Path, idle_ms: int | None) -> list[str]:
    """Source 1 gets one file, then nothing; source 0 gets a file every ~0.6 s."""
    tmp.mkdir()
    ds = dirs(tmp, 2)

    def feed(wait: Callable[[int], None]) -> None:
        land(ds[1], "f000.txt", lines(1, 0))
        land(ds[0], "f000.txt", lines(0, 0))
        wait(2)
        for k in range(1, 5):
            time.sleep(0.6)
            land(ds[0], f"f{k:03d}.txt", lines(0, k))
            wait(2 + k)

    return stream(tmp, graph(ds, True, _windows, idle_ms=idle_ms), feed).printed


@pytest.mark.spark
def test_a_quiet_source_stops_holding_the_windows_back_after_its_timeout(
        spark: Any, tmp_path: Path) -> None:
    fired = _quiet_source_run(tmp_path / "idle", 300)
    # source 0's watermark passed 9000 + ...: its windows [0, 3 s) .. [6 s, 9 s) fired
    ends = {int(line.split(", ")[1]) // 3000 for line in fired}
    assert {0, 1, 2} <= ends
    # without idleness, source 1 (one of its subtasks never read a file) holds them all
    assert _quiet_source_run(tmp_path / "busy", None) == []


def test_the_valve_follows_flinks_idle_and_active_rules() -> None:
    v = WatermarkValve(2)
    out = list(merge_with_valve([[(Watermark, 5), (Watermark, 9)], [(Watermark, 3)]],
                                [1, 1], v))
    assert out == [(0, Watermark, 3)]  # the min over both channels
    # channel 1 goes idle: channel 0's watermark alone counts
    assert list(merge_with_valve([[], [(WatermarkStatus, True)]], [1, 1], v)) == \
        [(0, Watermark, 9)]
    # every channel idle: the valve goes idle (the max is flushed when it rose)
    assert list(merge_with_valve([[(WatermarkStatus, True)], []], [1, 1], v)) == \
        [(0, WatermarkStatus, True)]
    # channel 1 is active again behind the output watermark: not aligned until it
    # catches up, so it does not pull the watermark back; the valve is active again
    assert list(merge_with_valve([[], [(WatermarkStatus, False), ("r", 4),
                                       (Watermark, 7)]], [1, 2], v)) == \
        [(0, WatermarkStatus, False), (2, "r", 4)]
    assert v.last == 9 and not v.aligned[1]
    assert list(merge_with_valve([[], [(Watermark, 8)]], [1, 1], v)) == []  # behind
    # caught up: aligned, and channel 0 is idle, so channel 1's watermark alone counts
    assert list(merge_with_valve([[], [(Watermark, 12)]], [1, 1], v)) == \
        [(0, Watermark, 12)]
    v2 = WatermarkValve(2)
    v2.restore(v.state())  # a micro-batch snapshot keeps it all
    assert v2.state() == v.state() and v.wms == [9, 12]


def test_a_source_subtask_goes_idle_on_batch_timestamps_and_a_record_wakes_it(
        tmp_path: Path) -> None:
    ds = dirs(tmp_path, 2)
    plan = plan_streaming(graph(ds, True, _windows, idle_ms=1000))
    src = plan.sources[0]
    vertex = next(v for v in plan.vertices if v.id == src.vertex)

    def batch(state: Any, share: list[str], ts: int) -> tuple[list[Any], Any]:
        from pyspark import cloudpickle

        run = SubtaskRun(vertex, 0)  # (a snapshot is read back from its file: a copy)
        run.open(None if state is None else cloudpickle.loads(cloudpickle.dumps(state)))
        run.run_source(src.spec, share)
        run.end_batch(ts)
        # what goes to consumer subtask 0 (a status goes to every consumer subtask)
        return [x[1][1][1:] for x in run.items if x[1][0] == 0], run.snapshot()

    def statuses(items: list[Any]) -> list[Any]:
        return [s for v, s in items if v is WatermarkStatus]

    f = ds[0] / "a.txt"
    f.write_text("\n".join(lines(0, 0)) + "\n")
    items, snap = batch(None, [str(f)], 10_000)
    assert not statuses(items) and any(v is Watermark for v, _ in items)
    items, snap = batch(snap, [], 10_900)  # 900 ms without a record: still active
    assert not statuses(items)
    again, _ = batch(snap, [], 11_001)  # more than 1 s: idle
    assert statuses(again) == [True]
    replay, snap = batch(snap, [], 11_001)  # a replay: the same batch, the same status
    assert replay == again
    items, snap = batch(snap, [], 12_000)  # stays idle: said once
    assert not statuses(items)
    items, snap = batch(snap, [str(f)], 13_000)  # a record: active before it
    assert items[0] == (WatermarkStatus, False) and len(statuses(items)) == 1
    assert LONG_MIN not in [ts for v, ts in items if v is Watermark]


def test_a_finished_bounded_source_never_goes_idle(tmp_path: Path) -> None:
    """Its end-of-input watermark (Long.MAX_VALUE) is final: an IDLE status after it would
    let a valve whose other channels are idle flush it downstream."""
    from flowc.executor.streaming.sources import bounded_shares

    ds = dirs(tmp_path, 2)
    land(ds[0], "a.txt", lines(0, 0))
    plan = plan_streaming(graph(ds, True, _windows, bounded=(0,), idle_ms=100))
    src = plan.sources[0]
    assert src.bounded
    vertex = next(v for v in plan.vertices if v.id == src.vertex)
    run = SubtaskRun(vertex, 0)
    run.open(None)
    run.run_source(src.spec, bounded_shares(src.spec, 2).shares[0])
    run.end_batch(1_000)
    run.run_source(src.spec, None)  # later batches: finished, nothing to read
    run.end_batch(60_000)
    sent = [x[1][1][1:] for x in run.items if x[1][0] == 0]
    assert (Watermark, LONG_MAX) in sent and all(v is not WatermarkStatus for v, _ in sent)


IDLE_SQL = """CREATE TABLE clicks (user_id STRING, ts TIMESTAMP(3){wm}) WITH (
  'connector' = 'filesystem', 'path' = 'in/', 'format' = 'csv',
  'source.monitor-interval' = '1s'{idle});
CREATE TABLE out (user_id STRING) WITH ('connector' = 'print');
INSERT INTO out SELECT user_id FROM clicks;
"""
WM = ",\n  WATERMARK FOR ts AS ts - INTERVAL '1' SECOND"


def test_sql_scan_watermark_idle_timeout_sets_the_strategys_idleness() -> None:
    from flowc.executor.runtime.sources import source_watermarks
    from flowc.operators import TimestampsAndWatermarksOp
    from flowc.sql import compile_sql

    def strategies(idle: str) -> list[Any]:
        sg = compile_sql(IDLE_SQL.format(wm=WM, idle=idle), "job.sql").env.get_stream_graph()
        ops = [n.operator if isinstance(n.operator, TimestampsAndWatermarksOp)
               else source_watermarks(n) for n in sg.nodes.values()]
        return [op.strategy for op in ops if isinstance(op, TimestampsAndWatermarksOp)]

    (s,) = strategies(", 'scan.watermark.idle-timeout' = '5 s'")
    assert s.idleness == 5000 and s.out_of_orderness == 1000
    (s,) = strategies("")
    assert s.idleness is None


@pytest.mark.parametrize(("wm", "idle", "message"), [
    ("", "'5s'", "needs a WATERMARK on the table"),
    (WM, "'0s'", "must be positive"),
    (WM, "'soon'", "soon"),
])
def test_bad_sql_idle_timeouts_are_positioned_errors(wm: str, idle: str, message: str) -> None:
    from flowc.errors import FlowcError
    from flowc.sql import compile_sql

    text = IDLE_SQL.format(wm=wm, idle=f", 'scan.watermark.idle-timeout' = {idle}")
    with pytest.raises(FlowcError, match=message) as info:
        compile_sql(text, "job.sql")
    span = info.value.span
    assert span is not None and span.file == "job.sql" and span.line == 3 + bool(wm)


def _idleness(text: str, filename: str) -> list[int | None]:
    from flowc.executor.runtime.sources import source_watermarks
    from flowc.operators import TimestampsAndWatermarksOp
    from flowc.sql import compile_sql

    sg = compile_sql(text, filename).env.get_stream_graph()
    ops = [n.operator if isinstance(n.operator, TimestampsAndWatermarksOp)
           else source_watermarks(n) for _, n in sorted(sg.nodes.items())]
    return [op.strategy.idleness for op in ops if isinstance(op, TimestampsAndWatermarksOp)]


def test_table_exec_source_idle_timeout_is_every_sources_default() -> None:
    both = IDLE_SQL.replace("CREATE TABLE out", IDLE_SQL.split(";")[0].replace(
        "clicks", "views").replace("{idle}", "{idle2}") + ";\nCREATE TABLE out") \
        .replace("SELECT user_id FROM clicks", "SELECT user_id FROM clicks UNION ALL "
                                               "SELECT user_id FROM views")
    text = "SET 'table.exec.source.idle-timeout' = '2 s';\n" + both.format(
        wm=WM, idle=", 'scan.watermark.idle-timeout' = '5 s'", idle2="")
    assert _idleness(text, "job.sql") == [5000, 2000]  # the table's own option wins
    assert _idleness(both.format(wm=WM, idle="", idle2=""), "job.sql") == [None, None]
    off = "SET 'table.exec.source.idle-timeout' = '0 ms';\n" + both.format(
        wm=WM, idle="", idle2="")
    assert _idleness(off, "job.sql") == [None, None]  # Flink's default 0: no idleness


def test_a_bad_idle_timeout_setting_is_a_positioned_error() -> None:
    from flowc.errors import FlowcError
    from flowc.sql import compile_sql

    text = "SET 'table.exec.source.idle-timeout' = 'soon';\n" + IDLE_SQL.format(wm=WM, idle="")
    with pytest.raises(FlowcError, match="soon") as info:
        compile_sql(text, "job.sql")
    assert info.value.span is not None and info.value.span.line == 1


def test_a_snapshot_with_the_channels_watermarks_only_still_restores_them(
        tmp_path: Path) -> None:
    """Checkpoints written before watermark statuses kept a list of channel watermarks."""
    ds = dirs(tmp_path, 2)
    plan = plan_streaming(graph(ds, True, _windows))
    consumer = next(v for v in plan.vertices if v.inputs)
    n = len(consumer.channels[0])
    run = SubtaskRun(consumer, 0)
    run.open({"channels": list(range(100, 100 + n))})
    assert run.valve.wms == list(range(100, 100 + n)) and run.valve.last == 100
    assert run.snapshot()["channels"]["wms"] == run.valve.wms
