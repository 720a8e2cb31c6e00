""".flow's idleness syntax, ``watermark ts - 2s idle after 10s``: the source's watermark
strategy gets Flink's idleness (``WatermarkStrategy.with_idleness``), as SQL's
``'scan.watermark.idle-timeout'`` and PyFlink's ``with_idleness`` give it; plans are those
of the source without it; on the streaming executor a quiet source then stops holding the
windows back."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from flowc.errors import FlowcError
from flowc.parser import compile_source

from .multi_harness import stream

SOURCE = "source clicks (user_id string, ts timestamp) from csv 'in/' monitor every 1s\n"


def _strategies(text: str) -> list[Any]:
    from flowc.executor.runtime.sources import source_watermarks
    from flowc.operators import TimestampsAndWatermarksOp

    sg = compile_source(text, "job.flow").env.get_stream_graph()
    ops = [n.operator if isinstance(n.operator, TimestampsAndWatermarksOp)
           else source_watermarks(n) for _, n in sorted(sg.nodes.items())]
    return [op.strategy for op in ops if isinstance(op, TimestampsAndWatermarksOp)]


def _plan(text: str) -> Any:
    from flowc.explain.plan_json import execution_plan_json

    jg = compile_source(text, "job.flow").env.get_job_graph()
    return execution_plan_json(jg.stream_graph), [
        (v.id, v.name, v.parallelism, [o.id for o in v.operators])
        for v in jg.vertices.values()]


def test_idle_after_sets_the_strategys_idleness_and_leaves_the_plan_as_it_was() -> None:
    job = SOURCE + "  watermark ts - 2s{idle};\nclicks | key by user_id | window tumbling 5s " \
        "| aggregate count(*) as n | print;"
    (s,) = _strategies(job.format(idle=" idle after 10s"))
    assert (s.idleness, s.out_of_orderness) == (10_000, 2000)
    (s,) = _strategies(job.format(idle=" idle after 1.5s"))
    assert s.idleness == 1500
    (s,) = _strategies(job.format(idle=""))
    assert s.idleness is None
    assert _plan(job.format(idle=" idle after 10s")) == _plan(job.format(idle=""))


def test_idle_after_equals_sqls_idle_timeout_option() -> None:
    from flowc.sql import compile_sql

    flow = _strategies(SOURCE + "  watermark ts - 1s idle after 5s;\nclicks | print;")
    sg = compile_sql("""CREATE TABLE clicks (user_id STRING, ts TIMESTAMP(3),
      WATERMARK FOR ts AS ts - INTERVAL '1' SECOND) WITH ('connector' = 'filesystem',
      'path' = 'in/', 'format' = 'csv', 'source.monitor-interval' = '1s',
      'scan.watermark.idle-timeout' = '5 s');
    CREATE TABLE out (user_id STRING) WITH ('connector' = 'print');
    INSERT INTO out SELECT user_id FROM clicks;""", "job.sql").env.get_stream_graph()
    from flowc.executor.runtime.sources import source_watermarks

    sql = [source_watermarks(n) for n in sg.nodes.values()]
    (s,) = [op.strategy for op in sql if op is not None]
    assert (flow[0].idleness, flow[0].out_of_orderness) == (s.idleness, s.out_of_orderness)


@pytest.mark.parametrize(("clause", "message", "column", "hint"), [
    ("idle after 0s", "the idleness timeout must be positive", 32, "idle after 10s"),
    ("idle after 10sec", "'10sec' is not a duration: unknown unit 'sec'", 32,
     "did you mean '10s'?"),
    ("idle after 2minutes", "unknown unit 'minutes'", 32, "did you mean '2m'?"),
    ("idle after 10", "expected a duration", 32, "a duration needs a unit"),
    ("idel after 10s", "found 'idel'", 21, "did you mean 'idle'?"),
    ("idle 10s", "expected 'after' after 'idle'", 26, None),
])
def test_bad_idle_clauses_are_positioned_errors(clause: str, message: str, column: int,
                                                hint: str | None) -> None:
    text = SOURCE + f"  watermark ts - 2s {clause};\nclicks | print;"
    with pytest.raises(FlowcError, match=message) as info:
        compile_source(text, "job.flow")
    span = info.value.span
    assert span is not None and (span.file, span.line, span.column) == ("job.flow", 2, column)
    if hint is not None:
        assert hint in (info.value.hint or "")
    assert "^" in info.value.format()


QUIET_JOB = """set parallelism = 1;
source busy (k string, ts timestamp) from csv 'busy/' monitor every 100ms
  watermark ts{idle};
source quiet (k string, ts timestamp) from csv 'quiet/' monitor every 100ms
  watermark ts{idle};
busy | union quiet | key by k | window tumbling 3s | aggregate count(*) as n | print;
"""


def _land(d: Path, name: str, rows: list[tuple[str, int]]) -> None:
    tmp = d / f".{name}"
    tmp.write_text("k,ts\n" + "".join(f"{k},{ts}\n" for k, ts in rows))
    tmp.rename(d / name)


def _quiet_run(work: Path, idle: str) -> list[str]:
    """``quiet`` gets one file (timestamps below 1 s), then nothing; ``busy`` a file of 3 s
    of event time every ~0.6 s."""
    work.mkdir()
    for d in ("busy", "quiet"):
        (work / d).mkdir()
    (work / "job.flow").write_text(QUIET_JOB.format(idle=idle))
    from flowc.parser import compile_file

    jg = compile_file(str(work / "job.flow")).env.get_job_graph()

    def feed(wait: Callable[[int], None]) -> None:
        _land(work / "quiet", "q.csv", [("a", 100), ("b", 900)])
        _land(work / "busy", "f0.csv", [("a", 200), ("b", 2900)])
        wait(2)
        for k in range(1, 5):
            time.sleep(0.6)
            _land(work / "busy", f"f{k}.csv", [("a", 3000 * k + 10), ("b", 3000 * k + 2990)])
            wait(2 + k)

    return stream(work, jg, feed).printed


@pytest.mark.spark
def test_an_idle_flow_source_no_longer_holds_the_windows_back(spark: Any,
                                                               tmp_path: Path) -> None:
    fired = _quiet_run(tmp_path / "idle", " idle after 300ms")
    # busy's watermark reached 14990: its windows up to [9 s, 12 s) fired
    assert {line.split(", ")[1] for line in fired} == {
        "1970-01-01T00:00", "1970-01-01T00:00:03", "1970-01-01T00:00:06",
        "1970-01-01T00:00:09"}
    # quiet's records are in the first window
    assert "+I[a, 1970-01-01T00:00, 1970-01-01T00:00:03, 2]" in fired
    # without idleness the quiet source's watermark (900) holds every window
    assert _quiet_run(tmp_path / "busy", "") == []
