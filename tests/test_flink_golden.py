"""The planner reproduces real Flink 2.3 JobGraphs exactly (shared/testdata/flink-2.3, copied
into tests/golden/flink-2.3, plus the corpus generated with the Flink oracle in
tests/golden/flink/specs, its BATCH runs and the extended corpus in tests/golden/flink/ext)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

import flink_spec
from flowc.keygroups import (
    assign_key_to_parallel_operator,
    assign_to_key_group,
    default_max_parallelism,
    java_hash_code,
)

GOLDEN = Path(__file__).parent / "golden"
SPECS = [p for p in sorted((GOLDEN / "flink-2.3" / "jobgraphs").glob("*.json"))
         + sorted((GOLDEN / "flink" / "specs").glob("*.json"))
         if not p.name.endswith(".plan.json")]
PLANS = [p for p in SPECS if p.with_suffix(".plan.json").exists()]


def _normalise(text: str) -> list[str]:
    return [line.rstrip() for line in text.strip().splitlines() if not line.startswith("#")]


@pytest.mark.parametrize("spec", SPECS, ids=lambda p: f"{p.parent.parent.name}/{p.stem}")
def test_job_graph_matches_flink(spec: Path) -> None:
    expected = spec.with_suffix(".expected").read_text()
    assert _normalise(flink_spec.describe(spec)) == _normalise(expected)


@pytest.mark.parametrize("spec", PLANS, ids=lambda p: f"{p.parent.parent.name}/{p.stem}")
def test_execution_plan_json_matches_flink_byte_for_byte(spec: Path) -> None:
    from flowc.errors import PlanError

    expected = spec.with_suffix(".plan.json").read_text().rstrip("\n")
    try:
        got = flink_spec.load(spec).get_execution_plan()
    except PlanError as e:
        got = f"error {e.java_class}: {e.message}"
    assert got == expected


def test_corpus_is_present() -> None:
    assert len(SPECS) >= 7 and len(PLANS) >= 7
    assert len(EXT) >= 100 and len(BATCH) == len(list((GOLDEN / "flink" / "specs").glob(
        "*.batch.expected"))) >= 150


# tests/golden/flink/ExtOracle.java (regenerate_ext.sh): two-input operators, side outputs,
# custom partitioning and BATCH (Flink's static scheduler), with slot sharing groups,
# pipelined regions and intermediate datasets.
EXT = sorted(p for p in (GOLDEN / "flink" / "ext").glob("x_*.json")
             if not p.name.endswith(".plan.json"))
BATCH = [p for p in SPECS if p.with_suffix(".batch.expected").exists()]


def describe_ext(env) -> str:  # type: ignore[no-untyped-def]
    """ExtOracle's output: the JobGraph dump, then slot sharing groups and pipelined regions
    per vertex and the dataset of each edge, numbered by first appearance."""
    from flowc.errors import PlanError

    try:
        jg = env.get_job_graph()
    except PlanError as e:
        return f"error {e.java_class}: {e.message}\n"
    ordered = jg.vertices_sorted()

    def numbered(values: list) -> str:  # type: ignore[type-arg]
        first: dict = {}  # type: ignore[type-arg]
        return " ".join(str(first.setdefault(v, len(first))) for v in values)

    return (jg.dump()
            + "groups " + numbered([v.slot_sharing_group_index for v in ordered]) + "\n"
            + "regions " + numbered([v.region for v in ordered]) + "\n"
            + "datasets " + numbered([e.dataset for v in ordered for e in v.inputs]) + "\n")


@pytest.mark.parametrize("spec", EXT, ids=lambda p: p.stem)
def test_extended_job_graph_matches_flink(spec: Path) -> None:
    expected = spec.with_suffix(".expected").read_text()
    assert _normalise(describe_ext(flink_spec.load(spec))) == _normalise(expected)


@pytest.mark.parametrize("spec", EXT, ids=lambda p: p.stem)
def test_extended_execution_plan_json_matches_flink_byte_for_byte(spec: Path) -> None:
    expected = spec.with_suffix(".plan.json").read_text().rstrip("\n")
    assert flink_spec.load(spec).get_execution_plan() == expected


@pytest.mark.parametrize("spec", BATCH, ids=lambda p: f"{p.parent.parent.name}/{p.stem}")
def test_batch_job_graph_matches_flink_static_scheduler(spec: Path) -> None:
    program = json.loads(spec.read_text())
    program["mode"] = "BATCH"
    expected = spec.with_suffix(".batch.expected").read_text()
    assert _normalise(describe_ext(flink_spec.build(program))) == _normalise(expected)


def _key(entry: dict) -> object:
    k, t = entry["key"], entry["java_type"]
    if t == "Tuple2":
        return tuple(k)
    if t == "Double":
        return float("nan") if k == "NaN" else float(k)
    return k


KEYS = json.loads((GOLDEN / "flink-2.3" / "keygroups.json").read_text())


@pytest.mark.parametrize("entry", KEYS, ids=lambda e: f"{e['java_type']}:{e['key']!r}")
def test_key_groups_match_flink(entry: dict) -> None:
    key = _key(entry)
    assert java_hash_code(key) == entry["hash_code"]
    assert assign_to_key_group(key, 128) == entry["key_group_128"]
    assert assign_to_key_group(key, 4096) == entry["key_group_4096"]
    assert assign_key_to_parallel_operator(key, 128, 3) == entry["subtask_p3_m128"]
    assert assign_key_to_parallel_operator(key, 4096, 7) == entry["subtask_p7_m4096"]


@pytest.mark.parametrize("p,expected", [(1, 128), (2, 128), (4, 128), (85, 128), (86, 256),
                                        (100, 256), (180, 512), (1000, 2048), (30000, 32768)])
def test_default_max_parallelism_matches_flink(p: int, expected: int) -> None:
    # Values printed by the oracle's KeyGroupVectors (stderr lines).
    assert default_max_parallelism(p) == expected


# tests/golden/flink/filesink (ExtOracle's "file_sink": Flink's FileSink, which has a
# committer): Flink plans "<name>: Writer" and "<name>: Committer" (chained in STREAMING, a
# POINTWISE BLOCKING edge to a vertex of its own in BATCH); flowc plans the writer only, a
# documented difference (docs/flink-differences.md, "file sinks"). Everything else is Flink's.
FILE_SINKS = sorted(p for p in (GOLDEN / "flink" / "filesink").glob("*.json")
                    if not p.name.endswith(".plan.json"))
_HEX = re.compile(r"\b[0-9a-f]{32}\b")
_CHAINED_COMMITTER = re.compile(r" -> [^ ,()]+: Committer")


def _renumber(values: list[str]) -> str:
    first: dict[str, int] = {}
    return " ".join(str(first.setdefault(v, len(first))) for v in values)


def _committer_vertex(name: str) -> bool:
    return name.endswith(": Committer") and " -> " not in name


def without_committers(text: str) -> list[str]:
    """ExtOracle output with every Committer operator, Committer vertex and edge into one
    taken out, operator ids replaced by their number (a writer's id depends on its chained
    committer) and group / region / dataset numbers renumbered."""
    out: list[str] = []
    dropped_vertices: list[int] = []
    dropped_edges: list[int] = []
    vertex = edge = -1
    for line in _normalise(text):
        kind, _, rest = line.partition(" ")
        fields = rest.split(" | ")
        if kind == "vertex":
            vertex += 1
            if _committer_vertex(fields[0]):
                dropped_vertices.append(vertex)
                continue
            out.append(_HEX.sub("<id>", _CHAINED_COMMITTER.sub("", line)))
        elif kind == "operators":
            if _committer_vertex(fields[0]):
                continue
            n = len(fields[1].split()) - len(_CHAINED_COMMITTER.findall(fields[0]))
            out.append(f"operators {_CHAINED_COMMITTER.sub('', fields[0])} | {n}")
        elif kind == "edge":
            edge += 1
            if _committer_vertex(fields[0].split(" => ")[1]):
                dropped_edges.append(edge)
                continue
            out.append(_CHAINED_COMMITTER.sub("", line))
        else:
            drop = dropped_edges if kind == "datasets" else dropped_vertices
            values = [v for i, v in enumerate(rest.split()) if i not in drop]
            out.append(f"{kind} {_renumber(values)}".rstrip())
    return out


def _ids_as_counts(text: str) -> list[str]:
    return [f"operators {line.split(' | ')[0][10:]} | {len(line.split(' | ')[1].split())}"
            if line.startswith("operators ") else _HEX.sub("<id>", line)
            for line in _normalise(text)]


@pytest.mark.parametrize("spec", FILE_SINKS, ids=lambda p: p.stem)
def test_file_sinks_match_flink_but_for_the_documented_committer(spec: Path) -> None:
    flink = spec.with_suffix(".expected").read_text()
    ours = describe_ext(flink_spec.load(spec))
    assert ": Committer" in flink and ": Committer" not in ours
    assert _ids_as_counts(ours) == without_committers(flink)


@pytest.mark.parametrize("spec", FILE_SINKS, ids=lambda p: p.stem)
def test_file_sinks_with_committers_match_flink_exactly(spec: Path) -> None:
    """With ``flowc.sink_committers = true`` the plan is Flink's, ids and plan JSON included."""
    env = flink_spec.load(spec)
    env.set_option("flowc.sink_committers", "true")
    expected = spec.with_suffix(".expected").read_text()
    assert _normalise(describe_ext(env)) == _normalise(expected)
    plan = spec.with_suffix(".plan.json").read_text().rstrip("\n")
    assert env.get_execution_plan() == plan


def test_flinks_file_sink_committer_is_as_documented() -> None:
    """The facts docs/flink-differences.md states, read off real Flink 2.3's JobGraphs."""
    def lines(name: str) -> list[str]:
        return _normalise((GOLDEN / "flink" / "filesink" / f"{name}.expected").read_text())

    assert len(FILE_SINKS) >= 6
    # STREAMING: the committer chains to its writer.
    assert lines("fs_streaming")[0].startswith(
        "vertex Source: src -> m -> files: Writer -> files: Committer | p=2 |")
    assert "vertex files: Writer -> files: Committer | p=3 |" in lines(
        "fs_uid_parallelism")[2]
    # BATCH: a vertex of its own behind a POINTWISE BLOCKING FORWARD edge, another region.
    batch = lines("fs_batch")
    assert "edge Source: src -> m -> files: Writer => files: Committer | POINTWISE | BLOCKING "\
        "| FORWARD" in batch
    assert "regions 0 1" in batch
    # The sink's slot sharing group and disable_chaining() reach both operators.
    assert [x.split(" | ")[3] for x in lines("fs_slot_group_batch")
            if x.startswith("vertex files")] == ["ssg=a", "ssg=a"]
    assert "edge files: Writer => files: Committer | POINTWISE | PIPELINED_BOUNDED | FORWARD" \
        in lines("fs_disable_chaining")
    # The row in docs/flink-differences.md says the same.
    doc = (GOLDEN.parent.parent / "docs" / "flink-differences.md").read_text()
    row = next(x for x in doc.splitlines() if x.startswith("| file sinks"))
    for fact in ("tests/golden/flink/filesink", "`flowc.sink_committers = true`",
                 "SinkCommitterOp", "POINTWISE BLOCKING"):
        assert fact in row, fact
