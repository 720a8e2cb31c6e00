"""The .flow forms of Flink SQL's updating operators: regular joins (join / left / right /
full join ... on ... without a window), an aggregate without 'key by' (one group), a
rolling aggregate of a rolling aggregate, and the consumers that take insert-only rows."""

from __future__ import annotations

from pathlib import Path

import pytest

from flowc.errors import FlowcError
from flowc.executor import run_reference
from flowc.parser import compile_source

SOURCES = """source orders (id int, user_id string) from csv 'o.csv';
source users (user_id string, name string) from csv 'u.csv';
"""


def run(tmp_path: Path, pipeline: str) -> list[str]:
    (tmp_path / "o.csv").write_text("id,user_id\n1,u1\n2,u2\n3,u9\n4,\n", encoding="utf-8")
    (tmp_path / "u.csv").write_text("user_id,name\nu1,Ann\nu2,Bob\nu4,Dee\n", encoding="utf-8")
    script = compile_source(SOURCES + pipeline, "j.flow", base_dir=str(tmp_path))
    return list(run_reference(script.env.get_job_graph()).printed)


def test_inner_join_is_insert_only(tmp_path: Path) -> None:
    out = run(tmp_path, "orders | join users on orders.user_id = users.user_id "
                        "| map id, name | print;")
    assert sorted(out) == ["+I[1, Ann]", "+I[2, Bob]"]


def test_left_join_retracts_its_padded_rows(tmp_path: Path) -> None:
    out = run(tmp_path, "orders | left join users as u on user_id | map id, name | print;")
    # the reference executor reads the orders first: each waits padded, then joins; a
    # null key (order 4) joins nothing and stays padded
    assert out == ["+I[1, null]", "-D[1, null]", "+I[1, Ann]", "+I[2, null]", "-D[2, null]",
                   "+I[2, Bob]", "+I[3, null]", "+I[4, null]"]


@pytest.mark.parametrize("kind,rows", [
    ("right", ["+I[1, Ann]", "+I[2, Bob]", "+I[null, Dee]"]),
    ("full", ["+I[1, Ann]", "+I[2, Bob]", "+I[3, null]", "+I[4, null]", "+I[null, Dee]"]),
])
def test_right_and_full_joins(tmp_path: Path, kind: str, rows: list[str]) -> None:
    from flowc.rowkind import materialize
    from printed import row

    out = run(tmp_path, f"orders | {kind} join users on user_id | map id, name | print;")
    table = [f"+I[{', '.join('null' if v is None else str(v) for v in r)}]"
             for r in materialize(row(x) for x in out)]
    assert sorted(table) == sorted(rows)


def test_aggregate_without_key_by_is_one_group(tmp_path: Path) -> None:
    out = run(tmp_path, "orders | aggregate count(*) as n, max(id) as top | print;")
    assert out == ["+I[1, 1]", "-U[1, 1]", "+U[2, 2]", "-U[2, 2]", "+U[3, 3]", "-U[3, 3]",
                   "+U[4, 4]"]


def test_aggregate_of_a_left_join(tmp_path: Path) -> None:
    out = run(tmp_path, "orders | left join users on user_id | filter name is not null "
                        "| key by name | aggregate count(*) as n | print;")
    assert sorted(out) == ["+I[Ann, 1]", "+I[Bob, 1]"]


@pytest.mark.parametrize("pipeline,message", [
    ("orders | key by user_id | aggregate count(*) as n | write csv 'out.csv';",
     "a csv file sink takes an insert-only stream"),
    ("orders | key by user_id | aggregate count(*) as n | key by n | window tumbling 1s "
     "| aggregate count(*) as c | print;", "a window over an updating stream"),
    ("orders | key by user_id | aggregate first(id) as f | key by f "
     "| aggregate first(user_id) as u | print;", "first() over an updating stream"),
])
def test_insert_only_consumers_reject_updates(tmp_path: Path, pipeline: str,
                                               message: str) -> None:
    with pytest.raises(FlowcError) as info:
        run(tmp_path, pipeline)
    assert message in info.value.format()


def test_top_n_and_deduplication(tmp_path: Path) -> None:
    (tmp_path / "s.csv").write_text("k,v\na,1\na,3\na,2\nb,5\na,4\n", encoding="utf-8")
    src = "source s (k string, v int) from csv 's.csv';\n"

    def out(pipeline: str) -> list[str]:
        script = compile_source(src + pipeline, "t.flow", base_dir=str(tmp_path))
        return list(run_reference(script.env.get_job_graph()).printed)

    assert out("s | key by k | top 2 by v desc as rank | print;") == [
        "+I[a, 1, 1]", "-U[a, 1, 1]", "+U[a, 3, 1]", "+I[a, 1, 2]", "-U[a, 1, 2]",
        "+U[a, 2, 2]", "+I[b, 5, 1]", "-U[a, 3, 1]", "+U[a, 4, 1]", "-U[a, 2, 2]",
        "+U[a, 3, 2]"]
    assert out("s | key by k | top 2 by v desc | print;") == [
        "+I[a, 1]", "+I[a, 3]", "-D[a, 1]", "+I[a, 2]", "+I[b, 5]", "-D[a, 2]", "+I[a, 4]"]
    # top 1: deduplication, -U / +U as Flink's Deduplicate
    assert out("s | key by k | top 1 by v | print;") == ["+I[a, 1]", "+I[b, 5]"]
    assert out("s | top 1 by v desc | print;") == [
        "+I[a, 1]", "-U[a, 1]", "+U[a, 3]", "-U[a, 3]", "+U[b, 5]"]
