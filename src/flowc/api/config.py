"""PyFlink's ``ExecutionConfig`` (``env.get_config()``), for the settings flowc has."""

from __future__ import annotations

from typing import TYPE_CHECKING

from flowc.errors import ApiError
from flowc.planner.watermark_timing import DEFAULT_INTERVAL_MS, INTERVAL_OPTION

if TYPE_CHECKING:
    from flowc.api.environment import StreamExecutionEnvironment


class ExecutionConfig:
    """A view of the environment's configuration (writes go to the environment)."""

    def __init__(self, env: StreamExecutionEnvironment) -> None:
        self._env = env

    def set_auto_watermark_interval(self, interval: int) -> ExecutionConfig:
        """How often periodic watermarks are emitted (``pipeline.auto-watermark-interval``);
        0 turns them off. flowc turns the interval into a record count
        (flowc.planner.watermark_timing)."""
        if isinstance(interval, bool) or not isinstance(interval, int):
            raise ApiError(f"the watermark interval must be milliseconds (an int), "
                           f"got {interval!r}")
        if interval < 0:
            raise ApiError("Auto watermark interval must not be negative.")
        self._env.set_option(INTERVAL_OPTION, str(interval))
        return self

    def get_auto_watermark_interval(self) -> int:
        return int(dict(self._env.config.options).get(INTERVAL_OPTION, DEFAULT_INTERVAL_MS))

    def set_parallelism(self, parallelism: int) -> ExecutionConfig:
        self._env.set_parallelism(parallelism)
        return self

    def get_parallelism(self) -> int:
        return self._env.get_parallelism()
