"""REPL latency: the second query of a warm session (Spark already started) on small data.

    python benchmarks/repl.py [--rows N] [--repeat K]

Prints the first query's time (includes Spark start-up) and the best/median of the warm
queries. The goal is well under a second for small data; nothing is asserted.
"""

from __future__ import annotations

import argparse
import io
import os
import random
import re
import statistics
import tempfile
import time

from flowc.repl import Session


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=1000)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--master", default="local[2]")
    args = ap.parse_args()
    session = Session(master=args.master, out=io.StringIO())
    path = os.path.join(tempfile.mkdtemp(prefix="flowc-bench-"), "load.csv")
    rnd = random.Random(7)
    with open(path, "w", encoding="utf-8") as fh:
        fh.write("id,user_id,amount,ts\n")
        for i in range(args.rows):
            ts = f"2024-05-01 00:{i // 600 % 60:02d}:{i // 10 % 60:02d}.{i % 10}00"
            fh.write(f"{i},{rnd.randint(1, 10)},{rnd.random() * 100:.2f},{ts}\n")
    session.execute(
        "CREATE TABLE load (id BIGINT, user_id BIGINT, amount DOUBLE, ts TIMESTAMP(3), "
        "WATERMARK FOR ts AS ts - INTERVAL '1' SECOND) WITH ('connector' = 'filesystem', "
        f"'path' = '{path}', 'format' = 'csv');")
    queries = [
        "SELECT user_id, COUNT(*) AS n, SUM(amount) AS total FROM load GROUP BY user_id;",
        "SELECT user_id, window_start, COUNT(*) AS n, SUM(amount) AS total FROM TABLE("
        "TUMBLE(TABLE load, DESCRIPTOR(ts), INTERVAL '10' SECOND)) "
        "GROUP BY window_start, window_end, user_id;",
        "SELECT user_id, HOP_END(ts, INTERVAL '5' SECOND, INTERVAL '30' SECOND) AS we, "
        "MAX(amount) AS top FROM load GROUP BY HOP(ts, INTERVAL '5' SECOND, "
        "INTERVAL '30' SECOND), user_id;",
        "load | key by user_id | window session gap 2s | aggregate count(*) as n;",
        "load | filter amount > 10 | map user_id, amount * 2 as a2;",
    ]
    t0 = time.perf_counter()
    session.execute(queries[0])
    first = time.perf_counter() - t0
    print(f"first query (cold, includes Spark start): {first:.2f} s")
    for q in queries:
        times = []
        for _ in range(args.repeat):
            t = time.perf_counter()
            session.execute(q)
            times.append(time.perf_counter() - t)
        print(f"warm: best {min(times) * 1000:6.0f} ms  median "
              f"{statistics.median(times) * 1000:6.0f} ms  | {q[:70]}")
    out = session.console.file.getvalue()  # type: ignore[attr-defined]
    assert "error" not in out, out
    # every query (the windows too) returns rows
    assert not re.search(r"^0 rows", out, re.M), out


if __name__ == "__main__":
    main()
