"""``set key = value;`` statements and per-operator ``with (...)`` hints."""

from __future__ import annotations

import re
from typing import Any

from flowc.errors import (
    ApiError,
    FlowNameError,
    FlowSyntaxError,
    FlowTypeError,
    UnsupportedError,
    did_you_mean,
)
from flowc.parser import ast as A
from flowc.transformations import RuntimeExecutionMode

SET_KEYS = ("parallelism", "max_parallelism", "chaining", "mode", "job_name")
# Flink's configuration keys that flowc implements -> the flowc setting they are
FLINK_KEYS = {
    "parallelism.default": "parallelism",
    "table.exec.resource.default-parallelism": "parallelism",
    "pipeline.max-parallelism": "max_parallelism",
    "pipeline.operator-chaining.enabled": "chaining",
    "pipeline.operator-chaining": "chaining",
    "execution.runtime-mode": "mode",
    "pipeline.name": "job_name",
}
# Flink's default idleness of every SQL source with a watermark (0: none), in milliseconds in
# the job's options; a table's 'scan.watermark.idle-timeout' wins.
IDLE_TIMEOUT = "table.exec.source.idle-timeout"
# Flink's idle state retention of SQL's updating operators (GroupAggregate, regular joins,
# Top-N; flowc.parser.changes.value_state): a duration, kept as ms in the job's options
STATE_TTL = "table.exec.state.ttl"
LOCAL_TIME_ZONE = "table.local-time-zone"  # TIMESTAMP_LTZ's zone: only UTC (flowc.dates)
# How often watermarks are emitted (flowc.planner.watermark_timing): a duration, kept as ms
WATERMARK_INTERVAL = "pipeline.auto-watermark-interval"
# Dotted keys with these prefixes are free options, recorded in the job's configuration.
FREE_PREFIXES = ("spark.", "flowc.")
# Per-operator idle state retention (SQL's STATE_TTL hint), read where a rolling aggregate
# ('state_ttl') or a regular join (all three) is lowered, an error on any other step
TTL_HINTS = ("state_ttl", "left_state_ttl", "right_state_ttl")
HINT_KEYS = ("parallelism", "max_parallelism", "slot_group", "slot_sharing_group", "uid",
             "uid_hash", "name", "description", "chain", *TTL_HINTS)
MAX_PARALLELISM = 1 << 15
_HEX32 = re.compile(r"^[0-9a-fA-F]{32}$")
_ON = {"on": True, "true": True, "off": False, "false": False}


def _shown(value: object) -> str:
    if isinstance(value, str):
        return "'" + value.replace("'", "''") + "'"
    if isinstance(value, A.DurationLit):
        return f"{value.millis}ms"
    return str(value).lower() if isinstance(value, bool) else str(value)


def int_setting(s: A.Setting, what: str, lo: int, hi: int) -> int:
    v = s.value
    if isinstance(v, bool) or not isinstance(v, int):
        raise FlowTypeError(f"{what} must be a whole number, got {_shown(v)}", s.value_span)
    if not lo <= v <= hi:
        bound = f"at least {lo}" if hi >= MAX_PARALLELISM * 1024 else f"between {lo} and {hi}"
        raise FlowTypeError(f"{what} must be {bound}, got {v}", s.value_span)
    return v


def str_setting(s: A.Setting, what: str) -> str:
    if not isinstance(s.value, str):
        raise FlowTypeError(f"{what} must be a string in single quotes, got {_shown(s.value)}",
                            s.value_span)
    if not s.value:
        raise FlowTypeError(f"{what} must not be empty", s.value_span)
    return s.value


def duration_setting(s: A.Setting, what: str) -> int:
    """Milliseconds of a duration setting: ``5s`` in .flow, a Flink duration string
    (``'5 s'``, ``'500 ms'``) or a number of milliseconds; not negative."""
    v = s.value
    if isinstance(v, A.DurationLit):
        ms = v.millis
    elif isinstance(v, str):
        from flowc.sql.ddl import flink_duration  # the SQL options' duration syntax

        ms = flink_duration(v, s.value_span)
    elif isinstance(v, int) and not isinstance(v, bool):
        ms = v
    else:
        raise FlowTypeError(f"{what} must be a duration such as 5s, got {_shown(v)}",
                            s.value_span)
    if ms < 0:
        raise FlowTypeError(f"{what} cannot be negative", s.value_span)
    return ms


def word_setting(s: A.Setting, what: str, choices: tuple[str, ...]) -> str:
    text = str(s.value) if isinstance(s.value, (A.Word, str)) else None
    if text is None or text not in choices:
        raise FlowTypeError(f"{what} must be {' or '.join(choices)}, got {_shown(s.value)}",
                            s.value_span)
    return text


def _flink_value(s: A.Setting, flowc_key: str) -> A.Setting:
    """A Flink key's value (SQL gives strings: '4', 'BATCH', 'false') in .flow's form."""
    v = s.value
    text = v.text if isinstance(v, A.Word) else v if isinstance(v, str) else None
    if text is not None and flowc_key in ("parallelism", "max_parallelism") and \
            re.fullmatch(r"-?\d+", text.strip()):
        v = int(text)
    elif text is not None and flowc_key in ("mode", "chaining"):
        v = A.Word(text.strip().lower())
    elif isinstance(v, bool) and flowc_key == "chaining":
        v = A.Word("true" if v else "false")
    return A.Setting(flowc_key, v, s.span, s.key_span, s.value_span)


def apply_set(env: Any, s: A.Setting) -> None:
    key = s.key
    if key in FLINK_KEYS:
        flowc_key = FLINK_KEYS[key]
        value = _flink_value(s, flowc_key)
        if key == "table.exec.resource.default-parallelism" and value.value == -1:
            return  # Flink's default: the environment's parallelism
        if flowc_key == "mode" and str(value.value) == "automatic":
            env.set_runtime_mode(RuntimeExecutionMode.AUTOMATIC)
            return
        _apply(env, value, flowc_key, f"'{key}'")
    elif key in SET_KEYS:
        _apply(env, s, key, key)
    elif key in (IDLE_TIMEOUT, WATERMARK_INTERVAL):
        env.set_option(key, str(duration_setting(s, f"'{key}'")))
    elif key == STATE_TTL:
        env.set_option(key, str(_duration_ms(s)))
    elif key == LOCAL_TIME_ZONE:
        # flowc's session time zone is UTC (flowc.dates): accepted when it says so
        if str(s.value).strip().upper() not in ("UTC", "Z", "GMT", "ETC/UTC", "+00:00"):
            raise UnsupportedError(f"'{key}' = '{s.value}' is not supported: flowc's session "
                                   "time zone is UTC", s.value_span,
                                   hint=f"SET '{key}' = 'UTC' (docs/sql.md, CREATE TABLE)")
    elif key.startswith(FREE_PREFIXES):
        # Free options are namespaced (spark.*, flowc.*) so that typos of the known keys
        # above cannot silently become options.
        value = s.value
        env.set_option(key, str(value).lower() if isinstance(value, bool) else
                       f"{value.millis}ms" if isinstance(value, A.DurationLit) else str(value))
    else:
        known = SET_KEYS + tuple(FLINK_KEYS) + (IDLE_TIMEOUT, STATE_TTL, WATERMARK_INTERVAL,
                                                LOCAL_TIME_ZONE)
        raise FlowNameError(f"unknown setting '{key}'", s.key_span,
                            hint=did_you_mean(key, known) or
                            f"settings are {', '.join(SET_KEYS)} (or Flink's "
                            f"{', '.join(FLINK_KEYS)}), or a free option named "
                            f"{' or '.join(p + '*' for p in FREE_PREFIXES)}")


def _duration_ms(s: A.Setting) -> int:
    """A duration setting: .flow's ``1h`` or Flink's string (``'1 h'``, ``'500 ms'``, ``'0'``
    for none)."""
    if isinstance(s.value, A.DurationLit):
        return s.value.millis
    if isinstance(s.value, str):
        from flowc.sql.ddl import flink_duration  # Flink's duration syntax (SQL options too)

        return flink_duration(s.value, s.value_span)
    raise FlowTypeError(f"'{s.key}' must be a duration, got {_shown(s.value)}", s.value_span,
                        hint="for example '1 h' or '30 min'")


def _apply(env: Any, s: A.Setting, key: str, what: str) -> None:
    if key == "parallelism":
        env.set_parallelism(int_setting(s, what, 1, MAX_PARALLELISM))
    elif key == "max_parallelism":
        env.set_max_parallelism(int_setting(s, what, 1, MAX_PARALLELISM))
    elif key == "chaining":
        if not _ON[word_setting(s, what, ("on", "off", "true", "false"))]:
            env.disable_operator_chaining()
    elif key == "mode":
        mode = word_setting(s, what, ("streaming", "batch", "automatic"))
        env.set_runtime_mode(RuntimeExecutionMode[mode.upper()])
    else:
        env.set_job_name(str_setting(s, what))


def check_hints(hints: tuple[A.Setting, ...], *, sink: bool) -> None:
    seen: dict[str, A.Setting] = {}
    for h in hints:
        if h.key in seen:
            raise FlowSyntaxError(f"hint '{h.key}' is given twice", h.key_span)
        seen[h.key] = h
        if h.key not in HINT_KEYS:
            raise FlowNameError(f"unknown hint '{h.key}'", h.key_span,
                                hint=did_you_mean(h.key, HINT_KEYS)
                                or f"hints are {', '.join(HINT_KEYS)}")
        if h.key == "chain" and sink and str(h.value) == "new":
            raise FlowTypeError("a sink cannot start a new chain", h.value_span,
                                hint="use chain = never to keep it out of the chain")


def apply_hints(target: Any, hints: tuple[A.Setting, ...], *, sink: bool = False) -> None:
    """Call the API setter for each hint on ``target`` (a DataStream or DataStreamSink)."""
    check_hints(hints, sink=sink)
    for h in hints:
        try:
            _apply_one(target, h)
        except ApiError as e:
            raise FlowTypeError(e.message, h.span) from None


def ttl_hint(hints: tuple[A.Setting, ...], key: str, default: int | None) -> int | None:
    """The ``key`` TTL hint in ms (0: never expire, as ``table.exec.state.ttl``), else
    ``default``."""
    h = next((h for h in hints if h.key == key), None)
    if h is None:
        return default
    return duration_setting(h, key) or None


def _apply_one(target: Any, h: A.Setting) -> None:
    key = h.key
    if key in TTL_HINTS:
        raise FlowTypeError(f"the '{key}' hint belongs on a rolling 'aggregate' (state_ttl) or "
                            "a regular join (state_ttl, left_state_ttl, right_state_ttl)",
                            h.key_span)
    if key == "parallelism":
        target.set_parallelism(int_setting(h, "parallelism", 1, MAX_PARALLELISM))
    elif key == "max_parallelism":
        target.set_max_parallelism(int_setting(h, "max_parallelism", 1, MAX_PARALLELISM))
    elif key in ("slot_group", "slot_sharing_group"):
        target.slot_sharing_group(str_setting(h, "slot_group"))
    elif key == "uid":
        target.uid(str_setting(h, "uid"))
    elif key == "uid_hash":
        value = str_setting(h, "uid_hash")
        if not _HEX32.match(value):
            raise FlowTypeError("uid_hash must be 32 hexadecimal digits", h.value_span)
        target.set_uid_hash(value)
    elif key == "name":
        target.name(str_setting(h, "name"))
    elif key == "description":
        target.set_description(str_setting(h, "description"))
    elif key == "chain":
        if word_setting(h, "chain", ("new", "never")) == "new":
            target.start_new_chain()
        else:
            target.disable_chaining()
