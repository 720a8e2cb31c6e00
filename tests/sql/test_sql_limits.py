"""Big and deep SQL: what .flow takes, SQL takes; deeper nesting is a positioned error."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from flowc.errors import EXIT_USER, FlowcError
from flowc.sql import compile_sql
from flowc.sql.source import MAX_NESTING

TABLE = "CREATE TABLE t (a INT) WITH ('connector' = 'datagen', 'number-of-rows' = '5');\n"


def error_of(text: str) -> FlowcError:
    with pytest.raises(FlowcError) as info:
        compile_sql(text, "q.sql")
    return info.value


def test_a_long_flat_sum_compiles() -> None:
    # sqlglot nests `a + a + ...` one level per operator; the translator walks it in a loop
    # (5000 levels: five times Python's recursion limit, so no recursive walk passes)
    compile_sql(TABLE + "SELECT " + " + ".join(["a"] * 5000) + " AS s FROM t;", "q.sql")


# heavy: ~25 s on CI (sqlglot tokenizes the text three times and Python compiles the
# 100,000-term lambda twice); the 5000-term sum above checks the same loop in the default run
@pytest.mark.heavy
@pytest.mark.slow
def test_a_sum_of_100000_terms_compiles() -> None:
    compile_sql(TABLE + "SELECT " + "+".join(["a"] * 100_000) + " AS s FROM t;", "q.sql")


@pytest.mark.parametrize("open_, inner, close", [
    ("(", "a", ")"), ("-(", "a", ")"), ("abs(", "a", ")"), ("CAST(", "a", " AS BIGINT)"),
])
def test_nesting_up_to_the_limit_compiles(open_: str, inner: str, close: str) -> None:
    n = MAX_NESTING
    compile_sql(TABLE + f"SELECT {open_ * n}{inner}{close * n} AS s FROM t;", "q.sql")


def test_nested_subqueries_up_to_the_limit_compile() -> None:
    n = MAX_NESTING
    compile_sql(TABLE + "SELECT a FROM " + "(SELECT a + 1 AS a FROM " * n + "t" + ")" * n +
                ";", "q.sql")


# 10,000 levels: ten times the recursion limit, well past any recursion; 100,000 (~13 s
# for the three shapes, 8.5 of them CASE) only in the heavy run
@pytest.mark.parametrize("depth", [MAX_NESTING + 1, 1000, 10_000, pytest.param(
    100_000, marks=[pytest.mark.heavy, pytest.mark.slow])])
@pytest.mark.parametrize("open_, close", [("(", ")"), ("abs(", ")"),
                                          ("CASE WHEN a > 0 THEN ", " END")])
def test_deeper_nesting_is_a_positioned_error(depth: int, open_: str, close: str) -> None:
    body = "1" if "CASE" in open_ else "a"
    err = error_of(TABLE + f"SELECT {open_ * depth}{body}{close * depth} AS s FROM t;")
    assert err.exit_code == EXIT_USER
    assert "nested too deeply" in err.message
    assert f"the limit is {MAX_NESTING} levels" in err.message
    # at the first level too many: its '(' or CASE
    first_over = len("SELECT ") + len(open_) * MAX_NESTING + max(open_.find("("), 0) + 1
    assert (err.span.line, err.span.column) == (2, first_over)


BIG_STRING = ("x" * 998 + "''") * 10_000  # 10 MB, a quote written '' now and then


def test_a_10_mb_string_literal_parses_in_little_memory(tmp_path: Path) -> None:
    # The string patterns repeated a group per character: 10 MB took ~2.5 GB of memory.
    flow = tmp_path / "big.flow"
    flow.write_text("source t (a int) values (1);\nt | map a, '" + BIG_STRING +
                    "' as s | print;\n", encoding="utf-8")
    sql = tmp_path / "big.sql"
    sql.write_text(TABLE + "SELECT a, '" + BIG_STRING + "' AS s FROM t;\n",
                   encoding="utf-8")
    code = textwrap.dedent(f"""
        import re
        from flowc.parser import compile_source
        from flowc.lexer import FlowLexer
        from flowc.sql import compile_sql
        list(FlowLexer().get_tokens(open({str(flow)!r}).read()))  # the REPL highlights input
        compile_source(open({str(flow)!r}).read(), "big.flow")
        compile_sql(open({str(sql)!r}).read(), "big.sql")
        # VmHWM, not ru_maxrss: Linux carries ru_maxrss over from the (big) pytest process
        print(re.search(r"VmHWM:\\s*(\\d+)", open("/proc/self/status").read()).group(1))
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, env={**os.environ,
                                          "PYTHONPATH": str(Path(__file__).parents[2] /
                                                            "src")})
    assert int(out.stdout.split()[-1]) < 600_000, "more than 600 MB (VmHWM in KB)"
