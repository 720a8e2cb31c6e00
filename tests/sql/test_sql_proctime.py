"""SQL processing time: a table's computed column ``pt AS PROCTIME()`` (a map after the
source adds the processing time, as Flink's Calc does) and TUMBLE / HOP / SESSION over it,
as window TVFs and as GROUP BY group windows: they plan onto the processing-time window
assigners and follow Flink's rules (BATCH fires every window at the end of input; a bounded
STREAMING job drops the windows not yet due when its input ends)."""

from __future__ import annotations

from pathlib import Path

import pytest

from flowc.errors import FlowcError
from flowc.executor import run_reference
from flowc.executor.runtime.clock import ManualClock, using_clock
from flowc.sql import compile_sql

TABLE = """{mode}CREATE TABLE clicks (user_id STRING, pt AS PROCTIME(), action STRING{wm}
) WITH ('connector' = 'filesystem', 'path' = '{path}', 'format' = 'csv');
"""


def _job(tmp_path: Path, query: str, mode: str = "batch", wm: str = "") -> object:
    data = tmp_path / "c.csv"
    data.write_text("user_id,action\na,x\nb,y\na,z\n")
    head = f"SET 'execution.runtime-mode' = '{mode}';\n"
    text = TABLE.format(mode=head, wm=wm, path=data) + query
    return compile_sql(text, "q.sql").env.get_job_graph()


def _printed(jg: object, now: int = 12_345) -> list[str]:
    with using_clock(ManualClock(now)):
        return sorted(run_reference(jg).printed)  # type: ignore[arg-type]


TVF = """SELECT user_id, window_start, window_end, COUNT(*) AS n
FROM TABLE({fn}(TABLE clicks, DESCRIPTOR(pt), {sizes}))
GROUP BY window_start, window_end, user_id;"""


def test_proctime_column_holds_the_processing_time_at_its_declared_place(
        tmp_path: Path) -> None:
    assert _printed(_job(tmp_path, "SELECT * FROM clicks;")) == [
        "+I[a, 1970-01-01T00:00:12.345, x]", "+I[a, 1970-01-01T00:00:12.345, z]",
        "+I[b, 1970-01-01T00:00:12.345, y]"]


def test_tumble_tvf_over_proctime_plans_a_processing_time_window(tmp_path: Path) -> None:
    jg = _job(tmp_path, TVF.format(fn="TUMBLE", sizes="INTERVAL '5' SECOND"))
    names = [n.name for n in jg.stream_graph.nodes.values()]  # type: ignore[attr-defined]
    # Flink: Source -> Calc(PROCTIME()) (chained), then the window aggregate over HASH
    assert names[:3] == ["Source: clicks", "Map", "TumblingProcessingTimeWindows"]
    assert _printed(jg) == ["+I[a, 1970-01-01T00:00:10, 1970-01-01T00:00:15, 2]",
                            "+I[b, 1970-01-01T00:00:10, 1970-01-01T00:00:15, 1]"]


def test_hop_and_session_tvfs_and_the_group_window(tmp_path: Path) -> None:
    hop = _printed(_job(tmp_path, TVF.format(fn="HOP", sizes="INTERVAL '5' SECOND, "
                                             "INTERVAL '10' SECOND")))
    assert hop == ["+I[a, 1970-01-01T00:00:05, 1970-01-01T00:00:15, 2]",
                   "+I[a, 1970-01-01T00:00:10, 1970-01-01T00:00:20, 2]",
                   "+I[b, 1970-01-01T00:00:05, 1970-01-01T00:00:15, 1]",
                   "+I[b, 1970-01-01T00:00:10, 1970-01-01T00:00:20, 1]"]
    session = _printed(_job(tmp_path, TVF.format(fn="SESSION", sizes="INTERVAL '3' SECOND")))
    assert session == ["+I[a, 1970-01-01T00:00:12.345, 1970-01-01T00:00:15.345, 2]",
                       "+I[b, 1970-01-01T00:00:12.345, 1970-01-01T00:00:15.345, 1]"]
    group = _printed(_job(tmp_path, """SELECT user_id, TUMBLE_START(pt, INTERVAL '5' SECOND)
        AS ws, COUNT(*) AS n FROM clicks GROUP BY TUMBLE(pt, INTERVAL '5' SECOND), user_id;"""))
    assert group == ["+I[a, 1970-01-01T00:00:10, 2]", "+I[b, 1970-01-01T00:00:10, 1]"]


def test_bounded_streaming_drops_windows_not_due_at_the_end(tmp_path: Path) -> None:
    jg = _job(tmp_path, TVF.format(fn="TUMBLE", sizes="INTERVAL '5' SECOND"), "streaming")
    assert _printed(jg) == []


def test_proctime_beside_a_watermark_and_errors(tmp_path: Path) -> None:
    # a table with event time may still window on its processing time
    wm = ", ts TIMESTAMP(3), WATERMARK FOR ts AS ts"
    jg = _job(tmp_path, TVF.format(fn="TUMBLE", sizes="INTERVAL '5' SECOND"), wm=wm)
    assert "TumblingProcessingTimeWindows" in [
        n.name for n in jg.stream_graph.nodes.values()]  # type: ignore[attr-defined]
    with pytest.raises(FlowcError, match="at most one PROCTIME"):
        _job(tmp_path, "SELECT * FROM clicks;", wm=", p2 AS PROCTIME()")
    with pytest.raises(FlowcError, match="computed column only"):
        _job(tmp_path, "SELECT PROCTIME() AS p FROM clicks;")
