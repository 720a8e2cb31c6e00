"""What each subtask of an in-memory source (collection, sequence, datagen) reads; shared by
both executors. File sources: ``runtime.files``."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from flowc.errors import UnsupportedError
from flowc.operators import (
    CollectionSource,
    DatagenSource,
    SequenceSource,
    TimestampsAndWatermarksOp,
)


def split_range(start: int, end: int, parallelism: int, subtask: int) -> range:
    """Flink's NumberSequenceSource split ``subtask`` of ``[start, end]`` (inclusive):
    ``total // p`` numbers each, the first ``total % p`` splits one more. (Flink hands splits
    to readers on request; flowc gives split i to subtask i.)"""
    total = end - start + 1
    per, rem = divmod(total, parallelism)
    lo = start + subtask * per + min(subtask, rem)
    n = per + (1 if subtask < rem else 0)
    return range(lo, lo + n)


def source_watermarks(node: Any) -> TimestampsAndWatermarksOp | None:
    """The timestamps/watermarks step a SOURCE node applies itself (Flink's
    ``fromSource(source, watermarkStrategy, name)``), as the operator spec it is equivalent
    to: both executors run it exactly like a ``TimestampsAndWatermarksOp`` chained right
    after the source, so the two ways of writing a job give identical results."""
    strategy = getattr(node, "watermark_strategy", None)
    if strategy is None:
        return None
    return TimestampsAndWatermarksOp(strategy)


def source_values(spec: Any, subtask: int, parallelism: int) -> Iterator[Any]:
    if isinstance(spec, CollectionSource):
        r = split_range(0, len(spec.values) - 1, parallelism, subtask)
        return iter(spec.values[r.start:r.stop])
    if isinstance(spec, SequenceSource):
        return iter(split_range(spec.start, spec.end, parallelism, subtask))
    if isinstance(spec, DatagenSource):
        gen = spec.generator
        return (gen(i) for i in split_range(0, spec.rows - 1, parallelism, subtask))
    raise UnsupportedError(f"source kind '{type(spec).__name__}' is not supported")
