"""File sources and sinks on the reference executor, and the shared reader's split rule
(``runtime.files``). The Spark side of the same behaviour: test_spark_io.py."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from flowc.datastream import FileSink
from flowc.errors import ExecutionError
from flowc.executor import run_reference
from flowc.executor.runtime import files
from flowc.operators import FileSource
from flowc.parser import compile_source

from .helpers import collect, env_for

T1 = 1704067201000  # 2024-01-01 00:00:01 UTC


def _source(env: Any, path: Path, fmt: str, schema: Any, options: Any = (),
            dead: Path | None = None) -> Any:
    if fmt == "csv" and not any(k == "header" for k, _ in options):
        options = (*options, ("header", "false"))  # these files have no header line
    spec = FileSource(str(path), fmt, tuple(schema), tuple(options),
                      str(dead) if dead else None)
    return env.from_source(spec, None, "src")


def _lines(path: Path) -> list[str]:
    return [ln for f in sorted(path.glob("part-*")) for ln in f.read_text().splitlines()]


def test_timestamps_iso_or_epoch_millis_in_csv_and_json(tmp_path: Path) -> None:
    (tmp_path / "a.csv").write_text(
        "ts\n2024-01-01 00:00:01\n1704067201000\n2024-01-01T00:00:01.5Z\n"
        "2024-01-01T02:00:01+02:00\n2024-01-01\n")
    (tmp_path / "a.json").write_text(
        '{"ts": 1704067201000}\n{"ts": "2024-01-01T00:00:01.250"}\n{"ts": "1704067201000"}\n'
        '{"ts": null}\n')
    env = env_for(1)
    collect(_source(env, tmp_path / "a.csv", "csv", [("ts", "timestamp")], [("header", "true")]),
            "csv")
    collect(_source(env, tmp_path / "a.json", "json", [("ts", "timestamp")]), "json")
    r = run_reference(env.get_job_graph())
    assert r["csv"] == [(T1,), (T1,), (T1 + 500,), (T1,), (T1 - 1000,)]
    assert r["json"] == [(T1,), (T1 + 250,), (T1,), (None,)]


def test_csv_null_value_quote_and_delimiter(tmp_path: Path) -> None:
    (tmp_path / "a.csv").write_text("1;NA;'x;y'\nNA;;\n")
    env = env_for(1)
    collect(_source(env, tmp_path / "a.csv", "csv", [("n", "int"), ("s", "string"),
                                                     ("t", "string")],
                    [("delimiter", ";"), ("quote", "'"), ("null_value", "NA")]))
    assert run_reference(env.get_job_graph())["out"] == [(1, None, "x;y"), (None, "", "")]


def test_bad_row_names_file_and_line(tmp_path: Path) -> None:
    (tmp_path / "a.csv").write_text("n\n1\n\n2\nthree\n")
    env = env_for(1)
    collect(_source(env, tmp_path / "a.csv", "csv", [("n", "int")], [("header", "true")]))
    with pytest.raises(ExecutionError) as info:
        run_reference(env.get_job_graph())
    assert "a.csv (line 5): 'three': not an int" in info.value.message


def test_dead_letters_per_source_with_file_row_text_and_error(tmp_path: Path) -> None:
    (tmp_path / "a.csv").write_text("1\nx\n3\n")
    (tmp_path / "b.json").write_text('{"n": 1}\n{"n": 2.5}\n\nnot json\n')
    env = env_for(2)
    a = _source(env, tmp_path / "a.csv", "csv", [("n", "int")], dead=tmp_path / "dead_a")
    b = _source(env, tmp_path / "b.json", "json", [("n", "int")], dead=tmp_path / "dead_b")
    collect(a.union(b))
    r = run_reference(env.get_job_graph())
    assert sorted(r["out"]) == [(1,), (1,), (3,)]
    dead_a = [json.loads(x) for x in _lines(tmp_path / "dead_a")]
    dead_b = [json.loads(x) for x in _lines(tmp_path / "dead_b")]
    assert dead_a == [{"file": str(tmp_path / "a.csv"), "row": 2, "text": "x",
                       "error": "not an int: 'x'"}]
    assert [(d["row"], d["text"]) for d in dead_b] == [(2, '{"n": 2.5}'), (4, "not json")]
    assert dead_b[0]["error"] == "not an int: 2.5"


def test_parquet_type_mismatch_is_a_plain_error(tmp_path: Path) -> None:
    import pyarrow as pa

    pq.write_table(pa.table({"n": ["a"]}), tmp_path / "a.parquet")
    env = env_for(1)
    collect(_source(env, tmp_path / "a.parquet", "parquet", [("n", "int")]))
    with pytest.raises(ExecutionError, match=r"a.parquet: column 'n' is string in the file, "
                                             r"but the schema declares int"):
        run_reference(env.get_job_graph())


FLOW = """
set parallelism = 1;
source s (id int, amount double, ts timestamp, tags array<string>)
  values (1, 2, timestamp '2024-01-01 00:00:01', ['a']),
         (2, 2.5, timestamp '2024-01-01 00:00:02.5', cast(null as array<string>)),
         (3, null, null, []);
s | write parquet 'out.parquet';
s | write json 'out.json';
s | map id, amount, ts | write csv 'out.csv' options (null_value = 'NA');
"""


def test_sink_writes_the_stream_schema_and_reads_back(tmp_path: Path) -> None:
    script = compile_source(FLOW, str(tmp_path / "job.flow"), base_dir=str(tmp_path))
    run_reference(script.env.get_job_graph())
    table = pq.read_table(tmp_path / "out.parquet")
    assert [str(t) for t in table.schema.types] == [
        "int64", "double", "timestamp[ms, tz=UTC]", "list<element: string>"]
    rows = [(1, 2.0, T1, ["a"]), (2, 2.5, T1 + 1500, None), (3, None, None, [])]
    schema = [("id", "int"), ("amount", "double"), ("ts", "timestamp"),
              ("tags", "array<string>")]
    env = env_for(1)
    collect(_source(env, tmp_path / "out.parquet", "parquet", schema), "parquet")
    collect(_source(env, tmp_path / "out.json", "json", schema), "json")
    collect(_source(env, tmp_path / "out.csv", "csv", schema[:3],
                    [("header", "true"), ("null_value", "NA")]), "csv")
    r = run_reference(env.get_job_graph())
    assert _lines(tmp_path / "out.csv")[-1] == "3,NA,NA"
    assert r["parquet"] == r["json"] == rows
    assert r["csv"] == [x[:3] for x in rows]


def test_sink_without_schema_infers_types(tmp_path: Path) -> None:
    env = env_for(1)
    s = env.from_collection([(None, 1, None), (None, 2.5, None), ("x", 3, None)])
    s.sink_to(FileSink(str(tmp_path / "p"), "parquet", ("a", "b", "c")))
    env.from_collection([{"b": 2, "a": "x"}]).sink_to(
        FileSink(str(tmp_path / "j"), "json", ("a", "b")))
    run_reference(env.get_job_graph())
    table = pq.read_table(tmp_path / "p")
    assert [str(t) for t in table.schema.types] == ["string", "double", "string"]
    assert table.to_pylist()[1] == {"a": None, "b": 2.5, "c": None}
    assert [json.loads(x) for x in _lines(tmp_path / "j")] == [{"a": "x", "b": 2}]


def test_sink_with_mixed_types_fails_and_commits_nothing(tmp_path: Path) -> None:
    env = env_for(1)
    good = env.from_collection([(1,), (2,)])
    good.sink_to(FileSink(str(tmp_path / "good"), "json"))
    good.sink_to(FileSink(str(tmp_path / "also_good"), "csv"))
    env.from_collection([(1,), ("x",)]).sink_to(FileSink(str(tmp_path / "bad"), "csv"))
    with pytest.raises(ExecutionError, match="column 'f0' holds values of different types"):
        run_reference(env.get_job_graph())
    assert sorted(p.name for p in tmp_path.iterdir()) == []


# -- the split rule ------------------------------------------------------------------------------

def test_split_rule() -> None:
    mib = 1 << 20
    assert files.split_size(10 * mib, 2) == 5 * mib
    assert files.split_size(1000, 4) == files.MIN_SPLIT
    assert files.split_size(10_000 * mib, 2) == files.MAX_SPLIT
    splits = files.plan_splits("csv", [("b", 9 * mib), ("a", 1)], 2)
    assert [(s.path, s.start, s.end) for s in splits] == [
        ("a", 0, -1), ("b", 0, 4 * mib + mib // 2 + 1), ("b", 4 * mib + mib // 2 + 1, -1)]
    assert files.subtask_splits(splits, 1, 2) == [splits[1]]
    assert files.plan_splits("parquet", [("x", 500 * mib)], 4) == [files.Split("x", 0, -1)]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from(["1", "22", "", "x", "4444"]), max_size=30),
       st.integers(1, 12), st.booleans())
def test_splits_own_each_line_once(cells: list[str], size: int, header: bool) -> None:
    """Cut anywhere, the splits of a file read every row exactly once, with its line
    number - from an open file and from the file's bytes (the remote path) alike."""
    text = ("n\n" if header else "") + "".join(c + "\n" for c in cells)
    data = text.encode()
    spec = FileSource("f.csv", "csv", (("n", "int"),), (("header", str(header).lower()),),
                      dead_letter="dead")
    cuts = list(range(0, len(data), size)) or [0]
    splits = [files.Split("f.csv", c, c + size if c + size < len(data) else -1) for c in cuts]
    bad, bad2 = files.BadRows(spec), files.BadRows(spec)
    rows, rows2 = [], []
    for s in splits:
        rows.extend(files.read_split(spec, s, io.BytesIO(data), bad))
        begin, stop = files.chunk_bounds(data, s.start, s.end)
        rows2.extend(files.read_chunk(spec, "f.csv", data[begin:stop], s.start == 0,
                                      data.count(b"\n", 0, begin), bad2))
    assert rows == rows2 == [(int(c),) for c in cells if c not in ("", "x")]
    first = 2 if header else 1
    expected = [{"file": "f.csv", "row": first + i, "text": "x", "error": "not an int: 'x'"}
                for i, c in enumerate(cells) if c == "x"]
    assert [json.loads(x) for x in bad.lines] == [json.loads(x) for x in bad2.lines] == expected


def test_remote_sinks_and_unknown_options_fail_before_running(tmp_path: Path) -> None:
    from flowc.errors import UnsupportedError

    for sink in (FileSink("s3a://bucket/out", "csv"),
                 FileSink(str(tmp_path / "o"), "csv", (), (("nullvalue", "x"),))):
        env = env_for(1)
        env.from_collection([(1,)]).sink_to(sink)
        with pytest.raises(UnsupportedError) as info:
            run_reference(env.get_job_graph())
        assert info.value.span is not None
    env = env_for(1)
    collect(_source(env, tmp_path / "a.csv", "csv", [("n", "int")], [("nullvalue", "x")]))
    with pytest.raises(UnsupportedError, match="unknown csv source option 'nullvalue'"):
        run_reference(env.get_job_graph())
