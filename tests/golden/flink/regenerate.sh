#!/bin/bash
# Regenerates the golden corpus in specs/ with REAL Apache Flink 2.3 (the flink-oracle).
# The tests never run this; they only read the committed specs/*.json + specs/*.expected.
#
#   tests/golden/flink/regenerate.sh            # r_*.json from gen_specs.py, then all .expected
#   COUNT=150 SEED=2300 JOBS=2 ORACLE=/work/shared/tools/flink-oracle/run.sh regenerate.sh
#
# 1. gen_specs.py rewrites the random specs r_0000.json .. (deterministic for SEED/COUNT);
#    the hand-written targeted specs t_*.json are left alone.
# 2. Every spec (specs/NAME.json, not derived NAME.xyz.json files) is run through the oracle
#    (one JVM per spec, ~1.5 s each), in JOBS parallel batches; run.sh prints "# <path>"
#    before each spec's lines.
# 3. The output is split per spec into specs/<name>.expected, without the "# <path>" line.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
ORACLE=${ORACLE:-/work/shared/tools/flink-oracle/run.sh}
COUNT=${COUNT:-150}
SEED=${SEED:-2300}
JOBS=${JOBS:-2}

cd "$here"
# only this corpus's own files: other tools may keep derived files (NAME.plan.json) here
rm -f specs/r_[0-9][0-9][0-9][0-9].json specs/r_[0-9][0-9][0-9][0-9].expected
python3 gen_specs.py --seed "$SEED" --count "$COUNT" --out specs

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
find specs -maxdepth 1 -name '*.json' ! -name '*.*.json' | sort > "$tmp/all"
split -n "r/$JOBS" "$tmp/all" "$tmp/batch."
for b in "$tmp"/batch.*; do
  # shellcheck disable=SC2046
  "$ORACLE" $(cat "$b") > "$b.out" &
done
wait

cat "$tmp"/batch.*.out | python3 -c '
import sys
from pathlib import Path
want = {Path(p).resolve() for p in open(sys.argv[1]).read().split()}
sections, cur = {}, None
for line in sys.stdin:
    if line.startswith("# "):
        cur = Path(line[2:].strip()).resolve()
        sections[cur] = []
    elif cur is not None:
        sections[cur].append(line.rstrip("\n"))
missing = want - set(sections)
empty = [p for p, lines in sections.items() if not lines]
if missing or empty:
    sys.exit(f"oracle gave no output for: {sorted(map(str, missing | set(empty)))}")
for p, lines in sections.items():
    p.with_suffix(".expected").write_text("\n".join(lines) + "\n")
errors = sum(lines[0].startswith("error ") for lines in sections.values())
print(f"wrote {len(sections)} .expected files ({errors} errors)")
' "$tmp/all"
