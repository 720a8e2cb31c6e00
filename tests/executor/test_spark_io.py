"""Spark executor features: sinks, files, errors, configuration."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from flowc.datastream import FileSink, StreamExecutionEnvironment
from flowc.errors import ConfigError, ExecutionError
from flowc.executor import run_job_graph, run_reference
from flowc.operators import FileSource

from .helpers import collect, env_for

pytestmark = pytest.mark.spark


def test_print_format_and_order(spark: Any, capsys: Any) -> None:
    env = env_for(2)
    env.from_collection([1, 2, 3, 4]).rebalance().map(lambda x: x * 10).print()
    r = run_job_graph(env.get_job_graph())
    out = capsys.readouterr().out.splitlines()
    assert out == r.printed == run_reference(env.get_job_graph()).printed
    assert sorted(out) == ["1> 20", "1> 40", "2> 10", "2> 30"]


def test_print_plain_when_parallelism_one(spark: Any, capsys: Any) -> None:
    env = env_for(1)
    env.from_sequence(1, 3).print()
    run_job_graph(env.get_job_graph())
    assert capsys.readouterr().out.splitlines() == ["1", "2", "3"]


def test_sequence_split_like_flink(spark: Any) -> None:
    env = env_for(3)

    class Where:
        pass

    env.from_sequence(1, 10).map(lambda x: x).sink_to(__import__(
        "flowc.datastream", fromlist=["CollectSink"]).CollectSink("out"))
    r = run_job_graph(env.get_job_graph())
    assert r["out"] == list(range(1, 11))
    assert [v.records_in for v in r.vertices] == [10]


def failing(x: int) -> int:
    return 10 // (x - 3)


def test_udf_error_names_operator_and_line(spark: Any) -> None:
    env = env_for(2)
    env.from_collection([1, 2, 3]).map(failing).name("divide").print()
    with pytest.raises(ExecutionError) as info:
        run_job_graph(env.get_job_graph())
    err = info.value
    assert "divide" in err.message and "ZeroDivisionError" in err.message
    assert err.span is not None and err.span.file.endswith("test_spark_io.py")
    assert "Py4J" not in err.message and "Traceback" not in err.message


def _clicks(path: Path, bad: bool = False) -> None:
    rows = ["u1,a1,AppClick,2024-01-01 00:00:01", "u2,a2,view,2024-01-01 00:00:02"]
    if bad:
        rows.append("u3,a3,AppClick,not-a-time")
    path.write_text("\n".join(rows) + "\n")


SCHEMA = (("user_id", "string"), ("article_id", "string"), ("action", "string"),
          ("ts", "timestamp"))


def test_csv_source_and_file_sinks(spark: Any, tmp_path: Path) -> None:
    src = tmp_path / "clicks.csv"
    _clicks(src)
    env = env_for(1)
    s = env.from_source(FileSource(str(src), "csv", SCHEMA), None, "clicks")
    collect(s)
    out = tmp_path / "out"
    s.map(lambda r: (r[0], r[3])).sink_to(FileSink(str(out), "json", ("user", "ts")))
    r = run_job_graph(env.get_job_graph())
    assert r["out"] == [("u1", "a1", "AppClick", 1704067201000),
                        ("u2", "a2", "view", 1704067202000)]
    assert r["out"] == run_reference(env.get_job_graph())["out"]
    lines = [json.loads(x) for f in sorted(out.glob("part-*")) for x in f.read_text().splitlines()]
    assert lines == [{"user": "u1", "ts": 1704067201000}, {"user": "u2", "ts": 1704067202000}]
    assert not [p for p in os.listdir(tmp_path) if "flowc-tmp" in p]


def test_bad_row_fails_naming_file(spark: Any, tmp_path: Path) -> None:
    src = tmp_path / "clicks.csv"
    _clicks(src, bad=True)
    env = env_for(1)
    out = tmp_path / "out"
    env.from_source(FileSource(str(src), "csv", SCHEMA), None, "clicks") \
        .sink_to(FileSink(str(out), "csv"))
    with pytest.raises(ExecutionError) as info:
        run_job_graph(env.get_job_graph())
    assert "clicks.csv" in info.value.message and "not-a-time" in info.value.message
    assert not out.exists()  # atomic: nothing partial


def test_bad_rows_to_dead_letter(spark: Any, tmp_path: Path) -> None:
    src = tmp_path / "clicks.csv"
    _clicks(src, bad=True)
    dl = tmp_path / "dead"
    env = env_for(1)
    collect(env.from_source(FileSource(str(src), "csv", SCHEMA, dead_letter=str(dl)), None,
                            "clicks"))
    r = run_job_graph(env.get_job_graph())
    assert len(r["out"]) == 2
    text = "".join(f.read_text() for f in dl.glob("part-*"))
    assert "not-a-time" in text


def test_missing_java_is_a_config_error(monkeypatch: Any) -> None:
    from flowc.executor.spark.session import find_java

    monkeypatch.delenv("JAVA_HOME", raising=False)
    monkeypatch.setenv("PATH", "/nonexistent")
    with pytest.raises(ConfigError, match="Java 17"):
        find_java()


def test_env_execute_runs_on_spark(spark: Any) -> None:
    env = StreamExecutionEnvironment.get_execution_environment()
    collect(env.from_collection(["a", "b"]).map(str.upper))
    assert env.execute("upper")["out"] == ["A", "B"]
