"""State TTL: PyFlink's ``StateTtlConfig`` and the rules the state handles (state.py)
apply, as Flink's heap TTL state does (``TtlStateFactory``, ``AbstractTtlDecorator``,
``TtlUtils``). The time base is processing time: the runtime clock (clock.py)."""

from __future__ import annotations

from enum import Enum
from typing import Any, NamedTuple

from flowc.errors import ApiError
from flowc.executor.runtime.clock import processing_clock


class StateTtlConfig:
    """PyFlink's ``StateTtlConfig``: ``new_builder(Time.seconds(n))...build()``. The time
    base is processing time (Flink has no other); cleanup strategies are accepted and change
    nothing (flowc's state lives as long as the bounded job, and reads clean up)."""

    class UpdateType(Enum):
        Disabled = 0
        OnCreateAndWrite = 1
        OnReadAndWrite = 2

    class StateVisibility(Enum):
        ReturnExpiredIfNotCleanedUp = 0
        NeverReturnExpired = 1

    class TtlTimeCharacteristic(Enum):
        ProcessingTime = 0

    def __init__(self, update_type: StateTtlConfig.UpdateType,
                 state_visibility: StateTtlConfig.StateVisibility,
                 ttl_time_characteristic: StateTtlConfig.TtlTimeCharacteristic,
                 ttl: Any, cleanup: tuple[str, ...] = ()) -> None:
        self._update_type = update_type
        self._state_visibility = state_visibility
        self._ttl_time_characteristic = ttl_time_characteristic
        self._ttl = ttl
        self._cleanup = cleanup

    @staticmethod
    def new_builder(ttl: Any) -> StateTtlConfig.Builder:
        return StateTtlConfig.Builder(ttl)

    def get_update_type(self) -> StateTtlConfig.UpdateType:
        return self._update_type

    def get_state_visibility(self) -> StateTtlConfig.StateVisibility:
        return self._state_visibility

    def get_ttl(self) -> Any:
        return self._ttl

    def get_ttl_time_characteristic(self) -> StateTtlConfig.TtlTimeCharacteristic:
        return self._ttl_time_characteristic

    def is_enabled(self) -> bool:
        return self._update_type is not StateTtlConfig.UpdateType.Disabled

    @property
    def ttl_millis(self) -> int:
        return _ttl_millis(self._ttl)

    def __repr__(self) -> str:
        return (f"StateTtlConfig<updateType={self._update_type}, "
                f"stateVisibility={self._state_visibility}, ttl={self.ttl_millis} ms>")

    class Builder:
        def __init__(self, ttl: Any) -> None:
            _ttl_millis(ttl)
            self._ttl = ttl
            self._update_type = StateTtlConfig.UpdateType.OnCreateAndWrite
            self._visibility = StateTtlConfig.StateVisibility.NeverReturnExpired
            self._cleanup: list[str] = []

        def set_update_type(self, update_type: StateTtlConfig.UpdateType
                            ) -> StateTtlConfig.Builder:
            if not isinstance(update_type, StateTtlConfig.UpdateType):
                raise _error(f"set_update_type needs a StateTtlConfig.UpdateType, got "
                               f"{update_type!r}")
            self._update_type = update_type
            return self

        def update_ttl_on_create_and_write(self) -> StateTtlConfig.Builder:
            return self.set_update_type(StateTtlConfig.UpdateType.OnCreateAndWrite)

        def update_ttl_on_read_and_write(self) -> StateTtlConfig.Builder:
            return self.set_update_type(StateTtlConfig.UpdateType.OnReadAndWrite)

        def set_state_visibility(self, state_visibility: StateTtlConfig.StateVisibility
                                 ) -> StateTtlConfig.Builder:
            if not isinstance(state_visibility, StateTtlConfig.StateVisibility):
                raise _error(f"set_state_visibility needs a StateTtlConfig.StateVisibility, "
                               f"got {state_visibility!r}")
            self._visibility = state_visibility
            return self

        def return_expired_if_not_cleaned_up(self) -> StateTtlConfig.Builder:
            return self.set_state_visibility(
                StateTtlConfig.StateVisibility.ReturnExpiredIfNotCleanedUp)

        def never_return_expired(self) -> StateTtlConfig.Builder:
            return self.set_state_visibility(StateTtlConfig.StateVisibility.NeverReturnExpired)

        def set_ttl_time_characteristic(self, characteristic: StateTtlConfig.TtlTimeCharacteristic
                                        ) -> StateTtlConfig.Builder:
            if characteristic is not StateTtlConfig.TtlTimeCharacteristic.ProcessingTime:
                raise _error(f"state TTL runs on processing time, not {characteristic!r}")
            return self

        def use_processing_time(self) -> StateTtlConfig.Builder:
            return self

        def cleanup_full_snapshot(self) -> StateTtlConfig.Builder:
            self._cleanup.append("full_snapshot")
            return self

        def cleanup_incrementally(self, cleanup_size: int,
                                  run_cleanup_for_every_record: bool) -> StateTtlConfig.Builder:
            self._cleanup.append("incremental")
            return self

        def cleanup_in_rocksdb_compact_filter(self, query_time_after_num_entries: int,
                                              periodic_compaction_time: Any = None
                                              ) -> StateTtlConfig.Builder:
            self._cleanup.append("rocksdb_compaction_filter")
            return self

        def disable_cleanup_in_background(self) -> StateTtlConfig.Builder:
            return self

        def set_ttl(self, ttl: Any) -> StateTtlConfig.Builder:
            _ttl_millis(ttl)
            self._ttl = ttl
            return self

        def build(self) -> StateTtlConfig:
            return StateTtlConfig(self._update_type, self._visibility,
                                  StateTtlConfig.TtlTimeCharacteristic.ProcessingTime,
                                  self._ttl, tuple(self._cleanup))


def _error(message: str) -> ApiError:
    """An API error at the user's call (file, line, column)."""
    from flowc.api.environment import user_call_span

    return ApiError(message, user_call_span())


def _ttl_millis(ttl: Any) -> int:
    """A TTL (``Time.seconds(n)`` / ``Duration``: anything with ``to_milliseconds``) in ms."""
    ms = ttl.to_milliseconds() if hasattr(ttl, "to_milliseconds") else None
    if isinstance(ms, bool) or not isinstance(ms, int) or ms <= 0:
        raise _error(f"a state TTL must be a positive Time / Duration, got {ttl!r}")
    return ms


class TtlValue(NamedTuple):
    """A value under TTL and the processing time it was last written (or read)."""

    value: Any
    ts: int


class Ttl:
    """One state's TTL rules (from its descriptor's StateTtlConfig)."""

    def __init__(self, config: StateTtlConfig) -> None:
        self.ttl = config.ttl_millis
        self.update_on_read = config.get_update_type() is StateTtlConfig.UpdateType.OnReadAndWrite
        self.return_expired = (config.get_state_visibility()
                               is StateTtlConfig.StateVisibility.ReturnExpiredIfNotCleanedUp)

    @staticmethod
    def now() -> int:
        return processing_clock().now_ms()

    def expired(self, cell: TtlValue, now: int) -> bool:
        return cell.ts + self.ttl <= now  # TtlUtils.expired

    def visible(self, cell: TtlValue, now: int) -> bool:
        """Whether a read returns this value (expired ones only if so configured)."""
        return self.return_expired or not self.expired(cell, now)
