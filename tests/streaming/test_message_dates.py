"""A DATE column of a Kafka or socket source's csv / json format follows the file sources'
rule (Flink's formats): a date, or a timestamp at midnight, reads as the day; a time of
day is a bad row naming the source, as in a file (tests/sql/test_sql_dates_files.py)."""

from __future__ import annotations

import pytest

from flowc.errors import ExecutionError
from flowc.executor.streaming.sources import bad_rows, source_records
from flowc.sql import compile_sql

DAY = 19844 * 86_400_000  # 2024-05-01
KAFKA = """CREATE TABLE t (id INT, d DATE) WITH (
  'connector' = 'kafka', 'properties.bootstrap.servers' = 'b:9092', 'topic' = 'dates',
  'format' = '{fmt}');
SELECT id, d FROM t;
"""
SOCKET = """CREATE TABLE t (id INT, d DATE) WITH (
  'connector' = 'socket', 'hostname' = 'localhost', 'port' = '9999', 'format' = '{fmt}');
SELECT id, d FROM t;
"""


def _spec(text: str, fmt: str) -> object:
    unit = compile_sql(text.format(fmt=fmt), "job.sql")
    sg = unit.env.get_stream_graph()
    return sg.nodes[sg.source_ids[0]].operator


def _message(fmt: str, id_: int, d: str) -> str:
    return f"{id_},{d}" if fmt == "csv" else f'{{"id": {id_}, "d": "{d}"}}'


def _read(spec: object, lines: list[str]) -> list[object]:
    share = [(line, 0) for line in lines] if "Kafka" in type(spec).__name__ else lines
    return [r for r, _ in source_records(spec, share, bad_rows(spec))]


@pytest.mark.parametrize("fmt", ["csv", "json"])
@pytest.mark.parametrize("text", [KAFKA, SOCKET], ids=["kafka", "socket"])
def test_a_message_date_reads_as_its_day(text: str, fmt: str) -> None:
    spec = _spec(text, fmt)
    rows = _read(spec, [_message(fmt, 1, "2024-05-01"), _message(fmt, 2, "2024-05-01 00:00")])
    assert rows == [(1, DAY), (2, DAY)]


@pytest.mark.parametrize("fmt", ["csv", "json"])
@pytest.mark.parametrize("text", [KAFKA, SOCKET], ids=["kafka", "socket"])
def test_a_message_date_with_a_time_of_day_is_a_bad_row(text: str, fmt: str) -> None:
    spec = _spec(text, fmt)
    where = "kafka dates" if text is KAFKA else "socket localhost:9999"
    with pytest.raises(ExecutionError, match=f"bad row in {where}") as e:
        _read(spec, [_message(fmt, 1, "2024-05-01 10:00:01")])
    assert "time of day" in str(e.value)
