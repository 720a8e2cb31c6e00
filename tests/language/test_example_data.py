"""The example data generators: `--help` only prints help; the data they write is the data
in the repository (deterministic)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

DATA = Path(__file__).parents[2] / "examples" / "data"
SCRIPTS = {"make_clicks.py": ["clicks.csv", "impressions.csv"],
           "make_sessions.py": ["sessions.csv"]}


@pytest.mark.parametrize("script", sorted(SCRIPTS))
def test_help_does_not_rewrite_the_data(script: str, tmp_path: Path) -> None:
    before = {f: (DATA / f).stat().st_mtime_ns for f in SCRIPTS[script]}
    out = subprocess.run([sys.executable, str(DATA / script), "--help"], capture_output=True,
                         text=True, cwd=tmp_path)
    assert out.returncode == 0 and out.stdout.startswith("usage:"), out.stderr
    assert {f: (DATA / f).stat().st_mtime_ns for f in SCRIPTS[script]} == before
    bad = subprocess.run([sys.executable, str(DATA / script), "--bogus"], capture_output=True,
                         text=True, cwd=tmp_path)
    assert bad.returncode == 2 and "unrecognized arguments" in bad.stderr
    assert {f: (DATA / f).stat().st_mtime_ns for f in SCRIPTS[script]} == before


@pytest.mark.parametrize("script", sorted(SCRIPTS))
def test_out_writes_the_repository_data(script: str, tmp_path: Path) -> None:
    subprocess.run([sys.executable, str(DATA / script), "--out", str(tmp_path)], check=True)
    for f in SCRIPTS[script]:
        assert (tmp_path / f).read_bytes() == (DATA / f).read_bytes(), f
