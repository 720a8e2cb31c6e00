"""Row kinds (flowc.rowkind) and the rolling aggregate's changelog (flowc.parser.changes),
operator by operator."""

from __future__ import annotations

import pickle
from typing import Any

from flowc.api.environment import StreamExecutionEnvironment
from flowc.executor import run_reference
from flowc.operators import CodeFn
from flowc.parser import compile_source
from flowc.parser.aggregates import AggSpec, RowAggregate
from flowc.parser.changes import RetractAggregate, RollingChanges, RollingMerge, RollingStart
from flowc.rowkind import (
    Delete,
    UpdateAfter,
    UpdateBefore,
    kind_of,
    local_date_time,
    materialize,
    row_text,
    same_kind,
)
from flowc.types import INT


def test_kinds_are_tuples_that_pickle_by_class() -> None:
    u = UpdateBefore(("a", 1))
    assert u == ("a", 1) and hash(u) == hash(("a", 1)) and kind_of(u) == "-U"
    back = pickle.loads(pickle.dumps(u))
    assert type(back) is UpdateBefore and back == u
    assert kind_of(("a", 1)) == "+I"
    # a Calc keeps the kind; a plain tuple stays plain
    assert type(same_kind(u, ("A",))) is UpdateBefore
    assert type(same_kind(("a", 1), ("A",))) is tuple


def test_print_format_is_flinks() -> None:
    assert row_text(("a", 1, None), ("string", "int", "string")) == "+I[a, 1, null]"
    assert row_text(UpdateAfter((1.0, True, 0.001)), ("double", "bool", "double")) == \
        "+U[1.0, true, 0.001]"
    assert row_text(Delete((1.0e7,)), ("double",)) == "-D[1.0E7]"
    t0 = 1714557600000  # 2024-05-01T10:00
    assert [local_date_time(t0 + d) for d in (0, 1000, 1500, 60000)] == [
        "2024-05-01T10:00", "2024-05-01T10:00:01", "2024-05-01T10:00:01.500",
        "2024-05-01T10:01"]


def test_materialize_applies_retractions() -> None:
    log = [("a", 1), ("b", 1), UpdateBefore(("a", 1)), UpdateAfter(("a", 2)), Delete(("b", 1))]
    assert materialize(log) == [("a", 2)]


def _col(i: int) -> CodeFn:
    return CodeFn(lambda r, i=i: r[i], f"r[{i}]", ("r",))


def _run(agg: Any, rows: list[Any], retracting: bool, batch: bool = False) -> list[Any]:
    """The three steps of a rolling aggregate keyed on field 0, as the reduce runs them."""
    start, merge = RollingStart((0,), agg, retracting), RollingMerge(1, agg)
    changes = RollingChanges(1, agg, batch)
    state: dict[Any, Any] = {}
    out: list[Any] = []
    for r in rows:
        v = start(r)
        new = v if v[0] not in state else merge(state[v[0]], v)
        state[v[0]] = new
        if not batch:
            out.extend(changes.flat_map(new))
    if batch:
        for v in state.values():
            out.extend(changes.flat_map(v))
    return [(kind_of(x), tuple(x)) for x in out]


def test_insert_only_group_aggregate() -> None:
    agg = RowAggregate([AggSpec("count_star", None, "n", INT), AggSpec("max", _col(1), "m", INT)])
    out = _run(agg, [("a", 1), ("a", 5), ("a", 3), ("b", 2)], retracting=False)
    assert out == [("+I", ("a", 1, 1)), ("-U", ("a", 1, 1)), ("+U", ("a", 2, 5)),
                   ("-U", ("a", 2, 5)), ("+U", ("a", 3, 5)), ("+I", ("b", 1, 2))]
    # BATCH: the final row of each key, insert-only
    assert _run(agg, [("a", 1), ("a", 5)], retracting=False, batch=True) == \
        [("+I", ("a", 2, 5))]


def test_an_unchanged_row_is_not_emitted() -> None:
    agg = RowAggregate([AggSpec("max", _col(1), "m", INT)])
    assert _run(agg, [("a", 5), ("a", 3)], retracting=False) == [("+I", ("a", 5))]


def test_retractions_min_max_distinct_sum_avg() -> None:
    kinds = ("count_star", "min", "max", "count_distinct", "sum", "avg")
    agg = RetractAggregate(kinds, (None,) + (_col(1),) * 5)
    rows = [("a", 1), ("a", 5), ("a", 5), UpdateBefore(("a", 5)), UpdateBefore(("a", 1)),
            Delete(("a", 5)), ("a", None)]
    assert _run(agg, rows, retracting=True) == [
        ("+I", ("a", 1, 1, 1, 1, 1, 1.0)),
        ("-U", ("a", 1, 1, 1, 1, 1, 1.0)), ("+U", ("a", 2, 1, 5, 2, 6, 3.0)),
        ("-U", ("a", 2, 1, 5, 2, 6, 3.0)), ("+U", ("a", 3, 1, 5, 2, 11, 11 / 3)),
        # one 5 taken out: min, max and the distinct count stay (5 is still there)
        ("-U", ("a", 3, 1, 5, 2, 11, 11 / 3)), ("+U", ("a", 2, 1, 5, 2, 6, 3.0)),
        ("-U", ("a", 2, 1, 5, 2, 6, 3.0)), ("+U", ("a", 1, 5, 5, 1, 5, 5.0)),
        # the key's last row retracted: -D; the next row starts it again with +I
        ("-D", ("a", 1, 5, 5, 1, 5, 5.0)),
        ("+I", ("a", 1, None, None, 0, None, None)),
    ]


def test_a_retraction_for_an_empty_key_is_dropped() -> None:
    agg = RetractAggregate(("count_star",), (None,))
    assert _run(agg, [UpdateBefore(("a", 1)), ("a", 1)], retracting=True) == \
        [("+I", ("a", 1))]


def test_flow_rolling_aggregate_of_a_rolling_aggregate_prints_a_changelog(tmp_path: Any) -> None:
    (tmp_path / "t.csv").write_text("k,v\na,1\na,2\nb,1\n", encoding="utf-8")
    script = compile_source(
        "source t (k string, v int) from csv 't.csv';\n"
        "let per_key = t | key by k | aggregate count(*) as n;\n"
        "per_key | key by n | aggregate count(*) as keys | print;\n",
        "t.flow", base_dir=str(tmp_path))
    printed = run_reference(script.env.get_job_graph()).printed
    assert printed == ["+I[1, 1]", "-D[1, 1]", "+I[2, 1]", "+I[1, 1]"]


def test_explain_shows_the_changelog_mode() -> None:
    env = StreamExecutionEnvironment()
    script = compile_source("source t (k string, v int) values ('a', 1);\n"
                            "t | key by k | aggregate sum(v) as s | map k, s * 2 as d | print;\n"
                            "t | map k | print;\n", "t.flow", env=env)
    sg = script.env.get_stream_graph()
    modes = {sg.nodes[n].name: m for n, m in sg.changelog_modes().items()}
    assert modes["Keyed Reduce"] == "[I]"  # its records are (key, state), not rows
    maps = [m for n, m in sg.changelog_modes().items() if sg.nodes[n].name == "Map"]
    assert sorted(maps) == ["[I,UB,UA,D]", "[I,UB,UA,D]", "[I]", "[I]"]


def test_updating_jobs_run_columnar_with_row_kinds() -> None:
    # the columnar executor's Arrow batches carry the row kind (``_kind``, arrow/convert.py)
    from flowc.executor.arrow.plan import plan_members

    script = compile_source("source t (k string, v int, ts timestamp) from csv 'x.csv' "
                            "watermark ts - 1s;\n"
                            "let top = t | key by k | top 1 by v;\n"
                            "top | map k, v + 1 as w | print;\n", "t.flow")
    members = plan_members(script.env.get_job_graph())
    assert isinstance(members, dict), members
    assert [m.kind for ms in members.values() for m in ms] == [
        "timestamps", "row_op", "map", "sink"]
