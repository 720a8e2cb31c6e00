"""``pyflink.common.watermark_strategy``: ``WatermarkStrategy`` and ``TimestampAssigner``."""

from flowc.windowing import TimestampAssigner, WatermarkStrategy

__all__ = ["TimestampAssigner", "WatermarkStrategy"]
