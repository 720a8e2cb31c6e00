"""The savepoint metadata format: built from a plan, written, read back and validated."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from flowc.cli import main
from flowc.errors import ConfigError
from flowc.savepoint import (
    FORMAT,
    METADATA_FILE,
    VERSION,
    metadata_from_plan,
    read_metadata,
    stateful_operators,
)

from .helpers import job, op_id, plan, write

WINDOW = "TumblingEventTimeWindows"


def savepoint(dir_: Path, text: str) -> Path:
    """A savepoint directory holding the metadata a savepoint of ``text`` carries."""
    dir_.mkdir()
    meta = metadata_from_plan(plan(text), "job.flow")
    (dir_ / METADATA_FILE).write_text(meta.to_json(), encoding="utf-8")
    return dir_


def test_built_from_the_plan() -> None:
    g = plan(job(" with (uid = 'counts')"))
    meta = metadata_from_plan(g, "job.flow")
    doc = meta.to_dict()
    assert doc["format"] == FORMAT and doc["version"] == VERSION == 2
    assert doc["mode"] == "STREAMING"
    assert [o["name"] for o in doc["operators"]] == ["Source: clicks", WINDOW]
    w = doc["operators"][1]
    assert w["id"] == op_id(g, WINDOW) and w["uid"] == "counts"
    assert w["state_names"] == ["window-contents", "window-timers"]
    assert (w["parallelism"], w["max_parallelism"], w["keyed"]) == (2, 128, True)
    assert len(meta.operators) == len(stateful_operators(g))


def test_round_trip(tmp_path: Path) -> None:
    sp = savepoint(tmp_path / "sp", job(max_parallelism=64))
    meta = read_metadata(str(sp))
    again = metadata_from_plan(plan(job(max_parallelism=64)), "job.flow")
    assert meta.operators == again.operators
    assert read_metadata(str(sp / METADATA_FILE)).operators == again.operators
    assert meta.origin == str(sp)


def _write(tmp_path: Path, doc: object) -> str:
    sp = tmp_path / "sp"
    sp.mkdir(exist_ok=True)
    (sp / METADATA_FILE).write_text(json.dumps(doc) if not isinstance(doc, str) else doc)
    return str(sp)


def _valid() -> dict:  # type: ignore[type-arg]
    return metadata_from_plan(plan(job()), "job.flow").to_dict()


def test_not_a_savepoint(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="is not a savepoint: no _metadata.json in it"):
        read_metadata(str(tmp_path))


def test_newer_version_is_refused(tmp_path: Path) -> None:
    doc = {**_valid(), "version": VERSION + 1}
    with pytest.raises(ConfigError, match="savepoint format version 3 is newer than this "
                                          "flowc reads \\(version 2\\)"):
        read_metadata(_write(tmp_path, doc))


@pytest.mark.parametrize("change,message", [
    ({"format": "flink"}, 'is not flowc savepoint metadata \\(format "flink"'),
    ({"version": "1"}, 'version: expected a positive integer, got "1"'),
    ({"operators": {}}, "operators: expected a list, got {}"),
])
def test_bad_documents(tmp_path: Path, change: dict, message: str) -> None:  # type: ignore[type-arg]
    with pytest.raises(ConfigError, match=message):
        read_metadata(_write(tmp_path, {**_valid(), **change}))


@pytest.mark.parametrize("field,value,message", [
    ("id", "xyz", 'operators\\[1\\].id: expected a 32-digit hex operator id, got "xyz"'),
    ("parallelism", 0, "operators\\[1\\].parallelism: expected a positive integer, got 0"),
    ("max_parallelism", 1, "operators\\[1\\].max_parallelism: expected an integer >= "
                           "parallelism \\(2\\), got 1"),
    ("state_names", [1], "operators\\[1\\].state_names: expected a list of strings"),
    ("name", None, "operators\\[1\\].name: expected a string, got null"),
])
def test_bad_operators(tmp_path: Path, field: str, value: object, message: str) -> None:
    doc = _valid()
    doc["operators"][1][field] = value
    with pytest.raises(ConfigError, match=message):
        read_metadata(_write(tmp_path, doc))


def test_duplicate_ids(tmp_path: Path) -> None:
    doc = _valid()
    doc["operators"].append(doc["operators"][0])
    with pytest.raises(ConfigError, match="is listed twice"):
        read_metadata(_write(tmp_path, doc))


def test_bad_json_points_at_the_place(tmp_path: Path,
                                      capsys: pytest.CaptureFixture[str],
                                      monkeypatch: pytest.MonkeyPatch) -> None:
    sp = _write(tmp_path, '{\n  "format": "flowc-savepoint",\n  "version": 1,,\n}\n')
    new = write(tmp_path, "new.flow", job())
    monkeypatch.chdir(tmp_path)
    assert main(["explain", "--diff", sp, new]) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"{sp}/_metadata.json:3:16: error: _metadata.json is not valid JSON")
    assert '   3 |   "version": 1,,' in err and "Traceback" not in err


def test_diff_against_a_savepoint(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    sp = savepoint(tmp_path / "sp", job())
    same = write(tmp_path, "same.flow", job(parallelism=3))
    assert main(["explain", "--diff", str(sp), same]) == 0
    assert "2 restored, 0 lost, 0 new" in capsys.readouterr().out

    changed = write(tmp_path, "changed.flow", job(filter_=True))
    assert main(["explain", "--diff", str(sp), changed, "--format", "json"]) == 1
    doc = json.loads(capsys.readouterr().out)
    lost = next(o for o in doc["operators"] if o["status"] == "lost")
    old_id, new_id = op_id(plan(job()), WINDOW), op_id(plan(job(filter_=True)), WINDOW)
    assert lost["id"] == old_id
    assert lost["reasons"] == [f"the new job's {WINDOW} has id {new_id} (no uid: its id "
                               "follows the topology)"]
    assert lost["flink_error"].startswith(f"Failed to rollback to checkpoint/savepoint {sp}. "
                                          f"Cannot map checkpoint/savepoint state for operator "
                                          f"{old_id} to the new program")
