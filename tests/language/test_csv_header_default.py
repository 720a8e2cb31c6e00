"""A csv source without a `header` option reads the first line as column names in .flow,
SQL and the Python API alike."""

from __future__ import annotations

import ast
from pathlib import Path

from flowc.api.environment import StreamExecutionEnvironment
from flowc.executor import run_reference
from flowc.operators import FileSource
from flowc.parser import compile_source
from flowc.sql import compile_sql
from printed import row as printed_row

CSV = "k,n\na,1\nb,2\n"


def test_csv_header_default_is_the_same_everywhere(tmp_path: Path) -> None:
    path = tmp_path / "t.csv"
    path.write_text(CSV, encoding="utf-8")
    flow = compile_source(f"source t (k string, n int) from csv '{path}';\nt | print;",
                          "t.flow")
    sql = compile_sql(f"CREATE TABLE t (k STRING, n INT) WITH ('connector' = 'filesystem', "
                      f"'path' = '{path}', 'format' = 'csv');\nSELECT k, n FROM t;", "t.sql")
    env = StreamExecutionEnvironment()
    env.from_source(FileSource(str(path), "csv", (("k", "string"), ("n", "int"))), None,
                    "t").print()

    def rows(e: StreamExecutionEnvironment) -> list[object]:
        # the Python API prints tuples, .flow and SQL Flink's table rows (+I[a, 1])
        return sorted(ast.literal_eval(line) if line.startswith("(") else printed_row(line)
                      for line in run_reference(e.get_job_graph()).printed)

    expected = rows(flow.env)
    assert len(expected) == 2
    assert rows(env) == expected
    assert rows(sql.env) == expected


def test_an_explicit_header_false_is_kept(tmp_path: Path) -> None:
    path = tmp_path / "t.csv"
    path.write_text("a,1\nb,2\n", encoding="utf-8")
    env = StreamExecutionEnvironment()
    env.from_source(FileSource(str(path), "csv", (("k", "string"), ("n", "int")),
                               (("header", "false"),)), None, "t").print()
    assert len(run_reference(env.get_job_graph()).printed) == 2
