"""The socket text source in the three front ends (PyFlink ``socket_text_stream``, SQL
``'connector' = 'socket'``, .flow ``from socket 'host:port'``): its plan (Flink's legacy
non-parallel ``Socket Stream`` source), AUTOMATIC = STREAMING, positioned errors, and runs
on the streaming executor against a real TCP server on 127.0.0.1 started by the test."""

from __future__ import annotations

import re
import socket
import threading
import time
from collections.abc import Callable
from typing import Any

import pytest

from flowc.datastream import StreamExecutionEnvironment
from flowc.errors import ApiError, FlowcError, UnsupportedError
from flowc.executor import run_reference
from flowc.executor.streaming.runner import StreamStats, run_streaming
from flowc.operators import SocketSource
from flowc.parser import compile_source
from flowc.sql import compile_sql
from flowc.transformations import RuntimeExecutionMode

SQL = """SET 'parallelism.default' = '2';
CREATE TABLE clicks (user_id STRING, n INT) WITH (
  'connector' = 'socket', 'hostname' = '127.0.0.1', 'port' = '{port}', 'format' = '{fmt}'{extra});
SELECT user_id, n * 10 AS m FROM clicks WHERE n > 1;
"""
FLOW = """source lines (line string) from socket '127.0.0.1:{port}';
lines | flat_map split(line, ' ') as word | print;
"""


def _python(port: int = 9999) -> StreamExecutionEnvironment:
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(3)
    env.socket_text_stream("localhost", port).map(str.upper).print()
    return env


def test_socket_text_stream_is_flinks_non_parallel_socket_stream_source() -> None:
    env = _python()
    sg = env.get_stream_graph()
    (nid,) = sg.source_ids
    node = sg.nodes[nid]
    assert node.name == "Source: Socket Stream" and node.parallelism == 1
    assert node.operator == SocketSource("localhost", 9999) or (
        node.operator.hostname, node.operator.port, node.operator.format) == \
        ("localhost", 9999, None)
    assert not node.operator.bounded
    # AUTOMATIC (the default) resolves to STREAMING: the source is unbounded
    assert sg.config.mode is RuntimeExecutionMode.STREAMING
    names = [v.name for v in env.get_job_graph().vertices_sorted()]
    assert names == ["Source: Socket Stream", "Map -> Sink: Print to Std. Out"]


def test_socket_text_stream_arguments_are_checked() -> None:
    env = StreamExecutionEnvironment.get_execution_environment()
    with pytest.raises(ApiError, match="port is out of range"):
        env.socket_text_stream("localhost", 70000)
    with pytest.raises(ApiError, match="delimiter"):
        env.socket_text_stream("localhost", 9999, delimiter=";")
    with pytest.raises(ApiError, match="max_retry"):
        env.socket_text_stream("localhost", 9999, max_retry=3)


def test_sql_and_flow_socket_tables_plan_one_unbounded_source_of_parallelism_1() -> None:
    sql = compile_sql(SQL.format(port=9999, fmt="csv", extra=""), "job.sql").env
    flow = compile_source(FLOW.format(port=9999), "job.flow").env
    for env, name, fmt in ((sql, "Source: clicks", "csv"), (flow, "Source: lines", None)):
        sg = env.get_stream_graph()
        node = sg.nodes[sg.source_ids[0]]
        assert node.name == name and node.parallelism == 1
        assert isinstance(node.operator, SocketSource) and node.operator.format == fmt
        assert node.operator.port == 9999 and not node.operator.bounded
        assert sg.config.mode is RuntimeExecutionMode.STREAMING
    spec = sql.get_stream_graph().nodes[sql.get_stream_graph().source_ids[0]].operator
    assert spec.schema == (("user_id", "string"), ("n", "int"))


@pytest.mark.parametrize("text, message, col", [
    (SQL.format(port=9999, fmt="csv", extra=", 'byte-delimiter' = '59'"),
     "only 'byte-delimiter' = '10'", 88),
    (SQL.format(port=9999, fmt="avro", extra=""), "format 'avro' is not supported", 70),
    (SQL.format(port=99999, fmt="csv", extra=""), "port 99999 is out of range", 53),
    (SQL.format(port=9999, fmt="csv", extra=", 'hostnme' = 'x'"),
     "table option 'hostnme' is not supported", 88),
])
def test_bad_socket_tables_are_positioned_errors(text: str, message: str, col: int) -> None:
    with pytest.raises(FlowcError, match=message) as info:
        compile_sql(text, "job.sql")
    assert info.value.span is not None and info.value.span.line == 3
    assert info.value.span.column == col
    assert "did you mean 'hostname'" in info.value.format() or "hostnme" not in message


@pytest.mark.parametrize("body, message", [
    ("source t (a int) from socket 'localhost';", "expected 'host:port'"),
    ("source t (a int, b string) from socket 'localhost:1';", "each line is one string"),
    ("source t (a int) from socket 'localhost:1' options (format = xml);",
     "unknown line format 'xml'"),
    ("source t (a string) from socket 'localhost:1' monitor every 1s;", "no monitor interval"),
])
def test_bad_flow_socket_sources_are_positioned_errors(body: str, message: str) -> None:
    with pytest.raises(FlowcError, match=message) as info:
        compile_source(body + "\nt | print;\n", "job.flow")
    assert info.value.span is not None and info.value.span.line == 1


def test_the_reference_executor_refuses_a_socket_source() -> None:
    with pytest.raises(UnsupportedError, match="'Source: Socket Stream' is unbounded "
                                               r"\(it reads a socket until it closes\)"):
        run_reference(_python().get_job_graph())


class _Server:
    """A TCP server on 127.0.0.1 (a free port) that sends ``chunks`` to its one client,
    waiting for ``ready(k)`` (k lines read by completed micro-batches) between them, and
    closes after ``timeout`` seconds at the latest."""

    def __init__(self, chunks: list[str], timeout: float = 120.0) -> None:
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(1)
        self.sock.settimeout(timeout)
        self.port = self.sock.getsockname()[1]
        self.chunks = chunks
        self.deadline = time.monotonic() + timeout
        self.errors: list[BaseException] = []

    def serve(self, ready: Callable[[int], bool], stop: threading.Event) -> None:
        try:
            conn, _ = self.sock.accept()
            with conn:
                sent = 0
                for chunk in self.chunks:
                    while not ready(sent) and not stop.is_set() and \
                            time.monotonic() < self.deadline:
                        time.sleep(0.05)
                    conn.sendall(chunk.encode("utf-8"))
                    sent += chunk.count("\n")
                while not ready(sent) and not stop.is_set() and \
                            time.monotonic() < self.deadline:
                    time.sleep(0.05)
        except BaseException as e:  # noqa: BLE001 - reported by the test
            self.errors.append(e)
        finally:
            stop.set()
            self.sock.close()


def _run(env: StreamExecutionEnvironment, server: _Server, tmp: Any) -> StreamStats:
    from flowc.executor.streaming.commit import Checkpoint

    ckpt = Checkpoint(str(tmp / "ck"))
    stop = threading.Event()

    def ready(n: int) -> bool:
        done = ckpt.done_batches()
        return ckpt.files_read(done[-1] if done else None) >= n

    t = threading.Thread(target=server.serve, args=(ready, stop))
    t.start()
    try:
        stats = run_streaming(env.get_job_graph(), checkpoint=str(tmp / "ck"), trigger_ms=100,
                              stop=stop)
    finally:
        stop.set()
        t.join()
    assert not server.errors, server.errors
    return stats


@pytest.mark.spark
def test_a_python_word_count_over_a_real_socket(spark: Any, tmp_path: Any) -> None:
    server = _Server(["a b a\n", "c a\nb\n"])
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(2)
    env.socket_text_stream("127.0.0.1", server.port).flat_map(str.split) \
        .map(lambda w: (w, 1)).key_by(lambda t: t[0]) \
        .reduce(lambda a, b: (a[0], a[1] + b[1])).print()
    stats = _run(env, server, tmp_path)
    assert stats.rows == 3  # lines read by the source
    out = sorted(line.split("> ", 1)[1] for line in stats.printed)
    assert out == sorted(["('a', 1)", "('a', 2)", "('a', 3)", "('b', 1)", "('b', 2)",
                          "('c', 1)"])


@pytest.mark.spark
def test_a_sql_csv_socket_table(spark: Any, tmp_path: Any) -> None:
    server = _Server(["u1,1\nu2,2\n", "u3,3\n"])
    env = compile_sql(SQL.format(port=server.port, fmt="csv", extra=""), "job.sql").env
    stats = _run(env, server, tmp_path)
    # (the print format of SQL rows is another matter: only the values are compared)
    rows = sorted(re.findall(r"u\d|\d+", line.split("> ", 1)[1]) for line in stats.printed)
    assert rows == [["u2", "20"], ["u3", "30"]]


@pytest.mark.spark
def test_a_bad_socket_line_fails_naming_the_socket(spark: Any, tmp_path: Any) -> None:
    server = _Server(["u1,1\n", "u2,many\n"])
    env = compile_sql(SQL.format(port=server.port, fmt="csv", extra=""), "job.sql").env
    with pytest.raises(FlowcError, match=r"bad row in socket 127\.0\.0\.1:\d+ .*'u2,many'") \
            as info:
        _run(env, server, tmp_path)
    assert info.value.span is not None and info.value.span.line == 2


@pytest.mark.spark
def test_no_server_listening_is_a_user_error_naming_the_socket(spark: Any,
                                                                tmp_path: Any) -> None:
    probe = socket.socket()
    probe.bind(("127.0.0.1", 0))
    port = probe.getsockname()[1]
    probe.close()  # nothing listens there now
    env = compile_source(FLOW.format(port=port), "job.flow").env
    with pytest.raises(FlowcError, match=f"cannot read the socket 127.0.0.1:{port}: "
                                         "Connection refused") as info:
        run_streaming(env.get_job_graph(), checkpoint=str(tmp_path / "ck"), trigger_ms=100)
    assert info.value.exit_code == 1 and info.value.span is not None
    assert info.value.span.line == 1
