"""On Spark: a job with a rolling aggregate and a window with allowed lateness runs its
micro-batches columnar (chosen automatically) and row by row, writing the same part files
and the same snapshots after every batch; a savepoint of the columnar checkpoint holds
what one of the row checkpoint holds (``flowc savepoint write / inspect``)."""

from __future__ import annotations

import pickle
from pathlib import Path
from typing import Any

import pytest

from .columnar_paths import comparable
from .test_streaming_columnar import _norm, _stream

JOB = """set parallelism = 2;
{head}source clicks (user_id string, action string, score double, ts timestamp)
  from csv '{src}' monitor every 100ms
  watermark ts - 1s
  dead letter '{src}../bad/';
clicks | key by user_id | aggregate count(*) as n, sum(score) as s,
    count(distinct action) as d, last(action) as a
  | key by n | aggregate count(*) as users | print 'levels';
clicks | key by user_id | window tumbling 2s allowed lateness 4s
  | aggregate count(*) as n, avg(score) as a, min(ts) as lo
  | write csv '{src}../out/';
"""


@pytest.mark.spark
def test_on_spark_rolling_and_lateness_columnar_equal_row_and_savepoints(
        tmp_path: Path, spark: Any) -> None:
    from flowc.executor.streaming.columnar import plan_columnar
    from flowc.executor.streaming.plan import plan_streaming
    from flowc.parser import compile_source
    from flowc.savepoint.inspect import inspect_savepoint
    from flowc.savepoint.take import take_savepoint

    runs = {}
    for choice in ("columnar", "row"):
        work = tmp_path / choice
        work.mkdir()
        text = JOB.format(src=str(work / "in") + "/",
                          head="" if choice == "columnar" else "set flowc.executor = row;\n")
        _stream(work, text, 5)
        parts = {f.name: f.read_text() for f in sorted((work / "out").glob("part-*"))}
        state = work / "ck" / "flowc" / "state"
        snaps = {}
        for b in sorted(p.name for p in state.iterdir() if p.name.isdigit()):
            for f in sorted((state / b).glob("*.pkl")):
                with open(f, "rb") as fh:
                    snaps[(b, f.name)] = comparable(_norm(pickle.load(fh)))
        env = compile_source(text, str(work / "job.flow")).env
        jg = env.get_job_graph()
        assert isinstance(plan_columnar(jg, plan_streaming(jg)), str) == (choice == "row")
        graph = env.get_execution_graph()
        take_savepoint(str(work / "ck"), graph, str(work / "job.flow"), str(work / "sp"))
        doc = inspect_savepoint(str(work / "sp"))
        ops = [{k: v.replace(str(work), "<work>") if k == "name" else v
                for k, v in o.items() if k != "bytes"} for o in doc["operators"]]
        runs[choice] = (parts, snaps, ops)
    assert runs["columnar"][0]
    assert runs["columnar"][0] == runs["row"][0]
    assert runs["columnar"][1] == runs["row"][1]
    assert runs["columnar"][2] == runs["row"][2]
    assert any(s["entries"] for o in runs["columnar"][2] for s in o["states"])
