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
    with pytest.raises(FlowcError, match="Was expecting 0 arguments"):
        _job(tmp_path, "SELECT PROCTIME(1) AS p FROM clicks;")


GROUP_WINDOW = """SELECT user_id, {fn}_PROCTIME(pt, {sizes}) AS wpt, COUNT(*) AS n
FROM clicks GROUP BY {fn}(pt, {sizes}), user_id;"""
SIZES = {"TUMBLE": "INTERVAL '5' SECOND", "HOP": "INTERVAL '5' SECOND, INTERVAL '10' SECOND",
         "SESSION": "INTERVAL '3' SECOND"}


@pytest.mark.parametrize(("fn", "assigner", "rows"), [
    ("TUMBLE", "TumblingProcessingTimeWindows", 1),
    ("HOP", "SlidingProcessingTimeWindows", 2),  # each row is in two 10 s windows
    ("SESSION", "ProcessingTimeSessionWindows", 1),
])
def test_group_window_proctime_is_the_processing_time_the_window_row_is_made(
        tmp_path: Path, fn: str, assigner: str, rows: int) -> None:
    """Flink 2.3: ``Calc(select=[user_id, PROCTIME_MATERIALIZE(CAST(w$proctime ...)) AS
    wpt, n])`` after the GroupWindowAggregate, ``wpt`` a ``TIMESTAMP_LTZ(3) *PROCTIME*``:
    the processing time when the window's row passes the Calc (flowc's Map after the
    window; the clock is fixed here, so the value is known)."""
    jg = _job(tmp_path, GROUP_WINDOW.format(fn=fn, sizes=SIZES[fn]))
    nodes = list(jg.stream_graph.nodes.values())  # type: ignore[attr-defined]
    assert [n.name for n in nodes] == ["Source: clicks", "Map", assigner, "Map",
                                       "Sink: Print to Std. Out"]
    assert str(nodes[3].output_type) == "(user_id string, wpt timestamp, n int)"
    assert _printed(jg, now=61_000) == sorted(
        ["+I[a, 1970-01-01T00:01:01, 2]"] * rows + ["+I[b, 1970-01-01T00:01:01, 1]"] * rows)


def test_proctime_in_a_select_list_is_the_time_the_row_passes(tmp_path: Path) -> None:
    """Flink 2.3: ``Calc(select=[user_id, PROCTIME_MATERIALIZE(PROCTIME()) AS p])``, also
    after a GROUP BY (a Calc over its changelog) and under a CAST."""
    jg = _job(tmp_path, "SELECT user_id, PROCTIME() AS p FROM clicks;")
    assert str(list(jg.stream_graph.nodes.values())[-2].output_type) == \
        "(user_id string, p timestamp)"  # type: ignore[attr-defined]
    assert _printed(jg, now=7) == ["+I[a, 1970-01-01T00:00:00.007]"] * 2 + [
        "+I[b, 1970-01-01T00:00:00.007]"]
    grouped = _job(tmp_path, "SELECT user_id, PROCTIME() AS p, COUNT(*) AS n FROM clicks "
                             "GROUP BY user_id;")
    assert _printed(grouped, now=1000) == ["+I[a, 1970-01-01T00:00:01, 2]",
                                           "+I[b, 1970-01-01T00:00:01, 1]"]
    cast = _job(tmp_path, "SELECT CAST(PROCTIME() AS STRING) AS p FROM clicks WHERE "
                          "user_id = 'b';")
    assert _printed(cast, now=1000) == ["+I[1970-01-01 00:00:01.000]"]


@pytest.mark.parametrize(("query", "message", "column"), [
    # Flink 2.3's texts (ValidationException / CodeGenException)
    ("SELECT TUMBLE_ROWTIME(pt, INTERVAL '5' SECOND) AS w, COUNT(*) FROM clicks "
     "GROUP BY TUMBLE(pt, INTERVAL '5' SECOND);",
     "A proctime window cannot provide a rowtime attribute.", 8),
    ("SELECT TUMBLE_PROCTIME(pt, INTERVAL '6' SECOND) AS w, COUNT(*) FROM clicks "
     "GROUP BY TUMBLE(pt, INTERVAL '5' SECOND);",
     "Call to auxiliary group function 'TUMBLE_PROCTIME' must have matching call to "
     "group function '$TUMBLE' in GROUP BY clause", 8),
    ("SELECT HOP_PROCTIME(pt, INTERVAL '5' SECOND, INTERVAL '10' SECOND) AS w, COUNT(*) "
     "FROM clicks GROUP BY TUMBLE(pt, INTERVAL '5' SECOND);",
     "Call to auxiliary group function 'HOP_PROCTIME' must have matching call", 8),
    ("SELECT user_id, TUMBLE_PROCTIME(pt, INTERVAL '5' SECOND) AS w FROM clicks;",
     "Unsupported call: TUMBLE_PROCTIME", 17),
    ("SELECT user_id, PROCTIME(1) FROM clicks;",
     "Invalid number of arguments to function 'PROCTIME'. Was expecting 0 arguments", 17),
])
def test_misused_proctime_functions_are_flinks_positioned_errors(
        tmp_path: Path, query: str, message: str, column: int) -> None:
    with pytest.raises(FlowcError) as info:
        _job(tmp_path, query)
    assert info.value.message == message or info.value.message.startswith(message)
    span = info.value.span
    assert span is not None and (span.file, span.line, span.column) == ("q.sql", 4, column)


def test_tumble_proctime_over_an_event_time_window_is_refused(tmp_path: Path) -> None:
    """Flink casts the window's unset proctime to a ROWTIME type there; flowc refuses it
    (docs/sql.md)."""
    wm = ", ts TIMESTAMP(3), WATERMARK FOR ts AS ts"
    with pytest.raises(FlowcError, match="over an event-time window is not supported"):
        _job(tmp_path, "SELECT TUMBLE_PROCTIME(ts, INTERVAL '5' SECOND) AS w, COUNT(*) "
                       "FROM clicks GROUP BY TUMBLE(ts, INTERVAL '5' SECOND);", wm=wm)
