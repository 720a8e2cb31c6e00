"""The events of record_timeattr.py / test_sql_timeattr.py: a key, epoch milliseconds and
seconds, a timestamp text, a DATE and a TIMESTAMP_LTZ (Flink's csv / json texts for them)."""

EVENTS = """\
a,1714557601000,1714557601,2024-05-01 10:00:01,2024-05-01,2024-05-01 10:00:01Z
b,1714557602500,1714557602,2024-05-01 10:00:02,2024-05-01,2024-05-01 10:00:02.500Z
a,1714557604999,1714557604,2024-05-01 10:00:04,2024-04-30,2024-05-01 10:00:04.999Z
a,1714557600500,1714557600,2024-05-01 10:00:00,2024-04-30,2024-05-01 10:00:00.500Z
b,1714557607000,1714557607,2024-05-01 10:00:07,2024-05-02,2024-05-01 10:00:07Z
a,1714557611000,1714557611,2024-05-01 10:00:11,1969-12-31,2024-05-01 10:00:11Z
b,1714557603000,1714557603,2024-05-01 10:00:03,2024-05-02,2024-05-01 10:00:03Z
a,1714557620000,1714557620,2024-05-01 10:00:20,2000-02-29,2024-05-01 10:00:20Z
"""
PHYSICAL = "k STRING, epoch_ms BIGINT, epoch_s BIGINT, s STRING, d DATE, lt TIMESTAMP_LTZ(3)"
# each table: its computed time attribute and watermark
TABLES = {
    "ev": "ts AS TO_TIMESTAMP_LTZ(epoch_ms, 3), WATERMARK FOR ts AS ts - INTERVAL '2' SECOND",
    "ev2": "ts AS TO_TIMESTAMP(FROM_UNIXTIME(epoch_s)), "
           "WATERMARK FOR ts AS ts - INTERVAL '1' SECOND",
    "ev3": "ts AS CAST(s AS TIMESTAMP(3)), WATERMARK FOR ts AS ts",
    "evl": "WATERMARK FOR lt AS lt - INTERVAL '3' SECOND",
}


def json_lines() -> str:
    """EVENTS as json lines (Flink's json texts for DATE and TIMESTAMP_LTZ)."""
    import json

    out = []
    for line in EVENTS.splitlines():
        k, ms, s, text, d, lt = line.split(",")
        out.append(json.dumps({"k": k, "epoch_ms": int(ms), "epoch_s": int(s), "s": text,
                               "d": d, "lt": lt}))
    return "\n".join(out) + "\n"


def ddl(name: str, directory: str, fmt: str = "csv") -> str:
    path = f"{directory}/events.{'csv' if fmt == 'csv' else 'json'}"
    return (f"CREATE TABLE {name} ({PHYSICAL}, {TABLES[name]}) WITH ('connector' = "
            f"'filesystem', 'path' = '{path}', 'format' = '{fmt}')")
