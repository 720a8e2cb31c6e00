"""Top-N whose PARTITION BY / ORDER BY column is not in the subquery's select list
(``SELECT a, ROW_NUMBER() OVER (PARTITION BY k ORDER BY ts) ...``): Flink reads it from the
subquery's FROM, ranks, and drops it (its Rank's ``select=`` lists the column). Against
Flink 2.3, recorded once (changelog/record_sqla.py, not run here): Flink's printed lines at
parallelism 1 and its final table at 2; a column the FROM does not have is Flink's error at
Flink's position."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from sqla_tables import cases, final_table, printed

from flowc.errors import FlowcError

CASES = cases("topn_outside")
RUNS = [c for c in CASES if "error" not in c]
ERRORS = [c for c in CASES if "error" in c]


def test_the_fixtures_rank_on_a_column_the_select_list_leaves_out() -> None:
    assert len(RUNS) >= 5 and ERRORS
    for case in RUNS:
        node = next(line for line in case["plan"] if "Rank(" in line or "Deduplicate(" in line)
        out = case["columns"]
        ranked = node.split("select=[", 1)[1].split("]", 1)[0].split(", ")
        assert set(ranked) - set(out) - {"w0$o0"}, (node, out)  # a column only ranked on


@pytest.mark.parametrize("case", RUNS, ids=[c["query"][:80] for c in RUNS])
def test_printed_lines_are_flinks(tmp_path: Path, case: dict[str, Any]) -> None:
    assert printed(tmp_path, case["query"], 1) == case["print"]


@pytest.mark.parametrize("case", RUNS, ids=[c["query"][:80] for c in RUNS])
def test_final_table_at_parallelism_2(tmp_path: Path, case: dict[str, Any]) -> None:
    assert final_table(printed(tmp_path, case["query"], 2)) == final_table(case["print"])


@pytest.mark.parametrize("case", ERRORS, ids=[c["query"][:80] for c in ERRORS])
def test_a_column_projected_away_is_flinks_error(tmp_path: Path, case: dict[str, Any]) -> None:
    with pytest.raises(FlowcError) as info:
        printed(tmp_path, case["query"], 1)
    flink = case["cause"][-1].split("SqlValidatorException: ", 1)[1]
    assert info.value.message == flink
    # Flink: "From line 1, column 103 ..."; the query is line 5 of the test's file
    column = int(case["error"].split("column ", 1)[1].split(" ", 1)[0]) if "column " in \
        case["error"] else int(case["cause"][0].split("column ", 1)[1].split(" ", 1)[0])
    assert info.value.span is not None
    assert (info.value.span.line, info.value.span.column) == (5, column)
