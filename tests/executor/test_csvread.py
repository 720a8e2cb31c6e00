"""The csv reader's fast paths (block decoding, generated row converters, the timestamp
fast path) give exactly what the plain line-by-line reading gives: records, bad rows with
their line numbers and raw text, and error messages."""

from __future__ import annotations

import csv
import io
import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from flowc.executor.runtime import csvread, files
from flowc.operators import FileSource

# -- timestamps ------------------------------------------------------------------------------

_digits = st.text("0123456789", min_size=1, max_size=4)
_near_iso = st.builds(
    lambda y, mo, d, sep, h, mi, s, frac, z: f"{y}-{mo}-{d}{sep}{h}:{mi}:{s}{frac}{z}",
    st.sampled_from(["1970", "2024", "0001", "9999", "1969", "20x4"]),
    st.sampled_from(["01", "02", "12", "13", "00", "1"]),
    st.sampled_from(["01", "28", "29", "30", "31", "32", "00"]),
    st.sampled_from(["T", " ", "t", "X"]),
    st.sampled_from(["00", "09", "23", "24", "7"]),
    st.sampled_from(["00", "59", "60"]),
    st.sampled_from(["00", "59", "60", "5"]),
    st.sampled_from(["", ".", ".1", ".12", ".123", ".1234", ".123456789", ",5"]),
    st.sampled_from(["", "Z", "z", "+02:00", "-0130", " UTC", "ZZ", " "]),
)


def _outcome(fn: Any, text: str) -> tuple[str, Any]:
    try:
        return "ok", fn(text)
    except ValueError as e:
        return "error", str(e)


@settings(max_examples=400, deadline=None)
@given(st.one_of(_near_iso, st.text(max_size=30), _digits))
def test_timestamp_fast_path_equals_general_parser(text: str) -> None:
    fast = csvread.timestamp_parser(files.parse_timestamp)
    assert _outcome(fast, text) == _outcome(files.parse_timestamp, text)
    # twice: the second call hits the date cache
    assert _outcome(fast, text) == _outcome(files.parse_timestamp, text)


def test_timestamp_fast_path_values() -> None:
    fast = csvread.timestamp_parser(files.parse_timestamp)
    assert fast("1970-01-01T00:00:00Z") == 0
    assert fast("2024-01-01T00:00:01.5Z") == 1_704_067_201_500
    assert fast("1969-12-31 23:59:59.999") == -1
    with pytest.raises(ValueError, match="not a timestamp"):
        fast("2024-02-30T00:00:00")


# -- blocks of lines -------------------------------------------------------------------------

def _lines_in(data: bytes, begin: int, end: int) -> list[bytes]:
    """The lines starting in [begin, end) of ``data`` (begin at a line start)."""
    fh = io.BytesIO(data)
    fh.seek(begin)
    out, pos = [], begin
    while end < 0 or pos < end:
        line = fh.readline()
        if not line:
            break
        pos += len(line)
        out.append(line)
    return out


@settings(max_examples=300, deadline=None)
@given(st.lists(st.binary(max_size=12).map(lambda b: b.replace(b"\n", b"")), max_size=30),
       st.booleans(), st.integers(0, 400), st.integers(-1, 400), st.integers(1, 40))
def test_line_blocks_are_the_lines_of_the_range(parts: list[bytes], last_nl: bool, start: int,
                                                end: int, block: int) -> None:
    data = b"\n".join(parts) + (b"\n" if last_nl and parts else b"")
    begin, _ = files.chunk_bounds(data, start, -1)
    old = csvread.BLOCK
    csvread.BLOCK = block  # tiny blocks: every cut position is exercised
    try:
        got = b"".join(csvread.line_blocks(io.BytesIO(data), begin, end))
    finally:
        csvread.BLOCK = old
    assert got == b"".join(_lines_in(data, begin, end))


# -- whole splits ------------------------------------------------------------------------------

def _oracle(spec: FileSource, data: bytes, path: str) -> tuple[list[Any], list[dict[str, Any]]]:
    """The plain reader: lines split on \\n, decoded one by one, one csv reader over them,
    one converter call per field."""
    o = files.csv_options(spec.options)
    convs = [files.text_converter(t, o["null_value"]) for _, t in spec.schema]
    raw = _lines_in(data, 0, -1)
    text, invalid = [], set()
    for i, r in enumerate(raw):
        try:
            text.append(r.decode("utf-8"))
        except UnicodeDecodeError:
            text.append(r.decode("utf-8", "replace"))
            invalid.add(i)
    reader = csv.reader(iter(text), delimiter=o["delimiter"], quotechar=o["quote"],
                        escapechar=o["escape"], strict=True)
    records: list[Any] = []
    bad: list[dict[str, Any]] = []
    if o["header"]:
        try:
            next(reader, None)
        except csv.Error:
            pass
    at = reader.line_num
    while True:
        try:
            fields = next(reader)
        except StopIteration:
            break
        except csv.Error as e:
            bad.append({"file": path, "row": at + 1, "error": f"not csv: {e}",
                        "text": "".join(text[at:reader.line_num]).rstrip("\r\n")})
            at = reader.line_num
            continue
        first, at = at, reader.line_num
        if not fields:
            continue
        try:
            if len(fields) != len(convs):
                raise ValueError(f"expected {len(convs)} fields, got {len(fields)}")
            if any(first <= i < at for i in invalid):
                raise ValueError("not valid UTF-8")
            records.append(tuple(c(f) for c, f in zip(convs, fields)))
        except ValueError as e:
            bad.append({"file": path, "row": first + 1, "error": str(e),
                        "text": "".join(text[first:at]).rstrip("\r\n")})
    return records, bad


_field = st.one_of(
    st.sampled_from(["", "a", "x y", "2024-01-01T00:00:01.250Z", "1970-01-01 00:00:00", "17",
                     "-3", "1.5", "true", "nope", "2024-13-01T00:00:00Z", "日本"]),
    st.builds(lambda s: '"' + s.replace('"', '""') + '"',
              st.sampled_from(["a,b", "line\nbreak", "q\"uote", "", "x\r\ny"])),
    st.sampled_from(['"unterminated', 'a"b', "\x00", "tab\there"]),
)
_line = st.one_of(st.lists(_field, min_size=1, max_size=4).map(lambda fs: ",".join(fs)),
                  st.sampled_from(["", "\r", "lone\rcr,x,1,2"]))


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_line, max_size=25), st.booleans(), st.booleans(),
       st.sampled_from([b"", b"\xff\xfe", b"\xc3"]), st.integers(0, 24), st.integers(1, 64))
def test_csv_split_reads_like_the_line_reader(lines: list[str], header: bool, crlf: bool,
                                              junk: bytes, junk_at: int, block: int) -> None:
    sep = "\r\n" if crlf else "\n"
    encoded = [ln.encode() for ln in lines]
    if junk and encoded:
        k = junk_at % len(encoded)
        encoded[k] = encoded[k] + junk
    data = sep.encode().join(encoded) + (sep.encode() if encoded else b"")
    spec = FileSource(path="/data/in.csv", format="csv",
                      schema=(("s", "string"), ("ts", "timestamp"), ("n", "int"),
                              ("d", "double")),
                      options=(("header", "true" if header else "false"),),
                      dead_letter="/data/dead")
    want_records, want_bad = _oracle(spec, data, "in.csv")
    bad = files.BadRows(spec)
    old = csvread.BLOCK
    csvread.BLOCK = block
    try:
        split = files.Split("in.csv", 0, -1)
        got = list(files.read_split(spec, split, io.BytesIO(data), bad))
    finally:
        csvread.BLOCK = old
    assert got == want_records
    assert [json.loads(x) for x in bad.lines] == want_bad
