"""flowc's PySpark worker daemon (``executor/spark/daemon.py``): local sessions fork their
Python workers from a daemon that imported the executor once (its objects frozen out of
the collector's scans), so a worker does not import flowc, pyarrow, numpy and pandas again; the workers it forks run threaded Arrow and numpy
work normally; PySpark comes from its installed package (cached bytecode), not the zip
copy Spark puts first on the workers' path; a user's own daemon setting wins."""

from __future__ import annotations

import sys
from typing import Any

import pytest

from flowc.executor.spark import daemon
from flowc.executor.spark.session import DAEMON, session_settings


def test_local_sessions_use_the_preloading_daemon() -> None:
    assert session_settings("local[2]", {}, "-Dx")["spark.python.daemon.module"] == DAEMON
    assert session_settings("local-cluster[2,1,1024]", {}, "-Dx")[
        "spark.python.daemon.module"] == DAEMON
    # A cluster's executors may not have flowc where the driver has: PySpark's daemon.
    assert "spark.python.daemon.module" not in session_settings("spark://h:7077", {}, "-Dx")
    mine = {"spark.python.daemon.module": "pyspark.daemon"}
    assert session_settings("local[*]", mine, "-Dx")["spark.python.daemon.module"] == \
        "pyspark.daemon"


def test_preload_leaves_a_failing_import_to_the_task(monkeypatch: Any) -> None:
    monkeypatch.setattr(daemon, "PRELOAD", ("flowc_no_such_module_for_the_test",
                                            "flowc.executor.arrow.regular_join"))
    daemon.preload()  # no exception: the daemon starts anyway
    assert "flowc_no_such_module_for_the_test" not in sys.modules
    assert "flowc.executor.arrow.regular_join" in sys.modules


def test_installed_pyspark_before_its_zip_copies(tmp_path: Any) -> None:
    site, other = tmp_path / "site", tmp_path / "other"
    for pkg, text in (("pyspark", ""), ("py4j", "__version__ = '0.10.9.9'\n")):
        (site / pkg).mkdir(parents=True)
        (site / pkg / "__init__.py").write_text("")
        (site / pkg / "version.py").write_text(text)
    lib = site / "pyspark" / "python" / "lib"
    zips = [str(lib / "pyspark.zip"), str(lib / "py4j-0.10.9.9-src.zip")]
    foreign = [str(lib / "py4j-0.10.9.8-src.zip"), str(other / "pyspark.zip")]
    path = [*zips, *foreign, str(site)]
    # The shipped copies go last; a zip of another version or place keeps its place.
    assert daemon.installed_pyspark_first(path) == [*foreign, str(site), *zips]
    assert daemon.installed_pyspark_first(zips) == zips  # nothing installed: unchanged


def _in_worker(_: Any) -> Any:
    import gc
    import os

    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyspark

    with open(f"/proc/{os.getppid()}/cmdline", "rb") as f:
        parent = f.read().replace(b"\0", b" ").decode()
    # Threaded work in the forked worker: Arrow's thread pool and numpy's BLAS.
    table = pa.table({"k": pa.array(np.arange(400_000) % 97), "v": np.ones(400_000)})
    sums = table.group_by("k").aggregate([("v", "sum")])
    m = np.ones((300, 300))
    return parent, pyspark.__file__, gc.get_freeze_count(), sums.num_rows, float(pc.sum(sums.column("v_sum")).as_py()), \
        float((m @ m)[0, 0])


@pytest.mark.spark
def test_workers_fork_from_the_preloaded_daemon(spark: Any) -> None:
    out = spark.sparkContext.parallelize(range(2), 2).map(_in_worker).collect()
    for parent, where, frozen, groups, total, dot in out:
        assert DAEMON in parent, parent
        assert ".zip" not in where, where  # the installed package, its bytecode cached
        assert frozen > 10_000  # the imports' objects, out of the collector's scans
        assert (groups, total, dot) == (97, 400_000.0, 300.0)
