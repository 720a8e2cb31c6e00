"""Shared by test_columnar_csv.py and test_columnar_json.py: a columnar (native) file
reader against the row reader (``runtime.files``) on the same file and splits."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from flowc.errors import ExecutionError
from flowc.executor.arrow import convert
from flowc.executor.runtime import files
from flowc.operators import FileSource
from flowc.types import BOOL, DOUBLE, INT, STRING, TIMESTAMP, Schema

SCHEMA = Schema.of(("s", STRING), ("i", INT), ("d", DOUBLE), ("b", BOOL), ("t", TIMESTAMP))

# A native reader: read_split(spec, split, fh, bad, ...) of arrow.csvsource / jsonsource.
ReadSplit = Callable[..., Iterator[Any]]


def native(read_split: ReadSplit, spec: FileSource, split: files.Split,
           bad: files.BadRows) -> Iterator[Any]:
    """The chunks ``read_split`` reads from ``split`` (SCHEMA's arrow schema, 7 a chunk)."""
    with open(split.path, "rb") as fh:
        yield from read_split(spec, split, fh, bad, None, convert.arrow_schema(SCHEMA), 7)


def assert_native_equals_row_reader(read_split: ReadSplit, spec: FileSource, p: int,
                                    small: bool) -> None:
    """Per subtask of ``p``: the same records (or the same error) and the same bad rows;
    ``small``: tiny blocks and splits, so fast and slow blocks mix within a split."""
    old_block, old_min = files.csvread.BLOCK, files.MIN_SPLIT
    try:
        if small:
            files.csvread.BLOCK = 64
            files.MIN_SPLIT = 97
        splits = files.plan_splits(spec.format, files.list_files(spec.path), p)
        for k in range(p):
            mine = files.subtask_splits(splits, k, p)
            want_bad, got_bad = files.BadRows(spec), files.BadRows(spec)
            want: list[Any] | str
            got: list[Any] | str
            try:
                want = list(files.read_local(spec, mine, want_bad))
            except ExecutionError as e:
                want = str(e)
            try:
                got = [r for s in mine for c in native(read_split, spec, s, got_bad)
                       for r in c.rows()]
            except ExecutionError as e:
                got = str(e)
            assert repr(got) == repr(want)  # NaN is NaN
            assert got_bad.lines == want_bad.lines
    finally:
        files.csvread.BLOCK, files.MIN_SPLIT = old_block, old_min
