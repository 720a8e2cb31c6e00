"""The native parquet reader of the columnar executor gives exactly the row reader's records,
errors and dead letters, on random files: column types the declared type takes, does not
take, or takes only value by value; nulls; several row groups."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from flowc.errors import ExecutionError
from flowc.executor import run_job_graph, run_reference
from flowc.executor.arrow import convert, parquetsource
from flowc.executor.runtime import files
from flowc.operators import CollectSink, FileSource
from flowc.parser import compile_source
from flowc.types import Schema, array_of, type_from_name

# (file column type, a value drawer) per kind of column
_INTS = st.integers(-(1 << 62), 1 << 62)
COLUMNS: dict[str, tuple[pa.DataType, Any]] = {
    "int8": (pa.int8(), st.integers(-128, 127)),
    "int32": (pa.int32(), st.integers(-(1 << 31), (1 << 31) - 1)),
    "int64": (pa.int64(), _INTS),
    "uint64": (pa.uint64(), st.sampled_from([0, 5, (1 << 63) - 1, 1 << 63, (1 << 64) - 1])),
    "float32": (pa.float32(), st.floats(width=32)),
    "float64": (pa.float64(), st.floats()),
    "string": (pa.string(), st.sampled_from(["a", "", "ü", "2024-05-01T10:00:00Z", "17",
                                             "2024-02-30T00:00:00Z", "x"])),
    "large_string": (pa.large_string(), st.sampled_from(["b", "1714557600000"])),
    "bool": (pa.bool_(), st.booleans()),
    "ts_s": (pa.timestamp("s"), st.integers(-(1 << 33), 1 << 33)),
    "ts_ns_tz": (pa.timestamp("ns", tz="Europe/Berlin"), _INTS),
    "date32": (pa.date32(), st.integers(-100_000, 100_000)),
    "list": (pa.list_(pa.int64()), st.lists(st.integers(-5, 5), max_size=3)),
}
DECLARED = ["string", "int", "double", "bool", "timestamp", "array<int>"]


@st.composite
def files_(draw: Any) -> tuple[list[tuple[str, str]], pa.Table]:
    n = draw(st.integers(0, 30))
    width = draw(st.integers(1, 3))
    kinds = [draw(st.sampled_from(sorted(COLUMNS))) for _ in range(width)]
    declared = [draw(st.sampled_from(DECLARED)) for _ in range(width)]
    arrays = []
    for kind in kinds:
        arrow_type, values = COLUMNS[kind]
        col = [draw(st.one_of(st.none(), values)) for _ in range(n)]
        if kind == "date32":
            col = [None if v is None else dt.date(1970, 1, 1) + dt.timedelta(days=v)
                   for v in col]
        arrays.append(pa.array(col, arrow_type))
    names = [f"c{i}" for i in range(width)]
    return list(zip(names, declared)), pa.table(arrays, names=names)


@settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))
@given(f=files_(), dead=st.booleans(), group=st.integers(1, 8))
def test_native_reader_equals_row_reader(tmp_path_factory: Any, f: Any, dead: bool,
                                         group: int) -> None:
    declared, table = f
    where: Path = tmp_path_factory.mktemp("pq")
    path = where / "in.parquet"
    pq.write_table(table, path, row_group_size=group)
    spec = FileSource(str(path), "parquet", tuple(declared), (),
                      dead_letter=str(where / "dead") if dead else None)
    schema = _schema(declared)
    [split] = files.plan_splits("parquet", files.list_files(str(path)), 1)
    want_bad, got_bad = files.BadRows(spec), files.BadRows(spec)
    want: list[Any] | str
    got: list[Any] | str
    try:
        want = list(files.read_local(spec, [split], want_bad))
    except ExecutionError as e:
        want = str(e)
    try:
        got = [r for c in _read(spec, split, got_bad, schema) for r in c.rows()]
    except ExecutionError as e:
        got = str(e)
    assert repr(got) == repr(want)  # NaN is NaN
    assert got_bad.lines == want_bad.lines


def _type(name: str) -> Any:
    if name.startswith("array<"):
        return array_of(_type(name[6:-1]))
    return type_from_name(name)


def _schema(declared: list[tuple[str, str]]) -> pa.Schema:
    return convert.arrow_schema(Schema.of(*[(n, _type(t)) for n, t in declared]))


def _read(spec: FileSource, split: files.Split, bad: files.BadRows, schema: Any) -> Any:
    with open(split.path, "rb") as fh:
        yield from parquetsource.read_split(spec, split, fh, bad, None, schema, 7)


def test_exact_columns_take_the_native_path(tmp_path: Path, monkeypatch: Any) -> None:
    """A file whose columns convert exactly never reaches the row reader."""
    n = 1000
    table = pa.table({"s": [f"u{i}" for i in range(n)], "i": pa.array(range(n), pa.int32()),
                      "d": pa.array(range(n), pa.int64()), "b": [i % 2 == 0 for i in range(n)],
                      "t": pa.array([i * 1000 for i in range(n)], pa.timestamp("ms", "UTC"))})
    path = tmp_path / "c.parquet"
    pq.write_table(table, path, row_group_size=300)
    declared = [("s", "string"), ("i", "int"), ("d", "double"), ("b", "bool"),
                ("t", "timestamp")]
    spec = FileSource(str(path), "parquet", tuple(declared), ())

    def boom(*_: Any, **__: Any) -> Any:
        raise AssertionError("the row reader was used")
    monkeypatch.setattr(files, "_read_parquet", boom)
    [split] = files.plan_splits("parquet", files.list_files(str(path)), 1)
    rows = [r for c in _read(spec, split, files.BadRows(spec), _schema(declared))
            for r in c.rows()]
    assert len(rows) == n
    assert rows[3] == ("u3", 3, 3.0, False, 3000)


def test_a_wrong_column_type_is_the_row_readers_error(tmp_path: Path) -> None:
    path = tmp_path / "c.parquet"
    pq.write_table(pa.table({"n": ["a"]}), path)
    spec = FileSource(str(path), "parquet", (("n", "int"),), ())
    [split] = files.plan_splits("parquet", files.list_files(str(path)), 1)
    with pytest.raises(ExecutionError, match="column 'n' is string in the file, but the "
                                             "schema declares int"):
        list(_read(spec, split, files.BadRows(spec), _schema([("n", "int")])))


@pytest.mark.spark
def test_parquet_job_on_spark_equals_reference(spark: Any, tmp_path: Path) -> None:
    """A .flow job over two parquet files (int32 counts, second timestamps): the columnar
    executor (native reader) gives the reference executor's results."""
    for part in range(2):
        ids = range(part * 1000, part * 1000 + 1000)
        pq.write_table(pa.table({"k": [f"u{i % 7}" for i in ids],
                                 "n": pa.array([i % 5 for i in ids], pa.int32()),
                                 "ts": pa.array([i // 4 for i in ids], pa.timestamp("s"))}),
                       tmp_path / f"d{part}.parquet", row_group_size=256)

    def run(executor: str) -> Any:
        text = (f"set parallelism = 2;\nsource s (k string, n int, ts timestamp) from parquet "
                f"'{tmp_path}' watermark ts - 1s;\n"
                "let result = s | key by k | window tumbling 5s | aggregate sum(n) as t;\n")
        script = compile_source(text, str(tmp_path / "job.flow"),
                                options={"mode": "batch", "flowc.executor": executor})
        script.streams["result"].stream.sink_to(CollectSink("result"))
        graph = script.env.get_job_graph()
        result = run_job_graph(graph) if executor == "columnar" else run_reference(graph)
        return result.collected["result"]
    got = run("columnar")
    assert got == run("row")
    assert len(got) > 100
