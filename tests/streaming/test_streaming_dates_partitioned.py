"""A partitioned parquet sink's DATE column in a streaming run on Spark (the BATCH runs:
tests/sql/test_sql_dates_partitioned.py): each micro-batch's part files hold it as date32,
the row and the columnar executor's parts byte for byte the same."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from flowc.sql import compile_sql
from sql.test_sql_dates_partitioned import ROWS, WANT, insert_sql, parquet_files

from .harness import Progress, run_feeding


@pytest.mark.spark
def test_a_streaming_run_writes_the_same_partitioned_parts_row_and_columnar(
        tmp_path: Path, spark: Any) -> None:
    """Streaming end to end on Spark: two micro-batches into a partitioned parquet sink,
    the row and the columnar executor's part files byte for byte the same, DATE date32."""
    import pyarrow as pa

    files: dict[str, dict[str, bytes]] = {}
    for executor in ("row", "columnar"):
        work = tmp_path / executor
        (work / "in").mkdir(parents=True)
        text = insert_sql(work, f"SET 'flowc.executor' = '{executor}';\n").replace(
            "'format' = 'csv')", "'format' = 'csv', 'source.monitor-interval' = '100ms')")
        (work / "in" / "rows.csv").unlink()  # fed one file per batch below
        jg = compile_sql(text, str(work / "q.sql")).env.get_job_graph()
        lines = ROWS.splitlines()

        def feed(progress: Progress, work: Path = work, lines: list[str] = lines) -> None:
            for k, part in enumerate((lines[1:3], lines[3:])):
                (work / f"f{k}.tmp").write_text("\n".join([lines[0], *part]) + "\n")
                os.replace(work / f"f{k}.tmp", work / "in" / f"f{k}.csv")
                progress.files(k + 1)
        run_feeding(jg, work / "ck", feed)
        out = work / "out"
        files[executor] = {str(f.relative_to(out)): f.read_bytes()
                           for f in sorted(out.rglob("*.parquet"))}
        schemas, rows, dirs = parquet_files(out)
        assert dirs == ["g=0", "g=1"] and rows == WANT
        assert all(s.field("d").type == pa.date32() for s in schemas)
    assert files["columnar"] == files["row"]
    assert len(files["row"]) == 4  # a part per partition per batch
