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
NO_HEADER = (("header", "false"),)  # _clicks writes no header line


def test_csv_source_and_file_sinks(spark: Any, tmp_path: Path) -> None:
    src = tmp_path / "clicks.csv"
    _clicks(src)
    env = env_for(1)
    s = env.from_source(FileSource(str(src), "csv", SCHEMA, NO_HEADER), None, "clicks")
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
    env.from_source(FileSource(str(src), "csv", SCHEMA, NO_HEADER), None, "clicks") \
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
    collect(env.from_source(FileSource(str(src), "csv", SCHEMA, NO_HEADER, dead_letter=str(dl)), None,
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


# -- file sources and sinks: Spark == reference ---------------------------------------------------

def _read_lines(path: Path) -> list[str]:
    return [ln for f in sorted(path.glob("part-*")) for ln in f.read_text().splitlines()]


def _sources_job(tmp_path: Path, csv_path: str) -> Any:
    env = env_for(2)
    a = env.from_source(FileSource(csv_path, "csv", (("n", "int"), ("ts", "timestamp"),
                                                     ("s", "string")),
                                   (("header", "true"), ("null_value", "NA")),
                                   dead_letter=str(tmp_path / "dead_a")), None, "a")
    b = env.from_source(FileSource(str(tmp_path / "in" / "b.json"), "json",
                                   (("n", "int"), ("ts", "timestamp"),
                                    ("tags", "array<int>")),
                                   dead_letter=str(tmp_path / "dead_b")), None, "b")
    collect(a, "a")
    collect(b, "b")
    collect(a.map(lambda r: (r[0], r[1])).union(b.map(lambda r: (r[0], r[1])))
            .key_by(lambda r: r[0]).reduce(lambda x, y: (x[0], max(x[1] or 0, y[1] or 0))),
            "keyed")
    return env.get_job_graph()


def test_file_sources_match_reference(spark: Any, tmp_path: Path) -> None:
    """Timestamps as ISO text or epoch millis (csv and json), csv null_value, array fields,
    dead letters per source with file/row/text/error, two files split by the same rule
    (file k to subtask k % 2), read as a glob through Spark (a file: URI) and locally."""
    d = tmp_path / "in"
    d.mkdir()
    (d / "a1.csv").write_text("n,ts,s\n1,2024-01-01 00:00:01,x\n2,1704067202000,NA\n"
                              "3,yesterday,z\n")
    (d / "a2.csv").write_text("n,ts,s\n4,2024-01-01T00:00:04.5Z,\"q,r\"\n")
    (d / "b.json").write_text('{"n": 5, "ts": 1704067205000, "tags": [1, null]}\n'
                              '{"n": 6, "ts": "2024-01-01 00:00:06", "tags": "x"}\n')
    results = {}
    for where, csv_path in (("local", str(d / "a*.csv")), ("uri", f"file://{d}/a*.csv")):
        jg = _sources_job(tmp_path, csv_path)
        expected = run_reference(jg)
        dead_ref = (_read_lines(tmp_path / "dead_a"), _read_lines(tmp_path / "dead_b"))
        actual = run_job_graph(jg)
        dead_spark = (_read_lines(tmp_path / "dead_a"), _read_lines(tmp_path / "dead_b"))
        assert actual.collected == expected.collected, where
        assert dead_spark == dead_ref, where
        assert [(v.records_in, v.records_out) for v in actual.vertices] == \
            [(v.records_in, v.records_out) for v in expected.vertices]
        results[where] = actual
    r = results["local"]
    assert r["a"] == [(1, 1704067201000, "x"), (2, 1704067202000, None),
                      (4, 1704067204500, "q,r")]
    assert r["b"] == [(5, 1704067205000, [1, None])]
    dead_a = [json.loads(x) for x in _read_lines(tmp_path / "dead_a")]
    dead_b = [json.loads(x) for x in _read_lines(tmp_path / "dead_b")]
    assert [(Path(e["file"]).name, e["row"], e["text"]) for e in dead_a] == \
        [("a1.csv", 4, "3,yesterday,z")]
    assert "not a timestamp" in dead_a[0]["error"]
    assert [(e["row"], e["error"]) for e in dead_b] == [(2, "not an array: 'x'")]


def test_bad_row_error_names_file_and_line_on_both(spark: Any, tmp_path: Path) -> None:
    src = tmp_path / "clicks.csv"
    _clicks(src, bad=True)
    env = env_for(2)
    collect(env.from_source(FileSource(str(src), "csv", SCHEMA, NO_HEADER), None, "clicks"))
    with pytest.raises(ExecutionError) as spark_err:
        run_job_graph(env.get_job_graph())
    with pytest.raises(ExecutionError) as ref_err:
        run_reference(env.get_job_graph())
    assert spark_err.value.message == ref_err.value.message
    assert f"bad row in {src} (line 3): 'u3,a3,AppClick,not-a-time'" in spark_err.value.message


def test_parquet_schema_mismatch_is_a_plain_error(spark: Any, tmp_path: Path) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    pq.write_table(pa.table({"n": ["a"]}), tmp_path / "a.parquet")
    env = env_for(1)
    collect(env.from_source(FileSource(str(tmp_path / "a.parquet"), "parquet", (("n", "int"),)),
                            None, "src"))
    with pytest.raises(ExecutionError) as info:
        run_job_graph(env.get_job_graph())
    msg = info.value.message
    assert "a.parquet: column 'n' is string in the file, but the schema declares int" in msg
    assert "Py4J" not in msg and "Traceback" not in msg


SINKS_FLOW = """
set parallelism = 2;
source s (id int, amount double, ts timestamp, tags array<string>)
  values (1, 2, timestamp '2024-01-01 00:00:01', ['a']),
         (2, 2.5, timestamp '2024-01-01 00:00:02.5', cast(null as array<string>)),
         (3, null, null, []);
s | write parquet 'out.parquet';
s | write json 'out.json';
s | map id, amount, ts | write csv 'out.csv' options (null_value = 'NA');
"""


def test_file_sinks_write_the_schema_and_read_back(spark: Any, tmp_path: Path) -> None:
    import pyarrow.parquet as pq

    from flowc.parser import compile_source

    script = compile_source(SINKS_FLOW, str(tmp_path / "job.flow"), base_dir=str(tmp_path))
    run_job_graph(script.env.get_job_graph())
    table = pq.read_table(tmp_path / "out.parquet")
    assert [str(t) for t in table.schema.types] == [
        "int64", "double", "timestamp[ms, tz=UTC]", "list<element: string>"]
    schema = (("id", "int"), ("amount", "double"), ("ts", "timestamp"),
              ("tags", "array<string>"))
    env = env_for(1)
    for fmt, opts, fields in (("parquet", (), schema), ("json", (), schema),
                              ("csv", (("header", "true"), ("null_value", "NA")), schema[:3])):
        collect(env.from_source(FileSource(str(tmp_path / f"out.{fmt}"), fmt, fields, opts),
                                None, fmt), fmt)
    r = run_reference(env.get_job_graph())
    rows = [(1, 2.0, 1704067201000, ["a"]), (2, 2.5, 1704067202500, None), (3, None, None, [])]
    assert sorted(r["parquet"]) == sorted(r["json"]) == rows
    assert sorted(r["csv"]) == [x[:3] for x in rows]
    assert "3,NA,NA" in [ln for f in (tmp_path / "out.csv").glob("part-*")
                         for ln in f.read_text().splitlines()]


def test_file_sink_without_schema_infers_and_never_nulls(spark: Any, tmp_path: Path) -> None:
    import pyarrow.parquet as pq

    env = env_for(1)
    env.from_collection([(None, 1), (None, 2.5), ("x", 3)]).sink_to(
        FileSink(str(tmp_path / "p"), "parquet", ("a", "b")))
    env.from_collection([{"b": 2, "a": "x"}]).sink_to(
        FileSink(str(tmp_path / "j"), "json", ("a", "b")))
    env.from_collection([None]).filter(lambda v: v is not None).sink_to(
        FileSink(str(tmp_path / "e"), "parquet", ("a",)))
    run_job_graph(env.get_job_graph())
    table = pq.read_table(tmp_path / "p")
    assert [str(t) for t in table.schema.types] == ["string", "double"]
    assert table.to_pylist() == [{"a": None, "b": 1.0}, {"a": None, "b": 2.5},
                                 {"a": "x", "b": 3.0}]
    assert [json.loads(x) for x in _read_lines(tmp_path / "j")] == [{"a": "x", "b": 2}]
    assert pq.read_table(tmp_path / "e").num_rows == 0


def test_failed_job_commits_no_sink(spark: Any, tmp_path: Path) -> None:
    env = env_for(1)
    env.from_collection([(1,), (2,)]).sink_to(FileSink(str(tmp_path / "good"), "csv"))
    env.from_collection([1, 3]).map(failing).sink_to(FileSink(str(tmp_path / "bad"), "json"))
    with pytest.raises(ExecutionError, match="ZeroDivisionError"):
        run_job_graph(env.get_job_graph())
    env = env_for(1)
    env.from_collection([(1,), (2,)]).sink_to(FileSink(str(tmp_path / "good"), "csv"))
    env.from_collection([(1,), ("x",)]).sink_to(FileSink(str(tmp_path / "mixed"), "csv"))
    with pytest.raises(ExecutionError, match="column 'f0' holds values of different types"):
        run_job_graph(env.get_job_graph())
    assert os.listdir(tmp_path) == []


def test_spark_write_failure_is_a_plain_error(spark: Any, tmp_path: Path) -> None:
    (tmp_path / "file").write_text("not a directory")
    env = env_for(1)
    env.from_collection([(1,)]).sink_to(FileSink(str(tmp_path / "file" / "out"), "csv"))
    with pytest.raises(ExecutionError) as info:
        run_job_graph(env.get_job_graph())
    msg = info.value.message
    assert msg.startswith(f"writing the csv sink {tmp_path / 'file' / 'out'} failed: ")
    assert "Py4J" not in msg and "\n" not in msg and "\tat " not in msg


def test_missing_input_names_the_source_and_its_line(spark: Any, tmp_path: Path) -> None:
    for path in (str(tmp_path / "nope.csv"), f"file://{tmp_path}/nope.csv",
                 str(tmp_path / "*.csv")):
        env = env_for(1)
        collect(env.from_source(FileSource(path, "csv", (("n", "int"),)), None, "src"))
        with pytest.raises(ExecutionError) as info:
            run_job_graph(env.get_job_graph())
        err = info.value
        assert err.message.startswith("operator 'Source: src' (defined at ")
        assert "input path does not exist: " in err.message or "no input file matches" in \
            err.message
        assert err.span is not None and err.span.file.endswith("test_spark_io.py")


def test_hash_edges_route_to_flink_subtask_on_spark(spark: Any) -> None:
    from flowc.datastream import KeyedProcessFunction
    from flowc.keygroups import assign_key_to_parallel_operator

    class Where(KeyedProcessFunction):
        def open(self, runtime_context: Any) -> None:
            self.subtask = runtime_context.get_index_of_this_subtask()

        def process_element(self, value: Any, ctx: Any) -> Any:
            yield (value, self.subtask)

    keys = [f"user{i}" for i in range(40)] + list(range(20)) + [-7, 2**40]
    for p, max_p in ((4, None), (3, 10)):
        env = env_for(2)
        if max_p is not None:
            env.set_max_parallelism(max_p)
        collect(env.from_collection(keys).rebalance().key_by(lambda v: v).process(Where())
                .set_parallelism(p))
        out = run_job_graph(env.get_job_graph())["out"]
        assert sorted(map(repr, out)) == sorted(map(repr, ((k, assign_key_to_parallel_operator(
            k, max_p or 128, p)) for k in keys)))
