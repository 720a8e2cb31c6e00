"""File sources, read by the same code on both executors.

A file source is cut into **splits** by one deterministic rule (``plan_splits``), split *k*
goes to subtask ``k % parallelism``, and every split is parsed by ``read_split`` - in the
reference executor's process, or inside the Spark task that runs the source subtask. So
both executors see the same records on the same subtasks in the same order, with the same
conversions, errors and dead letters.

Split rule: files in path order; a csv / json-lines file is cut into byte ranges of
``split_size(total bytes, parallelism)`` (4 MiB .. 128 MiB, Spark's rule with the source's
parallelism in place of Spark's default parallelism); a range owns the lines that *start*
in it. A parquet file is one split.

Field conversion (``converter``, in ``converters.py``): ``string``, ``int`` (64-bit),
``double``, ``bool``, ``timestamp`` (ISO-8601 text, UTC unless an offset is given, or
integer epoch milliseconds; read as epoch milliseconds) and ``array<T>`` (json / parquet
only).
"""

from __future__ import annotations

import csv
import glob
import json
import os
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import IO, Any

from flowc import decimals
from flowc.errors import ExecutionError, UnsupportedError
from flowc.executor.runtime import csvread
from flowc.executor.runtime.converters import (  # noqa: F401 - re-exported for callers
    LONG_MAX,
    LONG_MIN,
    SCALAR_TYPES,
    converter,
    parse_timestamp,
    parse_type,
    text_converter,
    text_parser,
)
from flowc.operators import FileSource

TEXT_FORMATS = ("csv", "json", "jsonl", "json-lines")
FORMATS = TEXT_FORMATS + ("parquet",)
CSV_OPTIONS = ("header", "delimiter", "sep", "quote", "escape", "null_value", "nullValue")
MIN_SPLIT = 4 << 20
MAX_SPLIT = 128 << 20
_URI = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://")
_SURROGATE_ESCAPE = re.compile(rb"\\[uU][dD][89a-fA-F]")  # a json \uD800-\uDFFF escape


def check_spec(spec: FileSource) -> None:
    """Fail before anything runs for a format, option or field type the readers lack."""
    if spec.format not in FORMATS:
        raise UnsupportedError(f"file format '{spec.format}' (supported: csv, json, parquet)")
    if spec.dead_letter is not None:
        dead_letter_path(spec.dead_letter)
    for name, t in spec.schema:
        depth, _ = parse_type(t)
        if depth and spec.format == "csv":
            raise UnsupportedError(f"csv cannot hold the array field '{name}' of {spec.path}")
    for k, _ in spec.options:
        if spec.format != "csv" or k not in CSV_OPTIONS:
            known = ", ".join(CSV_OPTIONS) if spec.format == "csv" else "none"
            raise UnsupportedError(f"unknown {spec.format} source option '{k}' for "
                                   f"{spec.path} (known: {known})")


def csv_options(options: Iterable[tuple[str, str]]) -> dict[str, Any]:
    opts = dict(options)
    return {"header": opts.get("header", "false").lower() == "true",
            "delimiter": opts.get("delimiter", opts.get("sep", ",")),
            "quote": opts.get("quote", '"'),
            "escape": opts.get("escape") or None,
            "null_value": opts.get("null_value", opts.get("nullValue", ""))}


# -- splits --------------------------------------------------------------------------------

@dataclass(frozen=True)
class Split:
    """Bytes ``[start, end)`` of ``path`` (end -1: to the end of the file)."""

    path: str
    start: int
    end: int


def is_remote(path: str) -> bool:
    """A URI (``hdfs://``, ``s3a://``, ``file:/``): listed and fetched through Spark."""
    return bool(_URI.match(path)) or path.startswith("file:")


def dead_letter_path(path: str) -> str:
    """Dead letters are written by the driver: a local path (or ``file:`` URI)."""
    local = local_path(path)
    if local is None:
        raise UnsupportedError(f"dead letters go to local paths only, not {path}")
    return local


def local_path(path: str) -> str | None:
    """A ``file:`` URI as a local path (the reference executor reads those itself)."""
    if path.startswith("file://"):
        return path[len("file://"):] or "/"
    if path.startswith("file:"):
        return path[len("file:"):]
    return None if is_remote(path) else path


def list_files(path: str) -> list[tuple[str, int]]:
    """(file, size) of a local file, directory (its files not starting with ``.`` or
    ``_``, as Spark lists them) or glob pattern, in path order."""
    if any(c in path for c in "*?["):
        matches = sorted(glob.glob(path))
        if not matches:
            raise ExecutionError(f"no input file matches {path}")
        found: list[str] = []
        for m in matches:
            found.extend(_dir_files(m) if os.path.isdir(m) else [m])
        return [(f, os.path.getsize(f)) for f in sorted(found)]
    if os.path.isdir(path):
        return [(f, os.path.getsize(f)) for f in _dir_files(path)]
    if not os.path.exists(path):
        raise ExecutionError(f"input path does not exist: {path}")
    return [(path, os.path.getsize(path))]


def _dir_files(path: str) -> list[str]:
    return sorted(p for p in glob.glob(os.path.join(glob.escape(path), "*"))
                  if os.path.isfile(p) and not os.path.basename(p).startswith((".", "_")))


def split_size(total: int, parallelism: int) -> int:
    return min(MAX_SPLIT, max(MIN_SPLIT, -(-total // max(parallelism, 1))))


def plan_splits(fmt: str, files: list[tuple[str, int]], parallelism: int) -> list[Split]:
    files = sorted(files)
    if fmt == "parquet":
        return [Split(f, 0, -1) for f, _ in files]
    size = split_size(sum(n for _, n in files), parallelism)
    out: list[Split] = []
    for f, n in files:
        cuts = list(range(0, n, size)) or [0]
        out.extend(Split(f, c, c + size if c + size < n else -1) for c in cuts)
    return out


def subtask_splits(splits: list[Split], subtask: int, parallelism: int) -> list[Split]:
    return [s for k, s in enumerate(splits) if k % parallelism == subtask]


# -- reading ---------------------------------------------------------------------------------

SHOWN_CHARS = 200  # of a bad row's text (and error) in a message; dead letters keep all


def shorten(text: str, limit: int = SHOWN_CHARS) -> str:
    """``text`` cut to ``limit`` characters for a message, saying how long it was."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}... ({len(text):,} characters)"


class BadRows:
    """Where a source's rows that do not parse go: the job fails naming file and row, or
    (with a dead-letter path) one JSON line each: file, row, the raw text, the error."""

    def __init__(self, spec: FileSource) -> None:
        self.dead_letter = spec.dead_letter is not None
        self.lines: list[str] = []

    def add(self, path: str, where: str, row: int, text: str, error: str) -> None:
        if not self.dead_letter:
            raise ExecutionError(f"bad row in {path} ({where} {row}): "
                                 f"{shorten(repr(text))}: {shorten(error)}")
        self.lines.append(json.dumps({"file": path, "row": row, "text": text,
                                      "error": error}))


def _aligned(fh: IO[bytes], start: int) -> int:
    """Offset of the first line that starts at or after ``start``."""
    if start == 0:
        return 0
    fh.seek(start - 1)
    if fh.read(1) == b"\n":
        return start
    return start + len(fh.readline())


def _newlines_before(fh: IO[bytes], offset: int) -> int:
    """Lines before ``offset`` (read on the first bad row only, then restored)."""
    here = fh.tell()
    fh.seek(0)
    n, left = 0, offset
    while left > 0:
        block = fh.read(min(left, 1 << 20))
        if not block:
            break
        n += block.count(b"\n")
        left -= len(block)
    fh.seek(here)
    return n


def read_split(spec: FileSource, split: Split, fh: IO[bytes], bad: BadRows,
               display: str | None = None) -> Iterator[tuple[Any, ...]]:
    """The records of one split as tuples in schema order. ``fh`` is the file opened in
    binary mode (seekable)."""
    path = display or split.path
    if spec.format == "parquet":
        yield from _read_parquet(spec, fh, path, bad)
        return
    begin = _aligned(fh, split.start)
    base: list[int] = []

    def first_line() -> int:  # line number of the split's first line, counted lazily
        if not base:
            base.append(_newlines_before(fh, begin) + 1)
        return base[0]

    yield from _read_text(spec, csvread.line_blocks(fh, begin, split.end), split.start == 0,
                          path, first_line, bad)


def chunk_bounds(data: bytes, start: int, end: int) -> tuple[int, int]:
    """``[begin, stop)`` of the lines starting in ``[start, end)`` of a whole file's bytes
    (the same lines ``read_split`` reads from an open file)."""
    def aligned(pos: int) -> int:
        if pos <= 0:
            return 0
        if pos >= len(data):
            return len(data)
        if data[pos - 1:pos] == b"\n":
            return pos
        nl = data.find(b"\n", pos)
        return len(data) if nl < 0 else nl + 1
    return aligned(start), len(data) if end < 0 else aligned(end)


def read_chunk(spec: FileSource, path: str, data: bytes, file_start: bool, lines_before: int,
               bad: BadRows) -> Iterator[tuple[Any, ...]]:
    """The records of a split given as its bytes (the lines ``chunk_bounds`` picked, or a
    whole parquet file); ``lines_before`` lines of the file precede it."""
    import io

    if spec.format == "parquet":
        yield from _read_parquet(spec, io.BytesIO(data), path, bad)
        return
    yield from _read_text(spec, csvread.line_blocks(io.BytesIO(data), 0, -1), file_start,
                          path, lambda: lines_before + 1, bad)


def _read_text(spec: FileSource, blocks: Iterator[bytes], file_start: bool, path: str,
               first_line: Callable[[], int], bad: BadRows) -> Iterator[tuple[Any, ...]]:
    """``blocks``: the split's lines in blocks of whole lines (``csvread.line_blocks``)."""
    if spec.format == "csv":
        return _read_csv(spec, blocks, file_start, path, first_line, bad)
    lines = (line for block in blocks for line in csvread.split_nl(block))
    return _read_json(spec, lines, path, first_line, bad)


def _read_csv(spec: FileSource, blocks: Iterator[bytes], file_start: bool, path: str,
              first_line: Callable[[], int], bad: BadRows) -> Iterator[tuple[Any, ...]]:
    o = csv_options(spec.options)
    convert = csvread.row_converter([text_parser(t) for _, t in spec.schema], o["null_value"])
    width = len(spec.schema)
    window = csvread.LineWindow(blocks)
    reader = csvread.reader(window, o)
    if file_start and o["header"]:
        try:
            next(reader, None)
        except csv.Error:
            pass
        window.forget_invalid(reader.line_num)
    row_at = window.record_start = reader.line_num
    while True:
        try:
            fields = next(reader)
        except StopIteration:
            return
        except csv.Error as e:
            stop = reader.line_num
            bad.add(path, "line", first_line() + row_at, window.text(row_at, stop),
                    f"not csv: {e}")
            window.forget_invalid(stop)
            row_at = window.record_start = stop
            continue
        line, row_at = row_at, reader.line_num
        window.record_start = row_at
        if not fields:  # a blank line (Spark skips them too)
            window.forget_invalid(row_at)
            continue
        try:
            if len(fields) != width:
                raise ValueError(f"expected {width} fields, got {len(fields)}")
            if window.any_invalid(line, row_at):
                window.forget_invalid(row_at)
                raise ValueError("not valid UTF-8")
            rec = convert(fields)
        except ValueError as e:
            bad.add(path, "line", first_line() + line, window.text(line, row_at), str(e))
            continue
        yield rec


def _read_json(spec: FileSource, lines: Iterator[bytes], path: str,
               first_line: Callable[[], int], bad: BadRows) -> Iterator[tuple[Any, ...]]:
    names = [n for n, _ in spec.schema]
    convs = [converter(t) for _, t in spec.schema]
    pairs = list(zip(names, convs))
    for i, raw in enumerate(lines):
        if not raw.strip():
            continue
        try:
            text = raw.decode("utf-8")
            obj = json.loads(text)
            if not isinstance(obj, dict):
                raise ValueError("not a JSON object")
            if names and not any(n in obj for n in names):
                # Every field would be null: almost surely the wrong file or schema.
                raise ValueError(f"none of the fields {', '.join(names)} is in the object")
            get = obj.get
            row = tuple([c(get(n)) for n, c in pairs])
            yield _without_lone_surrogates(row) if _SURROGATE_ESCAPE.search(raw) else row
        except (ValueError, RecursionError) as e:
            shown = raw.decode("utf-8", "replace").rstrip("\r\n")
            bad.add(path, "line", first_line() + i, shown, str(e))


def _without_lone_surrogates(row: tuple[Any, ...]) -> tuple[Any, ...]:
    """A json string's lone surrogate (``"\\ud800"``) as ``?``: Flink's Jackson reads it
    into a Java String, and Java's UTF-8 encoder (its print, csv and json sinks) writes
    ``?`` for it; flowc replaces it when reading, so both executors and every sink see the
    same valid string (docs/flink-differences.md). A pair is one character, as in Java."""
    out = list(row)
    todo = [out]
    while todo:  # strings, also inside (nested) arrays
        items = todo.pop()
        for i, x in enumerate(items):
            if isinstance(x, str):
                items[i] = x.encode("utf-8", "replace").decode("utf-8")
            elif isinstance(x, list):
                items[i] = list(x)
                todo.append(items[i])
    return tuple(out)


def _read_parquet(spec: FileSource, fh: IO[bytes], path: str,
                  bad: BadRows) -> Iterator[tuple[Any, ...]]:
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    try:
        pf = pq.ParquetFile(fh)
    except (pa.ArrowException, OSError) as e:
        raise ExecutionError(f"cannot read {path} as parquet: {e}") from None
    names = [n for n, _ in spec.schema]
    file_schema = pf.schema_arrow
    plans: list[tuple[str, Callable[[Any], Any] | None]] = []
    for name, t in spec.schema:
        idx = file_schema.get_field_index(name)
        if idx < 0:
            raise ExecutionError(f"{path} has no column '{name}' (its columns: "
                                 f"{', '.join(file_schema.names)})")
        plans.append(_parquet_plan(path, name, t, file_schema.field(idx).type))
    convs = [(j, conv) for j, (_, conv) in enumerate(plans) if conv is not None]
    row = 0
    for batch in pf.iter_batches(columns=names, batch_size=65536):
        cols: list[list[Any]] = []
        for j, (kind, _) in enumerate(plans):
            col = batch.column(j)
            if kind == "ms":
                col = pc.cast(pc.cast(col, pa.timestamp("ms", tz="UTC"), safe=False),
                              pa.int64())
            cols.append(col.to_pylist())
        if not convs:
            yield from zip(*cols)
        else:
            for k, values in enumerate(zip(*cols)):
                rec = list(values)
                j = 0
                try:
                    for j, conv in convs:
                        rec[j] = conv(rec[j])
                except ValueError as e:
                    text = json.dumps(dict(zip(names, values)), default=str)
                    bad.add(path, "row", row + k + 1, text, f"column '{names[j]}': {e}")
                    continue
                yield tuple(rec)
        row += batch.num_rows


def _parquet_plan(path: str, name: str, type_name: str,
                  arrow_type: Any) -> tuple[str, Callable[[Any], Any] | None]:
    """How a parquet column becomes the declared type: ("ms", None) cast timestamps to
    epoch ms in Arrow; ("", conv) convert each value; ("", None) use as is. A column whose
    type cannot hold the declared one fails naming file, column and both types."""
    import pyarrow as pa

    t = pa.types
    ok: bool
    plan: tuple[str, Callable[[Any], Any] | None] = ("", None)
    if type_name == "string":
        ok = t.is_string(arrow_type) or t.is_large_string(arrow_type)
    elif type_name == "int":
        ok = t.is_integer(arrow_type)
        plan = ("", converter("int")) if t.is_uint64(arrow_type) else plan
    elif type_name == "double":
        ok = t.is_floating(arrow_type) or t.is_integer(arrow_type)
        plan = ("", converter("double"))
    elif type_name == "bool":
        ok = t.is_boolean(arrow_type)
    elif decimals.parse_name(type_name) is not None:
        ok = (t.is_decimal(arrow_type) or t.is_integer(arrow_type) or t.is_floating(arrow_type)
              or t.is_string(arrow_type))
        plan = ("", converter(type_name))
    elif type_name == "timestamp":
        ok = (t.is_timestamp(arrow_type) or t.is_integer(arrow_type) or t.is_date(arrow_type)
              or t.is_string(arrow_type) or t.is_large_string(arrow_type))
        plan = ("ms", None) if t.is_timestamp(arrow_type) else ("", converter("timestamp"))
    else:
        ok = t.is_list(arrow_type) or t.is_large_list(arrow_type)
        plan = ("", converter(type_name))
    if not ok:
        raise ExecutionError(f"{path}: column '{name}' is {arrow_type} in the file, but the "
                             f"schema declares {type_name}")
    return plan


def local_splits(spec: FileSource, parallelism: int) -> list[Split]:
    """The splits of a source on the local file system (a ``file:`` URI counts as local)."""
    path = local_path(spec.path)
    if path is None:
        raise UnsupportedError(f"the reference executor reads local files only, not "
                               f"{spec.path} (run the job on Spark)")
    return plan_splits(spec.format, list_files(path), parallelism)


def read_local(spec: FileSource, splits: list[Split], bad: BadRows) -> Iterator[tuple[Any, ...]]:
    # Files of a file: URI are named as Spark names them (file:/abs/path).
    uri = spec.path.startswith("file:")
    for s in splits:
        try:
            fh = open(s.path, "rb")  # noqa: SIM115 - closed below, also when abandoned
        except OSError as e:
            raise ExecutionError(f"cannot read {s.path}: {e.strerror or e}") from None
        with fh:
            yield from read_split(spec, s, fh, bad,
                                  "file:" + os.path.abspath(s.path) if uri else None)
