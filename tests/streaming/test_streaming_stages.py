"""A micro-batch's Spark stages (``streaming/stages.py``): vertices fed only by a one-task
stage run in that task (no shuffle), keyed vertices of parallelism > 1 keep their own
stage; the fused layout gives the same outputs, stats and snapshots as one stage per
vertex, on the row and the columnar path (driven in this process as the runner wires
them), and on Spark it runs fewer stages per batch with the same part files and
snapshots."""

from __future__ import annotations

import os
import pickle
from pathlib import Path
from typing import Any

import pytest

from flowc.errors import ConfigError
from flowc.executor.streaming.columnar import plan_columnar
from flowc.executor.streaming.commit import SINK_CHUNK, chunk_records
from flowc.executor.streaming.plan import StreamingPlan, plan_streaming
from flowc.executor.streaming.sources import file_shares
from flowc.executor.streaming.stages import (
    Stage,
    consume,
    fuse_option,
    outgoing,
    plan_stages,
    run_fused,
    subtask_runner,
)
from flowc.executor.streaming.task import SINK, STATS, BatchContext
from flowc.parser import compile_source

CLICKS = """set parallelism = {p};
{head}source clicks (user_id string, action string, score double, ts timestamp)
  from csv '{src}' monitor every 100ms
  watermark ts - 1s
  dead letter '{src}../bad/'
  with (parallelism = {sp});
let kept = clicks | filter action <> 'flush' | map lower(action) as action, user_id, score, ts;
kept
  | key by user_id
  | window tumbling 3s
  | aggregate count(*) as n, max(ts) as last, sum(score) as s
  | write csv '{src}../out/';
kept | filter action = 'buy' | print 'buys';
"""
TWO = """set parallelism = 2;
source a (user_id string, action string, score double, ts timestamp)
  from csv '{src}' monitor every 100ms watermark ts - 1s with (parallelism = 1);
source b (user_id string, action string, score double, ts timestamp)
  from csv '{src}../other/' monitor every 100ms watermark ts - 1s with (parallelism = 1);
a | union b | map upper(action) as action, user_id, ts | print 'both';
"""


def _plan(text: str, work: Path, **fmt: Any) -> tuple[StreamingPlan, Any]:
    (work / "in").mkdir(exist_ok=True)
    (work / "other").mkdir(exist_ok=True)
    values = {"p": 2, "sp": 1, "head": "", **fmt}
    jg = compile_source(text.format(src=str(work / "in") + "/", **values),
                        str(work / "job.flow")).env.get_job_graph()
    return plan_streaming(jg), jg


def _shape(stages: list[Stage]) -> list[tuple[list[str], int, tuple[tuple[int, int], ...]]]:
    return [([v.name for v in s.vertices], s.tasks, s.inputs) for s in stages]


def test_a_parallelism_1_source_runs_its_stateless_consumers_in_its_task(
        tmp_path: Path) -> None:
    plan, _ = _plan(CLICKS, tmp_path)
    names = [v.name for v in plan.vertices]
    assert len(names) == 3  # source -> REBALANCE -> filter/map(/filter/print) -> HASH -> window
    fused = plan_stages(plan)
    assert _shape(fused) == [(names[:2], 1, ()), (names[2:], 2, ((0, 0),))]
    assert fused[0].fused and fused[0].internal == {plan.vertices[1].inputs[0]}
    # the fused stage's sink / stats items reach the driver through the window stage
    assert [s.carrier for s in fused] == [1, None]
    assert [s.carrier for s in plan_stages(plan, fuse=False)] == [1, None, None]
    # one stage per vertex: the old layout, a shuffle per non-chained edge
    assert [len(s.vertices) for s in plan_stages(plan, fuse=False)] == [1, 1, 1]


def test_parallelism_1_everywhere_is_one_stage_and_a_parallel_source_none(
        tmp_path: Path) -> None:
    plan, _ = _plan(CLICKS, tmp_path, p=1)
    stages = plan_stages(plan)
    assert [s.tasks for s in stages] == [1] and len(stages[0].vertices) == len(plan.vertices)
    plan, _ = _plan(CLICKS, tmp_path, sp=2)  # source chained with the map: nothing to fuse
    assert [len(s.vertices) for s in plan_stages(plan)] == [1] * len(plan.vertices)


def test_a_vertex_fed_by_two_stages_keeps_its_own(tmp_path: Path) -> None:
    plan, _ = _plan(TWO, tmp_path)
    stages = plan_stages(plan)
    assert [len(s.vertices) for s in stages] == [1, 1, 1]
    assert stages[2].inputs == ((0, 0), (1, 0))


def test_the_option() -> None:
    assert fuse_option({}) and not fuse_option({"flowc.streaming.fuse": "FALSE"})
    with pytest.raises(ConfigError, match="unknown value 'maybe' for flowc.streaming.fuse"):
        fuse_option({"flowc.streaming.fuse": "maybe"})


def _file(d: Path, k: int, late: bool = True) -> str:
    rows = ["user_id,action,score,ts"]
    for i in range(17):
        ts = k * 2000 + (i * 389) % 2300
        rows.append(f"u{(i * 5 + k) % 6},{['click', 'buy', 'View', 'flush'][(i + k) % 4]},"
                    f"{(i * 0.5 + k) if i % 4 else ''},{ts}")
    if late and k >= 3:  # behind the watermark
        rows.append(f"u1,click,0.5,{(k - 3) * 2000 + 10}")
    if k == 1:
        rows.append("u9,click,1.0,not-a-time")  # to the dead letters
    path = d / f"f{k:03d}.csv"
    path.write_text("\n".join(rows) + "\n")
    return str(path)


def _norm(v: Any) -> Any:
    """A snapshot as comparable values: objects (timer services, accumulators) as their
    fields, functions by name (their repr holds an address)."""
    if isinstance(v, dict):
        return {repr(k): _norm(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [type(v).__name__, *(_norm(x) for x in v)]
    if isinstance(v, (set, frozenset)):
        return sorted(repr(_norm(x)) for x in v)
    if callable(v):
        return ("function", getattr(v, "__qualname__", type(v).__name__))
    if hasattr(v, "__dict__"):
        return (type(v).__name__, _norm(vars(v)))
    return v


def _batches(plan: StreamingPlan, chains: Any, stages: list[Stage], state: Path,
             files: list[list[str]], sg: Any) -> list[dict[str, Any]]:
    """The micro-batches in this process, stage by stage as the runner wires them."""
    results = []
    read = 0
    for b, batch_files in enumerate(files):
        ctx = BatchContext(b, b - 1 if b else None, str(state), 1_000 + 500 * b)
        shares = {v.source: file_shares(sorted(batch_files), read, v.parallelism)
                  for v in plan.vertices if v.source is not None}
        read += len(batch_files)
        run = subtask_runner(plan, chains, ctx, shares)
        out: dict[int, list[Any]] = {}
        for st in stages:
            if st.fused:
                out[st.index] = list(run_fused(st, run))
                continue
            v = st.vertices[0]
            if v.source is not None:
                out[st.index] = [x for idx in range(v.parallelism) for x in run(v, idx, None)]
                continue
            # the runner's shuffle: each producer's items for this stage by target subtask
            sent = [x for k in dict.fromkeys(k for k, _ in st.inputs)
                    for x in outgoing(frozenset(s for j, s in st.inputs if j == k),
                                      stages[k].carrier == st.index)(out[k])]
            out[st.index] = [
                item for idx in range(v.parallelism)
                for item in consume(lambda p, v=v, idx=idx, run=run: run(v, idx, p),
                                    [x for x in sent if x[0] == idx])]
        sinks: dict[Any, list[Any]] = {}
        stats = {}
        for items in (out[st.index] for st in stages if st.carrier is None):
            for kind, payload in items:
                if kind == SINK:
                    sinks.setdefault((payload[0], payload[1]), []).append(payload[2])
                elif kind == SINK_CHUNK:  # columnar: the records as the driver decodes them
                    sinks.setdefault((payload[0], payload[1]), []).extend(
                        r for _, r in chunk_records([payload[1:]],
                                                    sg.nodes[payload[0]].output_type))
                elif kind == STATS:
                    stats[(payload[0], payload[1])] = {k: v for k, v in payload[2].items()
                                                       if k != "state_bytes"}
        snaps = {}
        for name in sorted(os.listdir(state / str(b))):
            with open(state / str(b) / name, "rb") as fh:
                snaps[name] = _norm(pickle.load(fh))
        results.append({"sinks": sinks, "stats": stats, "snapshots": snaps})
    return results


@pytest.mark.parametrize("columnar", [True, False], ids=["columnar", "row"])
@pytest.mark.parametrize("p", [1, 2, 3])
def test_fused_stages_give_what_one_stage_per_vertex_gives(tmp_path: Path, columnar: bool,
                                                           p: int) -> None:
    plan, jg = _plan(CLICKS, tmp_path, p=p)
    chains = plan_columnar(jg, plan) if columnar else None
    assert not isinstance(chains, str), chains
    files = [[_file(tmp_path / "in", k)] for k in range(4)] + \
        [[_file(tmp_path / "in", 4), _file(tmp_path / "in", 5)], []]
    fused = plan_stages(plan)
    assert any(s.fused for s in fused)
    got = _batches(plan, chains, fused, tmp_path / "fused", files, jg.stream_graph)
    want = _batches(plan, chains, plan_stages(plan, fuse=False), tmp_path / "apart", files,
                    jg.stream_graph)
    for b, (g, w) in enumerate(zip(got, want)):
        assert g == w, b
    assert any(r["sinks"] for r in want)
    assert sum(s["late"] for r in want for s in r["stats"].values()) > 0


# -- on Spark -----------------------------------------------------------------------------


def _stages_made(sc: Any) -> int:
    """How many stages Spark's scheduler has made so far (its next stage id: every job
    group, the streaming query's too)."""
    return int(sc._jsc.sc().dagScheduler().nextStageId())


def _stream(work: Path, text: str, n_files: int) -> None:
    """Run ``text`` on Spark, one file landing per micro-batch."""
    from .harness import stream_files

    stream_files(compile_source(text, str(work / "job.flow")).env.get_job_graph(), work,
                 _file, n_files)


@pytest.mark.spark
def test_on_spark_fused_stages_write_the_same_parts_and_snapshots(
        tmp_path: Path, spark: Any) -> None:
    runs = {}
    for fuse in ("true", "false"):
        work = tmp_path / fuse
        (work / "in").mkdir(parents=True)
        text = CLICKS.format(src=str(work / "in") + "/", p=2, sp=1,
                             head=f"set flowc.streaming.fuse = {fuse};\n")
        before = _stages_made(spark.sparkContext)
        _stream(work, text, 4)
        stages = _stages_made(spark.sparkContext) - before
        parts = {f.name: f.read_text() for f in sorted((work / "out").glob("part-*"))}
        dead = {f.name: f.read_text().replace(str(work), "<work>")
                for f in sorted((work / "bad").glob("part-*"))}
        state = work / "ck" / "flowc" / "state"
        snaps = {}
        for b in sorted(p.name for p in state.iterdir() if p.name.isdigit()):
            for f in sorted((state / b).glob("*.pkl")):
                with open(f, "rb") as fh:
                    snaps[(b, f.name)] = _norm(pickle.load(fh))
        batches = len([b for b in os.listdir(work / "ck" / "spark" / "commits")
                       if b.isdigit()])
        runs[fuse] = (parts, dead, snaps, stages, batches)
    fused, apart = runs["true"], runs["false"]
    assert fused[0] and fused[1] and fused[2]
    assert fused[:3] == apart[:3]
    # one stage (and one shuffle) less in every micro-batch
    assert fused[3] <= apart[3] - min(fused[4], apart[4]), (fused[3:], apart[3:])
