"""Constructs docs/language.md promises, each parsed, lowered, planned and run.

Every script here is compiled, planned down to the ExecutionGraph and run on the reference
executor, and the result (or the planned operator) shows the construct did what it says.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

from flowc.api.environment import StreamExecutionEnvironment
from flowc.chaining import build_execution_graph
from flowc.executor import run_reference
from flowc.parser import compile_source
from flowc.parser.lower import CompiledScript
from printed import rows as printed_rows

SOURCE = """
source t (k string, n int, s string, ts timestamp)
  values ('a', 1, 'it''s', timestamp '2024-05-01 10:00:00'),
         ('b', 2, 'a_c', timestamp '2024-05-01 10:00:01'),
         ('c', 3, null, timestamp '2024-05-01 10:00:02')
  watermark ts;
"""


def plan(text: str, base_dir: str | None = None) -> CompiledScript:
    script = compile_source(text, "c.flow", base_dir=base_dir)
    build_execution_graph(script.env.get_job_graph())
    return script


def run(pipeline: str) -> list[tuple[Any, ...]]:
    script = plan(SOURCE + pipeline)
    printed = run_reference(script.env.get_job_graph()).printed
    return sorted(printed_rows(printed))


def transformation(env: StreamExecutionEnvironment, name: str) -> Any:
    found = [t for t in env.program().transformations.values() if t.name == name]
    assert len(found) == 1, [t.name for t in env.program().transformations.values()]
    return found[0]


def test_not_equal_spellings() -> None:
    assert run("t | filter n <> 2 | map k | print;") == [("a",), ("c",)]
    assert run("t | filter n != 2 | map k | print;") == [("a",), ("c",)]
    assert run("t | filter n == 2 | map k | print;") == [("b",)]


def test_simple_case() -> None:
    rows = run("t | map k, case n when 1 then 'one' when 2 then 'two' else 'many' end as w"
               " | print;")
    assert rows == [("a", "one"), ("b", "two"), ("c", "many")]


def test_not_like_and_not_between() -> None:
    # s is null on row c: 'not like' of null is null, and the filter drops it.
    assert run("t | filter s not like 'a%' | map k | print;") == [("a",)]
    assert run(r"t | filter s like 'a\_c' | map k | print;") == [("b",)]
    assert run("t | filter n not between 2 and 3 | map k | print;") == [("a",)]


def test_quote_inside_a_string() -> None:
    assert run("t | filter s = 'it''s' | map k, s || '''' as q | print;") == [("a", "it's'")]


def test_day_and_fractional_durations() -> None:
    script = plan(SOURCE.replace("watermark ts", "watermark ts - 1.5s")
                  + "t | key by k | window sliding 1d every 0.5h | aggregate count(*) as n"
                    " | print;")
    watermarks = transformation(script.env, "Timestamps/Watermarks").operator.strategy
    assert watermarks.out_of_orderness == 1500
    window = transformation(script.env, "SlidingEventTimeWindows").operator.assigner
    assert (window.size, window.slide) == (86_400_000, 1_800_000)
    rows = run("t | map k, ts + 1d - 0.25s as later | print;")
    assert rows[0] == ("a", _ms("2024-05-02T09:59:59.750"))


def test_timestamp_with_offset() -> None:
    rows = run("t | filter ts = timestamp '2024-05-01 12:00:01+02:00' | map k | print;")
    assert rows == [("b",)]
    rows = run("t | map k, timestamp '2024-05-01T12:00:00.250+02:00' as x | filter k = 'a'"
               " | print;")
    assert rows == [("a", _ms("2024-05-01T10:00:00.250"))]


def _ms(iso: str) -> int:
    return int(dt.datetime.fromisoformat(iso + "+00:00").timestamp() * 1000)


def test_csv_quote_option(tmp_path: Path) -> None:
    (tmp_path / "q.csv").write_text("name;note\n|a;b|;x\nc;|d|\n", encoding="utf-8")
    script = plan("source q (name string, note string) from csv 'q.csv' "
                  "options (quote = '|', delimiter = ';');\nq | print;", str(tmp_path))
    assert ("quote", "|") in transformation(script.env, "q").source.options
    printed = run_reference(script.env.get_job_graph()).printed
    assert sorted(printed) == ["+I[a;b, x]", "+I[c, d]"]


def test_slot_sharing_group_alias() -> None:
    script = plan(SOURCE + "t | map k with (slot_sharing_group = 'g1')"
                           " | map k with (slot_group = 'g2') | print;")
    groups = [t.slot_sharing_group for t in script.env.program().transformations.values()
              if t.name == "Map"]
    assert groups == ["g1", "g2"]
    vertices = script.env.get_job_graph().vertices.values()
    assert {v.slot_sharing_group for v in vertices} >= {"g1", "g2"}


def test_set_mode() -> None:
    assert str(plan("set mode = streaming;" + SOURCE + "t | print;").env.program().config.mode) \
        .endswith("STREAMING")
    assert str(plan("set mode = batch;" + SOURCE + "t | print;").env.program().config.mode) \
        .endswith("BATCH")


def test_flat_map_of_any_array_expression_with_nulls() -> None:
    # Expressions whose code needs null-check temporaries (nested calls on a nullable field,
    # arithmetic, if/coalesce) used to fail with "too complex to compile".
    # s is null on row c: a null array emits no rows.
    assert run("t | flat_map split(lower(s), '_') as w | map k, w | print;") == [
        ("a", "it's"), ("b", "a"), ("b", "c")]
    assert run("t | flat_map split(upper(coalesce(s, k || '-x')), '-') as w "
               "| map k, w | print;") == [("a", "IT'S"), ("b", "A_C"), ("c", "C"), ("c", "X")]
    # null elements are rows of their own; a null array (the 'if' on row b) is none
    assert run("t | flat_map if(n = 2, null, [n * 10, null, length(s)]) as v "
               "| map k, coalesce(v, -1) as v | print;") == [
        ("a", -1), ("a", 4), ("a", 10), ("c", -1), ("c", -1), ("c", 30)]
    # exploding into an existing name replaces that column in place
    assert run("t | flat_map split(s || '_' || k, '_') as s | map k, s | print;") == [
        ("a", "a"), ("a", "it's"), ("b", "a"), ("b", "b"), ("b", "c")]


def test_is_null_of_a_constant_is_folded_without_a_warning() -> None:
    # `1 is not None` in generated code made Python print a SyntaxWarning
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert run("t | filter 1 is not null | map k | print;") == [("a",), ("b",), ("c",)]
        assert run("t | filter 'x' is null | map k | print;") == []
        assert run("t | filter null is null | map k | print;") == [("a",), ("b",), ("c",)]
