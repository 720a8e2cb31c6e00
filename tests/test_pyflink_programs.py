"""PyFlink programs run on flowc after an import-only change, printing what real PyFlink 2.3
printed.

tests/pyflink_programs/pNN_*.py are PyFlink DataStream programs (windows, timers, state,
Types, joins, side outputs, ...). Each ran once on real PyFlink 2.3 (record.sh, a separate
venv; not a test dependency) and its stdout is committed as pNN_*.expected. Here the only
change is ``pyflink`` -> ``flowc`` in the import lines; the printed lines must be the same
multiset (print order across operators is not defined in either).

Plans: pyflink_programs/plans/NAME.jobN[.ext].json is the Java program with the same
structure as job N of the program (derive_plans.py), NAME.jobN[.ext].expected the JobGraph
real Flink 2.3 built for it (the flink-oracle; ExtOracle.java for two-input operators and
side outputs); flowc's plan of the ported program must have the same chains,
operator ids and edges (display names aside, as in test_examples_vs_flink.py)."""

from __future__ import annotations

import contextlib
import io
import re
import runpy
from collections import Counter
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pytest

from flowc.api.environment import capture_environments
from flowc.executor import run_reference
from test_examples_vs_flink import ours, structure

PROGRAMS = Path(__file__).parent / "pyflink_programs"
CASES = sorted(p for p in PROGRAMS.glob("p[0-9][0-9]_*.py") if p.with_suffix(".expected").exists())
_IMPORT = re.compile(r"^(\s*)(from|import)(\s+)pyflink(\b)", re.M)


def ported(source: str) -> str:
    """The program with ``pyflink`` replaced by ``flowc`` in its import lines, nothing else."""
    return _IMPORT.sub(r"\1\2\3flowc\4", source)


PLANS = sorted((PROGRAMS / "plans").glob("*.expected"))


def _write(program: Path, tmp_path: Path) -> Path:
    path = tmp_path / program.name
    path.write_text(ported(program.read_text()))
    return path


# "3> x" / "id:3> x": the subtask index of a print prefix. It is dropped before comparing:
# which subtask prints a record depends on how PyFlink routes pickled keys (not as Java
# hashes them) and where Flink's rebalance starts (at random); flowc's routing is checked
# against Java Flink elsewhere (tests/test_flink_golden.py).
_SUBTASK = re.compile(r"^(?:([^\s:>]+):)?\d+> ")


def normalised(lines: Iterable[str]) -> Counter[str]:
    return Counter(_SUBTASK.sub(lambda m: f"{m.group(1)}> " if m.group(1) else "", line)
                   for line in lines if line)


def expected_lines(program: Path) -> Counter[str]:
    return normalised(program.with_suffix(".expected").read_text().splitlines())


def test_corpus_has_at_least_15_recorded_programs() -> None:
    assert len(CASES) >= 15


def test_subtask_indexes_are_dropped_but_identifiers_kept() -> None:
    assert normalised(["2> a", "sum:1> b", "sum> c", "d", "1>2"]) == Counter(
        ["a", "sum> b", "sum> c", "d", "1>2"])


def test_port_changes_only_import_lines() -> None:
    src = "from pyflink.common import Types\nimport pyflink.datastream\nx = 'pyflink'\n"
    assert ported(src) == "from flowc.common import Types\nimport flowc.datastream\nx = 'pyflink'\n"


@pytest.mark.parametrize("program", CASES, ids=lambda p: p.stem)
def test_program_prints_what_pyflink_printed(program: Path, tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """On the reference executor: the whole program runs, each ``execute()`` on
    ``run_reference`` (its print sinks' lines written to stdout as Flink writes them), so
    what a program prints after a job (e.g. the files a FileSink wrote) counts too."""
    import flowc.executor

    ran: list[str] = []

    def run(graph: Any, **options: Any) -> Any:
        result = run_reference(graph, job_name=options.get("job_name"))
        ran.append(graph.stream_graph.config.job_name)
        for line in result.printed:
            print(line)
        return result

    monkeypatch.setattr(flowc.executor, "run_job_graph", run)
    path = _write(program, tmp_path)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        runpy.run_path(str(path), run_name="__main__")
    assert ran, "the program executed no job"
    assert normalised(out.getvalue().splitlines()) == expected_lines(program)


def _jobs(program: Path, tmp_path: Path) -> list[Any]:
    path = _write(program, tmp_path)
    with capture_environments(dry_run=True) as cap:
        runpy.run_path(str(path), run_name="__main__")
    return cap.jobs


@pytest.mark.parametrize("expected", PLANS, ids=lambda p: p.stem)
def test_program_plan_matches_the_java_programs_flink_plan(expected: Path,
                                                           tmp_path: Path) -> None:
    name, job = expected.stem.removesuffix(".ext").rsplit(".job", 1)
    jobs = _jobs(PROGRAMS / f"{name}.py", tmp_path)
    # ExtOracle's (NAME.jobN.ext.expected) groups / regions / datasets lines are checked by
    # tests/test_flink_golden.py's corpus; here the chains, ids and edges.
    dump = "\n".join(line for line in expected.read_text().splitlines()
                     if line.split(" ", 1)[0] not in ("groups", "regions", "datasets"))
    env = jobs[int(job)]
    if ": Committer" in dump:
        # A FileSink: Flink's Writer + Committer, which flowc plans with this option
        # (docs/flink-differences.md, "file sinks").
        env.set_option("flowc.sink_committers", "true")
    assert ours(env.get_job_graph()) == structure(dump)


def test_plans_cover_most_programs() -> None:
    assert len({p.stem.rsplit(".job", 1)[0] for p in PLANS}) >= 23


@pytest.mark.spark
@pytest.mark.slow
@pytest.mark.parametrize("program", CASES, ids=lambda p: p.stem)
def test_program_prints_what_pyflink_printed_on_spark(program: Path, tmp_path: Path,
                                                      spark: Any) -> None:
    from flowc.cli import main

    path = _write(program, tmp_path)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["run", str(path), "--no-progress"]) == 0
    assert normalised(out.getvalue().splitlines()) == expected_lines(program)


@pytest.fixture(scope="module")
def spark() -> Any:
    from flowc.executor import get_spark

    return get_spark("local[2]")

