"""What each subtask of an in-memory source (collection, sequence, datagen) reads; shared by
both executors. File sources: ``runtime.files``."""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from typing import Any

from flowc.errors import ExecutionError, UnsupportedError
from flowc.operators import (
    CollectionSource,
    DatagenSource,
    SequenceSource,
    TextLineFileSource,
    TimestampsAndWatermarksOp,
)

# Java's BufferedReader.readLine(): a line ends at \n, \r or \r\n.
_LINE_END = re.compile(r"\r\n|\r|\n")


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
    if isinstance(spec, TextLineFileSource):
        files = text_files(spec)
        return (line for path in files[subtask::parallelism] for line in read_lines(path))
    if isinstance(spec, DatagenSource):
        gen = spec.generator
        return (gen(i) for i in split_range(0, spec.rows - 1, parallelism, subtask))
    raise UnsupportedError(f"source kind '{type(spec).__name__}' is not supported")


def text_files(spec: TextLineFileSource) -> list[str]:
    """The files Flink's NonSplittingRecursiveEnumerator lists (DefaultFileFilter: names
    starting with '.' or '_' are skipped), sorted so every subtask sees the same list."""
    found: list[str] = []
    for root in spec.paths:
        if not os.path.exists(root):
            raise ExecutionError(f"File {root} does not exist or the user running Flink "
                                 "has insufficient permissions to access it.")
        if os.path.isfile(root):
            found.append(root)
            continue
        for d, dirs, names in os.walk(root):
            dirs[:] = sorted(x for x in dirs if not x.startswith((".", "_")))
            found.extend(os.path.join(d, n) for n in sorted(names)
                         if not n.startswith((".", "_")))
    return found


def read_lines(path: str) -> Iterator[str]:
    with open(path, encoding="utf-8", newline="") as fh:
        text = fh.read()
    lines = _LINE_END.split(text)
    if lines and lines[-1] == "":
        lines.pop()  # readLine() returns no empty line after a final line break
    return iter(lines)
