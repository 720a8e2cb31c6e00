"""The columnar channel merge with watermark statuses (``arrow.merge.merge_order_valve`` /
``merge_streaming_valve``) against the row path's ``runtime.channels.merge_with_valve``:
random channels of records, watermarks and IDLE / ACTIVE statuses, cut into payloads at
random, merged over several micro-batches with the valve carried from one to the next -
the same records in the same order, each seeing the same watermark, the same valve
outputs between the same records, and the same valve state after every batch."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pytest

from flowc.executor.arrow import convert
from flowc.executor.arrow.merge import ACTIVE, IDLE, WM, merge_order_valve, merge_streaming_valve
from flowc.executor.runtime.channels import WatermarkStatus, WatermarkValve, merge_with_valve
from flowc.executor.runtime.core import Watermark

from .columnar_paths import (
    CLICKS_HEADER,
    Driver,
    job_graph,
    model_lines,
    printed,
    random_click,
    row_and_columnar,
    same_on_every_path,
)

Element = tuple[Any, Any]


def _channel(rng: random.Random, c: int, batch: int, n: int, wm: list[int]) -> list[Element]:
    """A channel's elements in one batch: records (labelled by channel, batch, number),
    watermarks mostly rising (sometimes repeated or lower: the valve ignores those) and
    statuses (sometimes repeated: the valve ignores those too)."""
    out: list[Element] = []
    for i in range(n):
        x = rng.random()
        if x < 0.55:
            out.append(((c, batch, i), rng.randrange(0, 1000)))
        elif x < 0.8:
            wm[c] += rng.choice([-3, 0, 1, 2, 5, 20])
            out.append((Watermark, wm[c]))
        else:
            out.append((WatermarkStatus, rng.random() < 0.6))
    return out


def _payloads(rng: random.Random, elements: list[Element]) -> list[tuple[list[Any], list[int],
                                                                            list[int], list[int]]]:
    """``elements`` cut into payloads: (records, mark positions, values, kinds), a mark's
    position the number of the payload's records before it."""
    out: list[tuple[list[Any], list[int], list[int], list[int]]] = []
    cur: tuple[list[Any], list[int], list[int], list[int]] = ([], [], [], [])
    for v, ts in elements:
        if v is Watermark:
            cur[1].append(len(cur[0]))
            cur[2].append(ts)
            cur[3].append(WM)
        elif v is WatermarkStatus:
            cur[1].append(len(cur[0]))
            cur[2].append(0)
            cur[3].append(IDLE if ts else ACTIVE)
        else:
            cur[0].append((v, ts))
        if rng.random() < 0.2:
            out.append(cur)
            cur = ([], [], [], [])
    if cur[0] or cur[1] or rng.random() < 0.3:
        out.append(cur)
    return out


def _row_path(channels: list[list[Element]], valve: WatermarkValve) -> list[tuple[Any, ...]]:
    out: list[tuple[Any, ...]] = []
    current = valve.last
    for _, v, ts in merge_with_valve(channels, [1] * len(channels), valve):
        if v is Watermark:
            current = ts
            out.append(("wm", ts))
        elif v is WatermarkStatus:
            out.append(("status", ts))
        else:
            out.append(("rec", v, current))
    return out


def _columnar(records: list[Any], order: np.ndarray, seen: np.ndarray,
              outs: tuple[np.ndarray, np.ndarray, np.ndarray]) -> list[tuple[Any, ...]]:
    """The merge's result as the row path's event list."""
    events: list[tuple[Any, ...]] = []
    before, kinds, values = (a.tolist() for a in outs)
    k = 0
    for j, (i, s) in enumerate(zip(order.tolist(), seen.tolist())):
        while k < len(before) and before[k] <= j:
            events.append(_out(kinds[k], values[k]))
            k += 1
        events.append(("rec", records[i], s))
    events.extend(_out(kinds[m], values[m]) for m in range(k, len(before)))
    return events


def _out(kind: int, value: int) -> tuple[Any, ...]:
    return ("wm", value) if kind == WM else ("status", kind == IDLE)


@pytest.mark.parametrize("seed", range(60))
def test_merge_order_valve_equals_row_valve(seed: int) -> None:
    rng = random.Random(seed)
    n_chan = rng.randint(1, 4)
    row_valve, col_valve = WatermarkValve(n_chan), WatermarkValve(n_chan)
    wm = [rng.randrange(0, 50) for _ in range(n_chan)]
    for batch in range(rng.randint(1, 6)):
        # Some channels get nothing in a batch (a source subtask without files).
        chans = [_channel(rng, c, batch, 0 if rng.random() < 0.25 else rng.randint(1, 30), wm)
                 for c in range(n_chan)]
        expected = _row_path([[(v, ts) for v, ts in ch] for ch in chans], row_valve)
        metas, records = [], []
        for ch in chans:
            payloads = _payloads(rng, ch)
            metas.append([(len(r), p, v, k) for r, p, v, k in payloads])
            records.extend(x[0] for r, _, _, _ in payloads for x in r)
        order, seen, outs = merge_order_valve(metas, col_valve)
        assert _columnar(records, order, seen, outs) == expected, (seed, batch)
        assert col_valve.state() == row_valve.state()


def test_all_idle_flushes_max_when_last_active_held_the_min() -> None:
    """Channel 1 (watermark 9) idles first while channel 0 (5) holds the min; when channel
    0 idles too the valve flushes 9 and goes idle; an ACTIVE status before a record makes
    it active again (channel 0 not aligned: 5 < 9); channel 0 counts again once its
    watermark (12) catches up."""
    valve = WatermarkValve(2)
    metas = [[(2, [0, 1, 1, 2], [5, 0, 0, 12], [WM, IDLE, ACTIVE, WM])],
             [(0, [0, 0], [9, 0], [WM, IDLE])]]
    order, seen, outs = merge_order_valve(metas, valve)
    events = _columnar(["a", "b"], order, seen, outs)
    assert events == [("wm", 5), ("rec", "a", 5), ("wm", 9), ("status", True),
                      ("status", False), ("rec", "b", 9), ("wm", 12)]
    rows = _row_path([[(Watermark, 5), ("a", 1), (WatermarkStatus, True),
                       (WatermarkStatus, False), ("b", 2), (Watermark, 12)],
                      [(Watermark, 9), (WatermarkStatus, True)]], WatermarkValve(2))
    assert events == rows


def test_merge_streaming_valve_carries_arrow_records() -> None:
    schema = pa.schema([("k", pa.int64())])
    rng = random.Random(7)
    valve, row_valve = WatermarkValve(3), WatermarkValve(3)
    wm = [0, 0, 0]
    for batch in range(4):
        chans = [_channel(rng, c, batch, rng.randint(0, 20), wm) for c in range(3)]
        expected = _row_path(chans, row_valve)
        channels, labels = [], []
        for ch in chans:
            payloads = _payloads(rng, ch)
            channels.append([])
            for recs, p, v, k in payloads:
                ids = list(range(len(labels), len(labels) + len(recs)))
                labels.extend(x[0] for x in recs)
                chunk = convert.from_rows([(i,) for i in ids], [x[1] for x in recs], schema)
                channels[-1].append((convert.to_ipc(chunk), p, v, k))
        merged, outs = merge_streaming_valve(channels, schema, valve)
        got = [labels[r[0]] for r in merged.rows()]
        assert got == [e[1] for e in expected if e[0] == "rec"]
        assert merged.wm_at is not None
        assert merged.wm_at.to_pylist() == [e[2] for e in expected if e[0] == "rec"]
        assert [int(x) for x in merged.marks[1]] == [e[1] for e in expected if e[0] == "wm"]
        assert valve.state() == row_valve.state()


# -- whole micro-batch jobs --------------------------------------------------------------

JOB = """set parallelism = {p};
{head}source clicks (user_id string, action string, score double, n int, ts timestamp)
  from csv '{src}' monitor every 100ms
  watermark ts - {delay}ms idle after {idle};
clicks
  | key by {key}
  | window {window}
  | aggregate count(*) as c, sum(n) as sn, max(action) as hi
  {then}| print 'win';
"""
# A second keyed window behind the first: the first's subtasks forward the valve's statuses
# (all their channels idle: IDLE; a record: ACTIVE) to the second's channels.
THEN = """| key by hi
  | window tumbling 4s
  | aggregate count(*) as k, sum(c) as t
  """


def _idle_job(rnd: random.Random) -> str:
    return JOB.format(
        p=rnd.choice([2, 3]), src="{src}", delay=rnd.choice([0, 500]),
        idle=rnd.choice(["500ms", "1s", "2s"]), key=rnd.choice(["user_id", "action"]),
        window=rnd.choice(["tumbling 2s", "sliding 4s every 2s"]),
        then=THEN if rnd.random() < 0.5 else "",
        head="set flowc.watermarks = 'per-record';\n" if rnd.random() < 0.3 else "")


def _idle_files(d: Any, batches: int, rnd: random.Random) -> list[list[str]]:
    """0 to 3 csv files a batch (dealt to the source subtasks in turn: some get none for
    several batches), records around the batch's time."""
    out = []
    n = 0
    for b in range(batches):
        names = []
        for _ in range(rnd.choice([0, 0, 1, 1, 2, 3])):
            path = d.work / "in" / f"f{n:03d}.csv"
            n += 1
            lines = [random_click(rnd, 1500 * b, (-2000, 2000), 4, ["click", "buy", "view"])
                     for _ in range(rnd.randrange(1, 12))]
            path.write_text("\n".join([CLICKS_HEADER, *lines]) + "\n")
            names.append(str(path))
        out.append(names)
    return out


@pytest.mark.parametrize("seed", range(10))
def test_idleness_jobs_equal_on_both_paths(tmp_path: Path, seed: int) -> None:
    rnd = random.Random(seed)
    text = _idle_job(rnd)
    d = Driver(text, tmp_path)
    assert all(c.statuses for c in d.chains.values())
    files = _idle_files(d, 8, rnd)
    runs = row_and_columnar(d, files)
    same_on_every_path(runs)
    lines = printed(d, runs["col"])
    assert lines == model_lines(job_graph(d, text), files, timed=True).printed


def test_an_idle_subtask_stops_holding_the_windows_back(tmp_path: Path) -> None:
    """Source subtask 1 reads one record, then only empty files: after the timeout it
    goes idle and the windows fire on source subtask 0's watermark alone (without
    idleness they would wait for subtask 1), on every path, as the model has it."""
    text = JOB.format(p=2, head="", src="{src}", delay=0, idle="1s", key="user_id",
                      window="tumbling 2s", then="")
    d = Driver(text, tmp_path)
    files = []
    for b in range(6):
        names = []
        for i, lines in enumerate([[f"u{b},click,1.0,{b},{100 + 3000 * b}"],
                                   ["u9,view,2.0,9,100"] if b == 0 else []]):
            path = d.work / "in" / f"f{b}{i}.csv"
            path.write_text("\n".join([CLICKS_HEADER, *lines]) + "\n")
            names.append(str(path))
        files.append(names)
    runs = row_and_columnar(d, files)
    same_on_every_path(runs)
    lines = printed(d, runs["col"])
    assert lines == model_lines(job_graph(d, text), files, timed=True).printed
    assert any("u9" in line for line in lines) and len(lines) >= 4, lines
    channels = [s["'channels'"] for s in runs["col"][-1]["snapshots"].values()
                if s["'channels'"]["'idle'"]]
    assert any(c["'idle'"] == [False, True] for c in channels), channels


# -- on Spark -----------------------------------------------------------------------------

SPARK_JOB = """set parallelism = 2;
source clicks (user_id string, action string, score double, n int, ts timestamp)
  from csv '{src}' monitor every 100ms
  watermark ts - 0ms idle after 300ms;
clicks | key by user_id | window tumbling 2s | aggregate count(*) as c, sum(n) as sn
  | write csv '{src}../out/';
"""


def _spark_file(work: Path, k: int) -> str:
    """File ``k`` (the job's k-th file: source subtask k % 2): even ones a record at
    3000 k / 2, file 1 a record at 100, the other odd ones no record - source subtask 1
    goes quiet."""
    rows = [CLICKS_HEADER]
    if k % 2 == 0:
        rows.append(f"u{k % 3},click,1.0,{k},{3000 * k // 2 + 100}")
    elif k == 1:
        rows.append("u9,view,2.0,9,100")
    path = work / f"f{k:03d}.tmp"
    path.write_text("\n".join(rows) + "\n")
    return str(path)


@pytest.mark.spark
def test_on_spark_an_idle_subtask_lets_the_columnar_windows_fire(tmp_path: Path,
                                                                  spark: Any) -> None:
    """Columnar micro-batches on Spark (chosen automatically): source subtask 1 gets only
    files without records after its first one; after 300 ms of batch time it goes idle and
    the windows fire on subtask 0's watermark (u9's window [0, 2 s) included, which a busy
    subtask 1 at watermark 99 would hold back); the snapshots record the idle channel."""
    import pickle

    from flowc.executor.streaming.columnar import plan_columnar
    from flowc.executor.streaming.plan import plan_streaming
    from flowc.parser import compile_source

    from .harness import stream_files

    (tmp_path / "in").mkdir()
    text = SPARK_JOB.format(src=str(tmp_path / "in") + "/")
    jg = compile_source(text, str(tmp_path / "job.flow")).env.get_job_graph()
    assert not isinstance(plan_columnar(jg, plan_streaming(jg)), str)
    stream_files(jg, tmp_path, _spark_file, 10)
    out = "".join(f.read_text() for f in sorted((tmp_path / "out").glob("part-*")))
    assert "u9," in out, out
    state = tmp_path / "ck" / "flowc" / "state"
    idle = []
    for f in state.glob("*/*.pkl"):
        with open(f, "rb") as fh:
            idle += [any(pickle.load(fh)["channels"]["idle"])]
    assert any(idle)


def test_a_join_in_a_job_with_idleness_stays_row_by_row(tmp_path: Path) -> None:
    """The joins' channel merges (interval_state.py, window_join_state.py) have no
    watermark valve yet: such a job runs row by row, saying why."""
    from flowc.executor.streaming.columnar import plan_columnar
    from flowc.executor.streaming.plan import plan_streaming
    from flowc.parser import compile_source

    text = f"""set parallelism = 2;
source clicks (user_id string, action string, score double, ts timestamp)
  from csv '{tmp_path}/' monitor every 100ms
  watermark ts - 1s idle after 1s;
let a = clicks | filter action = 'click';
let b = clicks | filter action <> 'click' | map user_id as uid, action, score, ts;
a | interval join b on a.user_id = b.uid between -2s and 1s | print 'joined';
"""
    jg = compile_source(text, str(tmp_path / "job.flow")).env.get_job_graph()
    why = plan_columnar(jg, plan_streaming(jg))
    assert isinstance(why, str) and "is a join in a job with idleness timeouts" in why, why
    jg = compile_source(text.replace(" idle after 1s", ""),
                        str(tmp_path / "job.flow")).env.get_job_graph()
    assert not isinstance(plan_columnar(jg, plan_streaming(jg)), str)


TWO_SOURCES = """set parallelism = {p};
source a (user_id string, action string, score double, n int, ts timestamp)
  from csv '{src}' monitor every 100ms
  watermark ts - 0ms idle after {idle_a};
source b (user_id string, action string, score double, n int, ts timestamp)
  from csv '{src}' monitor every 100ms
  watermark ts - 300ms{idle_b};
a | union b | key by user_id | window tumbling 2s
  | aggregate count(*) as c, sum(n) as sn, min(ts) as lo
  | print 'win';
"""


@pytest.mark.parametrize("seed", range(4))
def test_two_sources_with_idleness_equal_on_both_paths(tmp_path: Path, seed: int) -> None:
    """Two sources (the driver gives both the batch's files) with different timeouts, one
    perhaps without, unioned into one window: their subtasks' channels go idle and active
    on their own."""
    rnd = random.Random(seed)
    text = TWO_SOURCES.format(p=rnd.choice([2, 3]), src="{src}",
                              idle_a=rnd.choice(["500ms", "1s"]),
                              idle_b=rnd.choice(["", " idle after 2s"]))
    d = Driver(text, tmp_path)
    files = _idle_files(d, 8, rnd)
    runs = row_and_columnar(d, files)
    same_on_every_path(runs)
    assert printed(d, runs["col"])
    # channels went idle (the snapshots' keys are reprs)
    assert any(any(s["'channels'"]["'idle'"]) for r in runs["col"]
               for s in r["snapshots"].values())
