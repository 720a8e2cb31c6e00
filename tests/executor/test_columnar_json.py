"""The native json-lines reader of the columnar executor gives exactly the row reader's
records, bad rows (file, line, text, error) and dead letters, on random files and splits."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from flowc.errors import ExecutionError
from flowc.executor import run_job_graph, run_reference
from flowc.executor.arrow import convert, jsonsource
from flowc.executor.runtime import files
from flowc.operators import CollectSink, FileSource
from flowc.parser import compile_source
from flowc.types import STRING, TIMESTAMP, Schema, decimal_of

from .native_readers import SCHEMA, assert_native_equals_row_reader, native

values = {
    "s": ['"a"', '""', '"\\u00fc"', '"x\\ty"', "null", "1", "true", '{"k":1}'],
    "i": ["1", "-42", "0", "9223372036854775807", "99999999999999999999", '"7"', "1.0",
          "1e2", "null", "true", "NaN"],
    "d": ["0.5", "-1e3", "1", "-0", "-0.0", "-0e1", "-NaN", "Inf", "-Inf", "+NaN", "12345678901234567890", "1e400", "NaN", "-Infinity", '"2.5"',
          "null", "false"],
    "b": ["true", "false", '"true"', "1", "null"],
    "t": ['"2024-05-01T10:00:00Z"', '"2024-05-01 10:00:00.5"', '"2024-02-30T00:00:00Z"',
          "1714557600000", '"1714557600000"', '"2024-05-01"', '"2024-05-01T10:00:00+02:00"',
          '""', '"bad"', "null", "1.5", '"2024-05-01T10:00:60Z"'],
}


@st.composite
def objects(draw: Any) -> str:
    keys = draw(st.lists(st.sampled_from([*values, "x"]), max_size=7))
    parts = []
    for k in keys:
        v = draw(st.sampled_from(values.get(k, ["1", "[1,{}]", '"y"'])))
        parts.append(f'"{k}":{v}')
    return "{" + ",".join(parts) + "}"


lines = st.one_of(
    objects(), objects(), objects(),
    st.sampled_from(["", "   ", "[1]", "5", "{", '{"i":1}{"i":2}', '{"i":1} x',
                     '\ufeff{"i":1}', '{"i":1}\r', '{"i":1,}', '{"i":1,"i":2}', "\x0c",
                     '{"i":1}\r{"i":2}', '{"s":"a\\u0000"}', '{"s":"a\tb"}',
                     ' {"s" : "a\x7f" }\t', '{"s":"\\/"}']),
)


@settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))
@given(body=st.lists(lines, max_size=40), dead=st.booleans(), p=st.integers(1, 3),
       small=st.booleans(), bad_utf8=st.booleans(), fmt=st.sampled_from(jsonsource.JSON_FORMATS))
def test_native_reader_equals_row_reader(tmp_path_factory: Any, body: list[str], dead: bool,
                                         p: int, small: bool, bad_utf8: bool,
                                         fmt: str) -> None:
    where: Path = tmp_path_factory.mktemp("json")
    raw = ("\n".join(body) + ("\n" if body else "")).encode()
    if bad_utf8 and b'"a"' in raw:
        raw = raw.replace(b'"a"', b'"\xff"', 1)
    path = where / "in.json"
    path.write_bytes(raw)
    spec = FileSource(str(path), fmt, SCHEMA.as_pairs(), (),
                      dead_letter=str(where / "dead") if dead else None)
    assert_native_equals_row_reader(jsonsource.read_split, spec, p, small)


def _read(spec: FileSource, split: files.Split, bad: files.BadRows) -> Any:
    return native(jsonsource.read_split, spec, split, bad)


def _no_row_reader(monkeypatch: Any) -> None:
    def boom(*_: Any, **__: Any) -> Any:
        raise AssertionError("the row reader was used")
    monkeypatch.setattr(files, "_read_text", boom)


@pytest.mark.parametrize("stamp", ["1714557603000", '"2024-05-01T10:00:03Z"'])
def test_common_blocks_take_the_native_path(tmp_path: Path, monkeypatch: Any,
                                            stamp: str) -> None:
    """A clean file never reaches the row reader (the fast path is really taken), with
    timestamps as numbers or as text."""
    path = tmp_path / "c.json"
    path.write_text("".join(f'{{"s":"u{n}","i":{n},"d":{n / 4},"b":true,"t":{stamp},'
                            f'"extra":[1,2]}}\n' for n in range(1000)))
    spec = FileSource(str(path), "json", SCHEMA.as_pairs(), ())
    _no_row_reader(monkeypatch)
    split = files.plan_splits("json", files.list_files(str(path)), 1)[0]
    rows = [r for c in _read(spec, split, files.BadRows(spec))
            for r in c.rows()]
    assert len(rows) == 1000
    assert rows[3] == ("u3", 3, 0.75, True, 1714557603000)


def test_bad_row_fails_naming_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "c.json"
    path.write_text('{"i":1}\n{"i":2}\n\n{"i":"x"}\n')
    spec = FileSource(str(path), "json", SCHEMA.as_pairs(), ())
    split = files.plan_splits("json", files.list_files(str(path)), 1)[0]
    with pytest.raises(ExecutionError, match=r"c\.json \(line 4\).*not an int"):
        list(_read(spec, split, files.BadRows(spec)))


@pytest.mark.spark
def test_json_job_on_spark_equals_reference(spark: Any, tmp_path: Path) -> None:
    """A .flow job over json lines with a bad row: the columnar executor (native reader)
    gives the reference executor's results and dead letters."""
    body = [f'{{"k":"u{i % 7}","n":{i % 5},"ts":{i * 250}}}' for i in range(2000)]
    body[700] = '{"k":"u1","n":"many","ts":1}'
    (tmp_path / "d.json").write_text("\n".join(body) + "\n")

    def run(executor: str) -> tuple[Any, list[str]]:
        dead = tmp_path / f"dead-{executor}"
        text = (f"set parallelism = 2;\nsource s (k string, n int, ts timestamp) from json "
                f"'{tmp_path}/d.json' watermark ts - 1s dead letter '{dead}';\n"
                "let result = s | key by k | window tumbling 5s | aggregate sum(n) as t;\n")
        script = compile_source(text, str(tmp_path / "job.flow"),
                                options={"mode": "batch", "flowc.executor": executor})
        script.streams["result"].stream.sink_to(CollectSink("result"))
        result = run_job_graph(script.env.get_job_graph()) if executor == "columnar" else \
            run_reference(script.env.get_job_graph())
        letters = sorted(line for f in sorted(dead.iterdir())
                         for line in f.read_text().splitlines())
        return result.collected["result"], letters
    got, want = run("columnar"), run("row")
    assert got == want
    assert len(got[1]) == 1 and '"row": 701' in got[1][0]


def test_numbers_pyarrow_reads_otherwise_are_the_row_readers(tmp_path: Path) -> None:
    """Python reads the json integer -0 as 0 (0.0 as a double), and rejects -NaN and Inf;
    pyarrow would say -0.0, nan and inf."""
    path = tmp_path / "z.json"
    path.write_text('{"d":-0}\n{"d":-0.0}\n{"d":-NaN}\n{"d":Inf}\n{"d":-Infinity}\n')
    spec = FileSource(str(path), "json", SCHEMA.as_pairs(), (), dead_letter=str(tmp_path / "d"))
    split = files.plan_splits("json", files.list_files(str(path)), 1)[0]
    bad = files.BadRows(spec)
    rows = [r for c in _read(spec, split, bad) for r in c.rows()]
    assert repr([r[2] for r in rows]) == "[0.0, -0.0, -inf]"
    assert [json.loads(x)["row"] for x in bad.lines] == [3, 4]


DEC_SCHEMA = Schema.of(("k", STRING), ("a", decimal_of(10, 2)), ("z", decimal_of(5, 0)),
                       ("t", TIMESTAMP))
dec_values = ["12.345", "1", "-0.005", "0.005", "1.005", "2.675", "99999999.995",
              "123456789012", "0.1", "-0.0", "1e2", "1.5e-3", "9007199254740993",
              "12345678901234567890", "NaN", "Infinity", '"2.5"', '"x"', "true", "null",
              "1e400", "123456.78", "-99999.5", "0.125"]


@st.composite
def dec_objects(draw: Any) -> str:
    parts = [f'"k":"{draw(st.sampled_from(["u", "v"]))}"']
    for k in draw(st.lists(st.sampled_from(["a", "z"]), max_size=2, unique=True)):
        parts.append(f'"{k}":{draw(st.sampled_from(dec_values))}')
    parts.append(f'"t":{draw(st.integers(0, 10_000))}')
    return "{" + ",".join(parts) + "}"


def _dec_rows(spec: FileSource, p: int) -> None:
    """Per subtask: the native reader's records and bad rows == the row reader's."""
    schema = convert.arrow_schema(DEC_SCHEMA)
    splits = files.plan_splits(spec.format, files.list_files(spec.path), p)
    for k in range(p):
        mine = files.subtask_splits(splits, k, p)
        want_bad, got_bad = files.BadRows(spec), files.BadRows(spec)
        try:
            want: Any = list(files.read_local(spec, mine, want_bad))
        except ExecutionError as e:
            want = str(e)
        try:
            got: Any = []
            for s in mine:
                with open(s.path, "rb") as fh:
                    got += [r for c in jsonsource.read_split(spec, s, fh, got_bad, None,
                                                             schema, 7) for r in c.rows()]
        except ExecutionError as e:
            got = str(e)
        assert repr(got) == repr(want)  # Decimal's repr shows the scale
        assert got_bad.lines == want_bad.lines


@settings(max_examples=200, deadline=None, suppress_health_check=list(HealthCheck))
@given(body=st.lists(st.one_of(dec_objects(), dec_objects(), st.just('{"a":1}{"a":2}')),
                     max_size=30),
       dead=st.booleans(), p=st.integers(1, 3), small=st.booleans())
def test_native_decimals_equal_row_reader(tmp_path_factory: Any, body: list[str], dead: bool,
                                          p: int, small: bool) -> None:
    """DECIMAL columns read natively (json integers exactly, fractions through the
    double's shortest text, HALF_UP, NULL beyond the precision) == the row reader; text,
    exponents, NaN, huge integers and bad values go to it."""
    where: Path = tmp_path_factory.mktemp("jsondec")
    path = where / "in.json"
    path.write_text("\n".join(body) + ("\n" if body else ""))
    spec = FileSource(str(path), "json", DEC_SCHEMA.as_pairs(), (),
                      dead_letter=str(where / "dead") if dead else None)
    old_block, old_min = files.csvread.BLOCK, files.MIN_SPLIT
    try:
        if small:
            files.csvread.BLOCK, files.MIN_SPLIT = 64, 97
        _dec_rows(spec, p)
    finally:
        files.csvread.BLOCK, files.MIN_SPLIT = old_block, old_min


def test_decimal_blocks_take_the_native_path(tmp_path: Path, monkeypatch: Any) -> None:
    """Plain DECIMAL numbers (integers, fractions, rounding HALF_UP and overflowing to
    NULL) never reach the row reader."""
    path = tmp_path / "d.json"
    path.write_text("".join(f'{{"k":"u","a":{n / 8},"z":{n * 7},"t":{n}}}\n'
                            for n in range(1000)) + '{"k":"v","a":1.005,"z":123456,"t":1}\n')
    spec = FileSource(str(path), "json", DEC_SCHEMA.as_pairs(), ())
    _no_row_reader(monkeypatch)
    split = files.plan_splits("json", files.list_files(str(path)), 1)[0]
    with open(path, "rb") as fh:
        rows = [r for c in jsonsource.read_split(spec, split, fh, files.BadRows(spec), None,
                                                 convert.arrow_schema(DEC_SCHEMA), 100)
                for r in c.rows()]
    assert len(rows) == 1001
    assert repr(rows[3]) == "('u', Decimal('0.38'), Decimal('21'), 3)"  # 0.375 HALF_UP
    assert repr(rows[-1]) == "('v', Decimal('1.01'), None, 1)"  # '1.005' HALF_UP; 6 digits
