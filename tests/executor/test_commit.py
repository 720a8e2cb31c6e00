"""Committing staged sink outputs: one rename per output, the earlier output kept when a
rename fails (docs/flink-differences.md: not atomic across sinks)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from flowc.executor import sinks


def _staged(final: Path, text: str) -> str:
    tmp = sinks.stage_lines(str(final), [text])
    assert os.path.isdir(tmp) and not Path(tmp).samefile(final.parent)
    return tmp


def test_commit_replaces_earlier_output(tmp_path: Path) -> None:
    final = tmp_path / "out"
    final.mkdir()
    (final / "old.txt").write_text("old")
    sinks.commit(_staged(final, "new"), str(final))
    assert [p.name for p in final.iterdir()] == ["part-00000.json"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]  # no temp dirs left


def test_failed_rename_keeps_the_earlier_output_and_later_sinks(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    a, b, c = tmp_path / "a", tmp_path / "b", tmp_path / "c"
    for d in (a, b, c):
        d.mkdir()
        (d / "old.txt").write_text("old")
    staged = sinks.Staged()
    for d in (a, b, c):
        staged.add(_staged(d, "new"), str(d))
    real_rename = os.rename

    def rename(src: Any, dst: Any) -> None:
        if str(dst) == str(b) and not str(src).endswith("-old"):  # b's new output fails
            raise OSError("disk on fire")
        real_rename(src, dst)
    monkeypatch.setattr(sinks.os, "rename", rename)
    with pytest.raises(OSError, match="disk on fire"):
        try:
            staged.commit()
        except BaseException:
            staged.abort()
            raise
    # a was renamed before the failure; b and c keep their earlier output.
    assert [p.name for p in a.iterdir()] == ["part-00000.json"]
    assert [p.name for p in b.iterdir()] == ["old.txt"]
    assert [p.name for p in c.iterdir()] == ["old.txt"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a", "b", "c"]  # temps removed
