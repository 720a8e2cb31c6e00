"""The one SparkSession flowc uses: local[*] by default, quiet unless verbose."""

from __future__ import annotations

import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
from collections.abc import Mapping
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


# PySpark's worker daemon with flowc's executor imported before it forks the workers
# (``daemon.py``; docs/executor.md: ~1 s of CPU less per Python worker).
DAEMON = "flowc.executor.spark.daemon"
JAVA_VERSION_TIMEOUT = 15.0  # seconds for `java -version` (a JVM answers in well under 1 s)


def find_java() -> str:
    """The ``java`` Spark will use (JAVA_HOME first, then PATH), checked to be 17+."""
    home = os.environ.get("JAVA_HOME")
    java = os.path.join(home, "bin", "java") if home else shutil.which("java")
    # Blame the setting the user can change: JAVA_HOME when it is set, else the PATH.
    where = f" (from JAVA_HOME={home})" if home else ""
    if home and not os.path.exists(java):  # type: ignore[arg-type]
        raise ConfigError(f"JAVA_HOME is set to {home}, but {java} does not exist: point "
                          "JAVA_HOME at a Java 17+ installation (the directory holding "
                          "bin/java) or unset it to use the java on the PATH")
    if not java or not os.path.exists(java):
        raise ConfigError("Java was not found: flowc runs jobs on Apache Spark, which needs a "
                          "Java 17+ runtime. Install one and put 'java' on the PATH or set "
                          "JAVA_HOME.")
    try:
        out = subprocess.run([java, "-version"], capture_output=True, text=True,
                             timeout=JAVA_VERSION_TIMEOUT, stdin=subprocess.DEVNULL)
    except OSError as e:
        raise ConfigError(f"cannot run {java}{where}: {e.strerror or e} (Java 17+ "
                          "required)") from None
    except subprocess.TimeoutExpired:
        raise ConfigError(f"'{java} -version'{where} did not answer within "
                          f"{JAVA_VERSION_TIMEOUT:g} s: it does not look like a working "
                          "Java 17+ runtime") from None
    text = out.stderr + out.stdout
    m = re.search(r'version "(\d+)(?:\.(\d+))?', text)
    if m:
        major = int(m.group(1))
        if major == 1 and m.group(2):
            major = int(m.group(2))
        if major < 17:
            raise ConfigError(f"{java}{where} is Java {major}; Spark 4 needs Java 17 or newer")
    elif out.returncode != 0:
        first = text.strip().splitlines()[0] if text.strip() else f"exit status {out.returncode}"
        raise ConfigError(f"'{java} -version'{where} failed: {first} (Java 17+ required)")
    return java


def spark_running() -> bool:
    """Whether this process's SparkSession has been started already."""
    return _spark is not None


def get_spark(master: str | None = None, verbose: bool = False,
              conf: Mapping[str, str] | None = None) -> Any:
    """The process's SparkSession, started on first use with ``conf`` (``spark.*`` keys,
    applied over flowc's defaults). With a session running already, runtime-settable keys
    are set on it and a static key asking for another value than it has is an error."""
    global _spark, _master
    _ship_user_modules()
    conf = dict(conf or {})
    with _lock:
        if _spark is not None:
            if master is not None and master != _master:
                raise ConfigError(f"a Spark session with master {_master} is already running; "
                                  f"cannot switch to {master} in the same process")
            _apply_to_running(_spark, conf)
            return _spark
        m = (master or conf.pop("spark.master", None) or os.environ.get("FLOWC_SPARK_MASTER")
             or "local[*]")
        conf.pop("spark.master", None)
        check_master(m)
        find_java()
        os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
        # Python workers must import the modules user functions live in (cloudpickle
        # pickles importable functions by reference): give them the driver's sys.path.
        paths = [p for p in sys.path if p and os.path.isdir(p)]
        old = os.environ.get("PYTHONPATH")
        os.environ["PYTHONPATH"] = os.pathsep.join(paths + ([old] if old else []))
        os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
        level = "WARN" if verbose else "ERROR"
        java_opt = f"-Dlog4j.configurationFile=file:{_log4j_file(level)} -Dlog4j2.level={level}"
        from pyspark.sql import SparkSession

        settings = session_settings(m, conf, java_opt)
        builder = SparkSession.builder.master(m)
        for k, v in settings.items():
            builder = builder.config(k, v)
        try:
            with _quiet_stderr(not verbose):
                spark = builder.getOrCreate()
        except Exception as e:  # noqa: BLE001 - Py4J / Java start-up errors, in plain words
            from flowc.executor.spark.io import spark_message

            raise ConfigError(f"cannot start Spark with master {m}: {spark_message(e)}") \
                from None
        spark.sparkContext.setLogLevel(level)
        _spark, _master = spark, m
        url = spark.sparkContext.uiWebUrl
        if url and settings.get("spark.ui.enabled", "").lower() == "true":
            print(f"Spark UI: {url}", file=sys.stderr)
        return spark


def session_settings(master: str, conf: Mapping[str, str], java_opt: str) -> dict[str, str]:
    """The settings a new session starts with: flowc's defaults, then the user's ``conf``;
    ``java_opt`` (the logging set-up) goes before the user's JVM options."""
    settings = {"spark.app.name": "flowc", "spark.ui.enabled": "false",
                "spark.ui.showConsoleProgress": "false",
                "spark.sql.session.timeZone": "UTC",
                "spark.python.worker.reuse": "true", "spark.sql.shuffle.partitions": "8"}
    if master.startswith("local"):  # the workers see the driver's sys.path: flowc is there
        settings["spark.python.daemon.module"] = DAEMON
    settings.update(conf)
    for key in ("spark.driver.extraJavaOptions", "spark.executor.extraJavaOptions"):
        settings[key] = f"{java_opt} {conf[key]}" if key in conf else java_opt
    return settings


def _apply_to_running(spark: Any, conf: Mapping[str, str]) -> None:
    running = spark.sparkContext.getConf()
    for k, v in conf.items():
        if k == "spark.master":
            continue  # compared above
        if spark.conf.isModifiable(k):
            spark.conf.set(k, v)
            continue
        current = running.get(k, None)
        if current != v:
            raise ConfigError(f"{k} = {v} cannot take effect: Spark already runs in this "
                              f"process with {k} = {current if current is not None else '(unset)'}"
                              ", and it is fixed when Spark starts")


# Master URLs Spark accepts (SparkContext.createTaskScheduler) besides spark:// and k8s://.
_LOCAL = re.compile(r"local(\[(\*|\d+)(,\d+)?\])?|local-cluster\[\d+,\d+,\d+\]|yarn")
MASTER_CONNECT_TIMEOUT = 5.0  # seconds per spark:// host


def check_master(url: str) -> None:
    """A bad or unreachable master is a user error before any JVM starts (Spark itself
    retries an unreachable standalone master for about a minute, then fails with a stack)."""
    if _LOCAL.fullmatch(url) or url.startswith("k8s://"):
        return
    if not url.startswith("spark://"):
        raise ConfigError(f"'{url}' is not a Spark master URL (expected local[*], local[N], "
                          "spark://host:port, yarn or k8s://https://host:port)")
    failures = []
    for hp in url[len("spark://"):].split(","):
        host, sep, port = hp.rpartition(":")
        if not sep or not host or not port.isdigit():
            raise ConfigError(f"'{url}' is not a Spark master URL: '{hp}' is not host:port")
        try:
            with socket.create_connection((host.strip("[]"), int(port)),
                                          timeout=MASTER_CONNECT_TIMEOUT):
                return
        except OSError as e:
            failures.append(f"{hp}: {e.strerror or e}")
    raise ConfigError(f"cannot reach the Spark master {url} ({'; '.join(failures)}): is the "
                      "master running, and are host and port right?")


def _log4j_file(level: str) -> str:
    """Spark's log4j2 configuration for ``level``: one file per user and level, written once
    and reused by every run (a temp dir per run was never removed)."""
    text = _LOG4J.format(level=level)
    for base in (os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"),
                 tempfile.gettempdir()):
        directory = os.path.join(base, f"flowc-{os.getuid()}" if base ==
                                 tempfile.gettempdir() else "flowc")
        path = os.path.join(directory, f"log4j2-{level.lower()}.properties")
        try:
            os.makedirs(directory, mode=0o700, exist_ok=True)
            if os.stat(directory).st_uid != os.getuid():
                continue  # someone else's directory in a shared /tmp: not trusted
            try:
                with open(path, encoding="utf-8") as fh:
                    if fh.read() == text:
                        return path
            except OSError:
                pass
            # Written beside and renamed: concurrent runs never read a partial file.
            tmp = f"{path}.{os.getpid()}.tmp"
            with open(tmp, "w", encoding="utf-8") as fh:
                fh.write(text)
            os.replace(tmp, path)
            return path
        except OSError:
            continue
    raise ConfigError("cannot write Spark's logging configuration (no writable cache or "
                      "temp directory)")


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
