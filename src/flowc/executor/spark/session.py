"""The one SparkSession flowc uses: local[*] by default, quiet unless verbose."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import threading
from typing import Any

from flowc.errors import ConfigError

_lock = threading.Lock()
_spark: Any = None
_master: str | None = None

_LOG4J = """\
rootLogger.level = {level}
rootLogger.appenderRef.stderr.ref = console
appender.console.type = Console
appender.console.name = console
appender.console.target = SYSTEM_ERR
appender.console.layout.type = PatternLayout
appender.console.layout.pattern = %d{{HH:mm:ss}} %p %c{{1}}: %m%n
logger.spark.name = org.apache.spark
logger.spark.level = {level}
logger.hadoop.name = org.apache.hadoop
logger.hadoop.level = {level}
logger.jetty.name = org.sparkproject.jetty
logger.jetty.level = {level}
"""


def find_java() -> str:
    """The ``java`` Spark will use (JAVA_HOME first, then PATH), checked to be 17+."""
    home = os.environ.get("JAVA_HOME")
    java = os.path.join(home, "bin", "java") if home else shutil.which("java")
    if not java or not os.path.exists(java):
        raise ConfigError("Java was not found: flowc runs jobs on Apache Spark, which needs a "
                          "Java 17+ runtime. Install one and put 'java' on the PATH or set "
                          "JAVA_HOME.")
    try:
        out = subprocess.run([java, "-version"], capture_output=True, text=True, timeout=30)
    except OSError as e:
        raise ConfigError(f"cannot run {java}: {e} (Java 17+ required)") from None
    text = out.stderr + out.stdout
    import re

    m = re.search(r'version "(\d+)(?:\.(\d+))?', text)
    if m:
        major = int(m.group(1))
        if major == 1 and m.group(2):
            major = int(m.group(2))
        if major < 17:
            raise ConfigError(f"{java} is Java {major}; Spark 4 needs Java 17 or newer")
    return java


def spark_running() -> bool:
    """Whether this process's SparkSession has been started already."""
    return _spark is not None


def get_spark(master: str | None = None, verbose: bool = False) -> Any:
    global _spark, _master
    _ship_user_modules()
    with _lock:
        if _spark is not None:
            if master is not None and master != _master:
                raise ConfigError(f"a Spark session with master {_master} is already running; "
                                  f"cannot switch to {master} in the same process")
            return _spark
        find_java()
        os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
        # Python workers must import the modules user functions live in (cloudpickle
        # pickles importable functions by reference): give them the driver's sys.path.
        paths = [p for p in sys.path if p and os.path.isdir(p)]
        old = os.environ.get("PYTHONPATH")
        os.environ["PYTHONPATH"] = os.pathsep.join(paths + ([old] if old else []))
        os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
        level = "WARN" if verbose else "ERROR"
        conf_dir = tempfile.mkdtemp(prefix="flowc-log4j-")
        log4j = os.path.join(conf_dir, "log4j2.properties")
        with open(log4j, "w") as fh:
            fh.write(_LOG4J.format(level=level))
        java_opt = f"-Dlog4j.configurationFile=file:{log4j} -Dlog4j2.level={level}"
        from pyspark.sql import SparkSession

        m = master or os.environ.get("FLOWC_SPARK_MASTER") or "local[*]"
        builder = (SparkSession.builder.master(m).appName("flowc")
                   .config("spark.ui.enabled", "false")
                   .config("spark.ui.showConsoleProgress", "false")
                   .config("spark.sql.session.timeZone", "UTC")
                   .config("spark.driver.extraJavaOptions", java_opt)
                   .config("spark.executor.extraJavaOptions", java_opt)
                   .config("spark.python.worker.reuse", "true")
                   .config("spark.sql.shuffle.partitions", "8"))
        with _quiet_stderr(not verbose):
            spark = builder.getOrCreate()
        spark.sparkContext.setLogLevel(level)
        _spark, _master = spark, m
        return spark


def _ship_user_modules() -> None:
    """Pickle user modules' functions by value so workers need not import them."""
    from pyspark import cloudpickle

    from flowc import user_modules

    for name in user_modules.loaded():
        module = sys.modules[name]
        try:
            cloudpickle.register_pickle_by_value(module)
        except ValueError:  # not importable by name (e.g. __main__): pickled by value anyway
            pass


class _quiet_stderr:
    """Silence the JVM's start-up chatter on fd 2 (it bypasses Python's sys.stderr)."""

    def __init__(self, active: bool) -> None:
        self.active = active
        self.saved = -1

    def __enter__(self) -> None:
        if not self.active:
            return
        try:
            sys.stderr.flush()
            self.saved = os.dup(2)
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, 2)
            os.close(devnull)
        except OSError:
            self.saved = -1

    def __exit__(self, *exc: Any) -> None:
        if self.saved >= 0:
            os.dup2(self.saved, 2)
            os.close(self.saved)


def stop_spark() -> None:
    global _spark, _master
    with _lock:
        if _spark is not None:
            _spark.stop()
        _spark, _master = None, None
