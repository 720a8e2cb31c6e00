"""flowc SQL against Flink 2.3 SQL on this machine: a regular join, a Top-N and a dedup query
over the same generated input files (BATCH mode, final tables written as csv), one run each.

    python benchmarks/sql.py [--rows 1000000] [--flink-python /work/flink-sql-venv/bin/python]
        [--only join,topn,dedup] [--dir DIR] [--parallelism N] [--systems flowc,flink]

Each job runs in its own process (``python -m flowc.cli run -p N q.sql``, Spark local[*], N
the cores as Flink's local default parallelism; Flink's PyFlink TableEnvironment in the venv), so wall and CPU seconds (the process and its children:
Spark's and Flink's JVMs) include start-up, as a user sees them. The final tables are
compared; a mismatch is printed loudly (and the exit code is 1). The issue's goal is
flowc/Flink <= 1.0 on wall time. ``--systems flowc`` runs one side only (to profile or
compare flowc versions; no ratio then), ``--dir`` reuses the generated input.
"""

from __future__ import annotations

import argparse
import csv
import glob
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
USERS = 20_000
COUNTRIES = ("DE", "FR", "US", "GB", "JP", "BR", "IN", "NL")
ORDERS_DDL = ("CREATE TABLE orders (order_id BIGINT, user_id STRING, amount BIGINT, "
              "ts TIMESTAMP(3))")
USERS_DDL = "CREATE TABLE users (user_id STRING, country STRING)"
QUERIES = {
    "join": ("(order_id BIGINT, amount BIGINT, country STRING)",
             "SELECT o.order_id, o.amount, u.country FROM orders o "
             "JOIN users u ON o.user_id = u.user_id"),
    "topn": ("(user_id STRING, order_id BIGINT, amount BIGINT, rn BIGINT)",
             "SELECT user_id, order_id, amount, rn FROM (SELECT *, ROW_NUMBER() OVER "
             "(PARTITION BY user_id ORDER BY amount DESC, order_id) AS rn FROM orders) "
             "WHERE rn <= 3"),
    "dedup": ("(order_id BIGINT, user_id STRING, amount BIGINT)",
              "SELECT order_id, user_id, amount FROM (SELECT *, ROW_NUMBER() OVER "
              "(PARTITION BY user_id ORDER BY ts ASC) AS rn FROM orders) WHERE rn = 1"),
}


def generate(directory: str, rows: int, seed: int = 5) -> tuple[str, str]:
    """``rows`` orders (20k users, amounts 1-100000, one distinct millisecond each, so Top-N
    and dedup have one answer) and the users table; csv without header."""
    rnd = random.Random(seed)
    orders = os.path.join(directory, f"orders-{rows}")
    users = os.path.join(directory, "users")
    os.makedirs(orders, exist_ok=True)
    os.makedirs(users, exist_ok=True)
    with open(os.path.join(orders, "part-0.csv"), "w") as f:
        for i in range(rows):
            ms = i + rnd.randrange(0, 1000) * 1_000_000  # distinct, not in file order
            s, milli = divmod(ms, 1000)
            stamp = time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(1_704_067_200 + s))
            f.write(f"{i},u{rnd.randrange(USERS)},{rnd.randrange(1, 100_001)},"
                    f"{stamp}.{milli:03d}\n")
    with open(os.path.join(users, "part-0.csv"), "w") as f:
        for u in range(USERS):
            f.write(f"u{u},{rnd.choice(COUNTRIES)}\n")
    return orders, users


def sql_text(name: str, orders: str, users: str, out: str, flink: bool) -> str:
    """The job: every query writes its final table as csv files on both systems (BATCH
    Top-N and dedup are insert-only, Flink's sort-based Rank)."""
    columns, query = QUERIES[name]
    header = "" if flink else ", 'csv.header' = 'false'"
    opts = f"'connector' = 'filesystem', 'format' = 'csv'{header}"
    sink = f"{opts}, 'path' = '{out}'"
    return (f"SET 'execution.runtime-mode' = 'batch';\n"
            f"{ORDERS_DDL} WITH ({opts}, 'path' = '{orders}');\n"
            f"{USERS_DDL} WITH ({opts}, 'path' = '{users}');\n"
            f"CREATE TABLE final_rows {columns} WITH ({sink});\n"
            f"INSERT INTO final_rows {query};\n")


FLINK_RUNNER = """
import sys
from pyflink.table import EnvironmentSettings, TableEnvironment
t = TableEnvironment.create(EnvironmentSettings.in_batch_mode())
statements = [s for s in open(sys.argv[1]).read().split(";\\n") if s.strip()]
for s in statements[1:-1]:
    t.execute_sql(s)
t.execute_sql(statements[-1]).wait()
"""


def _tree_cpu(root: int, seen: dict[int, float]) -> None:
    """CPU seconds so far of ``root`` and its descendants (from /proc), kept per pid in
    ``seen``: the JVMs are grandchildren that no rusage of ours counts."""
    parents: dict[int, int] = {}
    ticks: dict[int, float] = {}
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open(f"/proc/{d}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        parents[int(d)] = int(fields[1])
        ticks[int(d)] = (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    tree, frontier = {root}, [root]
    while frontier:
        pid = frontier.pop()
        kids = [c for c, p in parents.items() if p == pid and c not in tree]
        tree.update(kids)
        frontier += kids
    for pid in tree:
        if pid in ticks:
            seen[pid] = max(seen.get(pid, 0.0), ticks[pid])


def timed(cmd: list[str]) -> tuple[float, float, str]:
    """Wall and CPU seconds (user + system of the process tree, sampled every 0.2 s) and
    the standard output."""
    seen: dict[int, float] = {}
    start = time.perf_counter()
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        proc = subprocess.Popen(cmd, stdout=out, stderr=err, text=True, cwd=ROOT)
        while proc.poll() is None:
            _tree_cpu(proc.pid, seen)
            time.sleep(0.2)
        wall = time.perf_counter() - start
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read(), err.read()
    if proc.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed ({proc.returncode}):\n{stderr[-3000:]}")
    return wall, sum(seen.values()), stdout


def table(out: str) -> list[tuple[str, ...]]:
    rows: list[tuple[str, ...]] = []
    for path in sorted(glob.glob(os.path.join(out, "**", "*"), recursive=True)):
        base = os.path.basename(path)
        if os.path.isdir(path) or base.startswith((".", "_")):
            continue
        with open(path, newline="") as f:
            part = [tuple(r) for r in csv.reader(f)]
        rows += part
    return sorted(rows)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--flink-python", default="/work/flink-sql-venv/bin/python")
    ap.add_argument("--only", default="join,topn,dedup")
    ap.add_argument("--dir", default=None, help="where input and output go (default: temp)")
    ap.add_argument("--parallelism", type=int, default=os.cpu_count() or 1,
                    help="flowc's (default: the cores, as Flink's local default)")
    ap.add_argument("--systems", default="flowc,flink",
                    help="which to run (flowc, flink or both; the ratio needs both)")
    args = ap.parse_args()
    systems = [w for w in ("flowc", "flink") if w in args.systems.split(",")]
    if not systems:
        ap.error("--systems takes flowc, flink or flowc,flink")
    work = args.dir or tempfile.mkdtemp(prefix="flowc-sql-bench-")
    orders, users = os.path.join(work, f"orders-{args.rows}"), os.path.join(work, "users")
    if not (os.path.exists(os.path.join(orders, "part-0.csv")) and
            os.path.exists(os.path.join(users, "part-0.csv"))):
        orders, users = generate(work, args.rows)
    runner = os.path.join(work, "flink_runner.py")
    Path(runner).write_text(FLINK_RUNNER)
    env_path = str(ROOT / "src")
    os.environ["PYTHONPATH"] = env_path + os.pathsep + os.environ.get("PYTHONPATH", "")
    print(f"{args.rows:,} orders, {USERS:,} users; load average {os.getloadavg()[0]:.1f} "
          f"on {os.cpu_count()} cores")
    print(f"{'query':6} {'flowc wall':>10} {'cpu':>7} {'Flink wall':>10} {'cpu':>7} "
          f"{'ratio':>6}  result")
    ok = True
    for name in args.only.split(","):
        outs = {}
        times = {}
        for who in systems:
            out = os.path.join(work, f"out-{name}-{who}")
            shutil.rmtree(out, ignore_errors=True)
            script = os.path.join(work, f"{name}-{who}.sql")
            Path(script).write_text(sql_text(name, orders, users, out, who == "flink"))
            cmd = ([sys.executable, "-m", "flowc.cli", "run", "--no-progress", "-p",
                    str(args.parallelism), script]
                   if who == "flowc" else [args.flink_python, runner, script])
            wall, cpu, _ = timed(cmd)
            times[who] = (wall, cpu)
            outs[who] = table(out)
        if len(systems) == 1:
            wall, cpu = times[systems[0]]
            print(f"{name:6} {systems[0]} {wall:.1f} s wall, {cpu:.1f} s CPU, "
                  f"{len(outs[systems[0]]):,} rows", flush=True)
            continue
        same = outs["flowc"] == outs["flink"]
        ok &= same
        (fw, fc), (kw, kc) = times["flowc"], times["flink"]
        verdict = f"{len(outs['flink']):,} rows equal" if same else (
            f"!!! MISMATCH: flowc {len(outs['flowc']):,} rows, Flink {len(outs['flink']):,} "
            f"rows, e.g. {sorted(set(outs['flowc']) ^ set(outs['flink']))[:3]} !!!")
        print(f"{name:6} {fw:10.1f} {fc:7.1f} {kw:10.1f} {kc:7.1f} {fw / kw:6.2f}  {verdict}",
              flush=True)
    print(f"load average after: {os.getloadavg()[0]:.1f}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
