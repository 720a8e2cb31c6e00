"""PyFlink's FileSink with a row format (flowc.datastream.connectors.file_system,
executor/runtime/row_files.py). What real PyFlink 2.3 writes is pinned by
tests/pyflink_programs/p24_file_sink_rows (and p26); here the rules one at a time, with
an injected processing-time clock where time matters."""

from __future__ import annotations

import datetime as dt
import os
import re
from pathlib import Path
from typing import Any

import pytest

from flowc.common import Row, Types
from flowc.common.serialization import Encoder
from flowc.datastream import StreamExecutionEnvironment
from flowc.datastream.connectors.file_system import (
    BucketAssigner,
    FileSink,
    OutputFileConfig,
    RollingPolicy,
)
from flowc.errors import ApiError, FlowcError
from flowc.executor import run_reference
from flowc.executor.runtime.clock import ManualClock, using_clock
from flowc.executor.runtime.row_files import strftime_pattern

UUID = r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"
# 2026-03-01 10:59:59.000 UTC
T0 = int(dt.datetime(2026, 3, 1, 10, 59, 59, tzinfo=dt.timezone.utc).timestamp() * 1000)


def _files(root: Path) -> dict[str, list[str]]:
    return {p.relative_to(root).as_posix(): p.read_text().splitlines()
            for p in sorted(root.rglob("*")) if p.is_file()}


def _job(values: list[Any], sink: Any, type_info: Any = None, parallelism: int = 1) -> Any:
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(parallelism)
    stream = env.from_collection(values, type_info=type_info) if type_info \
        else env.from_collection(values)
    stream.sink_to(sink)
    return env.get_job_graph()


def test_part_files_roll_when_they_hold_more_than_part_size_bytes(tmp_path: Path) -> None:
    sink = (FileSink.for_row_format(str(tmp_path / "out"), Encoder.simple_string_encoder())
            .with_rolling_policy(RollingPolicy.default_rolling_policy(part_size=8))
            .with_output_file_config(OutputFileConfig.builder().with_part_prefix("p")
                                     .with_part_suffix(".log").build())
            .with_bucket_assigner(BucketAssigner.base_path_bucket_assigner()).build())
    # "aaaa\n" (5 bytes): 5 > 8 no, 10 > 8 yes -> rolls before the third record.
    run_reference(_job(["aaaa", "bbbb", "cccc", "dddd", "e"], sink, Types.STRING()))
    files = _files(tmp_path / "out")
    names = sorted(files)
    assert all(re.fullmatch(rf"p-{UUID}-\d\.log", n) for n in names), names
    assert len({n[2:38] for n in names}) == 1  # one uuid per subtask and bucket
    by_counter = {int(n.rsplit("-", 1)[1][0]): files[n] for n in names}
    assert by_counter == {0: ["aaaa", "bbbb"], 1: ["cccc", "dddd"], 2: ["e"]}


def test_on_checkpoint_policy_writes_one_file_per_subtask(tmp_path: Path) -> None:
    sink = (FileSink.for_row_format(str(tmp_path / "out"), Encoder.simple_string_encoder())
            .with_rolling_policy(RollingPolicy.on_checkpoint_rolling_policy())
            .with_bucket_assigner(BucketAssigner.base_path_bucket_assigner()).build())
    env = StreamExecutionEnvironment.get_execution_environment()
    env.from_collection([f"line {i}" for i in range(40)], type_info=Types.STRING()) \
        .rebalance().map(lambda s: s, output_type=Types.STRING()).set_parallelism(3) \
        .sink_to(sink).set_parallelism(3)
    run_reference(env.get_job_graph())
    files = _files(tmp_path / "out")
    assert len(files) == 3 and all(re.fullmatch(rf"part-{UUID}-0", n) for n in files)
    assert sorted(x for lines in files.values() for x in lines) == sorted(
        f"line {i}" for i in range(40))


def test_records_are_written_as_javas_tostring_of_their_declared_type(tmp_path: Path) -> None:
    row = Types.ROW_NAMED(["name", "score", "tags", "when"],
                          [Types.STRING(), Types.DOUBLE(), Types.LIST(Types.INT()),
                           Types.SQL_TIMESTAMP()])
    sink = (FileSink.for_row_format(str(tmp_path / "out"), Encoder.simple_string_encoder())
            .with_bucket_assigner(BucketAssigner.base_path_bucket_assigner()).build())
    when = dt.datetime(2026, 3, 1, 12, 0, 5, 250000)
    run_reference(_job([Row("a", 1e7, [1, 2], when), Row("b", None, [], when)], sink, row))
    (lines,) = _files(tmp_path / "out").values()
    assert lines == ["+I[a, 1.0E7, [1, 2], 2026-03-01 12:00:05.25]",
                     "+I[b, null, [], 2026-03-01 12:00:05.25]"]
    # A tuple holding a Row: Tuple2.toString calls Row.toString.
    nested = Types.TUPLE([Types.STRING(), Types.ROW([Types.INT(), Types.FLOAT()])])
    sink2 = (FileSink.for_row_format(str(tmp_path / "out2"), Encoder.simple_string_encoder())
             .with_bucket_assigner(BucketAssigner.base_path_bucket_assigner()).build())
    run_reference(_job([("k", Row(1, 0.1))], sink2, nested))
    assert list(_files(tmp_path / "out2").values()) == [["(k,+I[1, 0.1])"]]


def test_untyped_records_are_written_with_str(tmp_path: Path) -> None:
    sink = (FileSink.for_row_format(str(tmp_path / "out"), Encoder.simple_string_encoder())
            .with_bucket_assigner(BucketAssigner.base_path_bucket_assigner()).build())
    run_reference(_job([("a", 1), {"k": 2}], sink))
    assert list(_files(tmp_path / "out").values()) == [["('a', 1)", "{'k': 2}"]]


def test_default_bucket_is_the_processing_hour_in_the_system_zone(tmp_path: Path) -> None:
    sink = FileSink.for_row_format(str(tmp_path / "out"), Encoder.simple_string_encoder()).build()
    with using_clock(ManualClock(T0, step=500)):  # crosses 11:00 after two readings
        run_reference(_job(["a", "b", "c", "d"], sink, Types.STRING()))
    files = _files(tmp_path / "out")
    hours = [dt.datetime.fromtimestamp(t / 1000).strftime("%Y-%m-%d--%H")
             for t in (T0, T0 + 3600_000)]
    assert sorted({n.split("/")[0] for n in files}) == hours
    assert sum(len(v) for v in files.values()) == 4


def test_date_time_bucket_pattern_and_zone(tmp_path: Path) -> None:
    assigner = BucketAssigner.date_time_bucket_assigner("yyyy/MM/dd'h'HH", "GMT+02:00")
    sink = (FileSink.for_row_format(str(tmp_path / "out"), Encoder.simple_string_encoder())
            .with_bucket_assigner(assigner).build())
    with using_clock(ManualClock(T0)):
        run_reference(_job(["x"], sink, Types.STRING()))
    (name,) = _files(tmp_path / "out")
    assert re.fullmatch(rf"2026/03/01h12/part-{UUID}-0", name), name
    assert strftime_pattern("yyyy-MM-dd--HH") == "%Y-%m-%d--%H"
    assert strftime_pattern("'at' HH''mm") == "at %H'%M"


def test_part_files_roll_on_processing_time(tmp_path: Path) -> None:
    """Checked every bucket_check_interval: older than rollover_interval -> rolled."""
    sink = (FileSink.for_row_format(str(tmp_path / "out"), Encoder.simple_string_encoder())
            .with_rolling_policy(RollingPolicy.default_rolling_policy(
                rollover_interval=2500, inactivity_interval=60_000))
            .with_bucket_check_interval(1000)
            .with_bucket_assigner(BucketAssigner.base_path_bucket_assigner()).build())
    # The writer reads the clock once when it starts and once per record (1 s apart): the
    # check at 3 s finds the part (made at 1 s) 2 s old, the one at 4 s 3 s old -> rolls.
    with using_clock(ManualClock(0, step=1000)):
        run_reference(_job([str(i) for i in range(8)], sink, Types.STRING()))
    files = _files(tmp_path / "out")
    counters = {int(n.rsplit("-", 1)[1]): lines for n, lines in files.items()}
    assert counters == {0: ["0", "1", "2"], 1: ["3", "4", "5"], 2: ["6", "7"]}


def test_plan_is_flinks_sink_writer_with_committer_option(tmp_path: Path) -> None:
    sink = FileSink.for_row_format(str(tmp_path / "o"), Encoder.simple_string_encoder()).build()
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(1)
    env.from_collection(["a"], type_info=Types.STRING()).map(
        lambda s: s, output_type=Types.STRING()).sink_to(sink)
    env.set_option("flowc.sink_committers", "true")
    names = [v.name for v in env.get_job_graph().vertices_sorted()]
    assert names == ["Source: Collection Source -> Map -> Sink: Writer -> Sink: Committer"]


def test_bad_arguments_are_user_errors(tmp_path: Path) -> None:
    with pytest.raises(ApiError, match="needs an Encoder"):
        FileSink.for_row_format(str(tmp_path), "utf-8")  # type: ignore[arg-type]
    with pytest.raises(ApiError, match="UTF-8"):
        Encoder.simple_string_encoder("UTF-16")
    with pytest.raises(ApiError, match="not 'EEE'"):
        BucketAssigner.date_time_bucket_assigner("yyyy-EEE")
    with pytest.raises(ApiError, match="unknown time zone"):
        BucketAssigner.date_time_bucket_assigner(timezone_id="Mars/Olympus")
    with pytest.raises(ApiError, match="part_size must be an int >= 1"):
        RollingPolicy.default_rolling_policy(part_size=0)
    with pytest.raises(ApiError, match="needs a RollingPolicy"):
        FileSink.for_row_format(str(tmp_path), Encoder.simple_string_encoder()) \
            .with_rolling_policy(5)  # type: ignore[arg-type]


def test_a_failed_job_commits_no_part_file(tmp_path: Path) -> None:
    sink = FileSink.for_row_format(str(tmp_path / "out"), Encoder.simple_string_encoder()).build()
    env = StreamExecutionEnvironment.get_execution_environment()
    env.from_collection([1, 0], type_info=Types.INT()).map(
        lambda x: 1 // x, output_type=Types.INT()).sink_to(sink)
    with pytest.raises(FlowcError):
        run_reference(env.get_job_graph())
    assert not (tmp_path / "out").exists()
    assert not [n for n in os.listdir(tmp_path) if "flowc-tmp" in n]


@pytest.mark.spark
@pytest.mark.slow
def test_spark_writes_the_same_files_with_the_drivers_clock(tmp_path: Path, spark: Any) -> None:
    from flowc.executor import run_job_graph

    def sink(name: str) -> Any:
        return (FileSink.for_row_format(str(tmp_path / name), Encoder.simple_string_encoder())
                .with_rolling_policy(RollingPolicy.default_rolling_policy(part_size=8))
                .with_bucket_assigner(BucketAssigner.date_time_bucket_assigner(
                    "yyyy-MM-dd--HH", "UTC")).build())
    values = [f"r{i}" for i in range(10)]
    with using_clock(ManualClock(T0)):
        run_reference(_job(values, sink("ref"), Types.STRING(), parallelism=2))
        run_job_graph(_job(values, sink("spark"), Types.STRING(), parallelism=2))

    def shape(root: Path) -> list[tuple[str, list[str]]]:
        return sorted((re.sub(UUID, "<uuid>", n), v) for n, v in _files(root).items())
    assert shape(tmp_path / "spark") == shape(tmp_path / "ref")
    assert {n.split("/")[0] for n in _files(tmp_path / "spark")} == {"2026-03-01--10"}


@pytest.fixture(scope="module")
def spark() -> Any:
    from flowc.executor import get_spark

    return get_spark("local[2]")


def test_a_bad_sink_in_a_program_is_a_user_error_at_its_line(tmp_path: Path,
                                                             capsys: Any) -> None:
    from flowc.cli import main

    prog = tmp_path / "prog.py"
    prog.write_text(
        "from flowc.common import Types\n"
        "from flowc.common.serialization import Encoder\n"
        "from flowc.datastream import StreamExecutionEnvironment\n"
        "from flowc.datastream.connectors.file_system import BucketAssigner, FileSink\n"
        "env = StreamExecutionEnvironment.get_execution_environment()\n"
        "assigner = BucketAssigner.date_time_bucket_assigner('yyyy-EEE')\n")
    assert main(["check", str(prog)]) == 1
    err = capsys.readouterr().err
    assert f"{prog}:6:12: error: flowc's date-time bucket assigner formats" in err
    assert "not 'EEE'" in err and "Traceback" not in err
