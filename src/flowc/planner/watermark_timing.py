"""When watermark generators emit (docs/executor.md, "Watermark generation").

Flink asks a periodic generator for its watermark every ``pipeline.auto-watermark-interval``
(200 ms) of wall-clock time, so on a small bounded input nothing is emitted before the final
watermark at the end of input. flowc makes that deterministic: the generator is asked once
every ``interval_ms * RECORDS_PER_MS`` records its subtask handled (200 ms: every 10,000
records), and at the end of input. An interval of 0 turns periodic emission off (Flink:
``setAutoWatermarkInterval(0)``); the option ``flowc.watermarks = per-record`` emits after
every record instead (flowc's earlier rule, handy for tests of late data).

A SQL table's exact generator (Flink SQL's WatermarkAssignerOperator) also emits eagerly,
as Flink's does: right after a record that raised its watermark by more than the interval
since the last emission (interval 0: after every rise)."""

from __future__ import annotations

import dataclasses

from flowc.errors import ConfigError
from flowc.transformations import Config
from flowc.windowing import WatermarkStrategy

INTERVAL_OPTION = "pipeline.auto-watermark-interval"
MODE_OPTION = "flowc.watermarks"
DEFAULT_INTERVAL_MS = 200
# Records a Python subtask handles per millisecond, roughly: scales the interval to records.
RECORDS_PER_MS = 50
MODES = ("periodic", "per-record")


def emit_every(config: Config) -> int:
    options = dict(config.options)
    mode = options.get(MODE_OPTION, "periodic")
    if mode not in MODES:
        raise ConfigError(f"unknown value '{mode}' for {MODE_OPTION} (use periodic or per-record)")
    if mode == "per-record":
        return 1
    return interval_ms(config) * RECORDS_PER_MS


def interval_ms(config: Config) -> int:
    """``pipeline.auto-watermark-interval`` in milliseconds."""
    interval = dict(config.options).get(INTERVAL_OPTION, str(DEFAULT_INTERVAL_MS))
    try:
        ms = int(interval.removesuffix("ms").strip())
    except ValueError:
        raise ConfigError(f"{INTERVAL_OPTION} must be milliseconds, got '{interval}'") from None
    if ms < 0:
        raise ConfigError(f"{INTERVAL_OPTION} must not be negative, got {ms}")
    return ms


def timed(strategy: WatermarkStrategy | None, config: Config) -> WatermarkStrategy | None:
    """``strategy`` with the job's emission timing (a strategy's own setting wins)."""
    if strategy is None or strategy.emit_every is not None:
        return strategy
    eager = interval_ms(config) if strategy.exact else None
    return dataclasses.replace(strategy, emit_every=emit_every(config), eager_ms=eager)
