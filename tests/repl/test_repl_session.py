"""The REPL end to end through prompt_toolkit (pipe input, DummyOutput): define a source,
query it, explain, make an error, recover, quit. One Spark session for all tests."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from flowc.parser import ast as A
from flowc.repl import Session, complete_input, prompt_loop

SOURCE = ("source nums (n int, k string, ts timestamp)\n"
          "  values (1, 'a', timestamp '2024-01-01'), (2, 'b', timestamp '2024-01-01 00:00:01'),"
          " (3, 'a', timestamp '2024-01-01 00:00:07')\n  watermark ts;")


@pytest.fixture(scope="session")
def spark() -> object:
    # The one SparkSession flowc uses (get_spark returns the same session to every caller,
    # tests/executor included). Defined here, not in a conftest, because tests/language
    # imports its own `conftest` module by name.
    from flowc.executor import get_spark
    from flowc.executor.spark.session import spark_running

    # A REPL session in an earlier test may have started it already (with the default
    # master): then that one is the session.
    return get_spark(None if spark_running() else "local[2]")


def drive(lines: list[str], session: Session, tmp_path: Path) -> int:
    from prompt_toolkit.input import create_pipe_input
    from prompt_toolkit.output import DummyOutput

    with create_pipe_input() as inp:
        inp.send_text("".join(line + "\r" for line in lines))
        return prompt_loop(session, history=str(tmp_path / "history"), input=inp,
                           output=DummyOutput())


def test_enter_submits_only_complete_input() -> None:
    assert complete_input("select 1;")
    assert not complete_input("select *\nfrom t")
    assert complete_input("quit") and complete_input("show streams")
    assert complete_input("")


def test_session_without_spark(tmp_path: Path) -> None:
    out = io.StringIO()
    s = Session(out=out, width=120)
    code = drive([
        "source nums (n int, k string, ts timestamp)",   # multi-line: continues
        "  values (1, 'a', timestamp '2024-01-01') watermark ts;",
        "CREATE TABLE t (a STRING, b BIGINT) WITH ('connector' = 'datagen', "
        "'number-of-rows' = '5');",
        "show streams",
        "describe nums",
        "explain nums | filter n > 1;",
        "explain SELECT k, COUNT(*) AS c FROM nums GROUP BY k;",
        "SELECT k FROM numz;",            # an error: the session goes on
        "nums | filter n > x;",
        "let big = nums | filter n > 1;",
        "show tables",
        "help",
        "quit",
    ], s, tmp_path)
    text = out.getvalue()
    assert code == 0
    assert "nums" in text and "(event time)" in text
    assert "Keyed Reduce" in text and "Filter -> Sink: Print to Std. Out" in text
    assert "unknown table 'numz'" in text and "did you mean 'nums'?" in text
    assert "unknown field 'x' in 'filter'" in text
    assert "datagen" in text and "big" in s.unit.scratch.streams
    assert (tmp_path / "history").read_text().count("describe nums") == 1
    assert "Traceback" not in text


def test_completion_words() -> None:
    s = Session(out=io.StringIO())
    s.execute(SOURCE)
    words = s.words()
    for w in ("nums", "ts", "count", "lower", "SELECT", "window", "window_start"):
        assert w in words


@pytest.mark.spark
def test_queries_on_spark(spark: object, tmp_path: Path) -> None:
    out = io.StringIO()
    s = Session(out=out, width=120)
    code = drive([
        SOURCE,
        "SELECT k, window_start, COUNT(*) AS c FROM TABLE(TUMBLE(TABLE nums, "
        "DESCRIPTOR(ts), INTERVAL '5' SECOND)) GROUP BY k, window_start, window_end;",
        "nums | filter n >= 2;",
        "SELECT * FROM nope;",
        "nums | map n, n * 10 as m;",
        "exit",
    ], s, tmp_path)
    text = out.getvalue()
    assert code == 0
    assert "3 rows in" in text and "2024-01-01 00:00:05.000" in text
    assert "2 rows in" in text
    assert "unknown table 'nope'" in text
    assert "│ 3 │ 30 │" in text


CLICKS_TABLE = """CREATE TABLE clicks (user_id STRING, article_id STRING, action STRING,
  ts TIMESTAMP(3), WATERMARK FOR ts AS ts - INTERVAL '2' SECOND)
  WITH ('connector' = 'filesystem', 'path' = 'data/clicks.csv', 'format' = 'csv');
"""


def test_init_file_paths_are_relative_to_the_file(tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    from flowc.repl import run_init

    (tmp_path / "sub").mkdir()
    (tmp_path / "cwd").mkdir()
    init = tmp_path / "sub" / "init.sql"
    init.write_text(CLICKS_TABLE + "CREATE TABLE out (a STRING) WITH ('connector' = "
                    "'filesystem', 'path' = 'out', 'format' = 'csv');\n", encoding="utf-8")
    flow_init = tmp_path / "sub" / "init.flow"
    flow_init.write_text("source nums (n int) from csv 'nums.csv' dead letter 'bad';\n",
                         encoding="utf-8")
    monkeypatch.chdir(tmp_path / "cwd")
    out = io.StringIO()
    s = Session(out=out, width=120)
    run_init(s, "../sub/init.sql")
    run_init(s, "../sub/init.flow")
    assert out.getvalue() == ""
    data = str(tmp_path / "sub" / "data" / "clicks.csv")
    sources = {e.stmt.name: e.stmt for e in s.unit.entries if isinstance(e.stmt, A.SourceStmt)}
    assert sources["clicks"].body.path == data
    assert sources["nums"].body.path == str(tmp_path / "sub" / "nums.csv")
    assert sources["nums"].dead_letter == str(tmp_path / "sub" / "bad")
    assert s.unit.tables["out"].options["path"] == str(tmp_path / "sub" / "out")
    # statements typed later resolve against the working directory again
    s.execute("source more (n int) from csv 'more.csv';")
    assert [e.stmt.body.path for e in s.unit.entries
            if isinstance(e.stmt, A.SourceStmt) and e.stmt.name == "more"] == ["more.csv"]


def test_init_file_errors_name_the_file(tmp_path: Path) -> None:
    from flowc.repl import run_init

    init = tmp_path / "init.sql"
    init.write_text("SELECT * FROM nowhere;\n", encoding="utf-8")
    out = io.StringIO()
    run_init(Session(out=out, width=120), str(init))
    assert f"{init}:1:15: error: unknown table 'nowhere'" in out.getvalue()


def run_lines(lines: list[str]) -> tuple[Session, str]:
    out = io.StringIO()
    s = Session(out=out, width=160)
    for line in lines:
        assert s.execute(line)
    return s, out.getvalue()


def test_explain_sql_uses_the_session_settings() -> None:
    _, text = run_lines([SOURCE, "set parallelism = 3;",
                         "explain SELECT k, COUNT(*) AS c FROM nums GROUP BY k;",
                         "SET 'parallelism' = '2';", "explain nums | filter n > 1;"])
    assert "parallelism=3" in text and " parallelism=default" not in text
    assert "parallelism=2" in text


def test_command_errors_are_diagnostics() -> None:
    s, text = run_lines([SOURCE, "explain;", "explain", "show tablez", "show me everything",
                         "describe", "describe numz", "reset nothing", "set max_rows = 0;",
                         "VALUES (1, 2);", "DROP TABLE nope;", "DROP SCHEMA x;"])
    assert "Traceback" not in text and "internal error" not in text
    assert text.count("error: explain needs a stream, a pipeline or a query") == 2
    assert "unknown show command 'show tablez'" in text and "did you mean 'tables'?" in text
    assert "unknown show command 'show me everything'" in text
    assert "describe takes one stream or table name" in text and "defined: nums" in text
    assert "unknown stream or table 'numz'" in text and "did you mean 'nums'?" in text
    assert "'nothing' is not set" in text
    assert "max_rows must be a whole number of at least 1" in text
    assert "VALUES as a query is not supported" in text
    assert "unknown table or view 'nope'" in text
    assert "only DROP TABLE and DROP VIEW are supported" in text
    assert "EXPLAIN needs a query" not in text


def test_reset_and_show_settings() -> None:
    s, text = run_lines(["set max_rows = 3;", "set parallelism = 2;", "show settings"])
    assert s.max_rows == 3 and "parallelism" in s.settings
    assert "│ parallelism │ 2" in text and "│ max_rows    │ 3" in text
    s.execute("reset max_rows")
    assert s.max_rows == 20 and "parallelism" in s.settings
    s.execute("reset 'parallelism'")
    assert not s.settings


def test_drop_table_and_view() -> None:
    s, text = run_lines([SOURCE, "CREATE VIEW big AS SELECT * FROM nums WHERE n > 1;",
                         "DROP TABLE nums;"])
    assert "cannot drop 'nums': 'big' reads it" in text
    s.execute("DROP VIEW big;")
    s.execute("DROP TABLE IF EXISTS big;")
    s.execute("DROP TABLE nums;")
    assert s.unit.names() == []
    s.execute(SOURCE)  # defined again, no "already defined"
    assert "nums" in s.unit.names()
    assert "already defined" not in s.console.file.getvalue()  # type: ignore[attr-defined]


@pytest.mark.spark
def test_updating_results_show_a_changelog(spark: object) -> None:
    _, text = run_lines([SOURCE, "SELECT k, COUNT(*) AS c FROM nums GROUP BY k;",
                         "SELECT COUNT(*) AS c, MAX(n) AS m FROM nums GROUP BY k;"])
    assert "┃ op ┃ k ┃ c ┃" in text
    for row in ("│ +I │ a │ 1 │", "│ -U │ a │ 1 │", "│ +U │ a │ 2 │", "│ +I │ b │ 1 │"):
        assert row in text
    assert "4 rows of changelog (+I insert, -U/+U before/after an update, -D delete)" in text
    # the key is not selected: kept hidden, so the changelog is still per key
    assert "┃ op ┃ c ┃ m ┃" in text and "│ -U │ 1 │ 1 │" in text and "│ +U │ 2 │ 3 │" in text
    assert "_changelog_key" not in text


@pytest.mark.spark
@pytest.mark.slow
def test_repl_init_on_the_command_line(tmp_path: Path) -> None:
    import subprocess
    import sys

    (tmp_path / "sub").mkdir()
    (tmp_path / "cwd").mkdir()
    (tmp_path / "sub" / "nums.csv").write_text("n,k\n1,a\n2,b\n3,a\n", encoding="utf-8")
    (tmp_path / "sub" / "init.flow").write_text(
        "source nums (n int, k string) from csv 'nums.csv';\n", encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-m", "flowc.cli", "repl", "-i", "../sub/init.flow", "--history",
         str(tmp_path / "history")], cwd=tmp_path / "cwd", capture_output=True, text=True,
        input="nums | filter n > 1;\nquit\n", timeout=600)
    assert done.returncode == 0, done.stderr
    assert "2 rows in" in done.stdout and "no such file" not in done.stdout


@pytest.mark.spark
def test_statement_set_is_one_job(spark: object) -> None:
    _, text = run_lines([SOURCE, "CREATE TABLE o (n BIGINT) WITH ('connector' = 'print');",
                         "EXECUTE STATEMENT SET BEGIN\nINSERT INTO o SELECT n FROM nums;\n"
                         "INSERT INTO o SELECT n * 10 FROM nums;\nEND;"])
    assert text.count("done in") == 1, text
    assert "30" in text and "Traceback" not in text


def test_planner_errors_get_script_help() -> None:
    # the same help `flowc check/explain/run` gives: which 'forward' joins which steps
    out = io.StringIO()
    s = Session(out=out, width=400)
    for line in [SOURCE, "set parallelism = 1;",
                 "nums\n  | filter n > 0 with (parallelism = 2)\n  | forward\n"
                 "  | map n with (parallelism = 3);",
                 "explain nums | filter n > 0 with (parallelism = 2) | forward | map n;",
                 "nums | map k with (parallelism = 2) | forward | print;"]:
        assert s.execute(line)
    text = out.getvalue()
    assert text.count("error: Forward partitioning does not allow change of parallelism") == 3
    assert ("help: 'forward' (line 3) connects the 'filter' on line 2 (parallelism 2) to the "
            "'map' on line 4 (parallelism 3): use 'rebalance' or 'rescale' instead of "
            "'forward', or give both the same parallelism") in text
    assert "<repl:3>:2:5: note: the upstream operator (parallelism 2) is here" in text
    assert "<repl:4>:1:" in text and "<repl:5>:1:" in text
    assert text.count("help: 'forward' (line 1) connects the ") == 2
    assert "connects the 'map' on line 1 (parallelism 2) to the 'print' on line 1" in text
    assert "Traceback" not in text and "internal error" not in text


@pytest.mark.spark
def test_print_output_is_shown_once_on_spark(spark: object,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    # the Spark runner prints the lines itself; the REPL used to print them again
    _, text = run_lines([SOURCE, "nums | map n * 111 as m | print;"])
    shown = text + capsys.readouterr().out
    assert shown.count("333") == 1 and shown.count("222") == 1, shown
