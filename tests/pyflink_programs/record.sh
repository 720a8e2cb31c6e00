#!/bin/bash
# Runs each program here once on REAL PyFlink 2.3 and writes NAME.expected (its stdout).
# Not run by the tests (they read the committed .expected files). Needs a separate venv:
#   python -m venv /work/pyflink-venv && /work/pyflink-venv/bin/pip install apache-flink==2.3.0
# Usage: tests/pyflink_programs/record.sh [p01_wordcount.py ...]
set -eu
venv=${PYFLINK_VENV:-/work/pyflink-venv}
cd "$(dirname "$0")"
progs=("$@")
[ ${#progs[@]} -eq 0 ] && progs=(p[0-9][0-9]_*.py)
for p in "${progs[@]}"; do
  # PyFlink's Python workers must find pyflink: the venv's python first on PATH.
  PATH="$venv/bin:$PATH" python "$p" > "${p%.py}.expected" 2> "/tmp/${p%.py}.err" \
    || { echo "FAILED $p (see /tmp/${p%.py}.err)"; continue; }
  echo "$p: $(wc -l < "${p%.py}.expected") lines"
done
