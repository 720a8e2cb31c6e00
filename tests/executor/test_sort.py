"""The sort operator (``DataStream.sort``; .flow's order by / limit and SQL's ORDER BY /
LIMIT lower to it): Flink's null order (ASC nulls first, DESC nulls last, as recorded from
Flink 2.3), stable ties, offset and limit; BATCH only; the same on both executors."""

from __future__ import annotations

from typing import Any

import pytest

from flowc.datastream import StreamExecutionEnvironment
from flowc.errors import FlowcError
from flowc.executor import run_job_graph, run_reference
from flowc.operators import CollectSink
from flowc.transformations import RuntimeExecutionMode

ROWS = [(3, "x"), (None, "y"), (1, "z"), (2, None), (3, "a"), (1, None)]


def _job(columns: Any, limit: int | None = None, offset: int = 0,
         mode: RuntimeExecutionMode = RuntimeExecutionMode.BATCH) -> Any:
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(2)
    env.set_runtime_mode(mode)
    env.from_collection(ROWS).sort(columns, limit, offset).sink_to(CollectSink("r")) \
        .set_parallelism(1)  # one subtask keeps the order
    return env.get_job_graph()


@pytest.mark.parametrize(("columns", "limit", "offset", "want"), [
    # Flink 2.3: ORDER BY a -> nulls first; ORDER BY a DESC -> nulls last
    ([(0, False, True)], None, 0, [(None, "y"), (1, "z"), (1, None), (2, None), (3, "x"),
                                   (3, "a")]),
    ([(0, True, False)], None, 0, [(3, "x"), (3, "a"), (2, None), (1, "z"), (1, None),
                                   (None, "y")]),
    ([(0, True, False), (1, False, True)], 3, 1, [(3, "x"), (2, None), (1, None)]),
    ([], 2, 1, [(None, "y"), (1, "z")]),  # LIMIT alone: input order
])
def test_sort_on_the_reference_executor(columns: Any, limit: Any, offset: int,
                                        want: list[Any]) -> None:
    jg = _job(columns, limit, offset)
    assert [v.parallelism for v in jg.vertices_sorted()][1] == 1
    assert run_reference(jg).collected["r"] == want


@pytest.mark.spark
def test_sort_on_spark_equals_reference(spark: Any) -> None:
    jg = _job([(1, True, True), (0, False, True)], 4)
    assert run_job_graph(jg).collected["r"] == run_reference(jg).collected["r"]


def test_sort_needs_batch() -> None:
    with pytest.raises(FlowcError, match="needs BATCH mode"):
        run_reference(_job([(0, False, True)], mode=RuntimeExecutionMode.STREAMING))
