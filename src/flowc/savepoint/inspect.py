"""``flowc savepoint inspect DIR``: what a savepoint holds, per operator and state name -
keys, entries, timers, bytes (what Flink's State Processor API answers by reading one)."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from typing import Any

from flowc.savepoint.restore import read_savepoint
from flowc.savepoint.state import read_operator

INSPECT_FORMATS = ("table", "json")


@dataclass
class StateStats:
    name: str
    keys: int = 0  # distinct keys (keyed state); subtasks holding it (operator state)
    entries: int = 0
    key_groups: int = 0


@dataclass
class OperatorStats:
    id: str
    uid: str | None
    name: str
    kind: str
    parallelism: int
    max_parallelism: int
    keyed: bool
    state_names: list[str]
    states: list[StateStats] = field(default_factory=list)
    timers: int = 0
    bytes: int = 0
    watermarks: list[int] = field(default_factory=list)


def inspect_savepoint(path: str) -> dict[str, Any]:
    meta = read_savepoint(path)
    ops = []
    for o in meta.operators:
        directory = os.path.join(path, "operators", o.id)
        st = read_operator(directory)
        stats = OperatorStats(o.id, o.uid, o.name, o.kind, o.parallelism, o.max_parallelism,
                              o.keyed, list(o.state_names), bytes=_size(directory),
                              watermarks=st.watermarks)
        by_name: dict[str, tuple[set[str], int, set[int]]] = {}
        for kg, lines in st.keyed.items():
            for line in lines:
                keys, _, groups = by_name.setdefault(line["state"], (set(), 0, set()))
                keys.add(json.dumps(line["key"], sort_keys=True))
                groups.add(kg)
                by_name[line["state"]] = (keys, by_name[line["state"]][1] + 1, groups)
        for name, (keys, entries, groups) in sorted(by_name.items()):
            stats.states.append(StateStats(name, len(keys), entries, len(groups)))
        attrs = sorted({a for attrs in st.operator.values() for a in attrs})
        for a in attrs:
            held = sum(1 for attrs in st.operator.values() if a in attrs)
            stats.states.append(StateStats(f"{a} (operator state)", held, held))
        stats.timers = sum(len(lines) for lines in st.timers.values())
        ops.append(stats)
    sources = {}
    sdir = os.path.join(path, "sources")
    for name in sorted(os.listdir(sdir)) if os.path.isdir(sdir) else []:
        with open(os.path.join(sdir, name), encoding="utf-8") as fh:
            doc = json.load(fh)
        sources[name.removesuffix(".json")] = {"units_read": doc.get("units_read"),
                                              "files_done": len(doc.get("done", []))}
    return {"savepoint": path, "version": meta.version, "flowc_version": meta.flowc_version,
            "job_name": meta.job_name, "bytes": _size(path),
            "operators": [_as_dict(s) for s in ops], "sources": sources}


def _as_dict(s: OperatorStats) -> dict[str, Any]:
    return {"id": s.id, "uid": s.uid, "name": s.name, "kind": s.kind,
            "parallelism": s.parallelism, "max_parallelism": s.max_parallelism,
            "keyed": s.keyed, "state_names": s.state_names, "bytes": s.bytes,
            "timers": s.timers, "watermarks": s.watermarks,
            "states": [{"name": x.name, "keys": x.keys, "entries": x.entries,
                        "key_groups": x.key_groups} for x in s.states]}


def _size(path: str) -> int:
    return sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(path) for f in fs)


def render_inspect(doc: dict[str, Any], fmt: str) -> str:
    if fmt == "json":
        return json.dumps(doc, indent=2) + "\n"
    out = [f"savepoint {doc['savepoint']} (format {doc['version']}, flowc "
           f"{doc['flowc_version']}), job '{doc['job_name']}', {doc['bytes']:,} bytes", ""]
    for o in doc["operators"]:
        uid = f" uid={o['uid']}" if o["uid"] else ""
        out.append(f"{o['id']}  {o['name']}{uid}  ({o['kind']}, parallelism "
                   f"{o['parallelism']}/{o['max_parallelism']}, "
                   f"{'keyed' if o['keyed'] else 'operator state'}, {o['bytes']:,} bytes)")
        out.append(f"    state names: {', '.join(o['state_names']) or '-'}")
        for s in o["states"]:
            if s["key_groups"]:
                out.append(f"    {s['name']:<28} {s['keys']:>8,} keys {s['entries']:>8,} "
                           f"entries in {s['key_groups']:,} key groups")
            else:
                out.append(f"    {s['name']:<28} held by {s['keys']} subtask"
                           f"{'s' if s['keys'] != 1 else ''}")
        if o["timers"]:
            out.append(f"    {'timers':<28} {o['timers']:>8,}")
    for sid, s in doc["sources"].items():
        out.append(f"source {sid}: {s['units_read']:,} units read ({s['files_done']:,} "
                   "files done)")
    return "\n".join(out) + "\n"
