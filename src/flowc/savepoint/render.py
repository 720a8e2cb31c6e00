"""Text (a table) and JSON renderings of a :class:`StateDiff`."""

from __future__ import annotations

import io
import json

from rich import box
from rich.console import Console
from rich.table import Table

from flowc.savepoint.diff import LOST, NEW, RESTORED, DiffEntry, StateDiff

DIFF_FORMATS = ("text", "json")


def _pair(old: int | None, new: int | None) -> str:
    if old is None:
        return str(new)
    if new is None:
        return str(old)
    return str(old) if old == new else f"{old} -> {new}"


def _line(e: DiffEntry) -> str:
    line = e.old_line if e.old_line is not None else e.new_line
    return "" if line is None else str(line)


def diff_text(diff: StateDiff) -> str:
    head = (f"State of {diff.old} in {diff.new}: {diff.count(RESTORED)} restored, "
            f"{diff.count(LOST)} lost, {diff.count(NEW)} new")
    table = Table(box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False)
    for col in ("status", "operator", "line", "id", "uid", "p", "maxp", "state"):
        table.add_column(col, overflow="fold")
    for e in diff.entries:
        table.add_row(e.status, e.name, _line(e), e.id, e.uid or "",
                      _pair(e.old_parallelism, e.new_parallelism),
                      _pair(e.old_max_parallelism, e.new_max_parallelism),
                      ", ".join(e.state_names))
    buf = io.StringIO()
    Console(file=buf, width=200, color_system=None, highlight=False,
            legacy_windows=False).print(table)
    rows = "\n".join(line.rstrip() for line in buf.getvalue().splitlines())
    notes = []
    for e in diff.entries:
        if e.status == NEW:
            continue
        if e.status == RESTORED and e.reasons == ("same operator id",):
            continue
        notes.append(f"{e.status}: {e.name} ({e.id})")
        notes += [f"  - {r}" for r in e.reasons]
        if e.flink_error:
            notes.append(f"  Flink: {e.flink_error}")
    verdict = ("state would be lost (exit 1)" if diff.loses_state
               else "all state is restored")
    parts = [head, *(f"note: {n}" for n in diff.notes), "", rows, ""]
    if notes:
        parts += [*notes, ""]
    parts.append(verdict)
    return "\n".join(parts) + "\n"


def render_diff(diff: StateDiff, fmt: str) -> str:
    if fmt == "json":
        return json.dumps(diff.to_dict(), indent=2) + "\n"
    return diff_text(diff)
