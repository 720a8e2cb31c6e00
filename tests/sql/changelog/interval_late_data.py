"""The table of interval_late.json (shared by record_interval_late.py and the tests): left (L)
and right (R) rows of keys a to d, many of them behind the watermark (the largest ``ts`` so
far), several exactly one bound away from a row of the other side.

Flink read them from a datagen table whose ``seq`` (1, 2, ...) picks each row (computed
columns, below), at a few rows a second and with network buffers flushed after every record: the
join has taken each row and the watermark after it before the next row is made, so its input
order is the table's order in every run. flowc reads one file per row, one micro-batch each
(``run_reference(..., micro_batches=...)``), which is the same order and watermarks."""

# (side, k, v, seconds after 2024-05-01 10:00:00), in arrival order; the comments say what
# the inner join of ``r.ts BETWEEN l.ts - 1 s AND l.ts + 1 s`` does with the late rows
ROWS = [
    # warm-up rows that join nothing: what the join takes while Flink's job is still starting
    ("L", "w", 0, 0.0),
    ("R", "x", 0, 0.0),
    ("L", "w", 0, 0.0),
    ("L", "a", 1, 0.0),
    ("R", "a", 2, 1.0),  # edge: l.ts + 1 s
    ("L", "b", 3, 2.0),
    ("R", "b", 4, 1.0),  # late (watermark 2 s): joins 3 at the edge l.ts - 1 s
    ("L", "a", 5, 5.0),
    ("R", "a", 6, 4.0),  # late: joins 5 (edge)
    ("L", "c", 7, 6.0),
    ("R", "c", 8, 7.5),
    ("L", "c", 9, 6.6),  # late: joins 8
    ("R", "b", 10, 9.0),
    ("L", "b", 11, 8.0),  # late: joins 10 (edge), not cached (its last join time is now)
    ("L", "b", 12, 7.999),  # late: joins nothing, not cached
    ("R", "b", 13, 8.5),  # late: 11 and 12 were not cached
    ("R", "a", 14, 12.0),
    ("L", "a", 15, 11.0),  # late: joins 14 (edge)
    ("R", "a", 16, 3.0),  # very late: 5 is gone
    ("L", "c", 17, 13.0),
    ("R", "c", 18, 12.2),  # late: joins 17
    ("R", "c", 19, 13.5),
    ("L", "a", 20, 12.5),  # late: 14 was cleaned up when the watermark passed 13.001
    ("L", "d", 21, 20.0),
    ("R", "d", 22, 19.0),  # late: joins 21 (edge)
    ("R", "d", 23, 21.0),
    ("L", "d", 24, 20.5),  # late: joins 23 (22 is 1.5 s before)
    ("L", "b", 25, 21.0),
    ("R", "b", 26, 20.0),  # late: joins 25 (edge)
]
DAY = "2024-05-01"


def _time(seconds: float) -> str:
    ms = round(seconds * 1000)
    return f"{DAY} 10:{ms // 60000:02d}:{ms // 1000 % 60:02d}.{ms % 1000:03d}"


EVENTS = "".join(f"{s},{k},{v},{_time(t)}\n" for s, k, v, t in ROWS)
COLUMNS = "side STRING, k STRING, v INT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts"
LEFT = "(SELECT k, v, ts FROM events WHERE side = 'L')"
RIGHT = "(SELECT k, v, ts FROM events WHERE side = 'R')"


def _case(values: list[str]) -> str:
    return "CASE seq " + " ".join(f"WHEN {i} THEN {x}" for i, x in enumerate(values, 1)) + \
        " END"


def datagen_ddl(rows_per_second: int) -> str:
    """Flink's ``events``: the rows above, one per ``seq``, at ``rows_per_second``."""
    side = _case([f"'{s}'" for s, _, _, _ in ROWS])
    key = _case([f"'{k}'" for _, k, _, _ in ROWS])
    value = _case([str(v) for _, _, v, _ in ROWS])
    ts = _case([f"TIMESTAMP '{_time(t)}'" for _, _, _, t in ROWS])
    return (f"CREATE TABLE events (seq INT, side AS {side}, k AS {key}, v AS {value}, "
            f"ts AS {ts}, WATERMARK FOR ts AS ts) WITH ('connector' = 'datagen', "
            "'fields.seq.kind' = 'sequence', 'fields.seq.start' = '1', "
            f"'fields.seq.end' = '{len(ROWS)}', 'rows-per-second' = '{rows_per_second}')")
