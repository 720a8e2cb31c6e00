"""Partitioned file sinks and sinks of Python API streams with declared Types, written
from the Arrow chunks (``arrow/partitioned_sinks.py``), give the row executor's files
(Spark's writers): the same partition directories (escaped names, the default partition,
success-file markers), part-file names and ``.crc`` files, csv and json byte for byte,
parquet with the same schema and values. Both executors run on Spark here."""

from __future__ import annotations

import json
import os
import random
import re
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from flowc.common import Row, Types
from flowc.datastream import StreamExecutionEnvironment
from flowc.errors import ExecutionError
from flowc.executor import run_job_graph
from flowc.executor.arrow import partitioned_sinks
from flowc.operators import FileSink
from flowc.parser import compile_source
from flowc.sql import compile_sql
from flowc.transformations import RuntimeExecutionMode

pytestmark = pytest.mark.spark

_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
# partition values: escaping (controls, DEL, "#%'*/:=?\{[]^), blanks (spaces only are
# blank on Spark, a tab is not), unicode, the default name itself, nulls
KEYS = ["a", "b/c", "x=y", "50%", "it's", 'q"q', "#h", "*?", "c:\\d", "{[]}^", "\x01\x1f",
        "\x7f", "\t", " ", "  ", "", " a ", "ü日本", "😀", "__DEFAULT_PARTITION__", "10", "9",
        None]
DOUBLES = [0.0, -0.0, 1.5, 1e20, 1e-5, 0.1 + 0.2, 1 / 3, float("nan"), float("inf"),
           float("-inf"), None]
STRINGS = ["a", "", " ", "a,b", 'q"q', "#x", "a\nb", "\\", "ü日本", "😀", "\x01", None]


def _rows(n: int, seed: int) -> list[dict[str, Any]]:
    rnd = random.Random(seed)
    return [{"k": rnd.choice(KEYS), "i": rnd.choice([1, -2, 30, None]),
             "b": rnd.choice([True, False, None]), "n": i,
             "x": DOUBLES[i % len(DOUBLES)] if i < 40 else rnd.choice(
                 [rnd.uniform(-1e6, 1e6), None]),
             "s": STRINGS[i % len(STRINGS)], "ts": rnd.choice([i * 1000, None, -1]),
             "a": rnd.choice([None, [], [1.5, None]])} for i in range(n)]


def _json_lines(path: Path, rows: list[dict[str, Any]]) -> None:
    def enc(v: Any) -> Any:
        return str(v) if isinstance(v, float) and v != v or v in (float("inf"),
                                                                  float("-inf")) else v
    path.write_text("".join(json.dumps({k: enc(v) for k, v in r.items()}) + "\n"
                            for r in rows), encoding="utf-8")


def _listing(root: Path) -> dict[str, bytes | None]:
    """Every file under ``root`` (uuids masked) -> its bytes (None: parquet and its crc,
    whose metadata differ)."""
    out: dict[str, bytes | None] = {}
    for d, _, names in os.walk(root):
        for n in names:
            rel = _UUID.sub("UUID", os.path.relpath(os.path.join(d, n), root))
            out[rel] = None if ".parquet" in n else Path(d, n).read_bytes()
    return out


def _same_dirs(row: Path, col: Path) -> None:
    want, got = _listing(row), _listing(col)
    assert sorted(got) == sorted(want)
    for f, data in want.items():
        assert got[f] == data, f
    for f in [f for f in want if f.endswith(".parquet") and "/." not in f
              and not f.startswith(".")]:
        [w] = list(row.glob(f.replace("UUID", "*")))
        [g] = list(col.glob(f.replace("UUID", "*")))
        wt, gt = pq.read_table(w), pq.read_table(g)
        assert gt.schema.remove_metadata() == wt.schema.remove_metadata(), f
        assert json.dumps(gt.to_pylist(), default=str) == \
            json.dumps(wt.to_pylist(), default=str), f


@pytest.fixture
def arrow_writes(monkeypatch: Any) -> list[str]:
    """The sinks the columnar job wrote through ``partitioned_sinks.stage``."""
    written: list[str] = []
    stage = partitioned_sinks.stage

    def counting(*args: Any) -> str:
        written.append(args[3].path)
        return stage(*args)
    monkeypatch.setattr(partitioned_sinks, "stage", counting)
    return written


FLOW_SINKS = [
    "csv '{out}/csv' partitioned by k options (success_file = '_SUCCESS')",
    "csv '{out}/csv2' partitioned by b, k options (delimiter = ';', null_value = 'NA', "
    "header = false, default_partition = 'none')",
    "json '{out}/json' partitioned by i, k",
    "json '{out}/json_arr' partitioned by k",
    "parquet '{out}/parquet' partitioned by k options (success_file = '_DONE')",
]


def _flow(data: Path, out: Path, p: int) -> str:
    lines = [f"set parallelism = {p};",
             "source src (k string, i int, b bool, n int, x double, s string, ts timestamp, "
             f"a array<double>) from json '{data}';",
             "let m = src | rebalance | map k, i, b, n, x, s, ts;",
             "let arr = src | rebalance | map k, n, a;",
             f"m | filter n < 0 | write csv '{out}/empty' partitioned by k;"]
    for sink in FLOW_SINKS:
        stream = "arr" if "json_arr" in sink else "m"
        lines.append(f"{stream} | write {sink.format(out=out)};")
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("p,mode", [(1, "batch"), (3, "batch"), (2, "streaming")])
def test_partitioned_flow_sinks_equal_row_files(spark: Any, tmp_path: Path,
                                                arrow_writes: list[str], p: int,
                                                mode: str) -> None:
    data = tmp_path / "in.json"
    _json_lines(data, _rows(600, p))
    for executor in ("row", "columnar"):
        script = compile_source(_flow(data, tmp_path / executor, p), str(tmp_path / "j.flow"),
                                options={"mode": mode, "flowc.executor": executor})
        run_job_graph(script.env.get_job_graph())
        assert len(arrow_writes) == (0 if executor == "row" else len(FLOW_SINKS) + 1)
    _same_dirs(tmp_path / "row", tmp_path / "columnar")
    # several rows per partition and task, in arrival order; the escaped directories
    csv = tmp_path / "columnar" / "csv"
    assert {"k=b%2Fc", "k=x%3Dy", "k=%01%1F", "k=%7F", "k=%09", "k=__DEFAULT_PARTITION__",
            "k=ü日本", "k=%7B%5B%5D}%5E", "k= a "} <= set(os.listdir(csv))
    assert (csv / "k=a" / "_SUCCESS").exists() and not (csv / "_SUCCESS").exists()
    assert os.listdir(tmp_path / "columnar" / "empty") == []


def test_sql_partitioned_sink_equals_row_files(spark: Any, tmp_path: Path,
                                               arrow_writes: list[str]) -> None:
    data = tmp_path / "in.json"
    _json_lines(data, _rows(300, 7))
    for executor in ("row", "columnar"):
        text = ("SET 'parallelism.default' = '2';\nSET 'execution.runtime-mode' = 'batch';\n"
                f"SET 'flowc.executor' = '{executor}';\n"
                "CREATE TABLE src (k STRING, i BIGINT, b BOOLEAN, n BIGINT, x DOUBLE, "
                "s STRING, ts TIMESTAMP(3)) WITH ('connector' = 'filesystem', "
                f"'path' = '{data}', 'format' = 'json');\n"
                "CREATE TABLE out (n BIGINT, x DOUBLE, s STRING, k STRING, i BIGINT) "
                "PARTITIONED BY (k, i) WITH ('connector' = 'filesystem', "
                f"'path' = '{tmp_path / executor}', 'format' = 'csv', "
                "'sink.partition-commit.policy.kind' = 'success-file', "
                "'partition.default-name' = 'nix');\n"
                "INSERT INTO out SELECT n, x, s, k, i FROM src;\n")
        script = compile_sql(text, str(tmp_path / "q.sql"))
        run_job_graph(script.env.get_job_graph())
    assert len(arrow_writes) == 1
    _same_dirs(tmp_path / "row", tmp_path / "columnar")
    leaves = [d for d, subdirs, _ in os.walk(tmp_path / "columnar") if not subdirs]
    assert (tmp_path / "columnar" / "k=nix").is_dir() and len(leaves) > 5
    assert all(os.path.exists(os.path.join(d, "_SUCCESS")) for d in leaves)


# -- Python API streams with declared Types --------------------------------------------------

ROW = Types.ROW_NAMED(["name", "n", "big", "f", "d", "ok"],
                      [Types.STRING(), Types.INT(), Types.LONG(), Types.FLOAT(),
                       Types.DOUBLE(), Types.BOOLEAN()])
LISTS = Types.ROW_NAMED(["name", "xs", "ws"], [Types.STRING(), Types.LIST(Types.DOUBLE()),
                                                Types.LIST(Types.STRING())])


def _typed_job(out: Path, executor: str, odd: bool, mode: str = "batch") -> Any:
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(2)
    env.set_runtime_mode(RuntimeExecutionMode.BATCH if mode == "batch"
                         else RuntimeExecutionMode.STREAMING)
    env.set_option("flowc.executor", executor)
    rnd = random.Random(3)
    rows = [Row(STRINGS[i % len(STRINGS)], rnd.choice([i, -i, 2 ** 31 - 1, None]),
                rnd.choice([2 ** 40, -(2 ** 63), None]), rnd.choice([0.1, 1e20, -0.0, None]),
                DOUBLES[i % len(DOUBLES)], rnd.choice([True, False, None]))
            for i in range(300)]
    s = env.from_collection(rows, type_info=ROW).rebalance()
    if odd:  # a function returning what the row executors pass on, undeclared
        s = s.map(lambda r: (r[0], r[1], r[2], r[3], r[4], r[5]) if r[1] == 7 else
                  Row(r[0], r[1], r[2], r[3], 3 if r[1] == 8 else r[4], r[5]),
                  output_type=ROW)
    for fmt in ("csv", "json", "parquet"):
        s.sink_to(FileSink(str(out / fmt), fmt))
    s.map(lambda r: r[1], output_type=Types.INT()).sink_to(
        FileSink(str(out / "ints"), "csv", ("n",)))
    s.filter(lambda r: False).sink_to(FileSink(str(out / "empty"), "parquet"))
    s.map(lambda r: (r[1], r[4]), output_type=Types.TUPLE([Types.INT(), Types.DOUBLE()])) \
        .sink_to(FileSink(str(out / "tuple"), "json"))
    lists = env.from_collection([Row("a", [1.5, None], ["x", None]), Row("b", None, []),
                                 Row("c", [], None)], type_info=LISTS)
    for fmt in ("json", "parquet"):
        lists.sink_to(FileSink(str(out / f"lists_{fmt}"), fmt))
    s.sink_to(FileSink(str(out / "by_ok"), "json", (), (), partition_by=("ok",)))
    return env.get_job_graph()


@pytest.mark.parametrize("odd,mode", [(False, "batch"), (True, "batch"),
                                      (False, "streaming")])
def test_typed_stream_sinks_equal_row_files(spark: Any, tmp_path: Path,
                                            arrow_writes: list[str], odd: bool,
                                            mode: str) -> None:
    for executor in ("row", "columnar"):
        run_job_graph(_typed_job(tmp_path / executor, executor, odd, mode))
    assert len(arrow_writes) == 9
    _same_dirs(tmp_path / "row", tmp_path / "columnar")
    schema = pq.read_schema(next((tmp_path / "columnar" / "parquet").glob("part-*")))
    assert [str(t) for t in schema.types] == ["string", "int32", "int64", "float", "double",
                                              "bool"]


def test_typed_record_out_of_range_fails_as_on_the_row_executor(spark: Any,
                                                                 tmp_path: Path) -> None:
    """A function's int beyond the declared INT travels pickled; the sink refuses it with
    the row executor's message, naming the sink's operator."""
    messages = []
    for executor in ("row", "columnar"):
        env = StreamExecutionEnvironment.get_execution_environment()
        env.set_parallelism(1)
        env.set_runtime_mode(RuntimeExecutionMode.BATCH)
        env.set_option("flowc.executor", executor)
        env.from_collection([1, 2], type_info=Types.INT()) \
            .map(lambda v: v * 2 ** 40, output_type=Types.INT()) \
            .sink_to(FileSink(str(tmp_path / executor), "csv"))
        with pytest.raises(ExecutionError) as e:
            run_job_graph(env.get_job_graph())
        messages.append(str(e.value).replace(str(tmp_path / executor), "OUT"))
        assert not (tmp_path / executor).exists()
    assert messages[0] == messages[1]
    assert "out of range for int32" in messages[1]


def test_plan_keeps_the_row_route_where_spark_decides() -> None:
    from flowc.types import Schema, type_from_name

    schema = Schema.of(("k", type_from_name("string")), ("x", type_from_name("double")))
    part = FileSink("o", "csv", (), (), partition_by=("k",))
    assert partitioned_sinks.plan(part, schema) is not None
    assert partitioned_sinks.plan(FileSink("o", "csv", (), ()), schema) is None  # sinks.py's
    only = FileSink("o", "csv", ("k",), (), partition_by=("k",))
    assert partitioned_sinks.plan(only, Schema.of(("k", type_from_name("string")))) is None
    odd = FileSink("o", "csv", (), (("delimiter", "ab"),), partition_by=("k",))
    assert partitioned_sinks.plan(odd, schema) is None
    assert partitioned_sinks.plan(FileSink("o", "csv", (), ()), Types.PICKLED_BYTE_ARRAY()) \
        is None
    assert partitioned_sinks.plan(FileSink("o", "csv", (), ()), Types.MAP(
        Types.STRING(), Types.INT())) is None
    assert partitioned_sinks.plan(FileSink("o", "json", (), ()), Types.ROW(
        [Types.ROW([Types.INT()])])) is None  # nested rows are pickled
