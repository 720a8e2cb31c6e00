"""A columnar micro-batch's file sinks are written from the Arrow chunks at the driver
(``streaming/commit.py`` ``stage_arrow_part``, ``arrow/part_files.py``): the part file is
byte for byte the one the row path stages from the records (``sinks.stage_python``: Python's
csv and json formatting, pyarrow's parquet writer), print and collect sinks get the records
decoded at the end. Checked on random values without Spark, and on Spark end to end
(``flowc.executor`` = row vs columnar: the same part files, batch for batch)."""

from __future__ import annotations

import math
import os
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from flowc.common import Row, Types
from flowc.errors import ExecutionError
from flowc.executor.arrow import convert, part_files
from flowc.executor.sinks import abort, declared_columns, row_checker, shaper, stage_python
from flowc.executor.streaming.commit import chunk_records, sink_chunk, stage_arrow_part
from flowc.operators import FileSink
from flowc.types import Schema, array_of, type_from_name

T = {n: type_from_name(n) for n in ("string", "int", "double", "bool", "timestamp")}
SCHEMA = Schema.of(("s", T["string"]), ("n", T["int"]), ("x", T["double"]), ("b", T["bool"]),
                   ("ts", T["timestamp"]))
ARRAYS = Schema.of(("s", T["string"]), ("a", array_of(T["double"])),
                   ("t", array_of(T["string"])))
ODD_STRINGS = ["a", "", " ", " x ", "a,b", 'q"q', '"', "#x", "a\nb", "a\rb", "a\r\nb", "\t",
               "t\tx", "\\", "a;b", "it's", "\x00\x01\x1f\x7f", "\b\f", "ü日本", "\u2028",
               "😀", "NA", "1.5", None]
ODD_DOUBLES = [0.0, -0.0, 1.0, -1.5, 1e20, 1e16, 1e-5, 1e-4, 0.1 + 0.2, 1 / 3, 5e-324,
               1.7976931348623157e308, float("nan"), float("inf"), float("-inf"), None]
SPECS = {
    "csv": (),
    "csv_opts": (("header", "false"), ("delimiter", ";"), ("quote", "'"),
                 ("null_value", "NA")),
    "csv_tab": (("delimiter", "\t"),),
    "csv_dot": (("delimiter", "."),),  # doubles quoted
    "json": (),
    "parquet": (),
}


def _fmt(name: str) -> str:
    return name.split("_")[0]


def _stage_both(tmp: Path, spec: FileSink, declared: Any, records: list[Any],
                cuts: list[int]) -> tuple[bytes | None, bytes | None]:
    """The part file the row path stages and the one staged from the records' chunks (cut
    at ``cuts``, spread over subtasks as ``(subtask, ipc)`` parts)."""
    columns = declared_columns(spec, declared)
    assert columns is not None
    check = row_checker(spec.path, columns, shaper([c for c, _ in columns]))
    out = []
    want = stage_python(spec, columns, [check(r) for r in records]) if records else None
    schema = convert.arrow_schema(declared)
    bounds = [0, *sorted(c % (len(records) + 1) for c in cuts), len(records)]
    parts = [(k, convert.to_ipc(convert.from_rows(records[a:b], [None] * (b - a), schema)))
             for k, (a, b) in enumerate(zip(bounds, bounds[1:]))]
    got = stage_arrow_part(spec, columns, parts[::-1], declared)  # sorted by subtask
    for d in (want, got):
        if d is None:
            out.append(None)
            continue
        [name] = os.listdir(d)
        out.append(Path(d, name).read_bytes())
        abort(d)
    return out[0], out[1]


@st.composite
def _records(draw: Any) -> list[tuple[Any, ...]]:
    text = st.one_of(st.sampled_from(ODD_STRINGS),
                     st.text(st.characters(blacklist_categories=("Cs",)), max_size=6))
    double = st.one_of(st.sampled_from(ODD_DOUBLES), st.floats(), st.none())
    row = st.tuples(text, st.one_of(st.none(), st.integers(-(2 ** 63), 2 ** 63 - 1)), double,
                    st.one_of(st.none(), st.booleans()),
                    st.one_of(st.none(), st.integers(-(2 ** 50), 2 ** 50)))
    return draw(st.lists(row, max_size=40))


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(records=_records(), cuts=st.lists(st.integers(0, 60), max_size=3),
       which=st.sampled_from(sorted(SPECS)))
@example(records=[(s, i, ODD_DOUBLES[i % len(ODD_DOUBLES)], i % 3 == 0 or None, i * 1000)
                  for i, s in enumerate(ODD_STRINGS)], cuts=[5, 11], which="csv")
@example(records=[(s, i, ODD_DOUBLES[i % len(ODD_DOUBLES)], True, -i)
                  for i, s in enumerate(ODD_STRINGS)], cuts=[3], which="json")
def test_part_from_chunks_equals_part_from_records(tmp_path_factory: Any,
                                                   records: list[tuple[Any, ...]],
                                                   cuts: list[int], which: str) -> None:
    d = tmp_path_factory.mktemp("parts")
    spec = FileSink(str(d / "out"), _fmt(which), (), SPECS[which])
    want, got = _stage_both(d, spec, SCHEMA, records, cuts)
    assert got == want
    if which == "parquet" and records:
        import io

        import pyarrow.parquet as pq
        assert pq.read_table(io.BytesIO(got)).num_rows == len(records)  # type: ignore[arg-type]


@pytest.mark.parametrize("which", ["json", "parquet", "csv"])
def test_arrays_one_column_and_renamed_columns(tmp_path: Path, which: str) -> None:
    arrays = [("a", [1.5, None, float("nan")], ["x,y", None, 'q"']), (None, None, None),
              ("", [], []), ("ü", [1e20], ["😀"])]
    spec = FileSink(str(tmp_path / "a"), which, ("name", "values", "texts"), ())
    want, got = _stage_both(tmp_path, spec, ARRAYS, arrays, [2])  # csv: from the records
    assert got == want and want
    one = Schema.of(("s", T["string"]))
    for opts in [(), (("null_value", "NA"),), (("quote", "'"),)]:
        spec = FileSink(str(tmp_path / "one"), which, (), opts)
        want, got = _stage_both(tmp_path, spec, one, [(v,) for v in ODD_STRINGS], [7])
        assert got == want
    assert _stage_both(tmp_path, spec, one, [], []) == (None, None)  # no record: no part


ROW = Types.ROW_NAMED(["name", "n", "f", "d", "ok"], [Types.STRING(), Types.INT(),
                                                      Types.FLOAT(), Types.DOUBLE(),
                                                      Types.BOOLEAN()])


@pytest.mark.parametrize("which", ["csv", "json", "parquet"])
def test_typed_stream_parts_and_pickled_records(tmp_path: Path, which: str) -> None:
    """A Python API stream's chunks (INT, FLOAT columns) and records a column could not
    hold (a tuple, an int for DOUBLE: carried pickled) give the records' part file."""
    rows = [Row("a", 1, 0.1, 1e20, True), Row(None, None, None, None, None),
            Row("b,c", -(2 ** 31), float("nan"), -0.0, False)]
    spec = FileSink(str(tmp_path / "t"), which, (), ())
    want, got = _stage_both(tmp_path, spec, ROW, rows, [1])
    assert got == want and want
    odd = [*rows, ("t", 3, 0.5, 2.0, True), Row("i", 4, 0.25, 7, True)]
    want, got = _stage_both(tmp_path, spec, ROW, odd, [4])
    assert got == want
    schema = convert.arrow_schema(ROW)
    bad = convert.to_ipc(convert.from_rows([("t", "x", 0.5, 2.0, True)], [None], schema))
    with pytest.raises(ExecutionError, match="column 'n': not an int"):  # the row check
        stage_arrow_part(spec, declared_columns(spec, ROW), [(0, bad)], ROW)
    assert not [p for p in tmp_path.iterdir() if ".flowc-tmp-" in p.name]


def test_records_decoded_at_the_driver(tmp_path: Path) -> None:
    schema = convert.arrow_schema(SCHEMA)
    chunk = convert.from_rows([("a", 1, 0.5, True, 3), (None, None, None, None, None)],
                              [None, None], schema)
    kind, (nid, idx, data) = sink_chunk(7, 1, chunk)
    assert chunk_records([(idx, data)], SCHEMA) == [
        (1, ("a", 1, 0.5, True, 3)), (1, (None, None, None, None, None))]
    assert not part_files.writable(FileSink("o", "csv", (), (), partition_by=("s",)),
                                   declared_columns(FileSink("o", "csv"), SCHEMA))


# -- on Spark --------------------------------------------------------------------------------

JOB = """set parallelism = 2;
set flowc.executor = {executor};
source src (s string, n int, x double, b bool, ts timestamp)
  from json '{inp}' monitor every 100ms watermark ts - 1s;
let m = src | rebalance | map s, n, x * 1 as x, b, ts;
m | write csv '{out}/csv';
m | write csv '{out}/csv_opts' options (header = false, delimiter = ';', quote = '''',
  null_value = 'NA');
m | write json '{out}/json';
m | write parquet '{out}/parquet';
m | filter n < 0 | write json '{out}/never';
"""


def _data(k: int) -> str:
    import json

    lines = []
    for i in range(30):
        x = ODD_DOUBLES[(i + k) % len(ODD_DOUBLES)]
        lines.append(json.dumps({"s": ODD_STRINGS[(i + 3 * k) % len(ODD_STRINGS)],
                                 "n": i + 100 * k, "x": x if x is None or math.isfinite(x)
                                 else str(x), "b": [True, False, None][i % 3],
                                 "ts": 1000 * (i + 30 * k)}))
    return "\n".join(lines) + "\n"


def _stream(work: Path, executor: str, n_files: int) -> None:
    from flowc.parser import compile_source

    from .harness import Progress, run_feeding

    (work / "in").mkdir(parents=True)
    text = JOB.format(executor=executor, inp=work / "in", out=work / "out")
    jg = compile_source(text, str(work / "job.flow")).env.get_job_graph()

    def feed(progress: Progress) -> None:
        for k in range(n_files):
            (work / f"f{k}.tmp").write_text(_data(k), encoding="utf-8")
            os.replace(work / f"f{k}.tmp", work / "in" / f"f{k:03d}.json")
            progress.files(k + 1)
    run_feeding(jg, work / "ck", feed)


@pytest.mark.spark
def test_on_spark_columnar_parts_equal_row_parts(tmp_path: Path, spark: Any,
                                                 monkeypatch: Any) -> None:
    from flowc.executor.streaming import commit

    staged: list[str] = []
    real = commit.stage_arrow_part

    def counting(spec: Any, *args: Any) -> Any:
        staged.append(spec.format)
        return real(spec, *args)
    monkeypatch.setattr("flowc.executor.streaming.runner.stage_arrow_part", counting)
    files = {}
    for executor in ("row", "columnar"):
        _stream(tmp_path / executor, executor, 3)
        out = tmp_path / executor / "out"
        files[executor] = {str(f.relative_to(out)): f.read_bytes()
                           for f in sorted(out.rglob("*")) if f.is_file()}
    assert files["columnar"] == files["row"]
    assert {"csv/part-00000000.csv", "json/part-00000002.json",
            "parquet/part-00000001.parquet"} <= set(files["row"])
    assert not any(f.startswith("never/") for f in files["row"])
    assert set(staged) == {"csv", "json", "parquet"}  # every file sink of every batch
