"""Several sources in one streaming job (one Structured Streaming query): monitored
directories of different formats and schemas, a bounded file source read in the first
micro-batch, datagen beside files; a restart on the same checkpoint continues every source
exactly where it stopped."""

from __future__ import annotations

import csv
import json
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from flowc.executor import run_reference
from flowc.executor.streaming.commit import Checkpoint
from flowc.executor.streaming.plan import plan_streaming
from flowc.parser import compile_file

from .harness import DATAGEN_TRIGGER_MS
from .multi_harness import SENTINEL, land, stream

JOB = """set parallelism = 2;
source clicks (user_id string, action string, ts timestamp)
  from csv '{work}/clicks/'{monitor}
  watermark ts - 1s;
source views (ts timestamp, page string, who string, ms int)
  from json '{work}/views/'{monitor}
  watermark ts - 1s;
{rules}
let c = clicks | filter user_id <> 'zz' | map user_id, action, ts;
let v = views | filter who <> 'zz' | map who as user_id, page as action, ts;
c | union v{union_rules}
  | key by user_id
  | window tumbling 3s
  | aggregate count(*) as n, max(ts) as last
  | write csv '{work}/{out}/';
"""
RULES = """source rules (user_id string, action string, ts timestamp)
  from csv '{work}/rules/'
  watermark ts - 1s;"""


def _write(work: Path, name: str, monitor: bool, bounded_rules: bool, out: str) -> Path:
    text = JOB.format(work=work, monitor=" monitor every 100ms" if monitor else "",
                      rules=RULES.format(work=work) if bounded_rules else "",
                      union_rules=" | union rules" if bounded_rules else "", out=out)
    path = work / name
    path.write_text(text)
    return path


def _clicks(k: int) -> list[str]:
    return ["user_id,action,ts"] + [
        f"u{(j * 3 + k) % 4},click,{k * 3000 + (j * 397) % 2500}" for j in range(10)]


def _views(k: int) -> list[str]:
    return [json.dumps({"ts": k * 3000 + (j * 211) % 2500, "page": f"p{j}", "who":
                        f"u{(j + k) % 4}", "ms": j}) for j in range(8)]


def _land(work: Path, k: int) -> None:
    land(work / "clicks", f"c{k:03d}.csv", _clicks(k))
    land(work / "views", f"v{k:03d}.json", _views(k))


def _sentinels(work: Path) -> None:
    for i in range(2):  # one per source subtask
        land(work / "clicks", f"zz{i}.csv", ["user_id,action,ts", f"zz,x,{SENTINEL}"])
        land(work / "views", f"zz{i}.json", [json.dumps({"ts": SENTINEL, "page": "x",
                                                         "who": "zz", "ms": 0})])


def _rows(d: Path) -> Counter[tuple[str, ...]]:
    out: Counter[tuple[str, ...]] = Counter()
    for f in sorted(d.glob("part-*.csv")):
        with open(f, newline="") as fh:
            r = csv.reader(fh)
            next(r)
            out.update(tuple(row) for row in r)
    return out


def _setup(tmp_path: Path, bounded_rules: bool = False) -> Path:
    for d in ("clicks", "views", "rules"):
        (tmp_path / d).mkdir()
    if bounded_rules:
        land(tmp_path / "rules", "r.csv", ["user_id,action,ts"] + [
            f"u{j % 4},rule,{(j * 1777) % 11000}" for j in range(9)])
    _write(tmp_path, "job.flow", True, bounded_rules, "out")
    _write(tmp_path, "ref.flow", False, bounded_rules, "expected")
    return tmp_path


def _run(work: Path, feed: Callable[[Callable[[int], None]], None]) -> Any:
    jg = compile_file(str(work / "job.flow")).env.get_job_graph()
    return stream(work, jg, feed)


def _expected(work: Path) -> Counter[tuple[str, ...]]:
    run_reference(compile_file(str(work / "ref.flow")).env.get_job_graph())
    return _rows(work / "expected")


def test_the_plan_lists_every_source_unbounded_and_bounded(tmp_path: Path) -> None:
    work = _setup(tmp_path, bounded_rules=True)
    plan = plan_streaming(compile_file(str(work / "job.flow")).env.get_job_graph())
    assert [(s.index, type(s.spec).__name__, s.bounded) for s in plan.sources] == [
        (0, "FileSource", False), (1, "FileSource", False), (2, "FileSource", True)]
    assert all(v.source == s.index for s in plan.sources for v in plan.vertices
               if v.id == s.vertex)


@pytest.mark.spark
def test_csv_and_json_directories_in_one_query_and_a_restart(spark: Any,
                                                             tmp_path: Path) -> None:
    work = _setup(tmp_path)

    def first(wait: Callable[[int], None]) -> None:
        for k in range(3):
            _land(work, k)
            wait(2 * (k + 1))

    s1 = _run(work, first)
    assert s1.rows == 3 * 10 + 3 * 8
    after_first = _rows(work / "out")
    ckpt = Checkpoint(str(work / "ck"))
    assert ckpt.units_read(ckpt.done_batches()[-1]) == [3, 3]  # per source

    def second(wait: Callable[[int], None]) -> None:
        for k in range(3, 5):
            _land(work, k)
            wait(6 + 2 * (k - 2))
        _sentinels(work)
        wait(14)

    s2 = _run(work, second)  # the same checkpoint: both sources continue, none rereads
    assert s2.rows == 2 * 10 + 2 * 8 + 4
    got = _rows(work / "out")
    assert after_first and got != after_first
    assert got == _expected(work)


@pytest.mark.spark
def test_a_bounded_source_is_read_in_the_first_micro_batch_then_ends(
        spark: Any, tmp_path: Path) -> None:
    """The rules file is read once, in batch 0, then its channel's watermark is
    Long.MAX_VALUE (Flink's end of input): it never holds the windows back."""
    work = _setup(tmp_path, bounded_rules=True)

    def feed(wait: Callable[[int], None]) -> None:
        for k in range(4):
            _land(work, k)
            wait(2 * (k + 1))
        _sentinels(work)
        wait(12)

    stats = _run(work, feed)
    assert stats.rows == 4 * 10 + 4 * 8 + 4 + 9  # the rules' 9 rows once
    assert _rows(work / "out") == _expected(work)


@pytest.mark.spark
def test_datagen_beside_a_monitored_directory(spark: Any, tmp_path: Path) -> None:
    """Two unbounded kinds in one query: datagen (rows every batch) and files."""
    (tmp_path / "in").mkdir()
    text = f"""set parallelism = 1;
source gen (n int) from datagen rows 20 every 1s (n = index + 1);
source files (n int) from csv '{tmp_path}/in/' monitor every 100ms;
gen | union files | print 'all';
"""
    (tmp_path / "job.flow").write_text(text)
    jg = compile_file(str(tmp_path / "job.flow")).env.get_job_graph()

    def feed(wait: Callable[[int], None]) -> None:
        land(tmp_path / "in", "a.csv", ["n", "-1", "-2"])
        wait(40 + 1)

    # 10 rows a batch at DATAGEN_TRIGGER_MS (at 100 ms, 2 rows a batch took 20 batches)
    stats = stream(tmp_path, jg, feed, trigger_ms=DATAGEN_TRIGGER_MS)
    values = [int(line.split("> ", 1)[1].strip("+I[]")) for line in stats.printed]
    assert {-1, -2} <= set(values)
    generated = sorted(v for v in values if v > 0)
    assert generated == list(range(1, len(generated) + 1)) and len(generated) >= 20


def test_a_job_without_an_unbounded_source_is_refused_before_spark(tmp_path: Path) -> None:
    from flowc.errors import UnsupportedError
    from flowc.parser import compile_source

    text = "source a (x int) from sequence 1 to 3;\nsource b (x int) from sequence 4 to 5;\n" \
           "a | union b | print;\n"
    jg = compile_source(text, "bounded.flow").env.get_job_graph()
    with pytest.raises(UnsupportedError, match="sources are all bounded") as info:
        plan_streaming(jg)
    assert info.value.span is not None and info.value.span.line == 1
