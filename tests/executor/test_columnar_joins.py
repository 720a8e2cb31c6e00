"""Differential: random .flow window and interval joins on the columnar executor (Spark,
Arrow) equal the reference executor, list for list, metrics and late records included.

Two csv sources with nullable columns (a null key fails both executors with the same
error), keys of one or two fields, tumbling and sliding window joins, interval joins with
bounds on either side of zero, BATCH and STREAMING (watermarks after every record or
periodic), parallelism 1-3. The jobs must run columnar (``flowc.executor = columnar`` fails
otherwise).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from tests.executor.columnar_jobs import collect_job, run_both, timing, vertex_counts

from flowc.executor import run_job_graph, run_reference
from flowc.executor.arrow.plan import plan_members
from flowc.operators import CollectSink
from flowc.parser import compile_source

pytestmark = pytest.mark.spark

KEYS = ["u1", "u2", "ü3"]


def rows(keys: list[str]) -> Any:
    return st.lists(st.tuples(
        st.sampled_from(keys),                            # k
        st.sampled_from(["1", "2", "", "-3"]),            # n int (the second key field)
        st.sampled_from(["0.5", "", "7"]),                # v double, nullable
        st.integers(0, 20_000),                           # ts millis
    ), min_size=0, max_size=25)


# Null keys (empty) only on side a: which source fails first is the scheduler's choice.
programs = st.fixed_dictionaries({
    "mode": st.sampled_from(["batch", "streaming"]),
    "delay": st.sampled_from(["0s", "1s", "3s"]),
    "timing": st.sampled_from([("flowc.watermarks", "'per-record'"), None]),
    "a": rows(KEYS + KEYS + [""]), "b": rows(KEYS),
    "p": st.integers(1, 3),
    "key": st.sampled_from([("k", "k"), ("k, n", "k and a.n = b.n")]),
    "join": st.sampled_from(["window tumbling 5s", "window sliding 6s every 2s",
                             "between -2s and 1s", "between 0s and 3s", "between -4s and -1s",
                             "between 0s and 0s"]),
    "filter": st.sampled_from(["", "| filter v is not null or n > 0"]),
})


def _script(prog: dict[str, Any], where: Path) -> str:
    key, extra = prog["key"]
    if prog["join"].startswith("window"):
        on = "k" if key == "k" else "k and n"
        join = f"a | join b on {on} {prog['join']}"
    else:
        cond = "a.k = b.k" if key == "k" else "a.k = b.k and a.n = b.n"
        join = f"a | interval join b on {cond} {prog['join']}"
    return (f"set parallelism = {prog['p']};\n"
            f"source a (k string, n int, v double, ts timestamp) from csv '{where}/a.csv' "
            f"watermark ts - {prog['delay']};\n"
            f"source b (k string, n int, v double, ts timestamp) from csv '{where}/b.csv' "
            f"watermark ts - {prog['delay']};\n"
            f"let result = {join} {prog['filter']} | map k, v, b_v, ts, b_ts;\n")


def _write(path: Path, data: list[Any]) -> None:
    path.write_text("k,n,v,ts\n" + "".join(f"{k},{n},{v},{ts}\n" for k, n, v, ts in data))


def _compare(prog: dict[str, Any], where: Path) -> None:
    _write(where / "a.csv", prog["a"])
    _write(where / "b.csv", prog["b"])
    text = _script(prog, where)
    row_job, columnar_job = (collect_job(text, where, executor, prog["mode"],
                                         options=timing(prog))
                             for executor in ("row", "columnar"))
    kinds = {m.kind for ms in plan_members(columnar_job).values() for m in ms}  # type: ignore[union-attr]
    assert kinds & {"window_join", "interval_join"}, kinds
    runs = run_both(row_job, columnar_job)
    if runs is None:  # a null key fails both executors alike
        return
    expected, actual = runs
    assert actual.collected["result"] == expected.collected["result"], text
    assert vertex_counts(actual) == vertex_counts(expected)
    assert actual.late_records_dropped == expected.late_records_dropped


@settings(max_examples=int(os.environ.get("FLOWC_DIFF_EXAMPLES", "30")), deadline=None,
          suppress_health_check=list(HealthCheck),
          phases=[Phase.explicit, Phase.reuse, Phase.generate])
@given(programs)
def test_columnar_joins_match_reference(spark: Any, tmp_path_factory: Any,
                                        prog: dict[str, Any]) -> None:
    _compare(prog, tmp_path_factory.mktemp("joindiff"))


def test_python_api_window_join_with_a_python_function(spark: Any, tmp_path: Path) -> None:
    """The Python API's join().where().equal_to().window().apply(f) over schema'd streams:
    columnar, ``f`` row by row on the pairs, == the reference executor."""
    from flowc.operators import CodeFn
    from flowc.transformations import KeySelector
    from flowc.types import INT, STRING, Field, Schema
    from flowc.vector import VCol
    from flowc.windowing import SlidingEventTimeWindows

    _write(tmp_path / "a.csv", [(f"u{i % 3}", str(i % 4), "0.5", i * 700) for i in range(40)])
    _write(tmp_path / "b.csv", [(f"u{i % 2}", str(i), "", i * 900) for i in range(30)])
    key = KeySelector(CodeFn(lambda r: (r[0],), "(r[0],)", ("r",),
                             vector=(VCol(0, STRING),)), ("k",), "k")
    out = Schema((Field("k", STRING), Field("pair", STRING), Field("n", INT)))

    def job(executor: str) -> Any:
        text = (f"set parallelism = 2;\n"
                f"source a (k string, n int, v double, ts timestamp) from csv "
                f"'{tmp_path}/a.csv' watermark ts - 1s;\n"
                f"source b (k string, n int, v double, ts timestamp) from csv "
                f"'{tmp_path}/b.csv' watermark ts - 1s;\n")
        script = compile_source(text, str(tmp_path / "job.flow"),
                                options={"mode": "batch", "flowc.executor": executor})
        a, b = script.streams["a"].stream, script.streams["b"].stream
        a.join(b).where(key).equal_to(key).window(SlidingEventTimeWindows.of(4000, 2000)) \
            .apply(lambda x, y: (x[0], f"{x[1]}/{y[1]}", x[1] * 100 + y[1]), output_type=out) \
            .sink_to(CollectSink("result"))
        return script.env.get_job_graph()
    columnar = job("columnar")
    members = plan_members(columnar)
    assert isinstance(members, dict)
    (join,) = [m for ms in members.values() for m in ms if m.kind == "window_join"]
    assert not join.spec.vectorised
    expected = run_reference(job("row")).collected["result"]
    assert len(expected) > 20
    assert run_job_graph(columnar).collected["result"] == expected
