"""The table of interval_padding.json (shared by record_interval_padding.py and the tests):
one file of left (L) and right (R) rows, out of order, whose watermark is the largest ``ts``
so far; each side of a join reads the rows of its letter. Flink reads the file once (its
plan reuses the scan), flowc twice; both merge the two sides' channels round-robin."""

EVENTS = """L,a,1,2024-05-01 10:00:00.000
R,a,2,2024-05-01 10:00:00.500
L,b,3,2024-05-01 10:00:01.000
R,c,4,2024-05-01 10:00:05.000
L,b,5,2024-05-01 10:00:01.200
L,a,6,2024-05-01 10:00:04.500
R,a,7,2024-05-01 10:00:03.800
L,c,8,2024-05-01 10:00:06.000
R,b,9,2024-05-01 10:00:01.500
L,d,10,2024-05-01 10:00:09.000
L,a,11,2024-05-01 10:00:02.000
R,c,12,2024-05-01 10:00:05.500
R,d,13,2024-05-01 10:00:12.000
L,c,14,2024-05-01 10:00:10.000
R,d,15,2024-05-01 10:00:08.800
"""
COLUMNS = "side STRING, k STRING, v INT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts"
LEFT = "(SELECT k, v, ts FROM events WHERE side = 'L')"
RIGHT = "(SELECT k, v, ts FROM events WHERE side = 'R')"
