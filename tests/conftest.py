import sys
from pathlib import Path

# tests/flink_spec.py builds Flink-oracle pipeline specs through flowc.datastream.
sys.path.insert(0, str(Path(__file__).parent))
