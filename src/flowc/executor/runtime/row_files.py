"""PyFlink's ``FileSink.for_row_format(path, Encoder.simple_string_encoder())`` writer, as
Flink's ``FileWriter`` / ``FileWriterBucket`` write (flink-connector-files):

* a record's bucket is ``BasePathBucketAssigner``'s ``""`` or ``DateTimeBucketAssigner``'s
  processing time formatted with its pattern (default ``yyyy-MM-dd--HH``, system time zone);
* each (subtask, bucket) has a random uuid and a part counter from 0; its part files are
  ``<prefix>-<uuid>-<counter><suffix>``;
* ``SimpleStringEncoder`` writes the record's ``toString()`` and ``\\n``;
* ``DefaultRollingPolicy`` rolls the open part file before a record when it already holds
  more than ``part_size`` bytes, and on the bucket check (every ``bucket_check_interval``
  of processing time) when it is older than ``rollover_interval`` or idle for
  ``inactivity_interval``; ``OnCheckpointRollingPolicy`` rolls only at the end of input.

Flink writes hidden in-progress files and renames them on commit; flowc writes the final
names into the job's temp dir, which the executor renames into place once the job
succeeded (executor/sinks.py, ``Staged``). Processing time is the runtime clock
(``clock.py``).
"""

from __future__ import annotations

import datetime as dt
import os
import re
import uuid
from collections.abc import Callable, Iterable
from typing import IO, Any

from flowc.errors import ApiError
from flowc.executor.runtime.clock import Clock, processing_clock
from flowc.operators import RowFormatFileSink

# DateTimeFormatter letters flowc formats (the ones bucket patterns use), as strftime.
_PATTERN_LETTERS = {"yyyy": "%Y", "uuuu": "%Y", "yy": "%y", "MM": "%m", "dd": "%d",
                    "HH": "%H", "mm": "%M", "ss": "%S", "SSS": "{ms}"}
_TOKEN = re.compile(r"'([^']*)'|([A-Za-z])\2*|([^A-Za-z']+)")


def _error(message: str) -> ApiError:
    from flowc.api.environment import user_call_span

    return ApiError(message, user_call_span())


def strftime_pattern(pattern: str) -> str:
    """A ``java.time.format.DateTimeFormatter`` pattern as an strftime format; an
    ApiError for letters flowc does not format."""
    out = []
    pos = 0
    while pos < len(pattern):
        m = _TOKEN.match(pattern, pos)
        if m is None:
            raise _error(f"unterminated quote in the date-time bucket pattern '{pattern}'")
        quoted, letters, literal = m.group(1), m.group(0) if m.group(2) else None, m.group(3)
        if quoted is not None:
            out.append((quoted or "'").replace("%", "%%"))
        elif letters is not None:
            if letters not in _PATTERN_LETTERS:
                raise _error(f"flowc's date-time bucket assigner formats "
                               f"{', '.join(_PATTERN_LETTERS)} and quoted text, not "
                               f"'{letters}' (in '{pattern}')")
            out.append(_PATTERN_LETTERS[letters])
        else:
            out.append(literal.replace("%", "%%"))
        pos = m.end()
    return "".join(out)


def bucket_of(spec: RowFormatFileSink) -> Callable[[int], str]:
    """Processing time (epoch ms) -> bucket id (a relative directory, "" for the base)."""
    if spec.bucket_format is None:
        return lambda now: ""
    fmt = strftime_pattern(spec.bucket_format)
    zone: dt.tzinfo | None = None
    if spec.bucket_timezone is not None:
        zone = _zone(spec.bucket_timezone)

    def bucket(now: int) -> str:
        t = dt.datetime.fromtimestamp(now / 1000, tz=zone) if zone is not None \
            else dt.datetime.fromtimestamp(now / 1000)
        return t.strftime(fmt).replace("{ms}", f"{now % 1000:03d}")
    return bucket


def _zone(zone_id: str) -> dt.tzinfo:
    from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

    m = re.fullmatch(r"(?:GMT|UTC)?([+-])(\d{1,2}):?(\d{2})?", zone_id)
    if m:
        sign = -1 if m.group(1) == "-" else 1
        return dt.timezone(sign * dt.timedelta(hours=int(m.group(2)),
                                               minutes=int(m.group(3) or 0)))
    if zone_id in ("UTC", "GMT", "Z"):
        return dt.timezone.utc
    try:
        return ZoneInfo(zone_id)
    except (ZoneInfoNotFoundError, ValueError):
        raise _error(f"unknown time zone '{zone_id}' for the date-time bucket "
                       "assigner") from None


def check_row_sink(spec: RowFormatFileSink) -> None:
    """Fail before the job runs for a bucket pattern or zone flowc cannot use."""
    bucket_of(spec)


class _Part:
    def __init__(self, fh: IO[bytes], now: int) -> None:
        self.fh = fh
        self.size = 0
        self.created = now
        self.last_write = now


class _Bucket:
    def __init__(self, directory: str) -> None:
        self.directory = directory
        self.uid = str(uuid.uuid4())
        self.counter = 0
        self.part: _Part | None = None

    def close_part(self) -> None:
        if self.part is not None:
            self.part.fh.close()
            self.part = None


class RowFileWriter:
    """One sink subtask's writer into the temp dir ``root``."""

    def __init__(self, spec: RowFormatFileSink, root: str, encode: Callable[[Any], str],
                 clock: Clock | None = None) -> None:
        self.spec = spec
        self.root = root
        self.encode = encode
        self.clock = clock or processing_clock()
        self.bucket_id = bucket_of(spec)
        self.buckets: dict[str, _Bucket] = {}
        self.next_check = self.clock.now_ms() + spec.bucket_check_interval

    def write(self, value: Any) -> None:
        spec = self.spec
        now = self.clock.now_ms()
        if now >= self.next_check:
            self._on_processing_time(now)
        bid = self.bucket_id(now)
        bucket = self.buckets.get(bid)
        if bucket is None:
            bucket = self.buckets[bid] = _Bucket(os.path.join(self.root, bid))
        part = bucket.part
        if part is None or (not spec.on_checkpoint and part.size > spec.part_size):
            part = self._roll(bucket, now)
        data = (self.encode(value) + "\n").encode("utf-8")
        part.fh.write(data)
        part.size += len(data)
        part.last_write = now

    def _roll(self, bucket: _Bucket, now: int) -> _Part:
        bucket.close_part()
        os.makedirs(bucket.directory, exist_ok=True)
        name = f"{self.spec.part_prefix}-{bucket.uid}-{bucket.counter}{self.spec.part_suffix}"
        bucket.counter += 1
        bucket.part = _Part(open(os.path.join(bucket.directory, name), "wb"), now)
        return bucket.part

    def _on_processing_time(self, now: int) -> None:
        """Flink's bucket check: roll parts that are too old or idle (DefaultRollingPolicy)."""
        spec = self.spec
        self.next_check = now + spec.bucket_check_interval
        if spec.on_checkpoint:
            return
        for bucket in self.buckets.values():
            part = bucket.part
            if part is not None and (now - part.created >= spec.rollover_interval
                                     or now - part.last_write >= spec.inactivity_interval):
                bucket.close_part()

    def close(self) -> None:
        for bucket in self.buckets.values():
            bucket.close_part()


def write_subtask(spec: RowFormatFileSink, root: str, encode: Callable[[Any], str],
                  values: Iterable[Any]) -> int:
    """Write one subtask's records; returns how many."""
    writer = RowFileWriter(spec, root, encode)
    n = 0
    try:
        for v in values:
            writer.write(v)
            n += 1
    finally:
        writer.close()
    return n


def encoder_for(record_type: Any) -> Callable[[Any], str]:
    """``SimpleStringEncoder``'s text of a record: the Java ``toString()`` of what PyFlink
    hands Java for the declared type; an untyped (pickled) record is written with Python's
    ``str()`` (Flink would write the ``byte[]``'s identity, docs/flink-differences.md)."""
    from flowc.common.typeinfo import TypeInformation

    if isinstance(record_type, TypeInformation):
        return record_type.java_string
    return lambda v: v if isinstance(v, str) else str(v)
