"""DataStream interval joins and window joins in columnar micro-batches (``arrow/joins.py``'s
vectorised joins, both inputs' channels merged as the row path merges them), their state
carried across batches as the row operators' snapshots by ``streaming/interval_state.py``
(the IntervalJoinOperator's key -> timestamp -> records with their joined flags, the
cleanup timers) and ``streaming/window_join_state.py`` (the tagged union's
WindowOperator: tagged elements per (key, window), end-of-window timers):
random multi-batch jobs on the columnar path, the row path and switching paths every
batch give the same outputs, stats and row-format snapshots after every batch, and the
printed lines are the reference executor's micro-batch model's. No Spark: the batches run
in this process (``test_streaming_columnar.Driver``)."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from .columnar_paths import Driver, job_graph, model_lines, printed, row_and_columnar

JOB = """set parallelism = {p};
{head}source clicks (user_id string, action string, score double, ts timestamp)
  from csv '{src}' monitor every 100ms
  watermark ts - {delay}ms;
let a = clicks | filter action = 'click';
let b = clicks | filter action <> 'click' | map user_id as uid, action, score, ts;
a
  | interval join b on a.user_id = b.uid between {lo} and {hi}
  | map user_id, action, score, ts, b_action, b_score, b_ts
  | print 'joined';
"""


def _job(rnd: random.Random) -> str:
    lo = rnd.choice([-3000, -1500, -500, 0, 400])
    hi = lo + rnd.choice([500, 1000, 2500])
    return JOB.format(p=rnd.choice([1, 2]), src="{src}", delay=rnd.choice([0, 300, 1500]),
                      lo=f"{lo}ms", hi=f"{hi}ms",
                      head="set flowc.watermarks = 'per-record';\n"
                      if rnd.random() < 0.3 else "")


def _files(d: Driver, batches: int, rnd: random.Random) -> list[list[str]]:
    """One csv file per batch (some batches none): records from behind the watermark
    (late) to ahead of it, repeated timestamps (shared buckets)."""
    out = []
    for b in range(batches):
        if rnd.random() < 0.15:
            out.append([])
            continue
        rows = ["user_id,action,score,ts"]
        for _ in range(rnd.randrange(1, 25)):
            score = "" if rnd.random() < 0.2 else f"{rnd.uniform(-5, 5):.3f}"
            ts = max(0, 1000 * b + rnd.randrange(-4000, 2000) // 250 * 250)
            rows.append(f"u{rnd.randrange(3)},{rnd.choice(['click', 'buy', 'view'])},"
                        f"{score},{ts}")
        path = d.work / "in" / f"f{b:03d}.csv"
        path.write_text("\n".join(rows) + "\n")
        out.append([str(path)])
    return out


@pytest.mark.parametrize("seed", range(10))
def test_interval_joins_equal_on_both_paths_and_the_model(tmp_path: Path, seed: int) -> None:
    rnd = random.Random(seed)
    text = _job(rnd)
    d = Driver(text, tmp_path)
    assert [m.kind for c in d.chains.values() for m in c.members].count("interval_join") == 1
    files = _files(d, 10, rnd)
    runs = row_and_columnar(d, files)
    for name in ("col", "col-row", "row-col"):
        for b, (r, c) in enumerate(zip(runs["row"], runs[name])):
            assert c["sinks"] == r["sinks"], (name, b)
            assert c["stats"] == r["stats"], (name, b)
            assert c["snapshots"] == r["snapshots"], (name, b)
    assert any(r["sinks"] for r in runs["row"])
    # empty batches included: the Driver deals files as the model and the runner do
    assert printed(d, runs["col"]) == model_lines(job_graph(d, text), files).printed


WJOB = """set parallelism = {p};
{head}source clicks (user_id string, action string, score double, ts timestamp)
  from csv '{src}' monitor every 100ms
  watermark ts - {delay}ms;
let a = clicks | filter action = 'click';
let b = clicks | filter action <> 'click' | map user_id as uid, action, score, ts;
a
  | join b on a.user_id = b.uid window {window}
  | map user_id, action, score, ts, b_action, b_score, b_ts
  | print 'joined';
"""


@pytest.mark.parametrize("seed", range(10))
def test_window_joins_equal_on_both_paths_and_the_model(tmp_path: Path, seed: int) -> None:
    rnd = random.Random(seed)
    delay = rnd.choice([0, 300, 1500])
    text = WJOB.format(p=rnd.choice([1, 2]), src="{src}", delay=delay,
                       window=rnd.choice(["tumbling 1s", "tumbling 2500ms",
                                          "sliding 2s every 500ms", "sliding 3s every 1s"]),
                       # per-record watermarks with a short delay: everything is late
                       head="set flowc.watermarks = 'per-record';\n"
                       if rnd.random() < 0.3 and delay > 1000 else "")
    d = Driver(text, tmp_path)
    kinds = [m.kind for c in d.chains.values() for m in c.members]
    assert kinds.count("window_join") == 1 and kinds.count("tag") == 2
    files = _files(d, 10, rnd)
    runs = row_and_columnar(d, files)
    for name in ("col", "col-row", "row-col"):
        for b, (r, c) in enumerate(zip(runs["row"], runs[name])):
            assert c["sinks"] == r["sinks"], (name, b)
            assert c["stats"] == r["stats"], (name, b)
            assert c["snapshots"] == r["snapshots"], (name, b)
    assert any(r["sinks"] for r in runs["row"])
    # empty batches included: the Driver deals files as the model and the runner do
    assert printed(d, runs["col"]) == model_lines(job_graph(d, text), files).printed


SPARK_JOB = """set parallelism = 2;
{head}source clicks (user_id string, action string, score double, ts timestamp)
  from csv '{src}' monitor every 100ms
  watermark ts - 1s
  dead letter '{src}../bad/';
let a = clicks | filter action = 'click';
let b = clicks | filter action <> 'click' | map user_id as uid, action, score, ts;
a | interval join b on a.user_id = b.uid between -2s and 1s
  | map user_id, score, ts, b_action, b_ts
  | write csv '{src}../out/';
a | join b on a.user_id = b.uid window sliding 4s every 2s
  | map user_id, score, ts, b_action, b_ts
  | write csv '{src}../wjoin/';
clicks | key by user_id | window session gap 700ms allowed lateness 2s
  | aggregate count(*) as n, sum(score) as s, first(action) as f
  | write csv '{src}../sessions/';
"""


@pytest.mark.spark
def test_on_spark_joins_and_sessions_columnar_equal_row(tmp_path: Path,
                                                        spark: object) -> None:
    """The real query: an interval join, a window join and a session window run columnar
    (chosen automatically) and row by row write the same part files and the same snapshots
    after every micro-batch."""
    import pickle

    from flowc.executor.streaming.columnar import plan_columnar
    from flowc.executor.streaming.plan import plan_streaming
    from flowc.parser import compile_source

    from .columnar_paths import comparable
    from .test_streaming_columnar import _norm, _stream

    runs = {}
    for choice in ("columnar", "row"):
        work = tmp_path / choice
        work.mkdir()
        text = SPARK_JOB.format(src=str(work / "in") + "/",
                                head="" if choice == "columnar" else
                                "set flowc.executor = row;\n")
        jg = compile_source(text, str(work / "job.flow")).env.get_job_graph()
        chains = plan_columnar(jg, plan_streaming(jg))
        assert isinstance(chains, str) == (choice == "row"), chains
        _stream(work, text, 5)
        parts = {(d, f.name): f.read_text() for d in ("out", "wjoin", "sessions")
                 for f in sorted((work / d).glob("part-*"))}
        state = work / "ck" / "flowc" / "state"
        snaps = {}
        for b in sorted(p.name for p in state.iterdir() if p.name.isdigit()):
            for f in sorted((state / b).glob("*.pkl")):
                with open(f, "rb") as fh:
                    snaps[(b, f.name)] = comparable(_norm(pickle.load(fh)))
        runs[choice] = (parts, snaps)
    assert {k[0] for k in runs["columnar"][0]} == {"out", "wjoin", "sessions"}
    assert runs["columnar"] == runs["row"]
