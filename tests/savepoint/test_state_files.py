"""The savepoint's state files without Spark: an operator's snapshot split by Flink's key
group and put back for another parallelism (every key lands on the subtask Flink's
KeyGroupRangeAssignment gives it), timers keep their order, operator state goes round
robin, values round-trip exactly; bad savepoints are clear user errors (exit 1)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from flowc.cli import main
from flowc.errors import ConfigError
from flowc.executor.runtime.core import LONG_MIN, TimerService
from flowc.keygroups import assign_key_to_parallel_operator, key_group_range
from flowc.savepoint.state import (
    OperatorState,
    decode,
    encode,
    read_operator,
    split_subtask,
    subtask_state,
    write_operator,
)
from flowc.windowing import TimeWindow

WINDOW = ("WindowOperator", "KeyedOperator", "Operator", "object")
KEYS = [f"user{i}" for i in range(40)] + [7, 2.5, ("a", 1)]


def _window_snapshot(keys: list[object], subtask: int) -> dict[str, object]:
    timers = TimerService()
    for k in keys:
        timers.register(4999, k, TimeWindow(0, 5000))
    return {"watermark": 1000 + subtask, "timers": timers, "lateness": 0,
            "state": {(k, TimeWindow(0, 5000)): (1, 1000) for k in keys},
            "backend": {"seen": {k: [k, "x"] for k in keys}}}


def _saved(parallelism: int, max_parallelism: int = 128) -> OperatorState:
    st = OperatorState()
    for idx in range(parallelism):
        mine = [k for k in KEYS
                if assign_key_to_parallel_operator(k, max_parallelism, parallelism) == idx]
        split_subtask(st, idx, _window_snapshot(mine, idx), {"lateness": 0}, WINDOW,
                      max_parallelism)
    return st


@pytest.mark.parametrize("new_parallelism", [1, 2, 3, 5])
def test_keyed_state_goes_to_the_subtask_owning_its_key_group(tmp_path: Path,
                                                              new_parallelism: int) -> None:
    write_operator(str(tmp_path / "op"), _saved(2))
    st = read_operator(str(tmp_path / "op"))
    seen: list[object] = []
    for idx in range(new_parallelism):
        out = subtask_state(st, key_group_range(128, new_parallelism, idx), idx,
                            new_parallelism, "op")
        keys = [k for k, _ in out.get("state", {})]
        assert all(assign_key_to_parallel_operator(k, 128, new_parallelism) == idx
                   for k in keys)
        assert sorted(map(repr, out.get("backend", {}).get("seen", {}))) == \
            sorted(map(repr, keys))
        assert len(out.get("timers", ())) == len(keys)
        assert out["watermark"] == (1000 + idx if new_parallelism == 2 else 1000)
        assert "lateness" not in out  # configuration, equal to a new operator's
        seen += keys
    assert sorted(map(repr, seen)) == sorted(map(repr, KEYS))


def test_timers_fire_in_their_original_order_after_a_restore() -> None:
    timers = TimerService()
    for ts, k in [(30, "b"), (10, "c"), (30, "a"), (20, "b")]:
        timers.register(ts, k, None)
    st = OperatorState()
    split_subtask(st, 0, {"timers": timers}, {}, WINDOW, 128)
    out = subtask_state(st, (0, 127), 0, 1, "op")
    fired: list[tuple[int, object]] = []
    out["timers"].advance(100, lambda ts, k, ns: fired.append((ts, k)))
    assert fired == [(10, "c"), (20, "b"), (30, "b"), (30, "a")]


def test_operator_state_is_redistributed_round_robin() -> None:
    st = OperatorState()
    for idx in range(3):
        split_subtask(st, idx, {"max_ts": 100 * idx, "every": 5}, {"every": 5, "max_ts": LONG_MIN},
                      ("TimestampsAndWatermarksOperator",), 128)
    assert [subtask_state(st, (0, 0), i, 3, "op").get("max_ts") for i in range(3)] == \
        [0, 100, 200]
    # two subtasks: subtask 0 gets old 0 and 2 (keeps the first), subtask 1 old 1
    assert [subtask_state(st, (0, 0), i, 2, "op").get("max_ts") for i in range(2)] == [0, 100]
    assert "every" not in subtask_state(st, (0, 0), 0, 3, "op")


@pytest.mark.parametrize("value", [None, "s", 3, True, 2.5, float("nan"), (1, "a"),
                                   [1, 2], {"k": TimeWindow(0, 5)}, TimeWindow(1, 2)])
def test_values_round_trip(value: object) -> None:
    back = decode(json.loads(json.dumps(encode(value))), "here")
    assert repr(back) == repr(value) and type(back) is type(value)


def test_a_corrupt_value_is_a_user_error() -> None:
    with pytest.raises(ConfigError, match="here: cannot read a stored value"):
        decode({"pickle": "bm90IGEgcGlja2xl"}, "here")


def _savepoint(tmp_path: Path) -> Path:
    """A small valid savepoint (format 2) of the window state above."""
    from flowc.savepoint.metadata import OperatorMeta, SavepointMetadata

    sp = tmp_path / "sp"
    op_id = "0123456789abcdef0123456789abcdef"
    write_operator(str(sp / "operators" / op_id), _saved(2))
    meta = SavepointMetadata("job", str(sp), (OperatorMeta(
        op_id, None, "win", "Window", op_id, 2, 128, False, True,
        ("window-contents", "window-timers"), "WindowOp"),))
    (sp / "_metadata.json").write_text(meta.to_json())
    return sp


def test_inspect_table_and_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    sp = _savepoint(tmp_path)
    assert main(["savepoint", "inspect", str(sp), "--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    states = {s["name"]: s for s in doc["operators"][0]["states"]}
    assert states["window-contents"]["keys"] == len(KEYS)
    assert states["seen"]["entries"] == len(KEYS)
    assert doc["operators"][0]["timers"] == len(KEYS)
    assert main(["savepoint", "inspect", str(sp)]) == 0
    out = capsys.readouterr().out
    assert "window-contents" in out and f"{len(KEYS)} keys" in out


@pytest.mark.parametrize("damage,message", [
    (lambda sp: (sp / "_metadata.json").unlink(), "is not a savepoint: no _metadata.json"),
    (lambda sp: (sp / "_metadata.json").write_text(
        (sp / "_metadata.json").read_text().replace('"version": 2', '"version": 1')),
     "format version 1, which holds no state"),
    (lambda sp: (sp / "_metadata.json").write_text(
        (sp / "_metadata.json").read_text().replace('"version": 2', '"version": 9')),
     "savepoint format version 9 is newer than this flowc reads"),
    (lambda sp: next((sp / "operators").glob("*/keyed/kg-*.jsonl")).write_text("{oops\n"),
     "kg-\\d+.jsonl:1:2: not valid JSON"),
    (lambda sp: next((sp / "operators").glob("*/keyed/kg-*.jsonl")).write_text('{"a": 1}\n'),
     "expected the fields state, attr, key, entry, value"),
    (lambda sp: next((sp / "operators").glob("*")).joinpath("watermarks.json").unlink(),
     "watermarks.json is missing: the savepoint is incomplete"),
])
def test_bad_savepoints_are_user_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                        damage: object, message: str) -> None:
    import re

    sp = _savepoint(tmp_path)
    damage(sp)  # type: ignore[operator]
    assert main(["savepoint", "inspect", str(sp)]) == 1
    err = capsys.readouterr().err
    assert re.search(message, err), err
    assert "Traceback" not in err


def test_write_from_something_that_is_not_a_checkpoint(tmp_path: Path,
                                                       capsys: pytest.CaptureFixture[str]
                                                       ) -> None:
    (tmp_path / "in").mkdir()
    job = tmp_path / "job.flow"
    job.write_text("source s (a string) from csv '" + str(tmp_path / "in") +
                   "/' monitor every 1s;\ns | print;\n")
    assert main(["savepoint", "write", str(job), "--checkpoint", str(tmp_path / "nope"),
                 "-o", str(tmp_path / "sp")]) == 1
    err = capsys.readouterr().err
    assert "is not a flowc streaming checkpoint" in err and "Traceback" not in err
    assert not (tmp_path / "nope").exists()


def test_run_flags_on_a_bounded_job_are_a_user_error(tmp_path: Path,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "a.csv").write_text("a\nx\n")
    job = tmp_path / "job.flow"
    job.write_text(f"source s (a string) from csv '{tmp_path / 'a.csv'}';\ns | print;\n")
    assert main(["run", str(job), "--from-savepoint", str(_savepoint(tmp_path))]) == 1
    assert "apply to unbounded jobs" in capsys.readouterr().err


def test_a_triggers_keyed_state_is_snapshotted_and_split_by_key_group() -> None:
    """A trigger's state (TriggerWindowOperator.trigger_state, by (key, window)) is part of
    the operator's snapshot - it was lost between micro-batches - and of a savepoint."""
    from flowc.executor.runtime.core import Operator, TaskInfo
    from flowc.executor.runtime.state import KeyedStateBackend
    from flowc.executor.streaming.task import operator_state, restore_operator

    class Op(Operator):
        keyed = True

        def __init__(self) -> None:
            super().__init__(None, TaskInfo("t", 0, 1, 128, False))
            self.trigger_state = KeyedStateBackend()

    counts = {(k, TimeWindow(0, 5000)): 3 for k in KEYS}
    op = Op()
    op.trigger_state.tables["count"] = dict(counts)
    snap = operator_state(op)
    back = Op()
    restore_operator(back, snap)
    assert back.trigger_state.tables == {"count": counts}

    st = OperatorState()
    classes = ("TriggerWindowOperator", "KeyedOperator", "Operator", "object")
    split_subtask(st, 0, snap, {}, classes, 128)
    for idx in range(3):
        out = subtask_state(st, key_group_range(128, 3, idx), idx, 3, "op")
        got = out.get("trigger_state", {}).get("count", {})
        assert all(assign_key_to_parallel_operator(k, 128, 3) == idx for k, _ in got)
        assert got == {e: 3 for e in counts if e[0] in {k for k, _ in got}}


def _monitored_job(tmp_path: Path) -> Path:
    (tmp_path / "in").mkdir(exist_ok=True)
    job = tmp_path / "job.flow"
    job.write_text("source s (a string) from csv '" + str(tmp_path / "in") +
                   "/' monitor every 1s;\ns | print;\n")
    return job


def test_write_from_a_checkpoint_of_another_job_or_without_batches(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    job = _monitored_job(tmp_path)
    (tmp_path / "ck" / "flowc" / "state").mkdir(parents=True)
    args = ["savepoint", "write", str(job), "--checkpoint", str(tmp_path / "ck"), "-o",
            str(tmp_path / "sp")]
    assert main(args) == 1
    assert "has no completed micro-batch yet" in capsys.readouterr().err
    (tmp_path / "ck" / "flowc" / "state" / "3").mkdir()
    (tmp_path / "ck" / "flowc" / "state" / "3" / "_DONE").write_text("1")
    assert main(args) == 1
    err = capsys.readouterr().err
    assert "was not written by this job: micro-batch 3 has no state of its vertex" in err
    assert "Traceback" not in err and not (tmp_path / "sp").exists()


def test_a_checkpoint_with_batches_is_resumed_not_restored(tmp_path: Path) -> None:
    from flowc.parser import compile_file
    from flowc.savepoint.restore import restore_savepoint

    job = _monitored_job(tmp_path)
    (tmp_path / "ck" / "flowc" / "state" / "0").mkdir(parents=True)
    (tmp_path / "ck" / "flowc" / "state" / "0" / "_DONE").write_text("1")
    graph = compile_file(str(job)).env.get_execution_graph()
    assert restore_savepoint(str(_savepoint(tmp_path)), graph, str(job),
                             str(tmp_path / "ck"), False) is None
    assert not (tmp_path / "ck" / "flowc" / "state" / "-1").exists()
