"""The savepoint metadata file, ``_metadata.json`` (docs/savepoints.md): which operators a
savepoint holds state for, under which ids, names and parallelisms.

:func:`metadata_from_plan` builds it from a plan (what a savepoint of that plan lists; the
runtime writes it next to the state once savepoints are taken), :func:`read_metadata`
reads and validates one, with a clear error for anything it cannot use.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from typing import Any

from flowc import __version__
from flowc.chaining.execution_graph import ExecutionGraph
from flowc.errors import ConfigError, Span
from flowc.savepoint.stateful import stateful_operators

FORMAT = "flowc-savepoint"
VERSION = 2  # 1: metadata only; 2: with the state (docs/savepoints.md)
METADATA_FILE = "_metadata.json"
_HEX_ID = re.compile(r"^[0-9a-f]{32}$")


@dataclass(frozen=True)
class OperatorMeta:
    """One operator's entry: what a restore matches against the new job."""

    id: str
    uid_hash: str | None
    uid: str | None
    name: str
    vertex_id: str
    parallelism: int
    max_parallelism: int
    max_parallelism_configured: bool
    keyed: bool
    state_names: tuple[str, ...]
    kind: str
    line: int | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "uid": self.uid, "uid_hash": self.uid_hash, "name": self.name,
                "kind": self.kind, "vertex": self.vertex_id, "parallelism": self.parallelism,
                "max_parallelism": self.max_parallelism,
                "max_parallelism_configured": self.max_parallelism_configured,
                "keyed": self.keyed, "state_names": list(self.state_names),
                "line": self.line}


@dataclass(frozen=True)
class SavepointMetadata:
    job_name: str
    # Where the plan came from (a script), or the savepoint directory it was read from.
    origin: str
    operators: tuple[OperatorMeta, ...]
    version: int = VERSION
    mode: str = "STREAMING"
    flowc_version: str = __version__

    def to_dict(self) -> dict[str, Any]:
        return {"format": FORMAT, "version": self.version, "flowc_version": self.flowc_version,
                "job_name": self.job_name, "mode": self.mode,
                "operators": [o.to_dict() for o in self.operators]}

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=2) + "\n"


def metadata_from_plan(graph: ExecutionGraph, origin: str) -> SavepointMetadata:
    """The metadata a savepoint of this plan carries: every operator that holds state."""
    ops = tuple(
        OperatorMeta(id=o.id, uid_hash=o.uid_hash, uid=o.uid, name=o.name,
                     vertex_id=o.vertex_id, parallelism=o.parallelism,
                     max_parallelism=o.max_parallelism,
                     max_parallelism_configured=o.max_parallelism_configured, keyed=o.keyed,
                     state_names=o.state_names, kind=o.kind,
                     line=o.span.line if o.span is not None else None)
        for o in stateful_operators(graph))
    config = graph.job_graph.config
    return SavepointMetadata(job_name=config.job_name, origin=origin, operators=ops,
                             mode=config.mode.value)


def is_savepoint_dir(path: str) -> bool:
    return os.path.isdir(path) and os.path.isfile(os.path.join(path, METADATA_FILE))


def read_metadata(path: str) -> SavepointMetadata:
    """Read ``path`` (a savepoint directory or its ``_metadata.json``) and validate it."""
    file = os.path.join(path, METADATA_FILE) if os.path.isdir(path) else path
    if not os.path.isfile(file):
        raise ConfigError(f"{path} is not a savepoint: no {METADATA_FILE} in it",
                          hint="a savepoint directory holds _metadata.json (docs/savepoints.md)")
    try:
        with open(file, encoding="utf-8") as f:
            text = f.read()
    except (OSError, UnicodeDecodeError) as e:
        raise ConfigError(f"cannot read {file}: {e}") from None
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as e:
        raise ConfigError(f"{METADATA_FILE} is not valid JSON: {e.msg}",
                          Span(file, e.lineno, e.colno, e.lineno, e.colno + 1, text=text)
                          ) from None
    return _parse(doc, file, os.path.dirname(file) or ".")


def _parse(doc: Any, file: str, origin: str) -> SavepointMetadata:
    def bad(where: str, expected: str, got: Any) -> ConfigError:
        return ConfigError(f"{file}: {where}: expected {expected}, got {json.dumps(got)}")

    if not isinstance(doc, dict):
        raise bad("the document", "an object", doc)
    if doc.get("format") != FORMAT:
        raise ConfigError(f"{file} is not flowc savepoint metadata (format "
                          f"{json.dumps(doc.get('format'))}, expected \"{FORMAT}\")")
    version = doc.get("version")
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise bad("version", "a positive integer", version)
    if version > VERSION:
        raise ConfigError(f"{file}: savepoint format version {version} is newer than this "
                          f"flowc reads (version {VERSION})",
                          hint=f"it was written by flowc {doc.get('flowc_version', '?')}; "
                               "use that version or a newer flowc")
    ops_doc = doc.get("operators")
    if not isinstance(ops_doc, list):
        raise bad("operators", "a list", ops_doc)
    ops: list[OperatorMeta] = []
    seen: set[str] = set()
    for i, o in enumerate(ops_doc):
        ops.append(_operator(o, f"operators[{i}]", bad))
        if ops[-1].id in seen:
            raise ConfigError(f"{file}: operators[{i}]: operator id {ops[-1].id} is listed "
                              "twice")
        seen.add(ops[-1].id)
    job_name = doc.get("job_name", "")
    mode = doc.get("mode", "STREAMING")
    if not isinstance(job_name, str):
        raise bad("job_name", "a string", job_name)
    if mode not in ("STREAMING", "BATCH"):
        raise bad("mode", '"STREAMING" or "BATCH"', mode)
    return SavepointMetadata(job_name=job_name, origin=origin, operators=tuple(ops),
                             version=version, mode=mode,
                             flowc_version=str(doc.get("flowc_version", "")))


def _operator(o: Any, where: str, bad: Any) -> OperatorMeta:
    if not isinstance(o, dict):
        raise bad(where, "an object", o)

    def field(name: str, kind: type | tuple[type, ...], expected: str, *,
              optional: bool = False, default: Any = None) -> Any:
        if name not in o:
            if optional:
                return default
            raise bad(f"{where}.{name}", expected, None)
        v = o[name]
        if v is None and optional:
            return default
        if not isinstance(v, kind) or (kind is int and isinstance(v, bool)):
            raise bad(f"{where}.{name}", expected, v)
        return v

    op_id = field("id", str, "a 32-digit hex operator id")
    if not _HEX_ID.match(op_id):
        raise bad(f"{where}.id", "a 32-digit hex operator id", op_id)
    uid_hash = field("uid_hash", str, "a 32-digit hex id or null", optional=True)
    if uid_hash is not None and not _HEX_ID.match(uid_hash):
        raise bad(f"{where}.uid_hash", "a 32-digit hex id or null", uid_hash)
    parallelism = field("parallelism", int, "a positive integer")
    max_parallelism = field("max_parallelism", int, "a positive integer")
    if parallelism < 1:
        raise bad(f"{where}.parallelism", "a positive integer", parallelism)
    if max_parallelism < parallelism:
        raise bad(f"{where}.max_parallelism", f"an integer >= parallelism ({parallelism})",
                  max_parallelism)
    names = field("state_names", list, "a list of strings")
    if not all(isinstance(n, str) for n in names):
        raise bad(f"{where}.state_names", "a list of strings", names)
    line = field("line", int, "a line number or null", optional=True)
    return OperatorMeta(
        id=op_id, uid_hash=uid_hash, uid=field("uid", str, "a string or null", optional=True),
        name=field("name", str, "a string"), vertex_id=field("vertex", str, "a vertex id"),
        parallelism=parallelism, max_parallelism=max_parallelism,
        max_parallelism_configured=field("max_parallelism_configured", bool, "true or false",
                                         optional=True, default=False),
        keyed=field("keyed", bool, "true or false", optional=True, default=False),
        state_names=tuple(names), kind=field("kind", str, "a string", optional=True,
                                             default=""),
        line=line)
