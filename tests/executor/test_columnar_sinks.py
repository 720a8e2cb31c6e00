"""csv / json / parquet sinks fed by a columnar chain are written from the Arrow chunks
(``arrow/sinks.py``) and give the row executor's files: the same directory (part files per
non-empty subtask, ``_SUCCESS``, Hadoop's ``.crc`` files), csv and json byte for byte,
parquet with the same Arrow schema and values. Both executors run on Spark here."""

from __future__ import annotations

import json
import math
import os
import random
import re
import struct
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from flowc.errors import ExecutionError
from flowc.executor import run_job_graph
from flowc.executor.arrow import convert, sinks
from flowc.executor.arrow.javadouble import java17_double_str, java17_double_strs
from flowc.operators import FileSink
from flowc.parser import compile_source

pytestmark = pytest.mark.spark

_UUID = re.compile(r"-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}-")
ODD_DOUBLES = [0.0, -0.0, 1.0, -1.5, 1e20, 1e-5, 1e7, 9999999.0, 0.001, 1e23, 2e23, 5e-324,
               2.0 ** 63, 1.7976931348623157e308, 0.1 + 0.2, 1 / 3, 123456789012345678.0,
               float("nan"), float("inf"), float("-inf"), None]
ODD_STRINGS = ["a", "", " ", " x ", "a,b", 'q"q', '"', "#", "#x", "x#", "a\nb", "a\rb",
               "a\r\nb", "\t", "t\tx", "\\", "a;b", "it's", "\x00\x01\x1f\x7f", "\b\f",
               "ü日本", "\u2028", "😀", "NA", None]


def _rows(n: int, seed: int) -> list[dict[str, Any]]:
    rnd = random.Random(seed)
    out = []
    for i in range(n):
        x = ODD_DOUBLES[i % len(ODD_DOUBLES)] if i < 3 * len(ODD_DOUBLES) else \
            rnd.choice([rnd.uniform(-1e6, 1e6), float(rnd.getrandbits(60)), None,
                        struct.unpack("<d", struct.pack("<Q", rnd.getrandbits(63)))[0]])
        if x is not None and math.isnan(x):
            x = float("nan")
        out.append({"s": ODD_STRINGS[i % len(ODD_STRINGS)], "n": rnd.choice([i, -i, None,
                    (1 << 63) - 1]), "x": x, "b": rnd.choice([True, False, None]),
                    "ts": rnd.choice([i * 1000, None, -1]),
                    "a": rnd.choice([None, [], [x, None, 2.5]]),
                    "t": rnd.choice([None, ["a,\"b", None, ""]])})
    return out


def _write_json_lines(path: Path, rows: list[dict[str, Any]]) -> None:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")


SINKS = {
    "csv": "csv '{out}'",
    "csv_opts": "csv '{out}' options (header = false, delimiter = ';', quote = '''', "
                "null_value = 'NA')",
    "csv_tab": "csv '{out}' options (delimiter = '\t')",
    "json": "json '{out}'",
    "parquet": "parquet '{out}'",
}


def _script(data: Path, out: Path, p: int) -> str:
    lines = [f"set parallelism = {p};",
             "source src (s string, n int, x double, b bool, ts timestamp, a array<double>, "
             f"t array<string>) from json '{data}';",
             "let m = src | rebalance | map s, n, x, b, ts, a, t;",
             "let flat = m | map s, n, x * 1 as x, b, ts;"]
    for name, sink in SINKS.items():
        stream = "flat" if name.startswith("csv") else "m"
        lines.append(f"{stream} | write {sink.format(out=out / name)};")
        lines.append(f"{stream} | filter n = 12345678 | write "
                     f"{sink.format(out=out / ('empty_' + name))};")
    lines.append(f"m | map s | write csv '{out / 'one'}';")  # a null line is skipped
    return "\n".join(lines) + "\n"


def _run(data: Path, out: Path, p: int, mode: str, executor: str) -> None:
    script = compile_source(_script(data, out, p), str(out.parent / "job.flow"),
                            options={"mode": mode, "flowc.executor": executor})
    run_job_graph(script.env.get_job_graph())


def _listing(d: Path) -> dict[str, bytes | None]:
    """A sink directory: normalised file name -> bytes (None for parquet files and their
    checksums: their metadata differ)."""
    out: dict[str, bytes | None] = {}
    for f in sorted(d.iterdir()):
        name = _UUID.sub("-UUID-", f.name)
        out[name] = None if ".parquet" in name else f.read_bytes()
    return out


def _check_same(row: Path, col: Path) -> None:
    names = sorted(p.name for p in row.iterdir())
    assert names == sorted(p.name for p in col.iterdir())
    for name in names:
        want, got = _listing(row / name), _listing(col / name)
        assert got.keys() == want.keys(), name
        for f, data in sorted(want.items(), key=lambda kv: kv[0].startswith(".")):
            assert got[f] == data, f"{name}/{f}"
        if "parquet" in name:
            for f in [f for f in want if f.endswith(".parquet") and not f.startswith(".")]:
                [w] = list((row / name).glob(f.replace("UUID", "*")))
                [g] = list((col / name).glob(f.replace("UUID", "*")))
                wt, gt = pq.read_table(w), pq.read_table(g)
                assert gt.schema.remove_metadata() == wt.schema.remove_metadata()
                assert gt.to_pylist() == wt.to_pylist() or _same_nan(gt, wt)


def _same_nan(a: pa.Table, b: pa.Table) -> bool:
    return json.dumps(a.to_pylist(), default=str) == json.dumps(b.to_pylist(), default=str)


@pytest.fixture
def arrow_writes(monkeypatch: Any) -> list[str]:
    """The sinks the columnar job wrote from Arrow (not through Spark's writers)."""
    written: list[str] = []
    stage = sinks.stage

    def counting(*args: Any) -> str:
        written.append(args[3].path)
        return stage(*args)
    monkeypatch.setattr(sinks, "stage", counting)
    return written


@pytest.mark.parametrize("p,mode", [(1, "batch"), (2, "batch"), (3, "streaming")])
def test_columnar_files_equal_row_files(spark: Any, tmp_path: Path, arrow_writes: list[str],
                                        p: int, mode: str) -> None:
    data = tmp_path / "in.json"
    _write_json_lines(data, _rows(400, p))
    _run(data, tmp_path / "row", p, mode, "row")
    assert not arrow_writes
    _run(data, tmp_path / "col", p, mode, "columnar")
    assert len(arrow_writes) == 2 * len(SINKS) + 1  # every sink took the Arrow path
    _check_same(tmp_path / "row", tmp_path / "col")
    assert sum(f.read_bytes().count(b"\n") for f in (tmp_path / "col" / "csv").glob("part-*")) > 400


@settings(max_examples=3, deadline=None, suppress_health_check=list(HealthCheck))
@given(strings=st.lists(st.text(st.characters(blacklist_categories=("Cs",)), max_size=8),
                        min_size=1, max_size=60),
       doubles=st.lists(st.floats(), min_size=1, max_size=60))
def test_random_values_equal_row_files(spark: Any, tmp_path_factory: Any,
                                       strings: list[str], doubles: list[float]) -> None:
    where = tmp_path_factory.mktemp("sinks")
    rows = [{"s": strings[i % len(strings)], "n": i, "x": doubles[i % len(doubles)],
             "b": i % 2 == 0, "ts": i, "a": [doubles[i % len(doubles)]], "t": [strings[0]]}
            for i in range(max(len(strings), len(doubles)))]
    _write_json_lines(where / "in.json", rows)
    _run(where / "in.json", where / "row", 2, "batch", "row")
    _run(where / "in.json", where / "col", 2, "batch", "columnar")
    _check_same(where / "row", where / "col")


def test_java17_double_str_is_the_jvms(spark: Any) -> None:
    """The port of JDK 17's FloatingDecimal against the JVM Spark runs (int, long and big
    integer branches, integral values below 2^63, subnormals)."""
    to_string = spark._jvm.java.lang.Double.toString
    rnd = random.Random(7)
    values = list(ODD_DOUBLES[:-1]) + [2.2250738585072014e-308, 4.9e-324, 1e-3, 1e-4]
    for i in range(12_000):
        k = i % 5
        bits = rnd.getrandbits(64) if k == 0 else rnd.getrandbits(52) if k == 1 else None
        v = struct.unpack("<d", struct.pack("<Q", bits))[0] if bits is not None else \
            float(rnd.getrandbits(rnd.randint(1, 80))) if k == 2 else \
            round(rnd.uniform(-1000, 1000), rnd.randint(0, 6)) if k == 3 else \
            rnd.random() * 10 ** rnd.randint(-30, 30)
        values.append(v)
    wrong = [(v, to_string(v), java17_double_str(v)) for v in values
             if to_string(v) != java17_double_str(v)]
    assert not wrong[:5]
    # the vectorised digit loop (with its per-value fallback) gives the same strings
    assert java17_double_strs(np.array(values)) == [to_string(v) for v in values]


def test_plan_keeps_the_row_route_where_spark_decides() -> None:
    from flowc.types import Schema, array_of, type_from_name

    schema = Schema.of(("s", type_from_name("string")), ("a", array_of(type_from_name("int"))))
    flat = Schema.of(("s", type_from_name("string")))
    assert sinks.plan(FileSink("o", "csv", (), ()), schema) is None  # arrays in csv
    assert sinks.plan(FileSink("o", "json", (), ()), schema) is not None
    assert sinks.plan(FileSink("o", "csv", (), (("delimiter", "ab"),)), flat) is None
    assert sinks.plan(FileSink("o", "csv", (), (("null_value", "#"),)), flat) is None
    assert sinks.plan(FileSink("o", "csv", (), ()), None) is None  # no schema: inferred


class _Rdd:
    """One partition run in this process, as Spark would run it."""

    def __init__(self, items: Any) -> None:
        self.items = items

    def mapPartitionsWithIndex(self, f: Any) -> Any:  # noqa: N802 - Spark's name
        return _Collect(lambda: list(f(0, self.items)))


class _Collect:
    def __init__(self, run: Any) -> None:
        self.collect = run


def test_failed_task_leaves_no_part_file(tmp_path: Path) -> None:
    """A task that fails after writing its first chunk leaves no part file in the temp
    dir (the attempt's own hidden dir held it and is removed) and the temp dir is gone."""
    from flowc.types import Schema, type_from_name

    declared = Schema.of(("n", type_from_name("int")))
    schema = convert.arrow_schema(declared)
    spec = FileSink(str(tmp_path / "out"), "csv", (), ())
    plan = sinks.plan(spec, declared)
    assert plan is not None
    seen: list[list[str]] = []

    def items() -> Any:
        yield 0, convert.to_ipc(convert.from_rows([(1,), (2,)], [None, None], schema))
        temps = [p for p in tmp_path.iterdir() if p.name.startswith(".out")]
        seen.append([str(f.relative_to(temps[0])) for f in temps[0].rglob("*")])
        raise ValueError("the chain failed")
    with pytest.raises(ValueError):
        sinks.stage(_Rdd(items()), 0, schema, spec, plan, str(tmp_path / "out"))
    [written] = seen
    assert any(f.startswith(".attempt-0-0/part-00000-") for f in written)  # being written
    assert not [f for f in written if f.startswith("part-")]  # but not visible
    assert list(tmp_path.iterdir()) == []


def test_failed_job_commits_nothing(spark: Any, tmp_path: Path) -> None:
    """A UDF failing past the first chunk (70,000 rows): the job fails naming it, the sink
    has no output and no temp dir stays."""
    data = tmp_path / "in.csv"
    data.write_text("n\n" + "".join(f"{i}\n" for i in range(80_000)))
    out = tmp_path / "out"
    text = ("import udf tests.executor.columnar_sink_udfs.fail_at(int) -> int;\n"
            f"source s (n int) from csv '{data}';\n"
            f"s | map fail_at(n) as n | write csv '{out}';\n")
    script = compile_source(text, str(tmp_path / "job.flow"),
                            options={"mode": "batch", "flowc.executor": "columnar"})
    with pytest.raises(ExecutionError, match="record 70000 is refused"):
        run_job_graph(script.env.get_job_graph())
    assert sorted(os.listdir(tmp_path)) == ["in.csv"]
