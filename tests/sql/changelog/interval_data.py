"""The tables of interval_joins.json (shared by record_interval_joins.py and the tests):
orders (data.py's) and shipments, both with a watermark 1 s behind their ``ts``."""

SHIPMENTS = """1,u1,2024-05-01 10:00:01.000
2,u2,2024-05-01 10:00:09.000
3,u1,2024-05-01 10:00:02.500
5,u2,2024-05-01 10:00:04.500
8,u3,2024-05-01 10:00:07.200
9,u2,2024-05-01 10:00:12.000
13,u4,2024-05-01 10:00:11.500
"""
SHIPMENTS_COLUMNS = "order_id BIGINT, user_id STRING, ts TIMESTAMP(3)"
WATERMARK = ", WATERMARK FOR ts AS ts - INTERVAL '1' SECOND"
