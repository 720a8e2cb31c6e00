"""A savepoint's state files (docs/savepoints.md, format version 2): one operator's state,
as the streaming executor snapshots it (``task.operator_state``), split into keyed state by
Flink's key group, timers by key group, the subtask's other (operator) state and its
watermark - and put back together for any parallelism.

Which attributes of a runtime operator are keyed (and how an entry names its key) is
declared per operator class below; every other data attribute of an operator is operator
state of its subtask. Values are JSON when they are plain scalars, else pickled
(``{"pickle": "<base64>"}``).
"""

from __future__ import annotations

import base64
import json
import math
import os
import pickle
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from flowc.errors import ConfigError
from flowc.executor.runtime.core import LONG_MIN, TimerService
from flowc.keygroups import assign_to_key_group

# How an entry of a keyed attribute names its key: the dict key is the key (KEY), or a
# tuple whose first field is the key (FIRST: (key, window), (key, count)); TABLES: state
# name -> FIRST entries (a trigger's state backend, by (key, window)).
KEY, FIRST, TABLES = "key", "first", "tables"
_KEYED_ATTRS: dict[str, dict[str, str]] = {
    "WindowOperator": {"state": FIRST, "mapping": KEY, "batch_state": FIRST},
    "CountWindowOperator": {"counts": KEY, "state": FIRST},
    "TriggerWindowOperator": {"state": FIRST, "trigger_state": TABLES},
    "ReduceOperator": {"values": KEY, "last_ts": KEY},
    # SQL's interval join (runtime/time_interval_join.py) and the DataStream one: per key
    "TimeIntervalJoinOperator": {"left_cache": KEY, "right_cache": KEY, "left_timer": KEY,
                                 "right_timer": KEY, "left": KEY, "right": KEY},
    "IntervalJoinOperator": {"left": KEY, "right": KEY},
}
# Flink's names for flowc's attributes (what `savepoint inspect` shows beside them).
_FLINK_NAMES: dict[str, dict[str, str]] = {
    "WindowOperator": {"state": "window-contents", "mapping": "merging-window-set",
                       "timers": "window-timers"},
    "CountWindowOperator": {"state": "window-contents", "counts": "count",
                            "timers": "window-timers"},
    "TriggerWindowOperator": {"state": "window-contents", "timers": "window-timers"},
    "ReduceOperator": {"values": "_op_state"},
    "KeyedProcessOperator": {"timers": "user-timers"},
    # flowc's left_timer is the left cache's cleanup time: Flink's rightTimerState (named
    # after the stream whose watermark fires it), and the other way round
    "TimeIntervalJoinOperator": {"left_cache": "IntervalJoinLeftCache",
                                 "right_cache": "IntervalJoinRightCache",
                                 "left_timer": "IntervalJoinRightTimerState",
                                 "right_timer": "IntervalJoinLeftTimerState",
                                 "timers": "user-timers"},
    "IntervalJoinOperator": {"left": "LEFT_BUFFER", "right": "RIGHT_BUFFER",
                             "timers": "CLEANUP_TIMER"},
}
BACKEND = "backend"  # KeyedStateBackend tables: state name -> key -> value
WATERMARK = "watermark"


def _lookup(table: dict[str, dict[str, str]], op_class: Iterable[str]) -> dict[str, str]:
    for name in op_class:
        if name in table:
            return table[name]
    return {}


def class_names(op: Any) -> tuple[str, ...]:
    """The runtime operator's class and its bases, by name (the MRO: subclasses such as
    AggregationOperator share their base's layout)."""
    return tuple(k.__name__ for k in type(op).__mro__)


def keyed_attrs(classes: Iterable[str]) -> dict[str, str]:
    return _lookup(_KEYED_ATTRS, classes)


def flink_name(classes: Iterable[str], attr: str) -> str:
    return _lookup(_FLINK_NAMES, classes).get(attr, attr)


# -- values ----------------------------------------------------------------------------------


def encode(v: Any) -> Any:
    """JSON for plain scalars, else the pickled value (exact round trip either way)."""
    if v is None or type(v) in (str, int, bool) or (type(v) is float and math.isfinite(v)):
        return v
    from pyspark import cloudpickle

    return {"pickle": base64.b64encode(cloudpickle.dumps(v)).decode("ascii")}


def decode(v: Any, where: str) -> Any:
    if isinstance(v, dict):
        try:
            return pickle.loads(base64.b64decode(v["pickle"]))  # noqa: S301 - a savepoint
        except Exception as e:  # noqa: BLE001 - a corrupt value names its file
            raise ConfigError(f"{where}: cannot read a stored value: "
                              f"{type(e).__name__}: {e}") from None
    if isinstance(v, list):
        raise ConfigError(f"{where}: a stored value is a list (expected a scalar or "
                          '{"pickle": ...})')
    return v


# -- one operator's state, split -------------------------------------------------------------


@dataclass
class OperatorState:
    """One operator's state over all subtasks of a savepoint."""

    classes: tuple[str, ...] = ()
    # key group -> lines ({"state", "attr", "key", "entry", "value"})
    keyed: dict[int, list[dict[str, Any]]] = field(default_factory=dict)
    timers: dict[int, list[dict[str, Any]]] = field(default_factory=dict)
    # subtask -> {attribute: value} (decoded), its non-keyed state
    operator: dict[int, dict[str, Any]] = field(default_factory=dict)
    watermarks: list[int] = field(default_factory=list)
    channels: list[list[int]] = field(default_factory=list)

    def empty(self) -> bool:
        return not (self.keyed or self.timers or any(self.operator.values()))


def split_subtask(into: OperatorState, subtask: int, state: dict[str, Any],
                  fresh: dict[str, Any], classes: tuple[str, ...], max_parallelism: int
                  ) -> None:
    """Add subtask ``subtask``'s snapshot of the operator (``task.operator_state``) to
    ``into``. ``fresh``: the same state of a new operator, so configuration (equal in both)
    is not taken for state."""
    into.classes = classes
    keyed = keyed_attrs(classes)
    kept: dict[str, Any] = {}
    while len(into.watermarks) <= subtask:
        into.watermarks.append(LONG_MIN)
    for attr, value in state.items():
        if attr == WATERMARK:
            into.watermarks[subtask] = int(value)
        elif attr == BACKEND:
            for name, table in value.items():
                for key, v in table.items():
                    _add(into.keyed, key, max_parallelism, {
                        "state": name, "attr": BACKEND, "key": encode(key),
                        "entry": encode(key), "value": encode(v)})
        elif isinstance(value, TimerService):
            for ts, seq, key, ns in sorted(value._heap):
                if (ts, key, ns) in value._live:
                    _add(into.timers, key, max_parallelism, {
                        "service": flink_name(classes, attr), "attr": attr,
                        "domain": "event", "key": encode(key), "namespace": encode(ns),
                        "timestamp": ts, "seq": seq})
        elif attr in keyed and keyed[attr] == TABLES and isinstance(value, dict):
            for name, table in value.items():
                for entry, v in table.items():
                    _add(into.keyed, entry[0], max_parallelism, {
                        "state": name, "attr": attr, "key": encode(entry[0]),
                        "entry": encode(entry), "value": encode(v)})
        elif attr in keyed and isinstance(value, dict):
            name = flink_name(classes, attr)
            for entry, v in value.items():
                key = entry[0] if keyed[attr] == FIRST else entry
                _add(into.keyed, key, max_parallelism, {
                    "state": name, "attr": attr, "key": encode(key), "entry": encode(entry),
                    "value": encode(v)})
        elif attr not in fresh or fresh[attr] != value:
            kept[attr] = value
    into.operator[subtask] = kept


def _add(groups: dict[int, list[dict[str, Any]]], key: Any, max_parallelism: int,
         line: dict[str, Any]) -> None:
    groups.setdefault(assign_to_key_group(key, max_parallelism), []).append(line)


def subtask_state(state: OperatorState, key_groups: tuple[int, int], subtask: int,
                  parallelism: int, where: str) -> dict[str, Any]:
    """The operator's state for new subtask ``subtask`` of ``parallelism`` owning the
    inclusive ``key_groups`` range: what ``task.restore_operator`` puts back."""
    out: dict[str, Any] = dict(_operator_share(state, subtask, parallelism))
    lo, hi = key_groups
    tables = keyed_attrs(state.classes)
    for kg in range(lo, hi + 1):
        for line in state.keyed.get(kg, ()):
            entry, value = decode(line["entry"], where), decode(line["value"], where)
            attr = line["attr"]
            if attr == BACKEND or tables.get(attr) == TABLES:
                out.setdefault(attr, {}).setdefault(line["state"], {})[entry] = value
            else:
                out.setdefault(attr, {})[entry] = value
    wm = None
    if state.watermarks:
        # Same parallelism: the subtask's own; else the least (timers fire again at the
        # next watermark anyway).
        same = len(state.watermarks) == parallelism
        wm = state.watermarks[subtask] if same else min(state.watermarks)
        out[WATERMARK] = wm
    timers = sorted((line for kg in range(lo, hi + 1) for line in state.timers.get(kg, ())),
                    key=lambda t: (t["timestamp"], t["seq"]))
    # the operator's timer service, also without timers: it reports the watermark
    services: dict[str, TimerService] = {} if wm is None else {"timers": TimerService()}
    for t in timers:  # registration order is the tie order (TimerService)
        service = services.setdefault(t["attr"], TimerService())
        service.register(t["timestamp"], decode(t["key"], where),
                         decode(t["namespace"], where))
    for attr, service in services.items():
        if wm is not None:
            service.current_watermark = wm
        out[attr] = service
    return out


def _operator_share(state: OperatorState, subtask: int, parallelism: int) -> dict[str, Any]:
    """Non-keyed state, round robin as Flink's RoundRobinOperatorStateRepartitioner: old
    subtask i's state goes to new subtask i % parallelism; a new subtask given several
    keeps the first (a subtask's attributes are one element, not a list to merge)."""
    for old in sorted(state.operator):
        if old % parallelism == subtask:
            return state.operator[old]
    return {}


# -- files -----------------------------------------------------------------------------------


def write_operator(directory: str, state: OperatorState) -> None:
    os.makedirs(directory, exist_ok=True)
    for sub, groups in (("keyed", state.keyed), ("timers", state.timers)):
        for kg, lines in sorted(groups.items()):
            _write_lines(os.path.join(directory, sub, f"kg-{kg:05d}.jsonl"), lines)
    for subtask, attrs in sorted(state.operator.items()):
        if attrs:
            _write_json(os.path.join(directory, "operator", f"{subtask}.json"),
                        {"classes": list(state.classes),
                         "attributes": {k: encode(v) for k, v in attrs.items()}})
    _write_json(os.path.join(directory, "watermarks.json"),
                {"classes": list(state.classes), "subtasks": state.watermarks,
                 "channels": state.channels})


def read_operator(directory: str) -> OperatorState:
    """Read one operator's state directory (a missing one: no state)."""
    state = OperatorState()
    if not os.path.isdir(directory):
        return state
    wm = _read_json(os.path.join(directory, "watermarks.json"))
    if not isinstance(wm, dict) or not isinstance(wm.get("subtasks"), list):
        raise ConfigError(f"{directory}/watermarks.json: expected an object with "
                          '"subtasks", a list of watermarks')
    state.watermarks = [int(x) for x in wm["subtasks"]]
    state.channels = [list(c) for c in wm.get("channels", [])]
    state.classes = tuple(wm.get("classes", ()))
    for sub, groups in (("keyed", state.keyed), ("timers", state.timers)):
        for name in _list(os.path.join(directory, sub)):
            groups[_kg(name, directory, sub)] = list(
                _read_lines(os.path.join(directory, sub, name)))
    for name in _list(os.path.join(directory, "operator")):
        path = os.path.join(directory, "operator", name)
        doc = _read_json(path)
        stem = name.removesuffix(".json")
        if not stem.isdigit() or not isinstance(doc, dict) or \
                not isinstance(doc.get("attributes"), dict):
            raise ConfigError(f"{path}: expected <subtask>.json holding "
                              '{"attributes": {...}}')
        state.operator[int(stem)] = {k: decode(v, path) for k, v in doc["attributes"].items()}
    return state


def _kg(name: str, directory: str, sub: str) -> int:
    stem = name.removeprefix("kg-").removesuffix(".jsonl")
    if not (name.startswith("kg-") and name.endswith(".jsonl") and stem.isdigit()):
        raise ConfigError(f"{directory}/{sub}/{name}: not a key-group file (kg-NNNNN.jsonl)")
    return int(stem)


def _list(directory: str) -> list[str]:
    return sorted(os.listdir(directory)) if os.path.isdir(directory) else []


def _write_json(path: str, doc: Any) -> None:
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as fh:
        json.dump(doc, fh)
        fh.write("\n")


def _write_lines(path: str, lines: list[dict[str, Any]]) -> None:
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as fh:
        for line in lines:
            fh.write(json.dumps(line) + "\n")


def _read_json(path: str) -> Any:
    try:
        with open(path, encoding="utf-8") as fh:
            return json.load(fh)
    except FileNotFoundError:
        raise ConfigError(f"{path} is missing: the savepoint is incomplete") from None
    except (OSError, UnicodeDecodeError) as e:
        raise ConfigError(f"cannot read {path}: {e}") from None
    except json.JSONDecodeError as e:
        raise ConfigError(f"{path}:{e.lineno}:{e.colno}: not valid JSON: {e.msg}") from None


_LINE_FIELDS = {"keyed": ("state", "attr", "key", "entry", "value"),
                "timers": ("attr", "key", "namespace", "timestamp", "seq")}


def _read_lines(path: str) -> Iterator[dict[str, Any]]:
    kind = os.path.basename(os.path.dirname(path))
    try:
        with open(path, encoding="utf-8") as fh:
            lines = fh.readlines()
    except (OSError, UnicodeDecodeError) as e:
        raise ConfigError(f"cannot read {path}: {e}") from None
    for n, text in enumerate(lines, 1):
        try:
            doc = json.loads(text)
        except json.JSONDecodeError as e:
            raise ConfigError(f"{path}:{n}:{e.colno}: not valid JSON: {e.msg}") from None
        missing = [f for f in _LINE_FIELDS[kind] if not isinstance(doc, dict) or f not in doc]
        if missing:
            raise ConfigError(f"{path}:{n}: expected the fields {', '.join(missing)}")
        yield doc
