"""A micro-batch's files from the query's checkpoint, without a Spark job.

Collecting the batch's DataFrame to learn its file paths is a Spark job that reads every
byte of every file in the JVM (the text source reads a whole file to make its row) just
to be thrown away: ~0.1-1 s a batch. Spark's file stream source has written what the batch
holds before the batch runs: the query's offsets log (``offsets/<batch>``) gives the
source's ``logOffset``, and the source's metadata log (``sources/<k>/<n>``, compacted into
``<n>.compact`` every few batches) lists the files of each of its own batches ``n`` -
numbered differently from the query's batches, hence the offsets. The batch's files are
those of source batches (previous batch's logOffset, this batch's]. Anything unexpected
(another log version, a missing entry) gives None and the caller collects the batch as
before.

The text source makes no row for an empty file, so a collected batch never lists one:
empty files are left out here too (the files' count and their round-robin assignment to
the source subtasks stay the same, and so do checkpoints written either way).
"""

from __future__ import annotations

import json
import os
from typing import Any

from flowc.executor.streaming.sources import BatchShares, file_shares

VERSION = "v1"


def logged_shares(spec: Any, spark_dir: str, batch: int, before: int, p: int,
                  skip: list[str]) -> BatchShares | None:
    """A monitored directory's (the query's one source) share of ``batch`` among its ``p``
    subtasks from the logs (``before``: the files read in earlier batches, ``skip``: a
    restored savepoint's, not read again), as ``sources.batch_shares`` makes it from a
    collect; None for another source or when the logs do not say."""
    from flowc.executor.runtime import files
    from flowc.operators import FileSource, TextLineFileSource

    if not isinstance(spec, (FileSource, TextLineFileSource)):
        return None
    logged = batch_files(spark_dir, batch)
    if logged is None:
        return None
    paths = sorted({files.local_path(x) or x for x in logged} - set(skip))
    n = len(paths)
    return BatchShares(file_shares(paths, before, p), n, f"{n:,} file{'s' if n != 1 else ''}")


def batch_files(spark_dir: str, batch: int, source: int = 0) -> list[str] | None:
    """The paths (URIs as Spark logged them) of the non-empty files query batch ``batch``
    of the file stream source numbered ``source`` reads, or None when the logs do not say."""
    top = _log_offset(spark_dir, batch, source)
    if top is None:
        return None
    low = -1 if batch == 0 else _log_offset(spark_dir, batch - 1, source)
    if low is None:
        return None
    log = os.path.join(spark_dir, "sources", str(source))
    paths: list[str] = []
    cache: dict[str, list[dict[str, object]]] = {}
    for n in range(low + 1, top + 1):
        entries = _entries(log, n, cache)
        if entries is None:
            return None
        paths += [str(e["path"]) for e in entries if e.get("batchId") == n]
    return [p for p in paths if _non_empty(p)]


def _log_offset(spark_dir: str, batch: int, source: int) -> int | None:
    try:
        with open(os.path.join(spark_dir, "offsets", str(batch)), encoding="utf-8") as fh:
            lines = fh.read().splitlines()
        if lines[0] != VERSION:
            return None
        # line 1: the batch's metadata (timestamp, conf); then one offset per source
        offset = json.loads(lines[2 + source])
        return int(offset["logOffset"])
    except (OSError, IndexError, KeyError, TypeError, ValueError):
        return None


def _entries(log: str, n: int, cache: dict[str, list[dict[str, object]]]
             ) -> list[dict[str, object]] | None:
    """The entries of source batch ``n``'s log file: its own, or the compact file holding
    it (the first ``<c>.compact`` with c >= n)."""
    for name in (str(n), f"{n}.compact"):
        if os.path.exists(os.path.join(log, name)):
            return _read(os.path.join(log, name), cache)
    try:
        compact = sorted(int(f[:-len(".compact")]) for f in os.listdir(log)
                         if f.endswith(".compact") and f[:-len(".compact")].isdigit())
    except OSError:
        return None
    c = next((c for c in compact if c >= n), None)
    return None if c is None else _read(os.path.join(log, f"{c}.compact"), cache)


def _read(path: str, cache: dict[str, list[dict[str, object]]]
          ) -> list[dict[str, object]] | None:
    if path not in cache:
        try:
            with open(path, encoding="utf-8") as fh:
                lines = fh.read().splitlines()
            if not lines or lines[0] != VERSION:
                return None
            cache[path] = [json.loads(x) for x in lines[1:] if x.strip()]
        except (OSError, ValueError):
            return None
    return cache[path]


def _non_empty(uri: str) -> bool:
    from flowc.executor.runtime import files

    path = files.local_path(uri) or uri
    try:
        return os.path.getsize(path) > 0
    except OSError:
        return True  # gone or unreadable: the reading task reports it, as Spark's would
