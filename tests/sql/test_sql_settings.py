"""SET with Flink's configuration keys: the ones flowc implements change the plan; unknown
keys are errors with a suggestion."""

from __future__ import annotations

import pytest

from flowc.errors import FlowcError
from flowc.sql import compile_sql
from flowc.transformations import RuntimeExecutionMode

TABLE = ("CREATE TABLE t (k STRING, ts TIMESTAMP(3), WATERMARK FOR ts AS ts) WITH "
         "('connector' = 'filesystem', 'path' = 't.csv', 'format' = 'csv');\n"
         "SELECT k, COUNT(*) AS n FROM t GROUP BY k;\n")


def config(sets: str):  # type: ignore[no-untyped-def]
    return compile_sql(sets + TABLE, "q.sql").env.config


def test_flink_keys_are_applied() -> None:
    c = config("SET 'execution.runtime-mode' = 'batch';\nSET 'parallelism.default' = '4';\n"
               "SET 'pipeline.max-parallelism' = '256';\nSET 'pipeline.name' = 'my job';\n")
    assert c.mode is RuntimeExecutionMode.BATCH
    assert c.parallelism == 4 and c.max_parallelism == 256 and c.job_name == "my job"
    assert config("SET 'execution.runtime-mode' = 'STREAMING';\n").mode is \
        RuntimeExecutionMode.STREAMING
    assert config("SET 'table.exec.resource.default-parallelism' = '3';\n").parallelism == 3
    assert config("SET 'table.exec.resource.default-parallelism' = '-1';\n").parallelism == \
        config("").parallelism


def test_chaining_key_disables_chaining() -> None:
    env = compile_sql("SET 'pipeline.operator-chaining.enabled' = 'false';\n" + TABLE,
                      "q.sql").env
    assert not env.is_chaining_enabled()
    assert compile_sql(TABLE, "q.sql").env.is_chaining_enabled()


@pytest.mark.parametrize(("sets", "message"), [
    ("SET 'parallelism.defualt' = '4';", "1:6: error: unknown setting 'parallelism.defualt'"),
    ("SET 'table.exec.mini-batch.enabled' = 'true';",
     "1:6: error: unknown setting 'table.exec.mini-batch.enabled'"),
    ("SET 'execution.runtime-mode' = 'fast';",
     "1:32: error: 'execution.runtime-mode' must be streaming or batch or automatic, got fast"),
    ("SET 'parallelism.default' = 'four';",
     "1:29: error: 'parallelism.default' must be a whole number, got 'four'"),
    ("SET 'parallelism.default' = '0';",
     "1:29: error: 'parallelism.default' must be between 1 and 32768, got 0"),
    ("SET 'foo' = 'bar';", "1:6: error: unknown setting 'foo'"),
])
def test_bad_settings(sets: str, message: str) -> None:
    with pytest.raises(FlowcError) as e:
        compile_sql(sets + "\n" + TABLE, "q.sql")
    assert e.value.format().startswith("q.sql:" + message), e.value.format()


def test_did_you_mean_for_a_flink_key() -> None:
    with pytest.raises(FlowcError) as e:
        compile_sql("SET 'parallelism.defualt' = '4';\n" + TABLE, "q.sql")
    assert e.value.hint == "did you mean 'parallelism.default'?"
