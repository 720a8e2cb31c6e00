"""Unbounded (monitored) file sources in the three front ends: boundedness in the plan,
AUTOMATIC mode by Flink's rule, Flink's BATCH error, and the bounded executors' refusal."""

from __future__ import annotations

from pathlib import Path

import pytest

from flowc.common import WatermarkStrategy
from flowc.datastream import StreamExecutionEnvironment
from flowc.datastream.connectors.file_system import FileSource, StreamFormat
from flowc.errors import ApiError, FlowcError, PlanError, UnsupportedError
from flowc.executor import run_job_graph, run_reference
from flowc.operators import FileSource as FileSpec
from flowc.parser import compile_source
from flowc.sql import compile_sql
from flowc.transformations import RuntimeExecutionMode

FLOW = """{mode}
source clicks (user_id string, ts timestamp)
  from csv 'in/'{monitor}
  watermark ts - 2s;
clicks | key by user_id | window tumbling 5s | aggregate count(*) as n | print;
"""

SQL = """{mode}
CREATE TABLE clicks (user_id STRING, ts TIMESTAMP(3),
  WATERMARK FOR ts AS ts - INTERVAL '2' SECOND)
WITH ('connector' = 'filesystem', 'path' = 'in/', 'format' = 'csv'{monitor});
SELECT user_id, COUNT(*) AS n
FROM TABLE(TUMBLE(TABLE clicks, DESCRIPTOR(ts), INTERVAL '5' SECOND))
GROUP BY user_id, window_start, window_end;
"""


def _flow(monitor: str = "", mode: str = "") -> StreamExecutionEnvironment:
    return compile_source(FLOW.format(mode=mode, monitor=monitor), "job.flow").env


def _sql(monitor: str = "", mode: str = "") -> StreamExecutionEnvironment:
    return compile_sql(SQL.format(mode=mode, monitor=monitor), "job.sql").env


def _source_spec(env: StreamExecutionEnvironment) -> FileSpec:
    sg = env.get_stream_graph()
    (nid,) = sg.source_ids
    spec = sg.nodes[nid].operator
    assert isinstance(spec, FileSpec)
    return spec


def test_flow_monitor_clause_makes_the_source_unbounded() -> None:
    spec = _source_spec(_flow(" monitor every 1500ms"))
    assert spec.monitor_interval == 1500 and not spec.bounded
    assert _source_spec(_flow()).bounded


def test_sql_monitor_interval_option_uses_flinks_duration_syntax() -> None:
    for text, ms in (("1s", 1000), ("2 min", 120_000), ("250", 250), ("3 seconds", 3000)):
        spec = _source_spec(_sql(f", 'source.monitor-interval' = '{text}'"))
        assert spec.monitor_interval == ms and not spec.bounded
    assert _source_spec(_sql()).bounded


@pytest.mark.parametrize("make, clause, where", [
    (_flow, " monitor every 0s", "job.flow:3"),
    (_sql, ", 'source.monitor-interval' = '0s'", "job.sql:4"),
    (_sql, ", 'source.monitor-interval' = '1 fortnight'", "job.sql:4"),
])
def test_bad_monitor_intervals_are_positioned_errors(make, clause, where) -> None:  # noqa: ANN001
    with pytest.raises(FlowcError) as info:
        make(clause)
    assert info.value.span is not None
    assert f"{info.value.span.file}:{info.value.span.line}" == where


def test_automatic_mode_is_streaming_with_an_unbounded_source_else_batch() -> None:
    for make, auto, clause in ((_flow, "set mode = automatic;", " monitor every 1s"),
                               (_sql, "SET 'execution.runtime-mode' = 'automatic';",
                                ", 'source.monitor-interval' = '1s'")):
        assert make(clause, auto).get_stream_graph().config.mode \
            is RuntimeExecutionMode.STREAMING
        assert make("", auto).get_stream_graph().config.mode is RuntimeExecutionMode.BATCH


def test_batch_mode_with_an_unbounded_source_is_flinks_error() -> None:
    with pytest.raises(PlanError, match="Detected an UNBOUNDED source with the "
                                        "'execution.runtime-mode' set to 'BATCH'") as info:
        _flow(" monitor every 1s", "set mode = batch;").get_stream_graph()
    assert info.value.span is not None and info.value.span.line == 2


def test_monitored_source_has_the_bounded_sources_plan() -> None:
    """Flink's FileSource.monitorContinuously changes only the source's Boundedness: the
    StreamGraph / JobGraph (ids, chains, edges) equal the bounded source's in STREAMING."""
    bounded, unbounded = _flow(), _flow(" monitor every 1s")
    assert unbounded.get_job_graph().to_dict() == bounded.get_job_graph().to_dict()
    assert unbounded.get_stream_graph().to_dict() == bounded.get_stream_graph().to_dict()


def _python_env(path: str, monitor: bool) -> StreamExecutionEnvironment:
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_runtime_mode(RuntimeExecutionMode.AUTOMATIC)
    builder = FileSource.for_record_stream_format(StreamFormat.text_line_format(), path)
    if monitor:
        from flowc.datastream import Duration

        builder = builder.monitor_continuously(Duration.of_seconds(2))
    env.from_source(builder.build(), WatermarkStrategy.no_watermarks(), "lines").print()
    return env


def test_python_monitor_continuously(tmp_path: Path) -> None:
    env = _python_env(str(tmp_path), True)
    sg = env.get_stream_graph()
    spec = sg.nodes[sg.source_ids[0]].operator
    assert spec.monitor_interval == 2000 and not spec.bounded
    assert sg.config.mode is RuntimeExecutionMode.STREAMING
    assert _python_env(str(tmp_path), False).get_stream_graph().config.mode \
        is RuntimeExecutionMode.BATCH
    from flowc.datastream import Duration

    builder = FileSource.for_record_stream_format(StreamFormat.text_line_format(), "x")
    with pytest.raises(ApiError, match="discoveryInterval must be > 0"):
        builder.monitor_continuously(Duration.of_millis(0))
    with pytest.raises(ApiError, match="needs a Duration"):
        builder.monitor_continuously(5)  # type: ignore[arg-type]
    assert builder.monitor_continuously(Duration.of_seconds(1)).process_static_file_set() \
        .build().bounded


def test_bounded_executors_refuse_an_unbounded_source(tmp_path: Path) -> None:
    jg = _python_env(str(tmp_path), True).get_job_graph()
    with pytest.raises(UnsupportedError, match="'Source: lines' is unbounded"):
        run_reference(jg)
    with pytest.raises(UnsupportedError, match="Spark batch executor runs bounded jobs"):
        run_job_graph(jg)  # refused before Spark starts
