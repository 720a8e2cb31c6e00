"""``flowc explain --diff OLD NEW``: Flink's restore rules applied to two plans (or a savepoint's
metadata and a plan). Every id comes from the planner, whose ids the golden tests prove equal
to Flink's; the Flink error texts are those of Checkpoints / StateAssignmentOperation."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from flowc.cli import main
from flowc.savepoint import LOST, NEW, RESTORED, diff_states, metadata_from_plan
from flowc.savepoint.diff import StateDiff
from savepoint.helpers import job, op_id, plan, write

WINDOW = "TumblingEventTimeWindows"
UID = " with (uid = 'counts')"


def diff(old_text: str, new_text: str) -> StateDiff:
    old, new = plan(old_text, "old.flow"), plan(new_text, "new.flow")
    return diff_states(metadata_from_plan(old, "old.flow"), new, "new.flow", old_graph=old,
                       pointer="SP")


def entry(d: StateDiff, name: str, status: str):  # type: ignore[no-untyped-def]
    (e,) = [e for e in d.entries if e.name == name and e.status == status]
    return e


# ------------------------------------------------------------------ the rules


def test_same_job_restores_everything() -> None:
    d = diff(job(), job())
    assert [e.status for e in d.entries] == [RESTORED, RESTORED]
    assert not d.loses_state


def test_operator_added_upstream_of_a_uid_window_keeps_its_state() -> None:
    d = diff(job(UID), job(UID, filter_=True))
    w = entry(d, WINDOW, RESTORED)
    assert w.id == w.new_id == op_id(plan(job(UID)), WINDOW) == op_id(
        plan(job(UID, filter_=True)), WINDOW)
    assert w.uid == "counts"
    assert not d.loses_state


def test_operator_added_upstream_of_a_window_without_uid_loses_it() -> None:
    old_id = op_id(plan(job()), WINDOW)
    new_id = op_id(plan(job(filter_=True)), WINDOW)
    assert old_id != new_id
    d = diff(job(), job(filter_=True))
    lost = entry(d, WINDOW, LOST)
    assert lost.id == old_id
    assert lost.reasons[0] == f"no uid, and its id changed (now {new_id})"
    assert "Filter (new.flow line 7) was added upstream" in lost.reasons
    assert lost.flink_error == (
        f"Failed to rollback to checkpoint/savepoint SP. Cannot map checkpoint/savepoint state "
        f"for operator {old_id} to the new program, because the operator is not available in "
        "the new program. If you want to allow to skip this, you can set the "
        "--allowNonRestoredState option on the CLI.")
    assert entry(d, WINDOW, NEW).id == new_id
    assert d.loses_state


def test_renamed_operator_with_its_uid_kept_is_restored() -> None:
    renamed = job(" with (uid = 'counts', name = 'clicks per user')")
    d = diff(job(UID), renamed)
    r = entry(d, "clicks per user", RESTORED)
    assert r.id == op_id(plan(job(UID)), WINDOW)
    assert r.reasons == (f"renamed from '{WINDOW}' to 'clicks per user': the uid 'counts' "
                         "keeps its id",)


def test_renamed_operator_without_uid_keeps_its_id_too() -> None:
    # Flink's hash of an operator without uid does not include its name.
    d = diff(job(), job(" with (name = 'clicks per user')"))
    assert entry(d, "clicks per user", RESTORED).id == op_id(plan(job()), WINDOW)


def test_parallelism_change_redistributes_keyed_state_by_key_group() -> None:
    d = diff(job(), job(parallelism=3))
    w = entry(d, WINDOW, RESTORED)
    assert (w.old_parallelism, w.new_parallelism) == (2, 3)
    assert w.reasons == ("parallelism 2 -> 3: keyed state redistributed by key group "
                         "(128 key groups)",)
    assert entry(d, "Source: clicks", RESTORED).reasons == (
        "parallelism 2 -> 3: operator state redistributed among the subtasks",)
    assert not d.loses_state


def test_removed_operator_loses_its_state() -> None:
    d = diff(job(), job(window=False))
    lost = entry(d, WINDOW, LOST)
    assert lost.reasons == (f"{WINDOW} was removed: the new job has no operator with its id",)
    assert "because the operator is not available in the new program" in str(lost.flink_error)
    assert d.loses_state


def test_configured_max_parallelism_change_fails_with_flinks_error() -> None:
    d = diff(job(), job(max_parallelism=256))
    w = entry(d, WINDOW, LOST)
    wid = op_id(plan(job()), WINDOW)
    assert w.flink_error == (
        "Failed to rollback to checkpoint/savepoint SP. Max parallelism mismatch between "
        f"checkpoint/savepoint state and new program. Cannot map operator {wid} with max "
        "parallelism 128 to new program with max parallelism 256. This indicates that the "
        "program has been changed in a non-compatible way after the checkpoint/savepoint.")
    assert (w.old_max_parallelism, w.new_max_parallelism) == (128, 256)


def test_derived_max_parallelism_adopts_the_states() -> None:
    d = diff(job(max_parallelism=256), job())
    w = entry(d, WINDOW, RESTORED)
    assert w.reasons == ("the new job's max parallelism is derived (128), so Flink adopts "
                         "the state's (256)",)


def test_parallelism_above_the_states_max_parallelism_fails() -> None:
    new = plan(job(parallelism=200))
    d = diff(job(), job(parallelism=200))
    w = entry(d, WINDOW, LOST)
    vertex = new.job_graph.node_vertex[next(
        o.node_id for v in new.job_graph.vertices.values() for o in v.operators
        if o.name == WINDOW)]
    assert w.flink_error == (
        f"The state for task {vertex} can not be restored. The maximum parallelism (128) of "
        "the restored state is lower than the configured parallelism (200). Please reduce the "
        "parallelism of the task to be lower or equal to the maximum parallelism.")


def test_changed_chaining_is_named() -> None:
    never = job().replace("lower(action) as action, ts", "lower(action) as action, ts "
                          "with (chain = never)")
    d = diff(job(), never)
    lost = entry(d, WINDOW, LOST)
    assert ("chaining changed: Source: clicks (new.flow line 2) no longer chains to Map "
            "(new.flow line 6) (Map has chaining disabled)") in lost.reasons


def test_operator_added_on_another_branch_moves_the_hash_order() -> None:
    branch = job().replace("clicks\n  | map", "clicks | filter user_id is not null | "
                           "print 'x';\nclicks\n  | map")
    lost = entry(diff(job(), branch), WINDOW, LOST)
    assert any(r.startswith("operators hashed before it changed (Filter (new.flow line 5) "
                            "added") for r in lost.reasons), lost.reasons


def test_uid_changed_is_named() -> None:
    d = diff(job(UID), job(" with (uid = 'counts-v2')"))
    assert entry(d, WINDOW, LOST).reasons[1] == "its uid changed from 'counts' to 'counts-v2'"


# ------------------------------------------------------------------ the command


@pytest.fixture
def jobs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_cli_restored_exits_0(jobs: Path, capsys: pytest.CaptureFixture[str]) -> None:
    old = write(jobs, "old.flow", job(UID))
    new = write(jobs, "new.flow", job(UID, filter_=True))
    assert main(["explain", "--diff", old, new]) == 0
    out = capsys.readouterr().out
    assert "2 restored, 0 lost, 0 new" in out
    assert out.rstrip().endswith("all state is restored")


def test_cli_lost_exits_1_and_names_the_reason(jobs: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    old = write(jobs, "old.flow", job())
    new = write(jobs, "new.flow", job(filter_=True))
    assert main(["explain", "--diff", old, new]) == 1
    out = capsys.readouterr().out
    wid = op_id(plan(job()), WINDOW)
    assert f"lost: {WINDOW} ({wid})" in out
    assert "was added upstream" in out and "Flink: Failed to rollback" in out
    assert "state would be lost (exit 1)" in out


def test_cli_json(jobs: Path, capsys: pytest.CaptureFixture[str]) -> None:
    old = write(jobs, "old.flow", job())
    new = write(jobs, "new.flow", job(parallelism=3))
    assert main(["explain", "--diff", old, new, "--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["summary"] == {"restored": 2, "lost": 0, "new": 0}
    assert doc["state_lost"] is False
    w = next(o for o in doc["operators"] if o["name"] == WINDOW)
    assert w["id"] == op_id(plan(job()), WINDOW) and w["parallelism"] == [2, 3]
    assert w["state_names"] == ["window-contents", "window-timers"]


def test_cli_removed_operator_exits_1(jobs: Path, capsys: pytest.CaptureFixture[str]) -> None:
    old = write(jobs, "old.flow", job())
    new = write(jobs, "new.flow", job(window=False))
    assert main(["explain", "--diff", old, new, "--format", "json"]) == 1
    doc = json.loads(capsys.readouterr().out)
    assert [o["status"] for o in doc["operators"]] == [RESTORED, LOST]


def test_cli_options_apply_to_both_sides(jobs: Path, capsys: pytest.CaptureFixture[str]) -> None:
    old = write(jobs, "old.flow", job())
    new = write(jobs, "new.flow", job(parallelism=3))
    # -p overrides both scripts' `set parallelism`: nothing changes.
    assert main(["explain", "--diff", old, new, "-p", "4", "--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert {tuple(o["parallelism"]) for o in doc["operators"]} == {(4, 4)}


SQL = """SET 'parallelism.default' = '2';
CREATE TABLE clicks (
  user_id STRING, article_id STRING, action STRING, ts TIMESTAMP(3),
  WATERMARK FOR ts AS ts - INTERVAL '2' SECOND
) WITH ('connector' = 'filesystem', 'path' = 'clicks.csv', 'format' = 'csv');
CREATE TABLE out (user_id STRING, window_start TIMESTAMP(3), window_end TIMESTAMP(3),
  clicks BIGINT) WITH ('connector' = 'print');
INSERT INTO out
SELECT user_id, window_start, window_end, COUNT(*) AS clicks
FROM TABLE(TUMBLE(TABLE clicks, DESCRIPTOR(ts), INTERVAL '5' SECOND))
GROUP BY window_start, window_end, user_id;
"""

FLOW = """set parallelism = 2;
source clicks (user_id string, article_id string, action string, ts timestamp)
  from csv 'clicks.csv'
  watermark ts - 2s;
clicks
  | key by user_id
  | window tumbling 5s
  | aggregate count(*) as clicks
  | print;
"""


def test_cli_flow_and_sql_that_plan_the_same(jobs: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    flow = write(jobs, "job.flow", FLOW)
    sql = write(jobs, "job.sql", SQL)
    assert main(["explain", "--diff", flow, sql, "--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["summary"] == {"restored": 2, "lost": 0, "new": 0}
    assert main(["explain", "--diff", sql, flow]) == 0


def test_cli_bad_script_is_a_positioned_error(jobs: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    old = write(jobs, "old.flow", job())
    new = write(jobs, "new.flow", job().replace("| key by", "| kee by"))
    assert main(["explain", "--diff", old, new]) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"{new}:7:") and "Traceback" not in err and "^" in err


def test_cli_file_and_diff_together_is_an_error(jobs: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    old = write(jobs, "old.flow", job())
    assert main(["explain", old, "--diff", old, old]) == 1
    assert "either a FILE or --diff OLD NEW" in capsys.readouterr().err
    assert main(["explain"]) == 1
    assert main(["explain", "--diff", old, old, "--format", "dot"]) == 1
    assert "--diff renders as text or json, not dot" in capsys.readouterr().err


def test_cli_missing_file(jobs: Path, capsys: pytest.CaptureFixture[str]) -> None:
    old = write(jobs, "old.flow", job())
    assert main(["explain", "--diff", old, "nope.flow"]) == 1
    assert "no such file: nope.flow" in capsys.readouterr().err


PROGRAM = """
from flowc.common import Types
from flowc.datastream import StreamExecutionEnvironment

env = StreamExecutionEnvironment.get_execution_environment()
env.set_parallelism(2)
stream = env.from_collection([("a", 1), ("b", 2)]){extra}
(stream.key_by(lambda e: e[0])
    .reduce(lambda a, b: (a[0], a[1] + b[1])){uid}
    .print())
env.execute("totals")
"""


@pytest.mark.parametrize("uid,lost", [("", True), (".uid('totals')", False)])
def test_cli_python_programs(jobs: Path, capsys: pytest.CaptureFixture[str], uid: str,
                             lost: bool) -> None:
    old = write(jobs, "old.py", PROGRAM.format(extra="", uid=uid))
    new = write(jobs, "new.py", PROGRAM.format(extra=".filter(lambda e: e[1] > 0)", uid=uid))
    assert main(["explain", "--diff", old, new, "--format", "json"]) == (1 if lost else 0)
    doc = json.loads(capsys.readouterr().out)
    (reduce,) = [o for o in doc["operators"] if o["name"] == "Keyed Reduce"
                 and o["status"] != NEW]
    assert reduce["status"] == (LOST if lost else RESTORED)
    assert reduce["state_names"] == ["_op_state"]
    if lost:
        assert f"Filter ({new} line 7) was added upstream" in reduce["reasons"]


def test_batch_jobs_are_noted(jobs: Path, capsys: pytest.CaptureFixture[str]) -> None:
    old = write(jobs, "old.flow", job())
    new = write(jobs, "new.flow", "set mode = batch;\n" + job())
    main(["explain", "--diff", old, new, "--format", "json"])
    assert json.loads(capsys.readouterr().out)["notes"] == [
        f"{new} runs in BATCH mode: Flink takes no checkpoints or savepoints of BATCH jobs "
        "(this compares operator ids only)"]


def test_the_example_in_upgrading_md(jobs: Path, capsys: pytest.CaptureFixture[str]) -> None:
    doc = (Path(__file__).parents[1] / "docs" / "upgrading.md").read_text(encoding="utf-8")
    block = doc[doc.index("```\nState of v1/job.flow") + 4:]
    block = block[:block.index("```")]
    (jobs / "v1").mkdir()
    write(jobs / "v1", "job.flow", job())
    write(jobs, "job.flow", job(filter_=True))
    assert main(["explain", "--diff", "v1/job.flow", "job.flow"]) == 1
    out = capsys.readouterr().out
    shown = [line.split("Cannot map")[0] if line.startswith("  Flink: ") else line
             for line in out.splitlines()]
    assert shown == [line.split("Cannot map")[0] if line.startswith("  Flink: ") else line
                     for line in block.splitlines()]


def test_uid_hash_naming_the_old_id_restores_it() -> None:
    old_id = op_id(plan(job()), WINDOW)
    rescued = job(f" with (uid_hash = '{old_id}')", filter_=True)
    new = plan(rescued)
    assert op_id(new, WINDOW) != old_id  # the generated id moved; the user-defined one maps
    d = diff(job(), rescued)
    w = entry(d, WINDOW, RESTORED)
    assert (w.id, w.new_id) == (old_id, op_id(new, WINDOW))
    assert not d.loses_state and d.count(NEW) == 0


def test_changed_parallelism_upstream_is_named() -> None:
    wider = job().replace("lower(action) as action, ts", "lower(action) as action, ts "
                          "with (parallelism = 3)")
    lost = entry(diff(job(), wider), WINDOW, LOST)
    assert ("chaining changed: Source: clicks (new.flow line 2) no longer chains to Map "
            "(new.flow line 6) (parallelism changes (2 -> 3); REBALANCE partitioning)"
            ) in lost.reasons


@pytest.mark.parametrize("name", ["clicks.flow", "join.flow", "sessions.flow", "hints.flow",
                                  "clicks.sql"])
def test_every_example_restores_all_of_its_own_state(name: str) -> None:
    from flowc.cli import _compile, _parser

    root = Path(__file__).parents[1] / "examples"
    args = _parser().parse_args(["explain", str(root / name)])
    graph = _compile(args).env.get_execution_graph()
    d = diff_states(metadata_from_plan(graph, name), graph, name, old_graph=graph)
    assert d.entries and {e.status for e in d.entries} == {RESTORED}
    assert all(e.id == e.new_id for e in d.entries)


def test_cli_output_file_keeps_the_exit_code(jobs: Path) -> None:
    old = write(jobs, "old.flow", job())
    new = write(jobs, "new.flow", job(window=False))
    assert main(["explain", "--diff", old, new, "--format", "json", "-o", "state.json"]) == 1
    assert json.loads((jobs / "state.json").read_text())["state_lost"] is True


def _chain_of_reduces(n: int, filtered: bool):  # type: ignore[no-untyped-def]
    from flowc.datastream import StreamExecutionEnvironment

    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(2)
    s = env.from_collection([("a", 1)])
    if filtered:
        s = s.filter(lambda e: True)
    for _ in range(n):
        s = s.map(lambda e: e).key_by(lambda e: e[0]).reduce(lambda a, b: a)
    s.print()
    return env.get_execution_graph()


def test_long_chains_every_lost_operator_names_the_upstream_change() -> None:
    old, new = _chain_of_reduces(300, False), _chain_of_reduces(300, True)
    d = diff_states(metadata_from_plan(old, "old.py"), new, "new.py", old_graph=old)
    assert d.count(LOST) == d.count(NEW) == 300 and d.count(RESTORED) == 1
    for e in d.entries:
        if e.status == LOST:
            assert e.reasons[1].startswith("Filter (") and \
                e.reasons[1].endswith("was added upstream"), e.reasons


def test_inserted_operator_is_named_even_where_it_takes_anothers_id() -> None:
    # Flink's hash ignores names: a Filter inserted before a Map gets the id the Map had.
    # The explanation must still name the inserted Filter, not the Map.
    old = ("source s (k string, ts timestamp) from csv 'in.csv' watermark ts;\n"
           "s | map k, ts | key by k | window tumbling 5s | aggregate count(*) as n "
           "| print;\n")
    new = old.replace("s | map", "s | filter k is not null\n  | map")
    d = diff(old, new)
    lost = entry(d, WINDOW, LOST)
    added = [r for r in lost.reasons if r.endswith("was added upstream")]
    assert added == ["Filter (new.flow line 2) was added upstream"], lost.reasons
