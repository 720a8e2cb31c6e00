"""PySpark's worker daemon (``spark.python.daemon.module``) with flowc's executor imported
once, before it forks the Python workers.

PySpark's own daemon imports nothing: every worker it forks unpickles its first task and
imports flowc, pyarrow, numpy and pandas itself (about 1 s of CPU per worker, several
workers per job). Forked from this daemon a worker starts with them loaded. The daemon is
PySpark's (``pyspark.daemon.manager``), unchanged; only what is in memory when it forks
differs (and those modules' objects are frozen out of the garbage collector's scans,
``gc.freeze``). PySpark imports the worker module after the fork because imports may start
threads; the ones these imports start are numpy's BLAS pool and Arrow's jemalloc
background thread, both of which reset themselves in a forked child (pthread_atfork), and
Arrow's own thread pools start on first use, which the daemon never makes.
"""

from __future__ import annotations

import os
import sys

# Loaded before the fork (imported, not used): the modules a columnar or row task needs.
PRELOAD = ("flowc.executor.arrow.runner", "flowc.executor.arrow.regular_join",
           "flowc.executor.arrow.rank", "flowc.executor.arrow.sinks",
           "flowc.executor.arrow.csvsource")


def preload() -> None:
    """Import ``PRELOAD``; a module that fails to import is left to the task that needs it
    (which then fails with the usual error, naming its operator)."""
    import importlib

    for name in PRELOAD:
        try:
            importlib.import_module(name)
        except Exception:  # noqa: BLE001 - reported by the task that imports it, not here
            sys.modules.pop(name, None)


def installed_pyspark_first(path: list[str]) -> list[str]:
    """``path`` with the zip copies of PySpark and Py4J that Spark puts first on the
    workers' PYTHONPATH (``<pyspark>/python/lib/pyspark.zip``, ``py4j-<v>-src.zip``) moved
    after the installed packages they were shipped with (same version: the zip inside the
    installed pyspark, the Py4J zip of the installed Py4J's version). Python compiles a
    module imported from a zip without caching the bytecode: every worker compiled the
    part of PySpark it imports, the daemon all of ``pyspark`` (~0.5 s of CPU)."""
    import importlib.util

    def installed(name: str) -> str | None:
        for entry in path:
            init = os.path.join(entry, name, "__init__.py")
            if not entry.endswith(".zip") and os.path.isfile(init):
                return os.path.dirname(init)
        return None
    pyspark, py4j = installed("pyspark"), installed("py4j")
    py4j_zip = None
    if py4j is not None:
        spec = importlib.util.spec_from_file_location(
            "_flowc_py4j_version", os.path.join(py4j, "version.py"))
        if spec is not None and spec.loader is not None and os.path.isfile(spec.origin or ""):
            module = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(module)
            py4j_zip = f"py4j-{getattr(module, '__version__', '')}-src.zip"
    late = [p for p in path if p.endswith(".zip") and pyspark is not None and
            os.path.dirname(os.path.abspath(p)) == os.path.join(pyspark, "python", "lib")
            and (os.path.basename(p) == "pyspark.zip" or os.path.basename(p) == py4j_zip)]
    return [p for p in path if p not in late] + late


def main() -> None:
    import gc

    try:
        sys.path[:] = installed_pyspark_first(sys.path)
    except Exception:  # noqa: BLE001 - an odd installation: the path as Spark gave it
        pass
    from pyspark import daemon

    preload()
    # The imported modules' objects go to the permanent generation: the full collection
    # PySpark's daemon runs in a reused worker after every task (``gc.collect()``) then
    # scans only what the worker made, not the ~10^5 objects of the imports (and does not
    # write to their pages, which the forked workers share with the daemon).
    gc.freeze()
    daemon.manager()


if __name__ == "__main__":
    main()
