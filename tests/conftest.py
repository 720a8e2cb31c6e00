import os
import sys
from pathlib import Path

# tests/flink_spec.py builds Flink-oracle pipeline specs through flowc.datastream.
sys.path.insert(0, str(Path(__file__).parent))

# One Spark session per test process: the executor and streaming fixtures ask for local[2];
# a test that starts Spark without naming a master (run_streaming(...) in the savepoint
# tests) gets the same, so the order the test files run in does not matter.
os.environ.setdefault("FLOWC_SPARK_MASTER", "local[2]")
