"""Savepoints end to end on the streaming executor: a job runs on real files, stops, a
savepoint is taken from its checkpoint, and a new job (the same, or changed) starts from it
and reads the rest. Where Flink restores, the two runs' outputs together equal one
uninterrupted run's; where Flink refuses, the start fails with Flink's message."""

from __future__ import annotations

import csv
import json
from collections import Counter
from pathlib import Path

import pytest

from flowc.errors import ConfigError
from flowc.executor import run_reference
from flowc.executor.streaming.commit import Checkpoint
from flowc.parser import compile_file
from flowc.savepoint.diff import max_parallelism_error, non_restored_error
from flowc.savepoint.inspect import inspect_savepoint
from flowc.savepoint.restore import restore_savepoint
from flowc.savepoint.take import take_savepoint
from streaming.harness import Progress, run_feeding

pytestmark = pytest.mark.spark

JOB = """set parallelism = {p};
{head}source clicks (user_id string, action string, ts timestamp)
  from csv '{src}'{monitor}
  watermark ts - 1s
  with (uid = 'src');
clicks{extra}
  | key by user_id
  | window tumbling 5s
  | aggregate count(*) as n, max(ts) as last
  with (uid = 'win'{name})
  | write csv '{out}' with (uid = 'out');
"""
FILES = 8  # the first run reads files 0..3, the restored one 4..7 and the sentinels
SENTINEL = 1_000_000_000_000


def job(out: str, *, p: int = 2, head: str = "", extra: str = "", name: str = "",
        src: str = "in/", monitor: bool = True) -> str:
    return JOB.format(p=p, head=head, extra=extra, name=name, out=out, src=src,
                      monitor=" monitor every 100ms" if monitor else "")


def _file(d: Path, k: int) -> None:
    """File k: records of times k*4000 .. k*4000+3700, later than every earlier file's
    (so nothing is ever late); windows of 5 s span files."""
    rows = ["user_id,action,ts"]
    for i in range(10):
        rows.append(f"u{(i * 3 + k) % 7},click,{k * 4000 + i * 370}")
    tmp = d / f".f{k:03d}.csv"
    tmp.write_text("\n".join(rows) + "\n")
    tmp.rename(d / f"f{k:03d}.csv")


def _sentinels(d: Path, n: int) -> None:
    for i in range(n):  # one per source subtask: every watermark passes the last window
        (d / f".zz{i}.csv").write_text(f"user_id,action,ts\nnobody,click,{SENTINEL}\n")
        (d / f".zz{i}.csv").rename(d / f"zz{i}.csv")


def _rows(*dirs: Path) -> Counter[tuple[str, ...]]:
    out: Counter[tuple[str, ...]] = Counter()
    for d in dirs:
        for f in sorted(d.glob("part-*.csv")):
            with open(f, newline="") as fh:
                r = csv.reader(fh)
                next(r)
                out.update(tuple(row) for row in r if row[0] != "nobody")
    return out


def _write(work: Path, name: str, text: str) -> str:
    (work / name).write_text(text)
    return str(work / name)


def _run(job_file: str, ckpt: Path, land: list[int], sentinels: int = 0, *,
         savepoint: Path | None = None, allow: bool = False) -> None:
    """Run ``job_file`` on checkpoint ``ckpt`` (restored from ``savepoint`` first) while
    files ``land`` (and sentinels) arrive, until the checkpoint has read them all."""
    work = Path(job_file).parent
    graph = compile_file(job_file).env.get_execution_graph()
    base = 0
    if savepoint is not None:
        restored = restore_savepoint(str(savepoint), graph, job_file, str(ckpt), allow)
        assert restored is not None
        base = restored.files_read

    def feed(progress: Progress) -> None:
        for k in land:
            _file(work / "in", k)
        _sentinels(work / "in", sentinels)
        progress.files(base + len(land) + sentinels)
    run_feeding(graph.job_graph, ckpt, feed)


def _expected(work: Path, n_files: int, p: int = 2) -> Counter[tuple[str, ...]]:
    """One uninterrupted (bounded) run over all the files: the reference executor."""
    (work / "all").mkdir()
    for k in range(n_files):
        _file(work / "all", k)
    _sentinels(work / "all", p)
    ref = _write(work, "ref.flow", job("expected/", p=p, src="all/", monitor=False))
    run_reference(compile_file(ref).env.get_job_graph())
    return _rows(work / "expected")


@pytest.fixture(scope="module")
def first(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The first run (files 0..3, parallelism 2), stopped, and its savepoint ``sp``."""
    work = tmp_path_factory.mktemp("first")
    (work / "in").mkdir()
    old = _write(work, "old.flow", job("out1/"))
    _run(old, work / "ck1", list(range(4)))
    graph = compile_file(old).env.get_execution_graph()
    taken = take_savepoint(str(work / "ck1"), graph, old, str(work / "sp"))
    assert taken.files_read == 4
    return work


def _restore_into(first: Path, tmp_path: Path, new_text: str, sentinels: int = 2, *,
                  allow: bool = False) -> Counter[tuple[str, ...]]:
    """The second run: a copy of the input directory (the first run's files and the new
    ones), restored from the first run's savepoint."""
    (tmp_path / "in").mkdir()
    for f in (first / "in").glob("*.csv"):
        (tmp_path / "in" / f.name).write_text(f.read_text())
    sp = tmp_path / "sp"
    sp_src = first / "sp"
    import shutil

    shutil.copytree(sp_src, sp)
    # The savepoint names the files as the first run's Spark listed them.
    src = tmp_path / "sp" / "sources"
    for f in src.iterdir():
        f.write_text(f.read_text().replace(str(first / "in"), str(tmp_path / "in")))
    new = _write(tmp_path, "new.flow", new_text)
    _run(new, tmp_path / "ck2", list(range(4, FILES)), sentinels, savepoint=sp, allow=allow)
    return _rows(first / "out1", tmp_path / "out2")


def test_restore_into_the_same_job_equals_an_uninterrupted_run(first: Path,
                                                              tmp_path: Path) -> None:
    got = _restore_into(first, tmp_path, job("out2/"))
    assert got == _expected(tmp_path, FILES)
    # files already read were not read again: the first run wrote windows of files 0..3
    # and the second never counted their records twice (equality above) ...
    assert sum(int(r[3]) for r in got.elements()) == 10 * FILES


def test_savepoint_inspect_lists_keys_and_the_sources_position(first: Path) -> None:
    doc = inspect_savepoint(str(first / "sp"))
    win = next(o for o in doc["operators"] if o["uid"] == "win")
    contents = next(s for s in win["states"] if s["name"] == "window-contents")
    assert contents["keys"] > 0 and win["timers"] > 0 and win["max_parallelism"] == 128
    assert [s["units_read"] for s in doc["sources"].values()] == [4]


def test_a_stateless_operator_added_upstream_of_the_uid_window(first: Path,
                                                              tmp_path: Path) -> None:
    got = _restore_into(first, tmp_path, job("out2/", extra="\n  | filter action <> 'x'"))
    assert got == _expected(tmp_path, FILES)


def test_an_operator_renamed_with_its_uid_kept(first: Path, tmp_path: Path) -> None:
    got = _restore_into(first, tmp_path, job("out2/", name=", name = 'counts per user'"))
    assert got == _expected(tmp_path, FILES)


def test_parallelism_2_to_3_redistributes_keyed_state_by_key_group(first: Path,
                                                                   tmp_path: Path) -> None:
    got = _restore_into(first, tmp_path, job("out2/", p=3), sentinels=3)
    assert got == _expected(tmp_path, FILES, p=3)


def test_a_removed_operator_fails_the_start_with_flinks_message(first: Path,
                                                                tmp_path: Path) -> None:
    meta = json.loads((first / "sp" / "_metadata.json").read_text())
    win = next(o["id"] for o in meta["operators"] if o["uid"] == "win")
    text = job("out2/").replace("  | key by user_id\n  | window tumbling 5s\n"
                                "  | aggregate count(*) as n, max(ts) as last\n"
                                "  with (uid = 'win')\n", "")
    new = _write(tmp_path, "new.flow", text)
    graph = compile_file(new).env.get_execution_graph()
    with pytest.raises(ConfigError) as e:
        restore_savepoint(str(first / "sp"), graph, new, str(tmp_path / "ck2"), False)
    assert e.value.message == non_restored_error(str(first / "sp"), win)


def test_a_removed_operator_with_allow_non_restored_state(first: Path, tmp_path: Path) -> None:
    text = job("out2/").replace("  | key by user_id\n  | window tumbling 5s\n"
                                "  | aggregate count(*) as n, max(ts) as last\n"
                                "  with (uid = 'win')\n", "")
    _restore_into(first, tmp_path, text, allow=True)
    rows = _rows(tmp_path / "out2")
    # only the new files' records pass (the old files are not read again), each once
    assert sum(rows.values()) == 10 * (FILES - 4)
    assert {r[0] for r in rows} <= {f"u{i}" for i in range(7)}
    assert len(rows) == 10 * (FILES - 4)  # each record once (its ts is its own)


def test_a_changed_max_parallelism_fails_with_flinks_error(first: Path, tmp_path: Path) -> None:
    meta = json.loads((first / "sp" / "_metadata.json").read_text())
    new = _write(tmp_path, "new.flow", job("out2/", head="set max_parallelism = 256;\n"))
    graph = compile_file(new).env.get_execution_graph()
    with pytest.raises(ConfigError) as e:
        restore_savepoint(str(first / "sp"), graph, new, str(tmp_path / "ck2"), False)
    # Flink checks the operators in turn: the first one's (the source's) max parallelism
    assert e.value.message == max_parallelism_error(str(first / "sp"),
                                                    meta["operators"][0]["id"], 128, 256)


def test_a_derived_max_parallelism_adopts_the_savepoints(tmp_path: Path) -> None:
    """The first job sets max parallelism 16; the new one (parallelism 3) derives 128:
    Flink runs the restored vertices with the state's 16 key groups
    (StateAssignmentOperation.checkParallelismPreconditions), routing included."""
    (tmp_path / "in").mkdir()
    old = _write(tmp_path, "old.flow", job("out1/", head="set max_parallelism = 16;\n"))
    _run(old, tmp_path / "ck1", list(range(4)))
    take_savepoint(str(tmp_path / "ck1"), compile_file(old).env.get_execution_graph(), old,
                   str(tmp_path / "sp"))
    new = _write(tmp_path, "new.flow", job("out2/", p=3))
    graph = compile_file(new).env.get_execution_graph()
    assert {ev.max_parallelism for ev in graph.vertices} == {128}  # what explain shows
    _run(new, tmp_path / "ck2", list(range(4, FILES)), 3, savepoint=tmp_path / "sp")
    adopted = Checkpoint(str(tmp_path / "ck2")).adopted_max_parallelism()
    assert adopted == {ev.id: 16 for ev in graph.vertices}
    assert _rows(tmp_path / "out1", tmp_path / "out2") == _expected(tmp_path, FILES, p=3)
    # a savepoint of the restored run keeps the 16 key groups
    take_savepoint(str(tmp_path / "ck2"), graph, new, str(tmp_path / "sp2"))
    meta = json.loads((tmp_path / "sp2" / "_metadata.json").read_text())
    assert {o["max_parallelism"] for o in meta["operators"]} == {16}


ROLLING = """set parallelism = {p};
source clicks (user_id string, action string, ts timestamp)
  from csv '{src}'{monitor}
  with (uid = 'src', parallelism = 1);
clicks
  | key by user_id
  | aggregate count(*) as n, max(ts) as last
  | print;
"""


def _finals(text: str) -> tuple[dict[str, str], Counter[str]]:
    """Per key its last row (the largest count: count and max(ts) do not depend on the
    order records arrive in, which the rebalance before the aggregate's map interleaves),
    and every changelog line's kind and count."""
    finals: dict[str, tuple[int, str]] = {}
    kinds: Counter[str] = Counter()
    for line in text.splitlines():
        row = line.split("> ", 1)[-1]
        if row[:2] not in ("+I", "+U", "-U"):
            continue
        key, n, last = row[3:-1].split(", ")
        kinds[f"{row[:2]} {key} {n}"] += 1
        if row[0] == "+" and int(n) > finals.get(key, (0, ""))[0]:
            finals[key] = (int(n), last)
    return {k: f"{n} {last}" for k, (n, last) in finals.items()}, kinds


def test_rolling_aggregate_state_rescaled_2_to_3(tmp_path: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    """A keyed reduce's per-key values (StreamGroupedReduceOperator's ``_op_state``) move
    by key group: the restored job's updates continue every key's count."""
    (tmp_path / "in").mkdir()
    old = _write(tmp_path, "old.flow", ROLLING.format(p=2, src="in/",
                                                      monitor=" monitor every 100ms"))
    _run(old, tmp_path / "ck1", list(range(3)))
    take_savepoint(str(tmp_path / "ck1"), compile_file(old).env.get_execution_graph(), old,
                   str(tmp_path / "sp"))
    new = _write(tmp_path, "new.flow", ROLLING.format(p=3, src="in/",
                                                      monitor=" monitor every 100ms"))
    _run(new, tmp_path / "ck2", list(range(3, 6)), savepoint=tmp_path / "sp")
    got = _finals(capsys.readouterr().out)

    (tmp_path / "all").mkdir()
    for k in range(6):
        _file(tmp_path / "all", k)
    ref = _write(tmp_path, "ref.flow", ROLLING.format(p=2, src="all/", monitor=""))
    want = _finals("\n".join(run_reference(compile_file(ref).env.get_job_graph()).printed))
    assert got == want and sum(want[1].values()) > 60
