"""Jobs for the savepoint / explain --diff tests: a base .flow job and edits of it. Ids are
always read from the planner (which the golden tests prove equal to Flink's)."""

from __future__ import annotations

from pathlib import Path

from flowc.chaining.execution_graph import ExecutionGraph
from flowc.parser import compile_source

BASE = """set parallelism = 2;
source clicks (user_id string, article_id string, action string, ts timestamp)
  from csv 'clicks.csv'
  watermark ts - 2s;
clicks
  | map user_id, article_id, lower(action) as action, ts
  | key by user_id
  | window tumbling 5s
  | aggregate count(*) as clicks{window_opts}
  | print;
"""


def job(window_opts: str = "", *, filter_: bool = False, parallelism: int = 2,
        max_parallelism: int | None = None, window: bool = True) -> str:
    text = BASE.format(window_opts=window_opts).replace("parallelism = 2",
                                                        f"parallelism = {parallelism}")
    if max_parallelism is not None:
        text = f"set max_parallelism = {max_parallelism};\n" + text
    if filter_:
        text = text.replace("  | key by", "  | filter action = 'appclick'\n  | key by")
    if not window:
        text = text.replace("  | window tumbling 5s\n  | aggregate count(*) as clicks\n", "")
    return text


def write(dir_: Path, name: str, text: str) -> str:
    (dir_ / "clicks.csv").touch()
    (dir_ / name).write_text(text, encoding="utf-8")
    return str(dir_ / name)


def plan(text: str, name: str = "job.flow") -> ExecutionGraph:
    from flowc.chaining import build_execution_graph

    return build_execution_graph(compile_source(text, name).env.get_job_graph())


def op_id(graph: ExecutionGraph, name: str) -> str:
    """The generated id of the one operator called ``name``."""
    ids = [o.id for v in graph.job_graph.vertices.values() for o in v.operators
           if o.name == name]
    assert len(ids) == 1, ids
    return ids[0]
