"""Derive, for each program here, a Flink-oracle spec of every job it executes (the Java
program with the same structure), so real Flink 2.3 can plan it:

    PYTHONPATH=src python tests/pyflink_programs/derive_plans.py
    FLINK_ORACLE_HOME=... /work/shared/tools/flink-oracle/run.sh plans/NAME.json

writes plans/NAME.jobN.json (tests/golden/tools/spec_from_graph.py: operator ids and chains
depend on structure only), or plans/NAME.jobN.ext.json for jobs with two-input operators or
side outputs, which only tests/golden/flink/ExtOracle.java expresses (run it as
tests/golden/flink/regenerate_ext.sh compiles it; plans/ext_oracle.sh does). Jobs neither
oracle can express are skipped and listed."""

from __future__ import annotations

import json
import runpy
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE.parent / "golden" / "tools"))
sys.path.insert(0, str(HERE.parent))

from spec_from_graph import Unsupported, spec_from_graph  # noqa: E402

from flowc.api.environment import capture_environments  # noqa: E402
from test_pyflink_programs import ported  # noqa: E402


def main() -> None:
    out = HERE / "plans"
    out.mkdir(exist_ok=True)
    for program in sorted(HERE.glob("p[0-9][0-9]_*.py")):
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / program.name
            path.write_text(ported(program.read_text()))
            with capture_environments(dry_run=True) as cap:
                runpy.run_path(str(path), run_name="__main__")
        for i, job in enumerate(cap.jobs):
            sg = job.get_stream_graph()
            try:
                spec, suffix = spec_from_graph(sg), ""
            except Unsupported:
                try:  # two-input operators, side outputs: tests/golden/flink/ExtOracle.java
                    spec, suffix = spec_from_graph(sg, ext=True), ".ext"
                except Unsupported as e:
                    print(f"skip {program.stem} job {i}: {e}")
                    continue
            path = out / f"{program.stem}.job{i}{suffix}.json"
            path.write_text(json.dumps(spec, indent=1) + "\n")


if __name__ == "__main__":
    main()
