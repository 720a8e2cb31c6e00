"""Partitioned filesystem sinks: ``PARTITIONED BY`` writes Flink's ``k=v/`` directories (the
partition columns left out of the files; null and blank values in Flink's default partition;
special characters escaped), the 'success-file' commit policy its marker in every partition
directory; compared with Flink 2.3's output (tests/sql/flink_results/partitioned_sink.json)
on the reference executor and on Spark. The other partition-commit options are checked."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from over_helpers import cases, orders_csv

from flowc.errors import FlowcError
from flowc.executor import run_job_graph, run_reference
from flowc.parser import compile_source
from flowc.sql import compile_sql

CASES = cases("partitioned_sink.json")
ORDERS = ("CREATE TABLE orders (user_id STRING, amount INT, ts TIMESTAMP(3), "
          "WATERMARK FOR ts AS ts - INTERVAL '1' SECOND) WITH ('connector' = 'filesystem', "
          "'path' = 'orders.csv', 'format' = 'csv');\n")


def _script(tmp_path: Path, case: dict[str, Any]) -> Any:
    (tmp_path / "orders.csv").write_text(orders_csv(header=True), encoding="utf-8")
    opts = f", {case['options']}" if case["options"] else ""
    text = (ORDERS + f"CREATE TABLE out ({case['columns']}) {case['partitioned']} WITH "
            f"('connector' = 'filesystem', 'path' = 'out', 'format' = 'csv', "
            f"'csv.header' = 'false'{opts});\nINSERT INTO out {case['query']};\n")
    return compile_sql(text, str(tmp_path / "q.sql"), base_dir=str(tmp_path))


def _layout(root: Path) -> tuple[dict[str, list[str]], list[str]]:
    files: dict[str, list[str]] = {}
    markers: list[str] = []
    for d, _, names in os.walk(root):
        rel = os.path.relpath(d, root)
        for n in names:
            if n.startswith("part-"):
                files.setdefault(rel, []).extend(Path(d, n).read_text().splitlines())
            elif n.startswith("_"):
                markers.append(f"{rel}/{n}")
    return {k: sorted(v) for k, v in sorted(files.items())}, sorted(markers)


@pytest.mark.parametrize("case", CASES, ids=[c["partitioned"] for c in CASES])
def test_partitioned_sink_matches_flink(tmp_path: Path, case: dict[str, Any]) -> None:
    run_reference(_script(tmp_path, case).env.get_job_graph())
    assert _layout(tmp_path / "out") == (case["files"], case["success"])


# not CASES[0]: its one data column holds a null, which Spark's csv writer leaves out (an
# empty line; docs/flink-differences.md)
@pytest.mark.spark
@pytest.mark.parametrize("case", CASES[1:], ids=[c["partitioned"] for c in CASES[1:]])
def test_partitioned_sink_on_spark_matches_flink(tmp_path: Path, case: dict[str, Any]) -> None:
    from flowc.executor import get_spark

    get_spark("local[2]")  # the test session's master (tests/executor/conftest.py)
    run_job_graph(_script(tmp_path, case).env.get_job_graph())
    assert _layout(tmp_path / "out") == (case["files"], case["success"])


def test_flow_partitioned_write(tmp_path: Path) -> None:
    (tmp_path / "orders.csv").write_text(orders_csv(header=True), encoding="utf-8")
    text = (f"source orders (user_id string, amount int, ts timestamp) from csv "
            f"'{tmp_path / 'orders.csv'}';\n"
            f"orders | map amount, user_id, amount > 20 as big | write csv '{tmp_path / 'out'}' "
            "partitioned by user_id, big options (success_file = '_SUCCESS', header = false);\n")
    run_reference(compile_source(text, str(tmp_path / "t.flow")).env.get_job_graph())
    assert _layout(tmp_path / "out") == (CASES[0]["files"], CASES[0]["success"])


@pytest.mark.parametrize(("ddl", "message"), [
    ("(v STRING) PARTITIONED BY (dt) WITH ('connector' = 'filesystem', 'path' = 'o', "
     "'format' = 'csv')", "Partition column 'dt' not defined in the table schema. Available "
     "columns: ['v']"),
    ("(v STRING, dt STRING) PARTITIONED BY (dt) WITH ('connector' = 'filesystem', 'path' = "
     "'o', 'format' = 'csv', 'sink.partition-commit.policy.kind' = 'metastore')",
     "Can not configure a 'metastore' partition commit policy for a file system table."),
    ("(v STRING, dt STRING) PARTITIONED BY (dt) WITH ('connector' = 'filesystem', 'path' = "
     "'o', 'format' = 'csv', 'sink.partition-commit.policy.kind' = 'success-fil')",
     "Unsupported partition commit policy: 'success-fil'"),
    ("(v STRING, dt STRING) PARTITIONED BY (dt) WITH ('connector' = 'filesystem', 'path' = "
     "'o', 'format' = 'csv', 'sink.partition-commit.trigger' = 'nope')",
     "Could not parse value 'nope' for key 'sink.partition-commit.trigger'."),
    ("(v STRING, dt STRING) PARTITIONED BY (dt) WITH ('connector' = 'filesystem', 'path' = "
     "'o', 'format' = 'csv', 'sink.partition-commit.policy.kind' = 'custom', "
     "'sink.partition-commit.policy.class' = 'x.Y')", "'custom' partition commit policy"),
    ("(v STRING, dt STRING) PARTITIONED BY (dt) WITH ('connector' = 'print')",
     "PARTITIONED BY applies to filesystem tables"),
    ("(v STRING, ts TIMESTAMP(3)) PARTITIONED BY (ts) WITH ('connector' = 'filesystem', "
     "'path' = 'o', 'format' = 'csv')", "cannot partition by 'ts'"),
])
def test_rejected_with_a_position(tmp_path: Path, ddl: str, message: str) -> None:
    (tmp_path / "orders.csv").write_text(orders_csv(header=True), encoding="utf-8")
    text = ORDERS + f"CREATE TABLE o {ddl};\nINSERT INTO o SELECT user_id, ts FROM orders;\n"
    with pytest.raises(FlowcError) as info:
        compile_sql(text, str(tmp_path / "q.sql"), base_dir=str(tmp_path))
    out = info.value.format()
    assert message in out and "q.sql:2:" in out, out


def test_reading_a_partitioned_table_is_refused(tmp_path: Path) -> None:
    text = ("CREATE TABLE p (v STRING, dt STRING) PARTITIONED BY (dt) WITH ('connector' = "
            "'filesystem', 'path' = 'p', 'format' = 'csv');\nSELECT * FROM p;\n")
    with pytest.raises(FlowcError, match="reading the partitioned table 'p' is not supported"):
        compile_sql(text, str(tmp_path / "q.sql"), base_dir=str(tmp_path))
