"""What the record_*.py scripts share (run in the Flink venv, never by the tests): each
query is recorded in a child process of the same script (a fresh PyFlink each: the print
connector's lines are its stdout), which prints its document after ``@@JSON``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

KINDS = ("+I[", "-U[", "+U[", "-D[")
FLINK = ("2.3.0 (PyFlink TableEnvironment, STREAMING mode, parallelism 1, "
         "table.local-time-zone UTC)")


def emit(doc: dict) -> None:
    """In the child: hand the recorded document to the parent."""
    print("@@JSON " + json.dumps(doc), flush=True)


def run_child(script: str, args: list[str]) -> tuple[dict | None, list[str], str]:
    """Run ``script args`` in a child process: its document (None if it printed none),
    the change lines it printed and the end of its stderr."""
    p = subprocess.run([sys.executable, script, *args], capture_output=True, text=True,
                       env={**os.environ, "PYTHONUNBUFFERED": "1"}, timeout=600)
    lines = p.stdout.splitlines()
    doc = next((json.loads(x[7:]) for x in lines if x.startswith("@@JSON ")), None)
    return doc, [x for x in lines if x[:3] in KINDS], p.stderr[-800:]


def record_case(script: str, query: str, args: list[str], show: int = 400) -> dict:
    """One query's document from a child: with its printed lines, or the failure."""
    doc, printed, err = run_child(script, args)
    if doc is None:
        doc = {"query": query, "error": "recording failed: " + err}
    elif "error" not in doc:
        doc["print"] = printed
    print(json.dumps(doc)[:show], flush=True)
    return doc


def record_all(script: str, queries: list[str], show: int = 400) -> list[dict]:
    """Every query, child ``script i`` for query i."""
    return [record_case(script, q, [str(i)], show) for i, q in enumerate(queries)]


def write(path: Path, note: str, cases: list[dict]) -> None:
    path.write_text(json.dumps({"flink": f"{FLINK}; {note}", "cases": cases}, indent=1)
                    + "\n", encoding="utf-8")
