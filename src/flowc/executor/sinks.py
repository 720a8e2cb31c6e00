"""Sink helpers shared by both executors: print formatting, the columns and types a file
sink writes, row shaping and checking, and staged (atomic) commits.

A file sink writes the schema of its input stream when flowc knows it (.flow and SQL
streams, or a Python stream typed with a ``flowc.types.Schema`` or declared PyFlink
``Types``): the sink's columns (else the schema's names, ROW_NAMED's names, or ``f0``,
``f1``, ...) with the schema's types; with ``Types`` a parquet file has their exact Arrow
types (``flowc.common.arrow_types``: INT int32, FLOAT float32, ...). Otherwise the types are inferred from all
records of the stream (``Inferred``): ints and doubles mixed give double, a column of
nulls only is string, anything else mixed is an error - a value is never silently
dropped. Timestamps are written as epoch milliseconds in csv / json and as parquet
``TIMESTAMP(MILLIS, UTC)``, a SQL DATE column of a parquet sink (partitioned or not) as
``date32`` (column type ``date``), as Flink; the file sources read all back as the same
schema.
"""

from __future__ import annotations

import datetime as dt
import math
import os
import shutil
import socket
import time
import uuid
from collections.abc import Callable, Iterable
from decimal import Decimal
from typing import Any

from flowc import decimals
from flowc.errors import ExecutionError, UnsupportedError
from flowc.executor.runtime.files import LONG_MAX, LONG_MIN, local_path, parse_type
from flowc.operators import FileSink, PrintSink, RowFormatFileSink
from flowc.rowkind import row_text
from flowc.types import Schema

Columns = list[tuple[str, str]]  # (column name, type name)
SINK_FORMATS = ("csv", "json", "jsonl", "json-lines", "parquet")
SINK_OPTIONS = {"csv": ("header", "delimiter", "sep", "quote", "null_value", "nullValue")}


def sink_path(spec: FileSink | RowFormatFileSink) -> str:
    """Where a file sink writes: a local path (a ``file:`` URI counts as one)."""
    path = local_path(spec.path)
    if path is None:
        raise UnsupportedError(f"file sinks write to local paths only, not {spec.path}")
    return path


def check_sink(spec: FileSink | RowFormatFileSink) -> None:
    """Fail before the job runs for a sink format, option or path flowc cannot write."""
    if isinstance(spec, RowFormatFileSink):
        from flowc.executor.runtime.row_files import check_row_sink

        check_row_sink(spec)
        sink_path(spec)
        return
    if spec.format not in SINK_FORMATS:
        raise UnsupportedError(f"sink format '{spec.format}' (supported: csv, json, parquet)")
    known = SINK_OPTIONS.get(spec.format, ())
    for k, _ in spec.options:
        if k not in known:
            raise UnsupportedError(f"unknown {spec.format} sink option '{k}' for {spec.path} "
                                   f"(known: {', '.join(known) or 'none'})")
    sink_path(spec)


def print_prefix(spec: PrintSink, subtask: int, parallelism: int) -> str:
    """Flink's PrintSinkOutputWriter prefix: ``id:n> `` / ``n> `` / ``id> `` / nothing."""
    prefix = spec.sink_identifier or ""
    if parallelism > 1:
        prefix += (":" if prefix else "") + str(subtask + 1)
    return prefix + "> " if prefix else ""


def print_text(spec: PrintSink, value: Any) -> str:
    """A printed record: a .flow / SQL row (a stream with a flowc Schema) as Flink's print
    connector prints a table row (``+I[a, 1]``); its Java ``toString()`` under a declared
    PyFlink type; else (as PyFlink prints pickled records) Python's ``str()``."""
    from flowc.common.typeinfo import TypeInformation

    if isinstance(spec.record_type, Schema):
        return row_text(value, tuple(t.text_kind for t in spec.record_type.types))
    if isinstance(spec.record_type, TypeInformation):
        return spec.record_type.java_str(value)
    return value if isinstance(value, str) else str(value)


def declared_columns(spec: FileSink, declared: Any) -> Columns | None:
    """The sink's (column, type) pairs from its input stream's schema or declared Types, or
    None (no schema: the types are inferred)."""
    from flowc.common.typeinfo import TypeInformation
    from flowc.executor.sink_types import typed_columns, writes_declared
    from flowc.types import Schema

    if isinstance(declared, TypeInformation):
        return typed_columns(spec, declared) if writes_declared(declared) else None
    if not isinstance(declared, Schema):
        return None
    cols = list(spec.columns) or list(declared.names)
    if len(cols) != len(declared):
        raise ExecutionError(f"sink {spec.path}: {len(cols)} columns declared but the stream "
                             f"has {len(declared)} fields {declared}")
    # Flink's parquet writer stores a DATE as date32 (INT32 DATE): the writers' "date"; a
    # partition column is no file column (its directory text is the timestamp's, as before)
    dates = spec.format == "parquet"
    return [(c, "date" if dates and t.flavor == "date" and not t.is_array
             and c not in spec.partition_by else str(t)) for c, t in zip(cols, declared.types)]


def declared_arrow_schema(spec: FileSink, declared: Any) -> Any:
    """The exact Arrow schema of a parquet sink of a stream with declared Types, or None."""
    from flowc.executor.sink_types import arrow_schema_of

    return arrow_schema_of(spec, declared)


def narrow_ints(path: str, schema: Any) -> Callable[[tuple[Any, ...]], tuple[Any, ...]]:
    from flowc.executor.sink_types import int_width_check

    return int_width_check(path, schema)


def shaper(columns: list[str] | None) -> Callable[[Any], tuple[Any, ...]]:
    """A record -> its fields in column order: a tuple / list as it is, a dict by column
    name (every column, no other key), anything else as one field."""
    from flowc.common.types import Row

    def shape(value: Any) -> tuple[Any, ...]:
        if isinstance(value, tuple):
            return value
        if isinstance(value, (list, Row)):
            return tuple(value)
        if isinstance(value, dict):
            if columns is None:
                return tuple(value.values())
            if len(value) != len(columns) or any(c not in value for c in columns):
                raise ExecutionError(f"a record with the fields {', '.join(map(str, value))} "
                                     f"does not match the sink's columns {', '.join(columns)}")
            return tuple(value[c] for c in columns)
        return (value,)
    return shape


# -- checking records against the columns' types ---------------------------------------------

def _check_string(v: Any) -> Any:
    if not isinstance(v, str):
        raise ValueError(f"not a string: {v!r}")
    return v


def _check_int(v: Any) -> Any:
    if isinstance(v, bool) or not isinstance(v, int):
        raise ValueError(f"not an int: {v!r}")
    if not LONG_MIN <= v <= LONG_MAX:
        raise ValueError(f"{v} is out of range for int (64-bit)")
    return v


def _check_double(v: Any) -> Any:
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise ValueError(f"not a double: {v!r}")
    return float(v)


def _check_bool(v: Any) -> Any:
    if not isinstance(v, bool):
        raise ValueError(f"not a bool: {v!r}")
    return v


_EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc)


def _check_timestamp(v: Any) -> Any:
    if isinstance(v, dt.datetime):  # SQL_TIMESTAMP: naive means UTC, as the sources read
        d = v if v.tzinfo is not None else v.replace(tzinfo=dt.timezone.utc)
        return (d - _EPOCH) // dt.timedelta(milliseconds=1)
    if isinstance(v, bool) or not isinstance(v, int):
        raise ValueError(f"not a timestamp (epoch milliseconds): {v!r}")
    return _check_int(v)


_CHECKS = {"string": _check_string, "int": _check_int, "double": _check_double,
           "bool": _check_bool, "timestamp": _check_timestamp, "date": _check_timestamp}


def _check_decimal(precision: int, scale: int) -> Callable[[Any], Any]:
    def check(v: Any) -> Any:
        if isinstance(v, bool) or not isinstance(v, (Decimal, int, float)):
            raise ValueError(f"not a decimal: {v!r}")
        return decimals.to_decimal(v, precision, scale)
    return check


def _checker(type_name: str) -> Callable[[Any], Any]:
    depth, scalar = parse_type(type_name)
    ps = decimals.parse_name(scalar)
    base = _CHECKS[scalar] if ps is None else _check_decimal(*ps)

    def nullable(f: Callable[[Any], Any]) -> Callable[[Any], Any]:
        return lambda v: None if v is None else f(v)

    check = nullable(base)
    for _ in range(depth):
        check = nullable(_array_of(check))
    return check


def _array_of(elem: Callable[[Any], Any]) -> Callable[[Any], Any]:
    def check(v: Any) -> list[Any]:
        if not isinstance(v, (list, tuple)):
            raise ValueError(f"not an array: {v!r}")
        return [elem(x) for x in v]
    return check


def row_checker(path: str, columns: Columns, shape: Callable[[Any], tuple[Any, ...]]
                ) -> Callable[[Any], tuple[Any, ...]]:
    """A record -> a row of the columns' types (ints widened to double), or an
    ExecutionError naming the sink, the column and the value."""
    checks = [_checker(t) for _, t in columns]
    names = [c for c, _ in columns]
    width = len(columns)

    def check(value: Any) -> tuple[Any, ...]:
        row = shape(value)
        if len(row) != width:
            raise ExecutionError(f"sink {path}: a record has {len(row)} fields but the sink "
                                 f"writes {width} columns ({', '.join(names)}): {value!r}")
        try:
            return tuple([c(v) for c, v in zip(checks, row)])
        except ValueError:
            for name, c, v in zip(names, checks, row):
                try:
                    c(v)
                except ValueError as e:
                    raise ExecutionError(f"sink {path}: column '{name}': {e}") from None
            raise
    return check


# -- inferring the columns' types when the stream has no schema ---------------------------------

class Inferred:
    """What the records of a stream without a schema hold: field counts, dict keys, and
    per field the (array depth, Python kind) pairs seen. Partial results (one per Spark
    partition) merge; ``columns`` resolves them or fails naming the conflict."""

    def __init__(self, columns: tuple[str, ...] = ()) -> None:
        self.declared = tuple(columns)
        self.widths: set[int] = set()
        self.keys: tuple[str, ...] | None = None
        self.kinds: list[set[tuple[int, str]]] = []

    def add(self, value: Any) -> None:
        if isinstance(value, dict):
            if self.keys is None:
                self.keys = self.declared or tuple(str(k) for k in value)
            row = tuple(value.get(k) for k in self.keys)
        elif isinstance(value, (tuple, list)):
            row = tuple(value)
        else:
            row = (value,)
        self.widths.add(len(row))
        while len(self.kinds) < len(row):
            self.kinds.append(set())
        for i, v in enumerate(row):
            _kinds_of(v, self.kinds[i])

    def merge(self, other: Inferred, spec: FileSink) -> Inferred:
        if self.keys is not None and other.keys is not None and self.keys != other.keys:
            raise ExecutionError(f"sink {spec.path}: dict records with different keys "
                                 f"({', '.join(self.keys)} / {', '.join(other.keys)}); give "
                                 "the sink its columns")
        self.widths |= other.widths
        self.keys = self.keys if self.keys is not None else other.keys
        while len(self.kinds) < len(other.kinds):
            self.kinds.append(set())
        for i, k in enumerate(other.kinds):
            self.kinds[i] |= k
        return self

    def columns(self, spec: FileSink) -> Columns:
        if len(self.widths) > 1:
            raise ExecutionError(f"sink {spec.path}: records have different numbers of fields "
                                 f"({', '.join(map(str, sorted(self.widths)))})")
        width = next(iter(self.widths)) if self.widths else len(spec.columns)
        names = list(spec.columns) or list(self.keys or ()) or [f"f{i}" for i in range(width)]
        if len(names) != width:
            raise ExecutionError(f"sink {spec.path}: {len(names)} columns declared but records "
                                 f"have {width} fields")
        kinds = self.kinds + [set() for _ in range(width - len(self.kinds))]
        return [(n, _resolve(spec.path, n, k)) for n, k in zip(names, kinds)]


_PY_KINDS = {bool: "bool", int: "int", float: "double", str: "string"}


def _kinds_of(value: Any, out: set[tuple[int, str]]) -> None:
    stack = [(0, value)]
    while stack:
        depth, v = stack.pop()
        if v is None:
            out.add((depth, "null"))
        elif isinstance(v, (list, tuple)):
            if not v:
                out.add((depth + 1, "null"))
            stack.extend((depth + 1, x) for x in v)
        else:
            out.add((depth, _PY_KINDS.get(type(v), f"?{type(v).__name__}")))


def _resolve(path: str, name: str, kinds: set[tuple[int, str]]) -> str:
    real = {(d, k) for d, k in kinds if k != "null"}
    odd = sorted(k[1:] for _, k in real if k.startswith("?"))
    if odd:
        raise ExecutionError(f"sink {path}: column '{name}' holds {odd[0]} values, which a "
                             "file cannot hold (use str, int, float, bool or lists of them)")
    if not real:
        depth = max((d for d, _ in kinds), default=0)
        return "array<" * depth + "string" + ">" * depth
    depths = {d for d, _ in real}
    scalars = {k for _, k in real}
    if scalars == {"int", "double"}:
        scalars = {"double"}
    if len(depths) > 1 or len(scalars) > 1:
        shown = sorted("array<" * d + k + ">" * d for d, k in real)
        raise ExecutionError(f"sink {path}: column '{name}' holds values of different types "
                             f"({', '.join(shown)}); give the stream a schema or convert them")
    depth, scalar = next(iter(depths)), next(iter(scalars))
    return "array<" * depth + scalar + ">" * depth


def infer_columns(spec: FileSink, values: Iterable[Any]) -> Columns:
    inf = Inferred(tuple(spec.columns))
    for v in values:
        inf.add(v)
    return inf.columns(spec)


# -- staged commits -------------------------------------------------------------------------------

# A temp dir is named ``.<target>.flowc-tmp-<host>-<pid>-<random>`` so a later run can tell
# whether the process that made it is gone (killed before it could clean up).
_TMP = ".flowc-tmp-"
STALE_AFTER = 24 * 3600  # seconds; for temp dirs of other hosts or of older flowc versions


def temp_path(final: str) -> str:
    """A new temp dir name beside ``final``; stale ones of the same target (their process
    is gone) are removed first."""
    parent = os.path.dirname(os.path.abspath(final)) or "."
    base = os.path.basename(final)
    remove_stale_temps(parent, base)
    return os.path.join(parent, f".{base}{_TMP}{socket.gethostname()}-{os.getpid()}-"
                                f"{uuid.uuid4().hex[:8]}")


def remove_stale_temps(parent: str, base: str) -> list[str]:
    """Remove the temp dirs of target ``base`` in ``parent`` whose owner is gone: made on
    this host by a process that no longer runs, or (another host, an older naming) not
    modified for ``STALE_AFTER`` seconds. A running job's temp dirs are never touched."""
    prefix = f".{base}{_TMP}"
    try:
        names = [n for n in os.listdir(parent) if n.startswith(prefix)]
    except OSError:
        return []
    removed = []
    for name in names:
        path = os.path.join(parent, name)
        if not _owner_alive(name[len(prefix):].removesuffix("-old"), path):
            shutil.rmtree(path, ignore_errors=True)
            removed.append(path)
    return removed


def _owner_alive(tag: str, path: str) -> bool:
    parts = tag.rsplit("-", 2)
    if len(parts) == 3 and parts[0] == socket.gethostname() and parts[1].isdigit():
        try:
            os.kill(int(parts[1]), 0)
        except ProcessLookupError:
            return False
        except OSError:  # exists, owned by someone else
            return True
        return True
    try:
        return time.time() - os.path.getmtime(path) < STALE_AFTER
    except OSError:
        return True  # vanished meanwhile: nothing to do


def commit(tmp: str, final: str) -> None:
    """Replace ``final`` by the completed ``tmp`` directory (a rename: atomic on one file
    system, so readers see the old output or the new one, never a partial one)."""
    if os.path.exists(final):
        old = temp_path(final) + "-old"
        os.rename(final, old)
        try:
            os.rename(tmp, final)
        except BaseException:
            os.rename(old, final)  # the earlier output stays in place
            raise
        shutil.rmtree(old, ignore_errors=True)
    else:
        os.rename(tmp, final)


def abort(tmp: str) -> None:
    shutil.rmtree(tmp, ignore_errors=True)


class Staged:
    """Outputs written to temp dirs during a job and renamed into place only once the
    whole job succeeded (every sink and dead-letter file), else removed. The renames happen
    one output after another: if one fails, the outputs renamed before it keep their new
    contents, it and the later ones their earlier contents (not atomic across sinks)."""

    def __init__(self) -> None:
        self.items: list[tuple[str, str]] = []  # (temp dir, final path)

    def add(self, tmp: str, final: str) -> None:
        self.items.append((tmp, final))

    def commit(self) -> None:
        for tmp, final in self.items:
            os.makedirs(os.path.dirname(os.path.abspath(final)) or ".", exist_ok=True)
            commit(tmp, final)
        self.items = []

    def abort(self) -> None:
        for tmp, _ in self.items:
            abort(tmp)
        self.items = []


def stage_lines(final: str, lines: list[str], name: str = "part-00000.json") -> str:
    """A directory holding one text file of ``lines`` (dead letters), not yet committed."""
    tmp = temp_path(final)
    try:
        os.makedirs(tmp)
        with open(os.path.join(tmp, name), "w", encoding="utf-8") as fh:
            fh.write("".join(line + "\n" for line in lines))
    except OSError as e:  # a full disk, a quota, permissions: no partial temp dir stays
        abort(tmp)
        raise ExecutionError(f"writing the dead letters to {final} failed: "
                             f"{e.strerror or e}") from None
    return tmp


# -- the reference executor's writers --------------------------------------------------------------

def stage_row_format(spec: RowFormatFileSink, record_type: Any,
                     parts: Iterable[Iterable[Any]]) -> str:
    """PyFlink's row-format FileSink: each subtask's records (in subtask order) written as
    Flink's FileWriter writes them (runtime/row_files.py) into a temp dir."""
    from flowc.executor.runtime.row_files import encoder_for, write_subtask

    tmp = temp_path(sink_path(spec))
    os.makedirs(tmp)
    try:
        encode = encoder_for(record_type)
        for values in parts:
            write_subtask(spec, tmp, encode, values)
    except OSError as e:
        abort(tmp)
        raise ExecutionError(f"writing the file sink {spec.path} failed: "
                             f"{e.strerror or e}") from None
    except BaseException:
        abort(tmp)
        raise
    return tmp


def csv_writer_options(spec: FileSink) -> dict[str, Any]:
    opts = dict(spec.options)
    return {"header": opts.get("header", "true").lower() == "true",
            "delimiter": opts.get("delimiter", opts.get("sep", ",")),
            "quote": opts.get("quote", '"'),
            "null_value": opts.get("null_value", opts.get("nullValue", ""))}


def _csv_text(v: Any, null_value: str) -> Any:
    if v is None:
        return null_value
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float) and not math.isfinite(v):
        return "NaN" if v != v else ("Infinity" if v > 0 else "-Infinity")
    if isinstance(v, Decimal):  # with its scale, no exponent (BigDecimal.toPlainString)
        return decimals.to_text(v)
    return v


def _json_value(v: Any) -> Any:
    """json.dumps' fallback: a DECIMAL as a JSON number (through a double: 17 digits)."""
    if isinstance(v, Decimal):
        return float(v)
    raise TypeError(f"{type(v).__name__} cannot be written as JSON")


def stage_python(spec: FileSink, columns: Columns, rows: list[tuple[Any, ...]],
                 schema: Any = None) -> str:
    """The reference executor's writer: one part file of checked rows in a temp dir;
    ``schema`` (declared Types) gives parquet its exact Arrow types."""
    if spec.partition_by:  # one directory per partition (flowc.executor.partition_paths)
        from flowc.executor.partition_paths import stage_partitioned
        return stage_partitioned(spec, columns, rows, stage_python)
    import csv
    import json

    tmp = temp_path(sink_path(spec))
    os.makedirs(tmp)
    try:
        cols = [c for c, _ in columns]
        fmt = spec.format
        if not cols:
            return tmp
        if fmt == "csv":
            o = csv_writer_options(spec)
            with open(os.path.join(tmp, "part-00000.csv"), "w", newline="",
                      encoding="utf-8") as fh:
                w = csv.writer(fh, delimiter=o["delimiter"], quotechar=o["quote"],
                               lineterminator="\n")
                if o["header"]:
                    w.writerow(cols)
                nv = o["null_value"]
                for r in rows:
                    if len(r) == 1 and r[0] is None:
                        fh.write(nv + "\n")  # csv would quote a lone empty field: no null
                    else:
                        w.writerow([_csv_text(v, nv) for v in r])
        elif fmt in ("json", "jsonl", "json-lines"):
            with open(os.path.join(tmp, "part-00000.json"), "w", encoding="utf-8") as fh:
                for r in rows:
                    # Spark's json writer: compact, UTF-8 text unescaped.
                    fh.write(json.dumps(dict(zip(cols, r)), separators=(",", ":"),
                                        ensure_ascii=False, default=_json_value) + "\n")
        elif fmt == "parquet":
            import pyarrow as pa
            import pyarrow.parquet as pq

            if schema is None:
                schema = pa.schema([pa.field(c, arrow_type(t)) for c, t in columns])
            table = pa.table([_arrow_array([r[i] for r in rows], f.type)
                              for i, f in enumerate(schema)], schema=schema)
            pq.write_table(table, os.path.join(tmp, "part-00000.parquet"))
        else:
            raise ExecutionError(f"unknown sink format '{fmt}'")
        return tmp
    except BaseException:
        abort(tmp)
        raise


def _arrow_array(values: list[Any], t: Any) -> Any:
    """A column as Arrow: timestamps (epoch ms after the checks) via int64 so every unit
    and zone takes them as the same instant."""
    import pyarrow as pa

    if pa.types.is_timestamp(t) or pa.types.is_date32(t):
        return to_arrow(pa.array(values, type=pa.int64()), t)
    if pa.types.is_list(t) and pa.types.is_timestamp(t.value_type):
        return pa.array(values, type=pa.list_(pa.int64())).cast(t)
    return pa.array(values, type=t)


def to_arrow(arr: Any, t: Any) -> Any:
    """``arr`` cast to the parquet column type ``t``; epoch milliseconds become a DATE's
    date32 through a UTC timestamp (a DATE's value is its day's midnight)."""
    import pyarrow as pa

    if pa.types.is_date32(t) and pa.types.is_integer(arr.type):
        return arr.cast(pa.int64()).cast(pa.timestamp("ms", tz="UTC")).cast(t)
    return arr.cast(t)


def arrow_type(type_name: str) -> Any:
    import pyarrow as pa

    depth, scalar = parse_type(type_name)
    ps = decimals.parse_name(scalar)
    t = pa.decimal128(*ps) if ps is not None else {
        "string": pa.string(), "int": pa.int64(), "double": pa.float64(), "bool": pa.bool_(),
        "timestamp": pa.timestamp("ms", tz="UTC"), "date": pa.date32()}[scalar]
    for _ in range(depth):
        t = pa.list_(t)
    return t
