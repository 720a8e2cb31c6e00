#!/bin/bash
# Regenerates, with REAL Apache Flink 2.3 (ExtOracle.java), the goldens that go beyond the
# shared FlinkOracle's vocabulary. The tests never run this; they read the committed files.
#
#   ext/x_NNNN.json + .expected   gen_ext_specs.py programs: two-input operators, side
#                                 outputs, custom partitioning, STREAMING and BATCH
#   ext/x_NNNN.plan.json          Flink's env.getExecutionPlan() for each of them
#   specs/NAME.batch.expected     every specs/NAME.json run in BATCH mode
#   filesink/fs_*.expected        the hand-written file-sink programs (Writer + Committer)
#   filesink/fs_*.plan.json       and Flink's env.getExecutionPlan() for each
#
# Both formats are the JobGraph dump of shared/testdata/flink-2.3/README.md plus three lines:
# "groups ..." (slot sharing groups) and "regions ..." (logical pipelined regions), one number
# per vertex in topological order, and "datasets ..." (the IntermediateDataSet each edge line
# reads, so BLOCKING reuse shows), all numbered by first appearance. BATCH runs Flink's static
# (Default) scheduler, which is what flowc's BATCH mode reproduces.
#
# Needs java/javac 17+ and Flink 2.3's jars: $FLINK_LIB, else the flink-oracle's PyFlink, else
# the jars are unpacked from the apache-flink-libraries 2.3.0 wheel (pip download, ~330 MB).
# All programs of a corpus run in one JVM (seconds); a program Flink rejects is re-run in a
# JVM of its own, so that transformation ids in its error text start from 1.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cache=${FLINK_ORACLE_HOME:-$HOME/.cache/flink-oracle}
lib=${FLINK_LIB:-}
if [ -z "$lib" ] && [ -x "$cache/venv/bin/python" ]; then
  lib=$("$cache/venv/bin/python" -c "import pyflink, os; print(os.path.join(os.path.dirname(pyflink.__file__), 'lib'))")
fi
if [ -z "$lib" ]; then
  lib="$cache/jars/pyflink/lib"
  if [ ! -d "$lib" ]; then
    mkdir -p "$cache/jars"
    python3 -m pip download -q --no-deps -d "$cache/jars" apache-flink-libraries==2.3.0
    (cd "$cache/jars" && unzip -q -o apache_flink_libraries-2.3.0-*.whl 'pyflink/lib/*')
  fi
fi
classes=$(mktemp -d)
tmp=$(mktemp -d)
trap 'rm -rf "$classes" "$tmp"' EXIT
javac -nowarn -d "$classes" -cp "$lib/*" "$here/ExtOracle.java" 2>&1 | grep -v "^Note:" >&2 || true
oracle() { java -cp "$classes:$lib/*" ExtOracle "$@" 2>/dev/null; }

# Splits oracle output ("# <path>" headers) into <dir>/<stem><suffix> files; prints the specs
# Flink rejected (to be re-run alone).
cat > "$tmp/split.py" <<'EOF'
import sys
from pathlib import Path
out_dir, suffix = Path(sys.argv[1]), sys.argv[2]
sections, cur = {}, None
for line in sys.stdin:
    if line.startswith("# "):
        cur = Path(line[2:].strip())
        sections[cur] = []
    elif cur is not None:
        sections[cur].append(line.rstrip("\n"))
for p, lines in sections.items():
    if not lines:
        sys.exit(f"oracle gave no output for {p}")
    (out_dir / (p.stem + suffix)).write_text("\n".join(lines) + "\n")
    if lines[0].startswith("error "):
        print(p)
EOF
split() { python3 "$tmp/split.py" "$1" "$2"; }

cd "$here"
rm -f ext/x_[0-9][0-9][0-9][0-9].json ext/x_[0-9][0-9][0-9][0-9].expected \
  ext/x_[0-9][0-9][0-9][0-9].plan.json
python3 gen_ext_specs.py --out ext
oracle ext/x_[0-9][0-9][0-9][0-9].json | split ext .expected > "$tmp/rejected"
while read -r p; do oracle "$p" | split ext .expected > /dev/null; done < "$tmp/rejected"

# Flink's execution-plan JSON: node ids are transformation ids, so one JVM per program.
ls ext/x_[0-9][0-9][0-9][0-9].json | xargs -P 2 -I{} sh -c \
  'java -cp "$1:$2/*" ExtOracle --plan "$3" 2>/dev/null | tail -n +2 > "${3%.json}.plan.json"' \
  _ "$classes" "$lib" {}

mkdir -p "$tmp/batch"
for p in $(find specs -maxdepth 1 -name '*.json' ! -name '*.*.json' | sort); do
  python3 -c 'import json, sys; s = json.load(open(sys.argv[1])); s["mode"] = "BATCH"; print(json.dumps(s))' \
    "$p" > "$tmp/batch/$(basename "$p")"
done
oracle "$tmp"/batch/*.json | split specs .batch.expected > "$tmp/rejected"
while read -r p; do oracle "$p" | split specs .batch.expected > /dev/null; done < "$tmp/rejected"
oracle $(ls filesink/fs_*.json | grep -v '\.plan\.json$') | split filesink .expected > /dev/null
ls filesink/fs_*.json | grep -v '\.plan\.json$' | xargs -I{} sh -c \
  'java -cp "$1:$2/*" ExtOracle --plan "$3" 2>/dev/null | tail -n +2 > "${3%.json}.plan.json"' \
  _ "$classes" "$lib" {}
echo "wrote $(ls ext/*.expected | wc -l) ext goldens, $(ls ext/*.plan.json | wc -l) plans and $(ls specs/*.batch.expected | wc -l) BATCH goldens"
