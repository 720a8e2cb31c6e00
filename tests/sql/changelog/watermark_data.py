"""The table of the watermark fixtures (watermarks.json): rows whose timestamps sit exactly
where a watermark ``ts - d`` (Flink SQL: max ts - d, no -1 ms) reaches a window's last
millisecond, each followed by an earlier row that is late only if it did. After row 10 the
watermark rises by 199 ms (row 11): Flink SQL's assigner emits that at once only with
``pipeline.auto-watermark-interval`` 0 (its eager rule: a rise of more than the interval)."""

EVENTS = """1,a,2024-01-01 00:00:01.000
2,b,2024-01-01 00:00:05.999
3,a,2024-01-01 00:00:04.500
4,b,2024-01-01 00:00:09.999
5,a,2024-01-01 00:00:09.000
6,b,2024-01-01 00:00:10.999
7,a,2024-01-01 00:00:09.500
8,b,2024-01-01 00:00:12.000
9,a,2024-01-01 00:00:11.000
10,a,2024-01-01 00:00:14.800
11,b,2024-01-01 00:00:14.999
12,a,2024-01-01 00:00:14.900
13,b,2024-01-01 00:00:16.000
"""

COLUMNS = "v INT, k STRING, ts TIMESTAMP(3)"
TUMBLE = ("SELECT window_start, window_end, COUNT(*) AS n, SUM(v) AS s FROM TABLE(TUMBLE("
          "TABLE events, DESCRIPTOR(ts), INTERVAL '5' SECOND)) GROUP BY window_start, window_end")
# (the WATERMARK's expression, runtime mode, pipeline.auto-watermark-interval or None, query)
CASES = [
    ("ts - INTERVAL '1' SECOND", "streaming", None, TUMBLE),
    ("ts", "streaming", None, TUMBLE),
    ("ts - INTERVAL '0.5' SECOND", "streaming", None, TUMBLE),
    ("ts + INTERVAL '1' SECOND", "streaming", None, TUMBLE),
    ("(ts - INTERVAL '1' SECOND) - INTERVAL '1' SECOND", "streaming", None, TUMBLE),
    ("ts", "streaming", "0", TUMBLE),
    ("ts - INTERVAL '1' SECOND", "streaming", "0", TUMBLE),
    ("ts - INTERVAL '1' SECOND", "batch", None, TUMBLE),
    ("ts - INTERVAL '1' SECOND", "streaming", None,
     "SELECT k, TUMBLE_START(ts, INTERVAL '5' SECOND) AS ws, COUNT(*) AS n, SUM(v) AS s "
     "FROM events GROUP BY k, TUMBLE(ts, INTERVAL '5' SECOND)"),
    ("ts", "streaming", None,
     "SELECT window_start, window_end, k, COUNT(*) AS n FROM TABLE(HOP(TABLE events, "
     "DESCRIPTOR(ts), INTERVAL '2' SECOND, INTERVAL '4' SECOND)) "
     "GROUP BY window_start, window_end, k"),
    ("ts - INTERVAL '1' SECOND", "streaming", None,
     "SELECT v, k, SUM(v) OVER (PARTITION BY k ORDER BY ts ROWS BETWEEN UNBOUNDED PRECEDING "
     "AND CURRENT ROW) AS total FROM events"),
]
