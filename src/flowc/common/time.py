"""``pyflink.common.time``: ``Duration`` and the legacy ``Time`` factory."""

from flowc.windowing import Duration, Time

__all__ = ["Duration", "Time"]
