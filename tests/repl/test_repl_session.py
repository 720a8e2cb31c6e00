"""The REPL end to end through prompt_toolkit (pipe input, DummyOutput): define a source,
query it, explain, make an error, recover, quit. One Spark session for all tests."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

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

    return get_spark("local[2]")


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
    assert "Keyed Reduce" in text and "Filter -> Print" in text
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
