"""Peak memory of one columnar worker as its input grows, spilled and in memory.

Each measurement runs in a fresh Python process (what a Spark Python worker is): it
feeds one operator its subtask's input, generated chunk by chunk (nothing else holds the
input), fires it, counts the output and prints its peak RSS (``ru_maxrss``). Operators:

- ``late-window``: a STREAMING tumbling 1 s window with 5 s of allowed lateness whose
  watermark stays behind until the end of input (every window waits: the worst case);
- ``window-join`` / ``interval-join``: STREAMING joins over four channels (two a side),
  a watermark per payload, merged a range at a time (``joinspill.streaming_parts``);
- ``session``: a BATCH session window (count, count distinct, max).

    python benchmarks/spill_memory.py [--rows 250000,1000000,2000000] [--limit 16m]

Prints one line per (operator, rows, state memory): peak RSS in MB and seconds of CPU.
Not a test: the figures go to docs/executor.md ("Memory").
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from collections.abc import Iterator
from typing import Any

import numpy as np
import pyarrow as pa

KEYS = 5000
CHUNK = 10_000
LONG_MAX = (1 << 63) - 1


def _member(text: str, kind: str, mode: str) -> Any:
    from flowc.executor.arrow.plan import plan_members
    from flowc.parser import compile_source

    script = compile_source(text, "m.flow", options={"mode": mode})
    members = plan_members(script.env.get_job_graph())
    assert isinstance(members, dict), members
    (m,) = [m for ms in members.values() for m in ms if m.kind == kind]
    return m


def _records(rows: int, seed: int, schema: pa.Schema, spread: int = 0) -> Iterator[Any]:
    """Chunks of (key, n, ts) records, timestamps 1 ms apart (``spread``: that much
    out of order)."""
    from flowc.executor.arrow.convert import Chunk

    rng = np.random.default_rng(seed)
    names = np.array([f"key-{i}" for i in range(KEYS)], dtype=object)
    for i in range(0, rows, CHUNK):
        ts = np.arange(i, i + CHUNK, dtype=np.int64) * 10
        if spread:
            ts = ts - rng.integers(0, spread, CHUNK)
        batch = pa.record_batch([pa.array(names[rng.integers(0, KEYS, CHUNK)], pa.string()),
                                 pa.array(rng.integers(0, 100, CHUNK), pa.int32()),
                                 pa.array(ts, pa.timestamp("ms"))], schema=schema)
        yield Chunk(batch, pa.array(ts, pa.int64()))


def _late_window(rows: int, limit: int | None) -> int:
    from flowc.executor.arrow import convert, spill
    from flowc.executor.arrow.convert import Chunk

    m = _member("source s (k string, n int, ts timestamp) from csv 'x.csv' "
                "watermark ts - 1s;\nlet r = s | key by k | window tumbling 1s allowed "
                "lateness 5s | aggregate count(*) as c, sum(n) as sn, first(n) as f;\n"
                "r | print;\n", "window", "streaming")
    schema = convert.arrow_schema(m.in_schema)
    w = spill.streaming_window(m.spec, m.key, m.in_schema,
                               convert.arrow_schema(m.out_schema), limit)
    out = 0
    for c in _records(rows, 1, schema, spread=2000):
        got = w.add(c)
        out += got.num_rows if got is not None else 0
    e = convert.empty(schema)
    out += w.add(Chunk(e.batch, e.ts, (np.zeros(1, np.int64), np.asarray([LONG_MAX])))).num_rows
    if isinstance(w, spill.Spilling):  # spilled: the final watermark fires range by range
        out += sum(c.num_rows for c in w.fired())
    return out


def _join(rows: int, limit: int | None, kind: str) -> int:
    from flowc.executor.arrow import convert, joins
    from flowc.executor.arrow.joinspill import SpillingJoin, streaming_parts

    window = "join b on k window tumbling 5s" if kind == "window-join" else \
        "interval join b on a.k = b.k between -1s and 1s"
    m = _member("source a (k string, n int, ts timestamp) from csv 'a.csv' watermark ts - 1s;\n"
                "source b (k string, n int, ts timestamp) from csv 'b.csv' watermark ts - 1s;\n"
                f"let r = a | {window};\nr | print;\n",
                "window_join" if kind == "window-join" else "interval_join", "streaming")
    schemas = tuple(convert.arrow_schema(s) for s in m.spec.schemas)
    join = joins.compile_join(m.spec, convert.arrow_schema(m.out_schema), True)

    def channel(c: int) -> Iterator[tuple[bytes, Any, Any]]:
        for chunk in _records(rows // 4, 10 + c, schemas[c % 2], spread=500):
            ts = chunk.ts.to_numpy()
            yield convert.to_ipc(chunk), [chunk.num_rows], [int(ts.max()) - 1000]
        yield convert.to_ipc(convert.empty(schemas[c % 2])), [0], [LONG_MAX]
    parts = streaming_parts([(c % 2, schemas[c % 2], channel(c)) for c in range(4)])
    if limit is None:  # the in-memory join: all input at once
        whole = joins.gather([(c % 2, schemas[c % 2], list(channel(c))) for c in range(4)],
                             True)
        got = join.run(whole)
        return 0 if got is None else got.num_rows
    sj = SpillingJoin(join, schemas, limit)  # type: ignore[arg-type]
    for p in parts:
        sj.add(p)
    return sum(c.num_rows for c in sj.fired())


def _session(rows: int, limit: int | None) -> int:
    from flowc.executor.arrow import convert
    from flowc.executor.arrow.sessions import session_window

    m = _member("source s (k string, n int, ts timestamp) from csv 'x.csv' "
                "watermark ts - 1s;\nlet r = s | key by k | window session gap 2s "
                "| aggregate count(*) as c, count(distinct n) as dn, max(n) as mx;\n"
                "r | print;\n", "session", "batch")
    schema = convert.arrow_schema(m.in_schema)
    w = session_window(m.spec, m.key, m.in_schema, convert.arrow_schema(m.out_schema),
                       False, limit)
    for c in _records(rows, 3, schema):
        w.add(c)
    fired = w.fired() if hasattr(w, "fired") else iter([w.fire()])
    return sum(c.num_rows for c in fired if c is not None)


def measure(kind: str, rows: int, limit: int | None) -> dict[str, Any]:
    """In this process: run the operator, report its output rows, peak RSS and CPU."""
    import gc

    gc.freeze()  # as the workers run (collection paused)
    start = time.process_time()
    if kind == "late-window":
        out = _late_window(rows, limit)
    elif kind == "session":
        out = _session(rows, limit)
    else:
        out = _join(rows, limit, kind)
    return {"kind": kind, "rows": rows, "limit": limit, "out": out,
            "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024,
            "cpu": round(time.process_time() - start, 2)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rows", default="250000,1000000,2000000")
    ap.add_argument("--limit", default="16m")
    ap.add_argument("--kind", default="late-window,window-join,interval-join,session")
    ap.add_argument("--one", help=argparse.SUPPRESS)  # kind:rows:limit, in a child
    args = ap.parse_args()
    if args.one:
        kind, rows, limit = args.one.split(":")
        print(json.dumps(measure(kind, int(rows), None if limit == "-" else int(limit))))
        return
    from flowc.executor.arrow.spill import state_memory

    limit = state_memory({"flowc.executor.state-memory": args.limit})
    env = dict(os.environ)
    for kind in args.kind.split(","):
        for rows in (int(r) for r in args.rows.split(",")):
            for lim in (limit, None):
                r = subprocess.run([sys.executable, __file__, "--one",
                                    f"{kind}:{rows}:{'-' if lim is None else lim}"],
                                   capture_output=True, text=True, env=env, check=True)
                got = json.loads(r.stdout.strip().splitlines()[-1])
                mem = "in memory" if lim is None else f"limit {args.limit}"
                print(f"{kind:<14}{rows:>9} rows  {mem:<12} peak RSS {got['peak_mb']:>5} MB"
                      f"  CPU {got['cpu']:6.2f} s  ({got['out']} results)", flush=True)


if __name__ == "__main__":
    main()
