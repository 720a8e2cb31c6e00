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


def main() -> None:
    import gc

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
