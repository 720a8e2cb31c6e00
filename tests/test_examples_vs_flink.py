"""`flowc explain` of the examples shows the chains and operator ids real Flink 2.3 builds.

For each example whose structure Flink's oracle can express, tests/golden/flink/examples holds
a spec derived from the example's StreamGraph (tests/golden/tools/spec_from_graph.py) and the
JobGraph real Flink printed for it. Operator ids and chains depend only on structure, so
everything but display names must be identical."""

from __future__ import annotations

from pathlib import Path

import pytest

from flowc.chaining import JobGraph
from flowc.parser import compile_file

ROOT = Path(__file__).parent.parent
EXPECTED = sorted((ROOT / "tests" / "golden" / "flink" / "examples").glob("*.expected"))


def ours(jg: JobGraph) -> list[tuple[str, ...]]:
    out: list[tuple[str, ...]] = []
    for v in jg.vertices_sorted():
        out.append(("vertex", v.id, f"p={v.parallelism}", f"maxp={v.max_parallelism}",
                    f"ssg={v.slot_sharing_group}"))
        out.append(("operators", v.id, " ".join(o.id for o in v.operators)))
        for e in v.inputs:
            out.append(("edge", e.source, v.id, e.distribution_pattern, e.result_type,
                        e.ship_strategy))
    return out


def structure(dump: str) -> list[tuple[str, ...]]:
    """Flink's dump with vertex names (unique in the derived specs) replaced by ids."""
    ids: dict[str, str] = {}
    out: list[tuple[str, ...]] = []
    for line in dump.strip().splitlines():
        kind, rest = line.split(" ", 1)
        if kind == "vertex":
            name, p, maxp, ssg, vid = [x.strip() for x in rest.split(" | ")]
            ids[name] = vid[3:]
            out.append(("vertex", vid[3:], p, maxp, ssg))
        elif kind == "operators":
            name, ops = rest.split(" | ")
            out.append(("operators", ids[name], ops))
        elif kind == "edge":
            names, pattern, result, ship = rest.split(" | ")
            src, dst = names.split(" => ")
            out.append(("edge", ids[src], ids[dst], pattern, result, ship))
        else:
            out.append((line,))
    return out


@pytest.mark.parametrize("expected", EXPECTED, ids=lambda p: p.stem)
def test_example_plan_matches_flink(expected: Path) -> None:
    env = compile_file(str(ROOT / "examples" / f"{expected.stem}.flow")).env
    assert ours(env.get_job_graph()) == structure(expected.read_text())


def test_clicks_and_hints_are_covered() -> None:
    assert {p.stem for p in EXPECTED} >= {"clicks", "hints"}
