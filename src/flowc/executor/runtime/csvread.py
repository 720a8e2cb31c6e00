"""The csv reader's fast path: whole blocks of lines decoded and split in C, one generated
converter per row, and a timestamp parser for the common ISO-8601 shapes.

Every shortcut here falls back to the general code of ``files`` where its input is not the
common case, so the records, errors and dead letters are exactly those of the line-by-line
reader: a block with bytes that are not UTF-8, or with line breaks other than ``\\n``
(which ``str.splitlines`` would also split on), is read line by line; a timestamp that is not
``YYYY-MM-DD[T| ]HH:MM:SS[.fff][Z]`` goes to ``files.parse_timestamp``.
"""

from __future__ import annotations

import csv
import datetime as dt
import re
import sys
from collections.abc import Callable, Iterator
from typing import IO, Any

BLOCK = 1 << 20  # bytes per block (lines are never cut)

# Python's csv module rejects fields over 131,072 characters by default ("field larger than
# field limit"); Spark's reader has no such limit (maxCharsPerColumn -1). The limit is the
# module's, process-wide: lifted once, to the largest value a C long holds everywhere.
csv.field_size_limit(min(sys.maxsize, (1 << 31) - 1))

# The common timestamp shape; anything else (offsets, dates without a time, 4+ fraction
# digits...) takes the general parser, which accepts a superset.
_FAST_TS = re.compile(r"(\d{4}-\d{2}-\d{2})[T ](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,3}))?Z?")
_EPOCH_DATE = dt.date(1970, 1, 1)
_DAY_MS = 86_400_000
_SCALE = (100, 10, 1)


def timestamp_parser(general: Callable[[Any], int]) -> Callable[[str], int]:
    """``general`` (``files.parse_timestamp``) with a fast path; same results, same errors.
    Each parser caches the epoch milliseconds of the minutes it has seen (``YYYY-MM-DD
    HH:MM``; a file's minutes repeat), or None for a prefix the general parser must word."""
    minutes: dict[str, int | None] = {}
    match = _FAST_TS.fullmatch

    def minute(m: re.Match[str]) -> int | None:
        date, h, mi = m.group(1, 2, 3)
        hi, mii = int(h), int(mi)
        if hi > 23 or mii > 59:
            return None
        try:
            d = dt.date(int(date[:4]), int(date[5:7]), int(date[8:]))
        except ValueError:
            return None
        return (d - _EPOCH_DATE).days * _DAY_MS + hi * 3_600_000 + mii * 60_000

    def parse(text: str) -> int:
        m = match(text)
        if m is None:
            return general(text)
        prefix = text[:16]
        base = minutes.get(prefix, -1)
        if base == -1:
            if len(minutes) > 4096:  # bounded: random timestamps must not grow it forever
                minutes.clear()
            base = minutes[prefix] = minute(m)
        s, frac = m.group(4, 5)
        if base is None or s > "59":
            return general(text)
        if frac is None:
            return base + int(s) * 1000
        return base + int(s) * 1000 + int(frac) * _SCALE[len(frac) - 1]

    return parse


def row_converter(parsers: list[Callable[[str], Any] | None],
                  null_value: str) -> Callable[[list[str]], tuple[Any, ...]]:
    """One function ``fields -> record`` applying ``files.text_converter``'s rules to every
    field (``parsers[i]`` None: a string), without a call per field."""
    ns: dict[str, Any] = {"_nv": null_value}
    parts = []
    for i, parse in enumerate(parsers):
        if parse is None:
            parts.append(f"(None if _f{i} == _nv else _f{i})")
        else:
            ns[f"_p{i}"] = parse
            parts.append(f"(None if _f{i} == _nv or _f{i} == '' else _p{i}(_f{i}))")
    names = ", ".join(f"_f{i}" for i in range(len(parsers)))
    unpack = f"    {names}, = f\n" if parsers else ""
    src = f"def convert(f):\n{unpack}    return ({', '.join(parts)}{',' if parts else ''})\n"
    exec(compile(src, "<flowc-csv-row>", "exec"), ns)  # noqa: S102 - generated above
    fn: Callable[[list[str]], tuple[Any, ...]] = ns["convert"]
    return fn


def line_blocks(fh: IO[bytes], begin: int, end: int) -> Iterator[bytes]:
    """The lines starting in ``[begin, end)`` (end -1: to the end) as blocks of whole
    lines, in order (the same lines a line-by-line read gives)."""
    fh.seek(begin)
    pos = begin
    carry = b""
    while end < 0 or pos < end:
        data = fh.read(BLOCK)
        if not data:
            if carry:
                yield carry
            return
        data = carry + data
        cut = data.rfind(b"\n") + 1
        if cut == 0:  # no line end yet: one long line
            carry = data
            continue
        block, carry = data[:cut], data[cut:]
        if end >= 0 and pos + len(block) > end:
            # Keep the lines that start before ``end`` (the last one may run past it).
            keep = block.find(b"\n", end - pos - 1 if end > pos else 0) + 1
            yield block[:keep]
            return
        pos += len(block)
        yield block
    if carry and (end < 0 or pos < end):
        yield carry


def decoded_lines(block: bytes) -> tuple[list[str], set[int]] | None:
    """The block's lines decoded (line ends kept), or None when the fast split does not
    give exactly its ``\\n``-terminated lines (not UTF-8, or other line-break characters)."""
    try:
        text = block.decode("utf-8")
    except UnicodeDecodeError:
        return None
    lines = text.splitlines(keepends=True)
    expected = text.count("\n") + (0 if text.endswith("\n") else 1)
    if len(lines) != expected:
        return None
    return lines, set()


def slow_lines(block: bytes) -> tuple[list[str], set[int]]:
    """The block's lines one by one; indices of lines that are not UTF-8 (decoded with
    replacement characters) in the set."""
    lines: list[str] = []
    invalid: set[int] = set()
    for i, raw in enumerate(split_nl(block)):
        try:
            lines.append(raw.decode("utf-8"))
        except UnicodeDecodeError:
            lines.append(raw.decode("utf-8", "replace"))
            invalid.add(i)
    return lines, invalid


def split_nl(block: bytes) -> list[bytes]:
    parts = block.split(b"\n")
    out = [p + b"\n" for p in parts[:-1]]
    if parts[-1]:
        out.append(parts[-1])
    return out


class LineWindow:
    """The decoded lines a csv reader is consuming, numbered from 0 across blocks; keeps
    the lines of the record being read (for a bad row's raw text) and drops older ones."""

    def __init__(self, blocks: Iterator[bytes]) -> None:
        self._blocks = blocks
        self._kept: list[tuple[int, list[str]]] = []  # (number of first line, lines)
        self._next = 0
        self._invalid: set[int] = set()
        self.record_start = 0

    def lines(self) -> Iterator[list[str]]:
        for block in self._blocks:
            got = decoded_lines(block)
            lines, invalid = got if got is not None else slow_lines(block)
            first = self._next
            self._invalid.update(first + i for i in invalid)
            kept = self._kept
            while kept and kept[0][0] + len(kept[0][1]) <= self.record_start:
                del kept[0]
            kept.append((first, lines))
            self._next = first + len(lines)
            yield lines

    def text(self, start: int, stop: int) -> str:
        """Lines ``[start, stop)`` joined, without the final line end."""
        out: list[str] = []
        for first, lines in self._kept:
            lo, hi = max(start, first), min(stop, first + len(lines))
            if lo < hi:
                out.extend(lines[lo - first:hi - first])
        return "".join(out).rstrip("\r\n")

    def any_invalid(self, start: int, stop: int) -> bool:
        return bool(self._invalid) and any(start <= i < stop for i in self._invalid)

    def forget_invalid(self, stop: int) -> None:
        if self._invalid:
            self._invalid = {i for i in self._invalid if i >= stop}


def reader(window: LineWindow, o: dict[str, Any]) -> Any:
    from itertools import chain

    return csv.reader(chain.from_iterable(window.lines()), delimiter=o["delimiter"],
                      quotechar=o["quote"], escapechar=o["escape"], strict=True)
