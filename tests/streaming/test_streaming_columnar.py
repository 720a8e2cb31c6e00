"""Streaming micro-batches run columnar (``streaming/columnar.py``): the same multi-batch
jobs with ``flowc.executor`` = columnar and = row give the same outputs, stats and - after
every micro-batch - the same row-format snapshots (``op_<operator id>``, channels); a
checkpoint written by one path resumes on the other. The batches are driven in this
process exactly as the runner wires them (subtask *i* = partition *i*, items routed by
target subtask), without Spark; the Spark tests at the end run the real query."""

from __future__ import annotations

import os
import pickle
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from flowc.errors import ConfigError
from flowc.executor.runtime.core import TimerService
from flowc.executor.streaming.columnar import plan_columnar, run_columnar_subtask
from flowc.executor.streaming.commit import SINK_CHUNK, chunk_records
from flowc.executor.streaming.plan import plan_streaming
from flowc.executor.streaming.sources import file_shares
from flowc.executor.streaming.task import SINK, STATS, BatchContext, run_subtask
from flowc.parser import compile_file, compile_source

from .harness import stream_files

CLICKS = """set parallelism = 2;
{head}source clicks (user_id string, action string, score double, ts timestamp)
  from csv '{src}' monitor every 100ms
  watermark ts - 2s
  dead letter '{src}../bad/'
  with (parallelism = {sp});
let kept = clicks | filter action <> 'flush' | map lower(action) as action, user_id, score, ts;
kept
  | key by user_id
  | window tumbling 5s
  | aggregate count(*) as n, max(ts) as last, avg(score) as a, count(distinct action) as d,
      sum(score) as s
  | write csv '{src}../out/';
kept | filter action = 'buy' | print 'buys';
"""
SLIDING = """set parallelism = 2;
source clicks (user_id string, action string, score double, ts timestamp)
  from csv '{src}' monitor every 100ms
  watermark ts - 1s
  dead letter '{src}../bad/';
clicks
  | key by user_id, action
  | window sliding 4s every 2s late into late_clicks
  | aggregate count(action) as n, min(ts) as lo, first(score) as f, last(score) as l,
      sum(score) as s
  | print 'win';
late_clicks | print 'late';
"""
SESSIONS = """set parallelism = 2;
source clicks (user_id string, action string, score double, ts timestamp)
  from csv '{src}' monitor every 100ms
  watermark ts - 1s
  dead letter '{src}../bad/';
clicks
  | map user_id, upper(action) as action, score * 2 as score, ts
  | key by user_id
  | window session gap 700ms
  | aggregate count(*) as n, sum(score) as s
  | print 'sessions';
"""
PROCTIME = """set parallelism = 2;
source clicks (user_id string, action string, score double, ts timestamp)
  from csv '{src}' monitor every 100ms
  watermark ts - 1s
  dead letter '{src}../bad/';
clicks | filter score < 5.0 and action <> 'click'  -- the last batch has no record: its timers fire all the same
  | key by user_id | window tumbling 1s on processing time | aggregate count(*) as n
  | print 'proc';
"""


def _file(d: Path, k: int) -> str:
    """File ``k``: records within [3000k, 3000k + 2500), from file 3 on two late ones."""
    rows = ["user_id,action,score,ts"]
    for i in range(14):
        ts = k * 3000 + (i * 397) % 2500
        rows.append(f"u{(i * 7 + k) % 4},{['click', 'buy', 'View'][(i + k) % 3]},"
                    f"{(i * 0.1 + k) if i % 5 else ''},{ts}")
    if k >= 3:  # late records (behind the watermark: dropped, or to a late side output)
        rows += [f"u1,click,0.5,{(k - 3) * 3000 + 10}", f"u2,buy,,{(k - 3) * 3000 + 20}"]
    if k == 1:
        rows.append("u9,click,1.0,not-a-time")  # a bad row: to the dead letters
    path = d / f"f{k:03d}.csv"
    path.write_text("\n".join(rows) + "\n")
    return str(path)


def _norm(v: Any) -> Any:
    """A snapshot as comparable values: timers in firing order (the heap's layout and
    sequence numbers depend on the operations, not on the state), count distinct's
    accumulators as sets, functions' compiled code by its source."""
    from flowc.parser.aggregates import DistinctSet

    if isinstance(v, TimerService):
        def live(heap: Any, alive: Any) -> list[Any]:
            return [(ts, repr(k), repr(ns)) for ts, _, k, ns in sorted(heap, key=lambda e: e[:2])
                    if (ts, k, ns) in alive]
        return ("timers", v.current_watermark, live(v._heap, v._live),
                live(v._pt_heap, v._pt_live))
    if isinstance(v, DistinctSet):
        return ("distinct", sorted(map(repr, v)))
    if isinstance(v, dict):
        return {repr(k): _norm(x) for k, x in v.items()}
    if type(v) in (list, tuple):
        return type(v)(_norm(x) for x in v)
    if hasattr(v, "source") and callable(getattr(v, "fn", None)):
        return ("code", v.source)
    return v


class Driver:
    """A job's micro-batches in this process: per batch, each vertex's subtasks in
    topological order, on the row or the columnar path (``columnar(batch)``)."""

    def __init__(self, text: str, work: Path, sp: int = 1) -> None:
        self.work = work
        (work / "in").mkdir(exist_ok=True)
        jg = compile_source(text.format(src=str(work / "in") + "/", head="", sp=sp),
                            str(work / "job.flow")).env.get_job_graph()
        self.plan = plan_streaming(jg)
        self.sg = jg.stream_graph
        chains = plan_columnar(jg, self.plan)
        assert not isinstance(chains, str), chains
        self.chains = chains

    def batch(self, state: Path, b: int, files: list[str], columnar: bool) -> dict[str, Any]:
        # processing time: 700 ms a batch (Spark's batchTimestampMs)
        ctx = BatchContext(b, b - 1 if b else None, str(state), 1_000 + 700 * b)
        # the job's n-th file to source subtask n % p, as the runner deals them; the files
        # read before are counted in the previous batch's ``_DONE``, as in the checkpoint
        before = int((state / str(b - 1) / "_DONE").read_text()) if b else 0
        out: dict[str, list[Any]] = {}
        result: dict[str, Any] = {"sinks": {}, "stats": {}}
        for v in self.plan.vertices:
            got: list[Any] = []
            for idx in range(v.parallelism):
                if v.source is not None:
                    src = (self.plan.sources[v.source].spec,
                           file_shares(sorted(files), before, v.parallelism)[idx])
                    items = list(run_columnar_subtask(v, self.chains[v.id], idx, ctx, src, None)
                                 if columnar else run_subtask(v, idx, ctx, src, None))
                else:
                    mine = [x[1][1] for vid, slot in v.inputs for x in out[vid]
                            if x[0] == slot and x[1][0] == idx]
                    items = list(run_columnar_subtask(v, self.chains[v.id], idx, ctx, None, mine)
                                 if columnar else
                                 run_subtask(v, idx, ctx, None, ((0, x) for x in mine)))
                got += items
            out[v.id] = got
            for kind, payload in got:
                if kind == SINK:
                    result["sinks"].setdefault((payload[0], payload[1]), []).append(payload[2])
                elif kind == SINK_CHUNK:  # columnar: the records as the driver decodes them
                    declared = self.sg.nodes[payload[0]].output_type
                    result["sinks"].setdefault((payload[0], payload[1]), []).extend(
                        r for _, r in chunk_records([payload[1:]], declared))
                elif kind == STATS:
                    s = dict(payload[2])
                    s.pop("state_bytes")
                    result["stats"][(payload[0], payload[1])] = s
        snaps = {}
        for name in sorted(os.listdir(state / str(b))):
            if name.endswith(".pkl"):
                with open(state / str(b) / name, "rb") as fh:
                    snaps[name] = _norm(pickle.load(fh))
        result["snapshots"] = snaps
        (state / str(b)).mkdir(parents=True, exist_ok=True)
        (state / str(b) / "_DONE").write_text(str(before + len(files)))
        return result

    def run(self, name: str, batches: int, columnar: Callable[[int], bool]) -> list[Any]:
        return [self.batch(self.work / name, b, [_file(self.work / "in", b)], columnar(b))
                for b in range(batches)]


@pytest.mark.parametrize("text", [CLICKS, SLIDING, SESSIONS, PROCTIME],
                         ids=["clicks", "sliding", "sessions", "processing-time"])
def test_columnar_batches_equal_row_batches_outputs_and_snapshots(tmp_path: Path,
                                                                 text: str) -> None:
    d = Driver(text, tmp_path)
    row = d.run("row", 6, lambda b: False)
    col = d.run("col", 6, lambda b: True)
    for b, (r, c) in enumerate(zip(row, col)):
        assert c["sinks"] == r["sinks"], b
        assert c["stats"] == r["stats"], b
        assert c["snapshots"] == r["snapshots"], b
    assert any(r["sinks"] for r in row)  # windows fired
    if text is CLICKS:
        assert sum(s["late"] for r in row for s in r["stats"].values()) > 0
    if text is SLIDING:
        assert any(k for r in row for k in r["sinks"] if k[0] == max(d.plan.sinks))


RANDOM = """set parallelism = {p};
{head}source clicks (user_id string, action string, score double, ts timestamp)
  from csv '{src}' monitor every 100ms
  watermark ts - {delay}ms
  dead letter '{src}../bad/'
  with (parallelism = {sp});
let kept = clicks | filter score is null or score < {cut};
kept
  | key by {key}
  | window {window}
  | aggregate count(*) as n, count(score) as c, sum(score) as s, avg(score) as a,
      min(ts) as lo, max(ts) as hi, first(action) as f, last(score) as l,
      count(distinct action) as d
  | print 'win';
kept | filter action = 'buy' | map user_id, score * 2 as twice, ts | print 'buys';
"""


def _random_file(d: Path, name: str, rnd: Any, base: int) -> str:
    rows = ["user_id,action,score,ts"]
    for _ in range(rnd.randrange(0, 30)):
        score = "" if rnd.random() < 0.2 else f"{rnd.uniform(-5, 5):.3f}"
        ts = max(0, base + rnd.randrange(-4000, 3000))
        rows.append(f"u{rnd.randrange(6)},{rnd.choice(['click', 'buy', 'view'])},{score},{ts}")
    path = d / name
    path.write_text("\n".join(rows) + "\n")
    return str(path)


@pytest.mark.parametrize("seed", range(6))
def test_random_jobs_and_batches_equal_on_both_paths(tmp_path: Path, seed: int) -> None:
    """Random parallelism, keys, windows, watermark timing and out-of-order data, 0-3
    files a batch: outputs, stats and snapshots equal batch by batch, also when the path
    changes at a random batch."""
    import random

    rnd = random.Random(seed)
    text = RANDOM.format(
        p=rnd.choice([1, 2, 3]), sp=rnd.choice([1, 2]), src="{src}", delay=rnd.choice(
            [0, 500, 2000]), cut=rnd.choice([1.0, 10.0]),
        key=rnd.choice(["user_id", "user_id, action"]),
        window=rnd.choice(["tumbling 2s", "tumbling 5s", "sliding 4s every 1s"]),
        head="set flowc.watermarks = 'per-record';\n" if rnd.random() < 0.5 else "")
    d = Driver(text.replace("{src}", "{src}"), tmp_path)
    batches = [[_random_file(tmp_path / "in", f"b{b}-{k}.csv", rnd, 2500 * b)
                for k in range(rnd.randrange(0, 4))] for b in range(7)]
    switch = rnd.randrange(1, 7)
    runs = {}
    for name, pick in (("row", lambda b: False), ("col", lambda b: True),
                       ("mixed", lambda b: (b >= switch) != (seed % 2 == 0))):
        runs[name] = [d.batch(tmp_path / name, b, files, pick(b))
                      for b, files in enumerate(batches)]
    for b in range(len(batches)):
        for name in ("col", "mixed"):
            assert runs[name][b] == runs["row"][b], (name, b)


@pytest.mark.parametrize("switch", ["columnar-then-row", "row-then-columnar", "alternating"])
def test_a_checkpoint_resumes_on_the_other_path(tmp_path: Path, switch: str) -> None:
    d = Driver(CLICKS, tmp_path, sp=2)
    row = d.run("row", 6, lambda b: False)
    pick = {"columnar-then-row": lambda b: b < 2, "row-then-columnar": lambda b: b >= 2,
            "alternating": lambda b: b % 2 == 1}[switch]
    mixed = d.run("mixed", 6, pick)
    assert [m["sinks"] for m in mixed] == [r["sinks"] for r in row]
    assert [m["snapshots"] for m in mixed] == [r["snapshots"] for r in row]


def test_what_keeps_a_job_on_the_row_path(tmp_path: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    from flowc.executor.streaming.runner import _columnar_plan

    src = str(tmp_path) + "/"

    def reason(text: str) -> Any:
        jg = compile_source(text, "job.flow").env.get_job_graph()
        return plan_columnar(jg, plan_streaming(jg))
    idle = SLIDING.format(src=src).replace("watermark ts - 1s",
                                           "watermark ts - 1s idle after 10s")
    assert not isinstance(reason(idle), str)  # idleness runs columnar (columnar_idle.py)
    forced_row = CLICKS.format(src=src, sp=1, head="set flowc.executor = row;\n")
    assert reason(forced_row) == "flowc.executor = row"
    datagen = (f"source c (k int, ts timestamp) from csv '{src}' monitor every 100ms "
               "watermark ts - 1s;\nsource g (k int, ts timestamp) from datagen rows 10 "
               "watermark ts - 1s;\nc | union g | key by k | window tumbling 1s "
               "| aggregate count(*) as n | print;")  # a bounded source beside
    assert "not a monitored csv / json / parquet directory" in reason(datagen)
    auto = compile_source(datagen, "job.flow").env.get_job_graph()
    assert _columnar_plan(auto, plan_streaming(auto), True) is None  # -v says why
    assert "micro-batches run row by row: 'Source: g' is not a monitored csv" \
        in capsys.readouterr().err
    forced = compile_source("set flowc.executor = columnar;\n" + datagen,
                            "job.flow").env.get_job_graph()
    with pytest.raises(ConfigError, match="cannot run columnar: .*not a monitored csv"):
        _columnar_plan(forced, plan_streaming(forced), False)


# -- on Spark -----------------------------------------------------------------------------


def _stream(work: Path, text: str, n_files: int) -> None:
    """Run ``text`` on Spark, landing one file per micro-batch (each after the previous
    batch completed), until all are read."""
    (work / "in").mkdir()
    stream_files(compile_source(text, str(work / "job.flow")).env.get_job_graph(), work,
                 _file, n_files)


@pytest.mark.spark
def test_on_spark_columnar_and_row_write_the_same_parts_and_snapshots(
        tmp_path: Path, spark: Any) -> None:
    runs = {}
    for choice in ("columnar", "row"):
        work = tmp_path / choice
        work.mkdir()
        text = CLICKS.format(src=str(work / "in") + "/", sp=1,
                             head=f"set flowc.executor = {choice};\n")
        _stream(work, text, 5)
        parts = {f.name: f.read_text() for f in sorted((work / "out").glob("part-*"))}
        dead = {f.name: f.read_text().replace(str(work), "<work>")
                for f in sorted((work / "bad").glob("part-*"))}
        state = work / "ck" / "flowc" / "state"
        snaps = {}
        for b in sorted(p.name for p in state.iterdir() if p.name.isdigit()):
            for f in sorted((state / b).glob("*.pkl")):
                with open(f, "rb") as fh:
                    snaps[(b, f.name)] = _norm(pickle.load(fh))
        runs[choice] = (parts, dead, snaps)
    assert runs["columnar"][0] and runs["columnar"][1]
    assert runs["columnar"][0] == runs["row"][0]
    assert runs["columnar"][1] == runs["row"][1]
    assert runs["columnar"][2] == runs["row"][2]


@pytest.mark.spark
def test_a_savepoint_of_a_columnar_checkpoint_restored_on_the_row_path(
        tmp_path: Path, spark: Any) -> None:
    from flowc.savepoint.take import take_savepoint
    from savepoint.test_roundtrip import FILES, _expected, _rows, _run, _write, job

    (tmp_path / "in").mkdir()
    old = _write(tmp_path, "old.flow", job("out1/", head="set flowc.executor = columnar;\n"))
    _run(old, tmp_path / "ck1", list(range(4)))
    graph = compile_file(old).env.get_execution_graph()
    assert take_savepoint(str(tmp_path / "ck1"), graph, old, str(tmp_path / "sp")) \
        .files_read == 4
    new = _write(tmp_path, "new.flow", job("out2/", head="set flowc.executor = row;\n"))
    _run(new, tmp_path / "ck2", list(range(4, FILES)), 2, savepoint=tmp_path / "sp")
    assert _rows(tmp_path / "out1", tmp_path / "out2") == _expected(tmp_path, FILES)
