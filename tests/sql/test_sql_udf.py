"""CREATE FUNCTION (Flink's DDL) for Python scalar functions typed by their annotations,
and failed CREATE FUNCTION / CREATE VIEW statements reported once, not again at every use."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_sql_results import run_sql

from flowc.errors import FlowcError, MultipleErrors
from flowc.sql import compile_sql

MODULE = '''
from typing import Optional


def shout(s: Optional[str], n: int) -> Optional[str]:
    return None if s is None else s.upper() + "!" * n


def words(s: str) -> list[str]:
    return s.split("a")


def letters(s: Optional[str]) -> Optional[list[str]]:
    return None if s is None else list(s)


def untyped(s):
    return s


def dated(s: str) -> object:
    return s
'''


def _module(tmp_path: Path) -> None:
    (tmp_path / "sqlfn_udfs.py").write_text(MODULE, encoding="utf-8")


def test_scalar_function(tmp_path: Path) -> None:
    _module(tmp_path)
    names, rows = run_sql(tmp_path, """
CREATE TEMPORARY FUNCTION shout AS 'sqlfn_udfs.shout' LANGUAGE PYTHON;
CREATE FUNCTION IF NOT EXISTS words AS 'sqlfn_udfs.words' LANGUAGE PYTHON;
CREATE FUNCTION IF NOT EXISTS words AS 'sqlfn_udfs.words' LANGUAGE PYTHON;
SELECT shout(user_id, 2) AS s, CARDINALITY(words(article_id)) AS w FROM clicks
WHERE action = 'appclick';""", parallelism=1)
    assert names == ["s", "w"]
    assert rows == [(None, 2), ("U1!!", 2), (None, 2), ("U1!!", 2), ("U2!!", 2)]


def _errors(tmp_path: Path, text: str) -> list[str]:
    _module(tmp_path)
    path = tmp_path / "q.sql"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(FlowcError) as info:
        compile_sql(text, str(path), base_dir=str(tmp_path))
    err = info.value
    errs = err.errors if isinstance(err, MultipleErrors) else [err]
    return [e.format() for e in errs]


TABLE = """CREATE TABLE clicks (user_id STRING, ts TIMESTAMP(3))
  WITH ('connector' = 'filesystem', 'path' = 'clicks.csv', 'format' = 'csv');
"""


@pytest.mark.parametrize(("ddl", "message"), [
    ("CREATE FUNCTION f AS 'sqlfn_udfs.untyped' LANGUAGE PYTHON;",
     "parameter 's' of 'sqlfn_udfs.untyped' has no type annotation"),
    ("CREATE FUNCTION f AS 'sqlfn_udfs.dated' LANGUAGE PYTHON;",
     "which flowc cannot map to a SQL type"),
    ("CREATE FUNCTION f AS 'com.example.Fn';", "add LANGUAGE PYTHON"),
    ("CREATE FUNCTION f AS 'com.example.Fn' LANGUAGE JAVA;",
     "LANGUAGE JAVA functions are not supported"),
    ("CREATE FUNCTION f AS 'nosuchmodule.f' LANGUAGE PYTHON;",
     "cannot import module 'nosuchmodule'"),
    ("CREATE FUNCTION f AS 'sqlfn_udfs.nope' LANGUAGE PYTHON;",
     "module 'sqlfn_udfs' has no function 'nope'"),
    ("CREATE FUNCTION f AS 'shout' LANGUAGE PYTHON;", "write AS 'module.function'"),
])
def test_a_failed_create_function_is_one_error(tmp_path: Path, ddl: str, message: str) -> None:
    errors = _errors(tmp_path, TABLE + ddl + "\nSELECT f(user_id) AS a FROM clicks;\n")
    assert len(errors) == 1, errors  # the call is not 'unknown function' again
    assert message in errors[0] and "q.sql:3:" in errors[0]


def test_a_failed_create_view_is_one_error(tmp_path: Path) -> None:
    errors = _errors(tmp_path, TABLE + "CREATE VIEW v AS SELECT nosuch FROM clicks;\n"
                     "SELECT * FROM v;\nSELECT user_id FROM v;\n")
    assert len(errors) == 1, errors  # not 'unknown table v' at each use
    assert "unknown column 'nosuch'" in errors[0]


LATERAL = "CREATE FUNCTION letters AS 'sqlfn_udfs.letters' LANGUAGE PYTHON;\n"


def test_table_function_with_lateral_table(tmp_path: Path) -> None:
    _module(tmp_path)
    names, rows = run_sql(tmp_path, LATERAL + "SELECT c.user_id, T.ch FROM clicks c, "
                          "LATERAL TABLE(letters(c.user_id)) AS T(ch) WHERE T.ch <> 'u' "
                          "AND c.action = 'appclick';", parallelism=1)
    assert names == ["user_id", "ch"]
    assert rows == [("u1", "1"), ("u1", "1"), ("u2", "2")]  # null user: no element, no row
    names, rows = run_sql(tmp_path, LATERAL + "SELECT * FROM clicks CROSS JOIN LATERAL "
                          "TABLE(letters(article_id)) AS T(ch);", parallelism=1)
    assert names == ["user_id", "article_id", "action", "ts", "ch"] and len(rows) == 14


@pytest.mark.parametrize(("query", "message"), [
    ("SELECT user_id FROM clicks LEFT JOIN LATERAL TABLE(letters(user_id)) AS T(ch) ON TRUE",
     "LEFT JOIN LATERAL TABLE is not supported"),
    ("SELECT user_id FROM clicks, LATERAL TABLE(letters(user_id)) AS T(a, b)",
     "a table function with several columns is not supported"),
    ("SELECT user_id FROM clicks, LATERAL TABLE(letters(user_id)) AS T",
     "name the table function's column"),
    ("SELECT user_id FROM clicks, LATERAL TABLE(letters(user_id)) AS T(user_id)",
     "'user_id' is already a column of 'clicks'"),
    ("SELECT user_id FROM clicks, LATERAL TABLE(UPPER(user_id)) AS T(u)",
     "LATERAL TABLE needs a function that returns an array (one row per element), but this "
     "returns string"),
])
def test_lateral_table_errors(tmp_path: Path, query: str, message: str) -> None:
    errors = _errors(tmp_path, TABLE + LATERAL + query + ";\n")
    assert len(errors) == 1 and message in errors[0] and "q.sql:4:" in errors[0], errors
