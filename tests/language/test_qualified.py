"""Qualified names (``imp.v``, ``clicks.user_id``) mean the side of a join they name.

A qualifier is never dropped: it resolves to that side's column (renamed in the join's
output when the left side has the name too) or is a positioned error.
"""

from __future__ import annotations

import pytest

from flowc.errors import FlowcError, FlowNameError
from flowc.executor import run_reference
from flowc.parser import compile_source
from printed import rows as printed_rows

SOURCES = """
source clicks (user_id string, v int, ts timestamp)
  values ('a', 1, timestamp '2024-05-01 10:00:01'), ('b', 2, timestamp '2024-05-01 10:00:02')
  watermark ts;
source impressions (user_id string, v int, ts timestamp)
  values ('a', 10, timestamp '2024-05-01 10:00:03'), ('b', 20, timestamp '2024-05-01 10:00:04')
  watermark ts;
source extra (user_id string, v int, ts timestamp)
  values ('a', 100, timestamp '2024-05-01 10:00:05'), ('b', 200, timestamp '2024-05-01 10:00:06')
  watermark ts;
"""
T0 = 1714557600000  # 2024-05-01 10:00:00 UTC


def run(pipeline: str) -> list[tuple[object, ...]]:
    script = compile_source(SOURCES + pipeline, "q.flow")
    printed = run_reference(script.env.get_job_graph()).printed
    return sorted(printed_rows(printed))


def error(pipeline: str) -> FlowcError:
    with pytest.raises(FlowcError) as info:
        compile_source(SOURCES + pipeline, "q.flow")
    return info.value


@pytest.mark.parametrize("join", [
    "join impressions as imp on clicks.user_id = imp.user_id window tumbling 1m",
    "interval join impressions as imp on imp.user_id = clicks.user_id between -5s and 5s",
])
def test_both_sides_share_field_names(join: str) -> None:
    rows = run(f"clicks | {join}\n"
               "  | filter imp.v > clicks.v and clicks.user_id = imp.user_id\n"
               "  | map clicks.user_id, clicks.v as left_v, imp.v as right_v, imp.ts as right_ts,"
               " v, imp_v\n  | print;")
    assert rows == [("a", 1, 10, T0 + 3000, 1, 10), ("b", 2, 20, T0 + 4000, 2, 20)]


def test_right_side_without_alias_is_named_by_its_stream() -> None:
    rows = run("clicks | join impressions on user_id window tumbling 1m\n"
               "  | map impressions.v as r, clicks.v as l | print;")
    assert rows == [(10, 1), (20, 2)]


def test_head_qualifier_before_any_join() -> None:
    rows = run("clicks | filter clicks.v > 1 | key by user_id | map clicks.v as w | print;")
    assert rows == [(2,)]


def test_second_join_uses_the_first_joins_names() -> None:
    rows = run("clicks | join impressions as imp on user_id window tumbling 1m\n"
               "  | join extra on imp.user_id = extra.user_id window tumbling 1m\n"
               "  | map clicks.v as a, imp.v as b, extra.v as c, extra_v | print;")
    assert rows == [(1, 10, 100, 100), (2, 20, 200, 200)]


def test_head_names_the_left_side_of_a_join_after_map() -> None:
    rows = run("clicks | map user_id as u, v, ts\n"
               "  | join impressions as imp on clicks.u = imp.user_id window tumbling 1m\n"
               "  | map u, imp.v as r | print;")
    assert rows == [("a", 10), ("b", 20)]


def test_qualifier_ends_at_a_reshaping_step() -> None:
    err = error("clicks | join impressions as imp on user_id window tumbling 1m\n"
                "  | map user_id, imp.v as r\n  | filter imp.r > 1 | print;")
    assert isinstance(err, FlowNameError)
    assert err.message == "unknown qualifier 'imp' in 'imp.r' in 'filter'"
    assert err.span is not None and (err.span.line, err.span.column) == (13, 12)
    assert err.hint == "write 'r' without a qualifier"


def test_unknown_qualifier_suggests_the_streams_here() -> None:
    err = error("clicks | join impressions as imp on user_id window tumbling 1m\n"
                "  | map im.v as r | print;")
    assert err.message == "unknown qualifier 'im' in 'im.v' in 'map'"
    assert err.hint == "did you mean 'imp'?"
    err = error("clicks | map foo.user_id | print;")
    assert err.message == "unknown qualifier 'foo' in 'foo.user_id' in 'map'"
    assert err.hint == "the stream here: 'clicks'"


def test_unknown_field_of_a_side() -> None:
    err = error("clicks | join impressions as imp on user_id window tumbling 1m\n"
                "  | map imp.vv as r | print;")
    assert err.message == "'imp' has no field 'vv' in 'map'"
    assert err.hint == "did you mean 'v'?"


def test_self_join_qualifier_is_ambiguous_without_alias() -> None:
    err = error("clicks | join clicks on user_id window tumbling 1m | map clicks.v | print;")
    assert "'clicks' names both sides of the join" in err.message
    err = error("clicks | join clicks on clicks.user_id = clicks.v window tumbling 1m | print;")
    assert err.message == "'clicks' names both sides of the join"
    rows = run("clicks | join clicks as c2 on user_id window tumbling 1m\n"
               "  | map clicks.v as a, c2.v as b | print;")
    assert rows == [(1, 1), (2, 2)]


def test_join_condition_qualifiers_are_checked() -> None:
    err = error("clicks | join impressions as imp on foo.user_id = imp.user_id "
                "window tumbling 1m | print;")
    assert err.message == "unknown stream 'foo' in the join condition"
    assert err.hint == "the sides of this join are 'clicks' and 'imp'"
    err = error("clicks | join impressions as imp on clicks.v = clicks.user_id "
                "window tumbling 1m | print;")
    assert "both are on the left side" in err.message
