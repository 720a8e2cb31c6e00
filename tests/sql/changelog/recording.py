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


ROW_KINDS = {0: "+I", 1: "-U", 2: "+U", 3: "-D"}


def record_query(t, query: str, keep) -> dict:
    """In the child: ``query`` on the TableEnvironment ``t`` - the optimized plan's lines
    ``keep`` accepts, the collected changelog, then the same query into a print sink (its
    lines are the child's stdout); Flink's first error line if it rejects the query."""
    out: dict = {"query": query}
    try:
        plan = t.explain_sql(query).split("== Optimized Physical Plan ==")[-1]
        out["plan"] = [line.strip() for line in plan.split("==")[0].splitlines()
                       if keep(line)]
        result = t.execute_sql(query)
        types = [str(x) for x in result.get_table_schema().get_field_data_types()]
        rows = []
        with result.collect() as it:
            for r in it:
                rows.append([ROW_KINDS[r.get_row_kind().value],
                             [None if v is None else str(v) for v in r]])
        out.update(columns=list(result.get_table_schema().get_field_names()), types=types,
                   changelog=rows)
    except Exception as err:  # noqa: BLE001 - recorded: Flink rejects the query
        out["error"] = str(err).splitlines()[0][:500]
        return out
    cols = ", ".join(f"`c{i}` {ty}" for i, ty in enumerate(types))
    t.execute_sql(f"CREATE TABLE sink ({cols}) WITH ('connector' = 'print')")
    t.execute_sql(f"INSERT INTO sink {query}").wait()
    return out
