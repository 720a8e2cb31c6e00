"""Flink SQL statement forms: backtick identifiers, CREATE TEMPORARY TABLE, IF NOT EXISTS,
statement sets; and no sqlglot log output on stderr."""

from __future__ import annotations

import logging
import subprocess
import sys

import pytest

from flowc.errors import FlowcError
from flowc.sql import compile_sql

CLICKS = ("CREATE TABLE clicks (user_id STRING, action STRING, ts TIMESTAMP(3),\n"
          "  WATERMARK FOR ts AS ts - INTERVAL '2' SECOND)\n"
          "  WITH ('connector' = 'filesystem', 'path' = 'clicks.csv', 'format' = 'csv');\n")


def test_backtick_identifiers() -> None:
    a = compile_sql(CLICKS + "SELECT `user_id`, `action` AS `the action` FROM `clicks` "
                    "WHERE `action` = 'x';", "q.sql")
    assert a.sinks[0].schema.names == ("user_id", "the action")
    b = compile_sql("CREATE TABLE `my table` (`user id` STRING) WITH ('connector' = "
                    "'datagen', 'number-of-rows' = '3');\nSELECT `user id` FROM `my table`;",
                    "q.sql")
    assert b.sinks[0].schema.names == ("user id",)


def test_create_temporary_table_and_view() -> None:
    script = compile_sql(CLICKS + "CREATE TEMPORARY TABLE out (user_id STRING) WITH "
                         "('connector' = 'print');\nCREATE TEMPORARY VIEW v AS SELECT user_id "
                         "FROM clicks;\nINSERT INTO out SELECT * FROM v;", "q.sql")
    assert len(script.sinks) == 1


def test_if_not_exists_keeps_the_first_definition() -> None:
    script = compile_sql(CLICKS + "CREATE TABLE IF NOT EXISTS clicks (other STRING) WITH "
                         "('connector' = 'print');\nSELECT user_id FROM clicks;", "q.sql")
    assert script.sinks[0].schema.names == ("user_id",)
    with pytest.raises(FlowcError, match="table 'clicks' is already defined"):
        compile_sql(CLICKS + "CREATE TABLE clicks (other STRING) WITH ('connector' = "
                    "'print');", "q.sql")


def test_statement_set_is_one_job_of_all_inserts() -> None:
    sets = (CLICKS + "CREATE TABLE a (user_id STRING) WITH ('connector' = 'print');\n"
            "CREATE TABLE b (action STRING) WITH ('connector' = 'blackhole');\n"
            "EXECUTE STATEMENT SET BEGIN\n"
            "  INSERT INTO a SELECT user_id FROM clicks;\n"
            "  INSERT INTO b SELECT action FROM clicks;\n"
            "END;\n")
    script = compile_sql(sets, "q.sql")
    assert [s.kind for s in script.sinks] == ["print", "blackhole"]
    client = sets.replace("EXECUTE STATEMENT SET BEGIN", "BEGIN STATEMENT SET;")
    assert [s.kind for s in compile_sql(client, "q.sql").sinks] == ["print", "blackhole"]


def test_no_sqlglot_warning(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING):
        with pytest.raises(FlowcError, match="the SQL statement SHOW is not supported"):
            compile_sql("SHOW TABLES;", "q.sql")
    assert not [r for r in caplog.records if r.name.startswith("sqlglot")]
    code = ("from flowc.sql import compile_sql\n"
            "try:\n    compile_sql('SHOW TABLES; EXECUTE STATEMENT SET BEGIN END;', 'q.sql')\n"
            "except Exception:\n    pass\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120)
    assert done.stderr == ""


def test_keywords_of_unsupported_features_are_fine_as_names() -> None:
    script = compile_sql("CREATE TABLE m (metadata STRING, `row` STRING, ts TIMESTAMP(3)) WITH "
                         "('connector' = 'datagen', 'number-of-rows' = '1');\n"
                         "SELECT metadata AS match_recognize, `row` FROM m;", "q.sql")
    assert script.sinks[0].schema.names == ("match_recognize", "row")
