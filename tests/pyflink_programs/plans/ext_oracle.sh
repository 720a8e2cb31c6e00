#!/bin/bash
# Runs tests/golden/flink/ExtOracle.java (real Flink 2.3) on plans/*.ext.json, writing
# NAME.ext.expected beside each (JobGraph dump plus its groups/regions/datasets lines).
# Needs java/javac 17+ and Flink 2.3's jars: $FLINK_LIB or a PyFlink venv's ($PYFLINK_VENV,
# default /work/pyflink-venv). The tests only read the committed files.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
venv=${PYFLINK_VENV:-/work/pyflink-venv}
lib=${FLINK_LIB:-$("$venv/bin/python" -c "import pyflink, os; print(os.path.join(os.path.dirname(pyflink.__file__), 'lib'))")}
classes=$(mktemp -d)
trap 'rm -rf "$classes"' EXIT
javac -nowarn -d "$classes" -cp "$lib/*" "$here/../../golden/flink/ExtOracle.java" 2>&1 | grep -v "^Note:" >&2 || true
for spec in "$here"/*.ext.json; do
  # One JVM per program: transformation ids (in error texts) start from 1.
  java -cp "$classes:$lib/*" ExtOracle "$spec" 2>/dev/null | tail -n +2 > "${spec%.json}.expected"
done
