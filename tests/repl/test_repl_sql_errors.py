"""SQL diagnostics in the REPL are the ones a .sql file gives (same message, same hint, same
column), whichever step finds the error: translation, type check of a query, EXPLAIN."""

from __future__ import annotations

import io
import re
from pathlib import Path

import pytest
from test_repl_session import spark  # noqa: F401 - the shared Spark session fixture

from flowc.errors import FlowcError
from flowc.repl import Session
from flowc.sql import compile_sql

TABLE = ("CREATE TABLE clicks (user_id STRING, article_id STRING, action STRING, "
         "ts TIMESTAMP(3), WATERMARK FOR ts AS ts - INTERVAL '2' SECOND) WITH ("
         "'connector' = 'filesystem', 'path' = 'clicks.csv', 'format' = 'csv');")
QUERIES = [
    "SELECT nope FROM clicks;",
    "SELECT user_id FROM clicks WHERE actoin = 'x';",
    "SELECT user_id FROM clicks WHERE action > 1;",
    "SELECT user_id, COUNT(*) AS n FROM clicks GROUP BY usr;",
    "SELECT user_id, CUONT(*) AS n FROM clicks GROUP BY user_id;",
    "SELECT user_id / 2 AS h FROM clicks;",
    "SELECT POSITION(1 IN action) AS p FROM clicks;",
    "SELECT c.nope FROM clicks c;",
    "SELEC user_id FROM clicks;",
    "SELECT FROM clicks;",
    "SELECT 1 AS a FROM clicks\nSELECT 2 AS b FROM clicks;",
    "SELECT * FROM clicks WHERE user_id = 'a' AND (action = 'x';",
]


def essence(text: str) -> list[str]:
    """The diagnostic without the file name and line: message, column, caret and hint."""
    out = []
    for line in text.splitlines():
        line = re.sub(r"^\S+?:\d+:(\d+): ", r"col \1: ", line)
        line = re.sub(r"^\s*\d+ \|", " |", line)
        out.append(line.rstrip())
    return [line for line in out if line]


def file_diagnostic(query: str) -> str:
    try:
        compile_sql(TABLE + "\n" + query, "q.sql")
    except FlowcError as e:
        return e.format()
    raise AssertionError(f"no error for {query!r}")


def repl_diagnostic(query: str, explain: bool = False) -> str:
    out = io.StringIO()
    s = Session(out=out, width=200)
    s.execute(TABLE)
    assert out.getvalue() == ""
    s.execute(("explain " if explain else "") + query)
    return out.getvalue()


@pytest.mark.parametrize("query", QUERIES)
def test_repl_sql_errors_are_the_files(query: str) -> None:
    expected = essence(file_diagnostic(query))
    got = essence(repl_diagnostic(query))
    assert got == expected
    assert "'map'" not in "".join(got) and "field" not in "".join(got)


@pytest.mark.parametrize("query", QUERIES[:8])
def test_explain_errors_are_the_files(query: str) -> None:
    text = repl_diagnostic(query, explain=True)
    file_text = file_diagnostic(query)
    # the same message and hint; the column moves by len('explain ')
    first = [line for line in essence(text) if not line.lstrip().startswith("|")]
    want = [line for line in essence(file_text) if not line.lstrip().startswith("|")]
    shift = lambda lines: [re.sub(r"^col \d+: ", "", x) for x in lines]  # noqa: E731
    assert shift(first) == shift(want)


def test_explain_in_a_file_speaks_sql() -> None:
    text = file_diagnostic("EXPLAIN SELECT nope FROM clicks;")
    assert "unknown column 'nope' in SELECT" in text
    assert "the columns here are" in text


def test_misspelt_statement_words_in_the_repl() -> None:
    out = io.StringIO()
    s = Session(out=out, width=200)
    s.execute(TABLE)
    s.execute("sourc x (a int) from sequence 1 to 3;")
    s.execute("INSRT INTO t SELECT * FROM clicks;")
    s.execute("clicks | filter action = 'x' | print;")  # a pipeline: not a statement word
    text = out.getvalue()
    assert "unknown statement 'sourc'" in text and "did you mean 'source'?" in text
    assert "unknown statement 'INSRT'" in text and "did you mean 'INSERT'?" in text
    assert "let NAME = pipeline" not in text


def test_a_table_defined_again_after_a_failed_create() -> None:
    out = io.StringIO()
    s = Session(out=out, width=200)
    s.execute("CREATE TABLE o (a STRING) WITH ('connector' = 'prnt');")
    assert "did you mean 'print'?" in out.getvalue()
    s.execute("CREATE TABLE o (a STRING) WITH ('connector' = 'print');")
    assert "o" in s.unit.tables and out.getvalue().count("error") == 1


def test_a_semicolon_in_a_comment_or_string_does_not_submit() -> None:
    from flowc.repl import complete_input

    assert not complete_input("SELECT 1 -- c;")
    assert not complete_input("SELECT 1 /* ; */")
    assert not complete_input("SELECT ';'")
    assert not complete_input("SELECT 'it''s;")
    assert complete_input("SELECT 1; -- done")
    assert complete_input("SELECT 1 -- c\n;")
    assert complete_input("show tables -- all of them")


def test_prompt_toolkit_completer() -> None:
    from prompt_toolkit.completion import CompleteEvent
    from prompt_toolkit.document import Document

    from flowc.repl import completer

    s = Session(out=io.StringIO())
    s.execute(TABLE)
    c = completer(s)

    def complete(text: str) -> list[str]:
        return sorted(x.text for x in c.get_completions(Document(text), CompleteEvent()))

    assert "SELECT" in complete("SEL")
    assert complete("SELECT user_") == ["user_id"]
    assert complete("SELECT * FROM cli") == ["clicks"]
    assert "lower" in complete("SELECT low")
    assert complete("SELECT ") == [] and complete("SELECT (") == []
    first = next(iter(c.get_completions(Document("FROM cli"), CompleteEvent())))
    assert first.start_position == -3  # replaces the word typed so far


NUMS = ("source nums (n int, k string, ts timestamp)\n"
        "  values (7, 'a', timestamp '2024-01-01'), (-7, 'b', timestamp '2024-01-01 00:00:01'),"
        " (0, 'a', timestamp '2024-01-01 00:00:07')\n  watermark ts;")


@pytest.mark.spark
def test_integer_division_on_spark(spark: object) -> None:  # noqa: F811 - the fixture
    out = io.StringIO()
    s = Session(out=out, width=160)
    s.execute(NUMS)
    s.execute("SELECT n / 2 AS q, n % 2 AS r, n / 2.0 AS d FROM nums WHERE n <> 0;")
    text = out.getvalue()
    assert "│ 3  │ 1  │ 3.5  │" in text and "│ -3 │ -1 │ -3.5 │" in text, text
    s.execute("SELECT k, 10 / n AS q FROM nums;")  # n = 0 in the last row: the job fails
    text = out.getvalue()
    assert "failed: ArithmeticException: / by zero" in text and "<repl:3>:1" in text, text
    assert "Traceback" not in text
    s.execute("nums | map n / 2 as half;")  # .flow's '/' stays double
    assert "3.5" in out.getvalue()


def test_udfs_and_special_functions_are_not_unknown(tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "my_udfs.py").write_text("def shout(s):\n    return s.upper() + '!'\n",
                                         encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    out = io.StringIO()
    s = Session(out=out, width=200)
    s.execute(TABLE)
    s.execute("import udf my_udfs.shout(string) -> string;")
    s.execute("explain SELECT shout(action) AS a FROM clicks;")
    s.execute("explain SELECT user_id, shout(LAST_VALUE(action)) AS a, "
              "TIMESTAMPDIFF(SECOND, MIN(ts), MAX(ts)) AS d FROM clicks GROUP BY user_id;")
    text = out.getvalue()
    assert "error:" not in text and "Keyed Reduce" in text, text
    s.execute("SELECT user_id, shoot(action) AS a FROM clicks;")
    assert "unknown function 'shoot'" in out.getvalue()
    assert "did you mean 'shout'?" in out.getvalue()


def test_internal_functions_are_not_offered_nor_shadowed(tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    from flowc.executor import run_reference
    from flowc.sql import collect_query
    from flowc.sql.source import split_sql

    (tmp_path / "div_udfs.py").write_text("def first(a, b):\n    return a\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    s = Session(out=io.StringIO())
    s.execute(NUMS)
    assert not [w for w in s.words() if w.startswith("_sql")]
    assert "lower" in s.words()
    # _sql_div is not a name a session knows: a function imported under it is the user's
    # own, and SQL's '/' still divides
    s.execute("import udf div_udfs.first(int, int) -> int as _sql_div;")
    assert "error" not in s.console.file.getvalue()  # type: ignore[attr-defined]
    chunk = split_sql("SELECT n / 2 AS q, _sql_div(n, 2) AS f FROM nums;", "<q>")[0]
    lets, pipeline = s.unit.query(chunk)
    script, _, _ = collect_query(s.unit, pipeline, lets)
    rows = run_reference(script.env.get_job_graph())["result"]
    assert sorted(tuple(r) for r in rows) == [(-3, -7), (0, 0), (3, 7)]
