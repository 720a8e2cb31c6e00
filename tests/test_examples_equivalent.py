"""examples/clicks.sql's INSERT is the SQL form of examples/clicks.flow (same filter,
lower(), count(*) and count(distinct), parallelism 2), so the two can be compared."""

from __future__ import annotations

import os
from collections import Counter
from pathlib import Path

from flowc.executor import run_reference
from flowc.parser import compile_source
from flowc.sql import compile_sql_file

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


def test_clicks_sql_prints_what_clicks_flow_prints() -> None:
    cwd = os.getcwd()
    os.chdir(EXAMPLES)
    try:
        sql = compile_sql_file("clicks.sql").env.get_job_graph()
        flow = compile_source((EXAMPLES / "clicks.flow").read_text(), "clicks.flow")
        flow_graph = flow.env.get_job_graph()
        sql_lines = Counter(run_reference(sql).printed)
        flow_lines = Counter(run_reference(flow_graph).printed)
    finally:
        os.chdir(cwd)
    assert flow_lines and flow_lines <= sql_lines  # the INSERT's lines, among the SELECTs'
    assert sql.stream_graph.config.parallelism == flow_graph.stream_graph.config.parallelism == 2
