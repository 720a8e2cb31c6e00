#!/bin/bash
# Prints Flink 2.3's env.getExecutionPlan() JSON for pipeline specs, writing SPEC.plan.json
# beside each SPEC.json. Needs the flink-oracle (../shared/tools/flink-oracle, run once to
# install); the project's tests only read the committed .plan.json files.
# Usage: tests/golden/tools/plan_oracle.sh SPEC.json ...
set -eu
oracle_dir=${FLINK_ORACLE_DIR:-$(cd "$(dirname "$0")/../../../.." && pwd)/shared/tools/flink-oracle}
home=${FLINK_ORACLE_HOME:-$HOME/.cache/flink-oracle}
jars=$("$home/venv/bin/python" -c "import pyflink, os; print(os.path.join(os.path.dirname(pyflink.__file__), 'lib'))")
work=$(mktemp -d)
# Same program builder as the JobGraph oracle, printing the execution plan instead.
sed -e 's/public class FlinkOracle/public class PlanOracle/' \
    -e 's/StreamGraph sg = env.getStreamGraph();/System.out.println(env.getExecutionPlan()); if (true) return;\n        StreamGraph sg = env.getStreamGraph();/' \
    "$oracle_dir/FlinkOracle.java" > "$work/PlanOracle.java"
javac -nowarn -d "$work" -cp "$jars/*" "$work/PlanOracle.java" 2>&1 | grep -v '^Note:' >&2 || true
for spec in "$@"; do
  java -cp "$work:$jars/*" PlanOracle "$spec" 2>/dev/null | tail -n +2 > "${spec%.json}.plan.json"
done
rm -rf "$work"
