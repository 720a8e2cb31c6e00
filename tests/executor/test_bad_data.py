"""Bad data in file sources (reference executor; the Spark side runs the same reader):
long csv fields, long bad rows in messages, json objects without any declared field."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from flowc.errors import ExecutionError
from flowc.executor import run_reference
from flowc.operators import FileSource

from .helpers import collect, env_for


def _run(path: Path, fmt: str, schema: Any, dead: Path | None = None) -> Any:
    env = env_for(1)
    options = (("header", "false"),) if fmt == "csv" else ()  # these files have none
    spec = FileSource(str(path), fmt, tuple(schema), options, str(dead) if dead else None)
    collect(env.from_source(spec, None, "src"))
    return run_reference(env.get_job_graph())


def test_a_csv_field_longer_than_pythons_default_limit_is_read(tmp_path: Path) -> None:
    long = "x" * 200_000  # Python's csv default field limit is 131,072 characters
    (tmp_path / "a.csv").write_text(f'1,{long}\n2,"{long}"\n')
    assert _run(tmp_path / "a.csv", "csv", [("n", "int"), ("s", "string")])["out"] == [
        (1, long), (2, long)]


def test_a_huge_bad_row_is_cut_in_the_message_but_whole_in_the_dead_letter(
        tmp_path: Path) -> None:
    text = "not-a-number," + "y" * 1_000_000
    (tmp_path / "a.csv").write_text(text + "\n")
    with pytest.raises(ExecutionError) as info:
        _run(tmp_path / "a.csv", "csv", [("n", "int"), ("s", "string")])
    message = info.value.message
    assert len(message) < 1000
    assert "(1,000,015 characters)" in message  # repr() of the text: quotes included
    assert f"bad row in {tmp_path / 'a.csv'} (line 1): 'not-a-number,yyy" in message
    assert message.endswith("not an int: 'not-a-number'")
    _run(tmp_path / "a.csv", "csv", [("n", "int"), ("s", "string")], dead=tmp_path / "dead")
    [line] = (tmp_path / "dead" / "part-00000.json").read_text().splitlines()
    assert json.loads(line)["text"] == text


def test_a_json_object_with_none_of_the_declared_fields_is_a_bad_row(tmp_path: Path) -> None:
    (tmp_path / "a.json").write_text('{"n": 1}\n{"m": 2, "t": "x"}\n{"s": null}\n{}\n')
    r = _run(tmp_path / "a.json", "json", [("n", "int"), ("s", "string")],
             dead=tmp_path / "dead")
    # A record with some declared field (even null) is a row; one with none is not.
    assert r["out"] == [(1, None), (None, None)]
    dead = [json.loads(x) for x in (tmp_path / "dead" / "part-00000.json").read_text()
            .splitlines()]
    assert [(d["row"], d["error"]) for d in dead] == [
        (2, "none of the fields n, s is in the object"),
        (4, "none of the fields n, s is in the object")]
