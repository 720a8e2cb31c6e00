"""``pyflink.common``'s names that flowc implements: ``from flowc.common import Types, Row``.

Names PyFlink has here and flowc does not (Configuration, ExecutionConfig, serialization
schemas other than SimpleStringSchema, restart strategies, JobClient, ...) are absent on purpose: see
docs/flink-differences.md, "PyFlink module layout"."""

from flowc.common.serialization import SimpleStringSchema
from flowc.common.time import Duration, Time
from flowc.common.typeinfo import TypeInformation, Types
from flowc.common.types import Row, RowKind
from flowc.common.watermark_strategy import TimestampAssigner, WatermarkStrategy

__all__ = ["Duration", "Row", "RowKind", "SimpleStringSchema", "Time", "TimestampAssigner",
           "TypeInformation", "Types", "WatermarkStrategy"]
