"""Event-time session windows in columnar micro-batches (``arrow/stream_sessions.py``:
merges, late firings with allowed lateness, cleanup), their state converted to and from
the row WindowOperator's snapshot (the MergingWindowSet mapping with its state windows,
the accumulators, the end and cleanup timers) by ``streaming/session_state.py``: random
multi-batch session jobs on the columnar path, the row path and switching paths every
batch give the same outputs, stats and row-format snapshots after every batch, and the
printed lines are the reference executor's micro-batch model's. No Spark: the batches run
in this process (``test_streaming_columnar.Driver``)."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from .columnar_paths import Driver, job_graph, model_lines, printed, row_and_columnar

JOB = """set parallelism = {p};
{head}source clicks (user_id string, action string, score double, n int, ts timestamp)
  from csv '{src}' monitor every 100ms
  watermark ts - {delay}ms;
clicks
  | key by {key}
  | window session gap {gap}{lateness} late into late_clicks
  | aggregate {aggs}
  | print 'ses';
late_clicks | print 'late';
"""
EMPTY = 0.15  # the share of batches without a file
AGGS = ["count(*) as c", "count(score) as cs", "count(distinct action) as d",
        "sum(score) as s", "sum(n) as sn", "avg(score) as a", "avg(n) as an", "min(ts) as lo",
        "max(action) as hi", "first(action) as f", "last(score) as l"]


def _job(rnd: random.Random) -> str:
    aggs = rnd.sample(AGGS, rnd.randrange(1, len(AGGS) + 1))
    return JOB.format(
        p=rnd.choice([1, 2]), src="{src}", delay=rnd.choice([0, 300, 1500]),
        key=rnd.choice(["user_id", "user_id, action"]), gap=rnd.choice(["400ms", "1s", "2s"]),
        lateness=rnd.choice(["", " allowed lateness 1s", " allowed lateness 4s"]),
        aggs=", ".join(aggs),
        head="set flowc.watermarks = 'per-record';\n" if rnd.random() < 0.3 else "")


def _files(d: Driver, batches: int, rnd: random.Random) -> list[list[str]]:
    """One csv file per batch (some batches none): records from well behind the batch's
    time (late, late but allowed, merging fired sessions) to ahead of it; the last two
    batches' files (one per source subtask) hold one record far ahead, which closes every
    session."""
    out = []
    for b in range(batches + 2):
        if b >= batches:
            path = d.work / "in" / f"f{b:03d}.csv"
            path.write_text(f"user_id,action,score,n,ts\nu9,end,,,{100_000 + b}\n")
            out.append([str(path)])
            continue
        if rnd.random() < EMPTY:
            out.append([])
            continue
        rows = ["user_id,action,score,n,ts"]
        for _ in range(rnd.randrange(1, 30)):
            score = "" if rnd.random() < 0.2 else f"{rnd.uniform(-5, 5):.3f}"
            n = "" if rnd.random() < 0.2 else str(rnd.randrange(-3, 100))
            ts = max(0, 1500 * b + rnd.randrange(-6000, 2500))
            rows.append(f"u{rnd.randrange(3)},{rnd.choice(['click', 'buy'])},"
                        f"{score},{n},{ts}")
        path = d.work / "in" / f"f{b:03d}.csv"
        path.write_text("\n".join(rows) + "\n")
        out.append([str(path)])
    return out


@pytest.mark.parametrize("seed", range(10))
def test_sessions_equal_on_both_paths_and_the_model(tmp_path: Path, seed: int) -> None:
    rnd = random.Random(seed)
    text = _job(rnd)
    d = Driver(text, tmp_path)
    assert [m.kind for c in d.chains.values() for m in c.members].count("session") == 1
    files = _files(d, 9, rnd)
    runs = row_and_columnar(d, files)
    for name in ("col", "col-row", "row-col"):
        for b, (r, c) in enumerate(zip(runs["row"], runs[name])):
            assert c["sinks"] == r["sinks"], (name, b)
            assert c["stats"] == r["stats"], (name, b)
            assert c["snapshots"] == r["snapshots"], (name, b)
    # empty batches included: the Driver deals files as the model and the runner do
    assert printed(d, runs["col"]) == model_lines(job_graph(d, text), files).printed
    assert any(r["sinks"] for r in runs["row"])


def test_keyless_sessions_equal_on_both_paths(tmp_path: Path) -> None:
    """A session window without a key (one key for the whole stream) converts too."""
    text = JOB.format(p=1, head="", src="{src}", delay=300, key="", gap="1s",
                      lateness=" allowed lateness 1s",
                      aggs="count(*) as c, sum(score) as s, first(action) as f")
    text = text.replace("  | key by \n", "")
    d = Driver(text, tmp_path)
    assert [m.kind for c in d.chains.values() for m in c.members].count("session") == 1
    files = _files(d, 6, random.Random(3))
    runs = row_and_columnar(d, files)
    assert any(r["sinks"] for r in runs["row"])
    for name in ("col", "col-row", "row-col"):
        assert runs[name] == runs["row"], name
